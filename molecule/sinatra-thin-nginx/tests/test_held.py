"""One run at a time on a host, from the side effect's evidence (side_effect.py, held): while a first run
holds both hosts (hold.yml, through the action provision.yml holds them with), a second provision.yml is
refused in the command that reads each host, naming the first run's folder and pid, before anything on
either host changes; a third with bench_lock_wait says it waits, waits, and once the first run has ended
takes the hosts over and provisions (nothing to do)."""

from __future__ import annotations

from typing import Any

import pytest
from sideeffect import load

HOSTS = ["bench-mol-thin-bookworm", "bench-mol-thin-trixie"]
DECIDE_TASK = "Decide which roles run (inputs changed since they last ran here, or a service is down)"


@pytest.fixture(scope="module")
def evidence() -> dict[str, Any]:
    return load("held")


def test_the_first_run_held_both_hosts(evidence: dict[str, Any]) -> None:
    first = evidence["first"]
    for host in HOSTS:
        assert evidence["first_holds"][host]["pid"] == first["pid"], evidence["first_holds"]
        assert evidence["first_holds"][host]["run"] == first["run_dir"]
    assert first["rc"] == 0


def test_a_second_run_is_refused_naming_the_first_before_anything_changes(evidence: dict[str, Any]) -> None:
    refused, first = evidence["refused"], evidence["first"]
    assert refused["rc"] != 0
    failed = [t for t in refused["tasks"] if t["failed"]]
    assert failed and {t["name"] for t in failed} == {DECIDE_TASK}, failed
    says = f"is in use by another bench-stack run (run folder {first['run_dir']}, pid {first['pid']} on "
    assert all(says in t["msg"] for t in failed), failed[0]["msg"]
    # Every host of the play stopped there: the read was the last task, no role ran.
    assert refused["tasks"][-1]["name"] == DECIDE_TASK
    assert not [t for t in refused["tasks"] if t["role"]] and not [
        t for t in refused["tasks"] if t["changed"]
    ]
    for host in HOSTS:
        before, after = evidence["before"][host], evidence["after"][host]
        assert after["pids"] == before["pids"] and after["sums"] == before["sums"], host


def test_with_bench_lock_wait_a_third_run_waits_says_so_and_goes_on_once_the_first_ends(
    evidence: dict[str, Any],
) -> None:
    third, first = evidence["third"], evidence["first"]
    assert third["rc"] == 0, third["output"][-3000:]
    assert evidence["third_waiting_still"], "the third run did not wait for the first one"
    warnings = evidence["third_warnings"]
    for host in HOSTS:
        assert (
            f"{host} is held by another bench-stack run (run folder {first['run_dir']}, pid {first['pid']}"
            in (" ".join(warnings.split()))
        )
    assert "waiting up to 300 s for it to end (bench_lock_wait)" in " ".join(warnings.split())
    for host in HOSTS:
        waited, took = evidence["third_locks"][host]
        assert waited.startswith(f"{host}: waited ") and f"(run folder {first['run_dir']}" in waited
        assert took.startswith(f"{host}: took over its lock from an ended run that kept it")
        assert evidence["holds_after"][host]["pid"] not in (first["pid"], None)
    # Nothing to do once it went on: the hosts as the first run left them, every stack answering.
    decide = [t for t in third["tasks"] if t["name"] == DECIDE_TASK]
    assert decide and all(t["msg"].startswith("run: nothing;") for t in decide), decide
    expected = load("expected")["answers"]
    for host in HOSTS:
        assert evidence["answers"][host] == expected
