"""Stacks dropped from the apache experiment, from the side effect's evidence (side_effect.py): provisioning
without sinatra-thin-x2-apache and php-apache-prefork stops and disables their Apache instances and the thin
pool, removes everything setup-instance made for the two instances, the thin stack's env file and template
unit and both apps' folders, and leaves the other instances running untouched (same main process, a clean
configtest, the same answers); a rerun has nothing to do; the scenario's experiment brings both back."""

from __future__ import annotations

from typing import Any

import pytest
from sideeffect import load

HOST = "bench-mol-apache-bookworm"
DECIDE_TASK = "Decide which roles run (inputs changed since they last ran here, or a service is down)"


@pytest.fixture(scope="module")
def evidence() -> dict[str, Any]:
    return load("dropped")


def decision(run: dict[str, Any]) -> str:
    (task,) = [t for t in run["tasks"] if t["name"] == DECIDE_TASK and t["host"] == HOST]
    return task["msg"]


def test_the_dropped_stacks_ran_before_and_their_units_are_stopped_and_disabled_after(
    evidence: dict[str, Any],
) -> None:
    assert evidence["run"]["rc"] == 0, evidence["run"]["output"][-3000:]
    for name in evidence["dropped"]:
        for unit, state in evidence["before"]["stacks"][name]["units"].items():
            assert state == "active enabled", (unit, state)
        for unit, state in evidence["after"]["stacks"][name]["units"].items():
            active, *enabled = state.split()
            assert active == "inactive" and "enabled" not in enabled, (unit, state)
        assert evidence["before"]["answers"] != {} and all(
            not answer.startswith("200 ")
            for url, answer in evidence["after"]["answers"].items()
            if f":{evidence['after']['stacks'][name]['port']}/" in url
        ), evidence["after"]["answers"]


def test_what_setup_instance_made_their_env_file_and_app_folders_are_gone(evidence: dict[str, Any]) -> None:
    thin = evidence["before"]["stacks"]["sinatra-thin-x2-apache"]["files"]
    assert "/etc/bench-stack/units/sinatra-thin-x2-apache.env" in thin
    assert "/opt/bench-stack/apps/sinatra" in thin
    php = evidence["before"]["stacks"]["php-apache-prefork"]["files"]
    assert {"/etc/apache2-bench-php-apache-prefork", "/opt/bench-stack/apps/php"} <= set(php)
    assert "/usr/local/sbin/apache2ctl-bench-php-apache-prefork" in php
    for name in evidence["dropped"]:
        assert evidence["after"]["stacks"][name]["files"] == [], name
    swept = evidence["run"]["tasks"]
    (removal,) = [t for t in swept if t["name"].startswith("Remove the front configs") and t["host"] == HOST]
    assert removal["changed"]
    assert "no stack of the plan owns: " in decision(evidence["run"])
    assert "/etc/systemd/system/bench-sinatra-thin-x2-apache@.service" in decision(evidence["run"])


def test_the_other_instances_kept_running_untouched_and_their_configs_test_clean(
    evidence: dict[str, Any],
) -> None:
    for unit in evidence["kept_units"]:
        assert evidence["after"]["pids"][unit] == evidence["before"]["pids"][unit] != "0", unit
    for name in evidence["kept"]:
        assert evidence["after"]["stacks"][name]["files"] == evidence["before"]["stacks"][name]["files"]
        assert evidence["configtest"][name] == "Syntax OK rc=0", (name, evidence["configtest"][name])
    kept_ports = [f":{evidence['after']['stacks'][n]['port']}/" for n in evidence["kept"]]
    for url, answer in evidence["expected"].items():
        if any(port in url for port in kept_ports):
            assert evidence["after"]["answers"][url] == answer, url


def test_a_rerun_has_nothing_to_do_and_the_scenarios_experiment_brings_them_back(
    evidence: dict[str, Any],
) -> None:
    again = evidence["again"]
    assert again["rc"] == 0, again["output"][-3000:]
    assert decision(again).startswith("run: nothing;"), decision(again)
    assert not [t["name"] for t in again["tasks"] if t["changed"]]
    assert evidence["restore"]["rc"] == 0, evidence["restore"]["output"][-3000:]
    assert evidence["restored"]["answers"] == evidence["expected"]
    for name in evidence["dropped"]:
        restored = evidence["restored"]["stacks"][name]
        assert restored["files"] == evidence["before"]["stacks"][name]["files"], name
        assert set(restored["units"].values()) == {"active enabled"}, restored["units"]
