"""Stacks dropped from the experiment, from the side effect's evidence (side_effect.py, dropped):
bench-stack.yml with sinatra-thin-x1 alone stops and disables the four other stacks' units and nginx (no
stack of the plan is behind it any more) before measuring, their ports close, run.json says what was swept;
a re-run has nothing to stop; the scenario's own experiment brings them back."""

from __future__ import annotations

from typing import Any

import pytest
from sideeffect import load

HOSTS = ["bench-mol-thin-bookworm", "bench-mol-thin-trixie"]
DECIDE_TASK = "Decide which roles run (inputs changed since they last ran here, or a service is down)"


@pytest.fixture(scope="module")
def evidence() -> dict[str, Any]:
    return load("dropped")


def decision(run: dict[str, Any], host: str) -> str:
    (task,) = [t for t in run["tasks"] if t["name"] == DECIDE_TASK and t["host"] == host]
    return task["msg"]


@pytest.mark.parametrize("host", HOSTS)
def test_the_dropped_stacks_units_ran_before_and_are_stopped_and_disabled_after(
    evidence: dict[str, Any], host: str
) -> None:
    assert evidence["run"]["rc"] == 0, evidence["run"]["output"][-3000:]
    for unit in evidence["units"]:
        assert evidence["before"][host][unit] == "active enabled", (unit, evidence["before"][host])
        # A removed template's instance: is-enabled says not-found (exit 1).
        active, *enabled = evidence["after"][host][unit].split()
        assert active == "inactive" and "enabled" not in enabled, (unit, evidence["after"][host])


@pytest.mark.parametrize("host", HOSTS)
def test_only_the_kept_stacks_port_is_open_after(evidence: dict[str, Any], host: str) -> None:
    for name, port in evidence["ports"].items():
        assert evidence["before"][host][f"port-{port}"] == "open", name
        want = "open" if name == evidence["kept"] else "closed"
        assert evidence["after"][host][f"port-{port}"] == want, (name, evidence["after"][host])


@pytest.mark.parametrize("host", HOSTS)
def test_the_play_output_and_run_json_name_what_was_swept(evidence: dict[str, Any], host: str) -> None:
    assert "no stack of the plan owns: " in decision(evidence["run"], host)
    info = evidence["run_json"]
    assert info is not None and info["schema"] == "bench-stack/run/v3"
    swept = info["swept"][host]
    assert sorted(swept["units"]) == sorted(evidence["units"])
    assert "/etc/nginx/conf.d/bench-stack.conf" in swept["files"]
    assert "/etc/systemd/system/bench-sinatra-thin-x4-nginx@.service" in swept["files"]
    # Measuring began on a host with nothing left over.
    assert info["hosts_match_plan"][host] == {"matches": True, "differs": {}, "stale": []}


@pytest.mark.parametrize("host", HOSTS)
def test_a_rerun_has_nothing_to_stop_and_the_scenarios_experiment_brings_them_back(
    evidence: dict[str, Any], host: str
) -> None:
    again = evidence["again"]
    assert again["rc"] == 0
    assert decision(again, host).startswith("run: nothing;")
    assert "no stack of the plan owns" not in decision(again, host)
    assert not [t["name"] for t in again["tasks"] if t["changed"]]
    assert evidence["restore"]["rc"] == 0, evidence["restore"]["output"][-3000:]
    assert evidence["restored"][host] == evidence["before"][host]
    assert all(answer.startswith("200 ") for answer in evidence["answers"][host].values()), evidence[
        "answers"
    ]
