"""Stacks dropped from the experiment, from the side effect's evidence (side_effect.py, dropped):
bench-stack.yml with sinatra-thin-x1 alone stops and disables the four other stacks' units and nginx (no
stack of the plan is behind it any more) before measuring, their ports close, their env files and the
static app's folder go, as does an earlier experiment's user app, but not a user's own folders; run.json
says what was swept; a re-run has nothing to stop; the scenario's own experiment brings them back."""

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
    assert info is not None and info["schema"] == "bench-stack/run/v6"
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


@pytest.mark.parametrize("host", HOSTS)
def test_the_dropped_stacks_env_files_and_app_folders_go_and_a_users_own_folders_stay(
    evidence: dict[str, Any], host: str
) -> None:
    before, after = evidence["files_before"][host], evidence["files_after"][host]
    assert set(before.values()) == {"present"}, before
    kept = set(evidence["kept_files"]) | set(evidence["own"])
    assert {p for p, state in after.items() if state == "present"} == kept, after
    swept = evidence["run_json"]["swept"][host]["files"]
    assert set(evidence["old_app"]) <= set(swept)
    assert "/opt/bench-stack/apps/static" in swept
    assert "/etc/bench-stack/units/sinatra-thin-x4-nginx.env" in swept
    assert not set(evidence["own"]) & set(swept)


@pytest.mark.parametrize("host", HOSTS)
def test_the_scenarios_experiment_writes_the_dropped_stacks_files_again(
    evidence: dict[str, Any], host: str
) -> None:
    restored = evidence["files_restored"][host]
    assert {p for p, state in restored.items() if state == "absent"} == set(evidence["old_app"]), restored
