"""The drift table, from the side effect's evidence (side_effect.py, drift): every kind of drift done by
hand on the Debian 12 host is listed by playbooks/doctor.yml without being fixed, and repaired by one normal
re-run (roles skipped when their inputs did not change), after which a re-run has nothing to do."""

from __future__ import annotations

from typing import Any

import pytest
from sideeffect import load

KINDS = [
    "file edited",
    "file deleted",
    "binary deleted",
    "package removed",
    "unit stopped",
    "unit disabled",
    "unit file edited",
    "sysctl changed",
    "app file edited",
]
DECIDE_TASK = "Decide which roles run (inputs changed since they last ran here, or a service is down)"


@pytest.fixture(scope="module")
def evidence() -> dict[str, Any]:
    return load("drift")


def decision(run: dict[str, Any], host: str) -> str:
    (task,) = [t for t in run["tasks"] if t["name"] == DECIDE_TASK and t["host"] == host]
    return task["msg"]


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_of_drift_happened_and_one_normal_rerun_repaired_it(
    evidence: dict[str, Any], kind: str
) -> None:
    before, drifted, after = evidence["before"][kind], evidence["drifted"][kind], evidence["after"][kind]
    assert drifted != before, f"{kind}: the drift was not applied ({before!r})"
    assert after == before, f"{kind}: not repaired: {before!r} -> {drifted!r} -> {after!r}"


def test_the_rerun_names_what_drifted_and_reinstalls_the_package_of_the_lost_binary(
    evidence: dict[str, Any],
) -> None:
    repair = evidence["repair"]
    assert repair["rc"] == 0, repair["output"][-3000:]
    msg = decision(repair, evidence["host"])
    for line in [
        "nginx (drifted: ",
        "file /etc/nginx/nginx.conf: changed",
        "file /etc/nginx/conf.d/bench-stack.conf: ",
        "binary /usr/bin/wrk: present -> missing",
        "package thin: ",
        "unit bench-sinatra-thin-x2-nginx@2.service: enabled active -> disabled active",
        "sysctl net.core.somaxconn: 4096 -> 128",
        "app (drifted: file /opt/bench-stack/apps/sinatra/app.rb: changed",
        "reinstalled first: ",
    ]:
        assert line in msg, msg
    assert "wrk" in msg.rpartition("reinstalled first: ")[2]


def test_the_instance_restarted_by_hand_runs_with_the_edited_unit(evidence: dict[str, Any]) -> None:
    """The "unit file edited" drift restarts an instance: it must be running, with the edit, before the other
    drifts and the doctor, or its probe reads a unit that systemd is restarting on its own (#45)."""
    restarted = evidence["restarted"]
    assert restarted["settled"], f"not active, unrestarted and answering: {restarted}"
    probe = evidence["drifted"]["unit file edited"]
    assert "DRIFT=1" in probe and probe.endswith("Max open files 1024 1024 files"), probe


def test_the_doctor_lists_the_drift_fails_and_changes_nothing(evidence: dict[str, Any]) -> None:
    doctor = evidence["doctor"]
    assert doctor["rc"] != 0
    failed = [t for t in doctor["tasks"] if t["failed"]]
    assert [t["name"] for t in failed] == ["Say what differs from the plan"]
    assert "differs from the plan" in failed[0]["msg"] and "drifted: " in failed[0]["msg"]
    assert not [t for t in doctor["tasks"] if t["changed"]]
    # No unit started, stopped or restarted while it ran, whatever its tasks say they changed.
    assert evidence["units_after_doctor"] == evidence["units_before_doctor"]
    assert evidence["after_doctor"] == evidence["drifted"]


def test_after_the_repair_a_rerun_has_nothing_to_do_and_every_stack_answers(evidence: dict[str, Any]) -> None:
    again = evidence["again"]
    assert again["rc"] == 0
    assert decision(again, evidence["host"]).startswith("run: nothing;")
    assert not [t["name"] for t in again["tasks"] if t["changed"]]
    assert all(answer.startswith("200 ") for answer in evidence["answers"].values()), evidence["answers"]
    assert evidence["back"]["rc"] == 0
