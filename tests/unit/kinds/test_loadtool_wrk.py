"""The wrk adapter: its report script, --timeout, threads, and what it says about captured wrk output."""

from __future__ import annotations

import pytest
from conftest import cell_plan, read_data

from benchstack.kinds.loadtools.wrk import TOOL as WRK
from benchstack.kinds.loadtools.wrk import install_script_command, wrk_script
from benchstack.plan.loadplan import LoadPlan
from benchstack.records.model import error_count

URL = "http://127.0.0.1:8002/"
PLAN = {"tool": "wrk", "concurrency": 8, "duration_s": 10, "threads": 2, "keepalive": True}
SCRIPT = "/var/lib/bench-stack/bench-stack-wrk-report-0123456789abcdef.lua"


def test_the_report_script_is_written_once_and_its_path_goes_into_the_command() -> None:
    asked: list[str] = []

    def execute(command: str) -> tuple[int, str, str]:
        asked.append(command)
        return 0, SCRIPT + "\n", ""

    script, notes = WRK.per_request_setup(execute)
    assert (script, notes) == (SCRIPT, [])
    assert asked == [install_script_command(wrk_script())]
    assert WRK.command(cell_plan({**PLAN, "threshold_ms": 300}), URL, script) == [
        "env", "BENCH_STACK_THRESHOLD_MS=300", "BENCH_STACK_CONNECTIONS=8",
        "wrk", "-t", "2", "-c", "8", "-d", "10s", "--latency", "--timeout", "2s", "-s", SCRIPT, URL,
    ]  # fmt: skip


def test_no_script_no_environment_and_a_note_why() -> None:
    script, notes = WRK.per_request_setup(lambda _: (1, "", "read-only file system"))
    assert script is None
    assert notes == ["no per-request data: the wrk script could not be written: read-only file system"]
    assert WRK.command(cell_plan(PLAN), URL, None) == [
        "wrk", "-t", "2", "-c", "8", "-d", "10s", "--latency", URL,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("plan", "timeout"),
    [({}, None), ({"threshold_ms": 300}, "2s"), ({"threshold_ms": 2600}, "6s"), ({"timeout_s": 9}, "9s")],
)
def test_the_timeout_stays_above_the_threshold_unless_the_plan_sets_one(
    plan: dict, timeout: str | None
) -> None:
    cmd = WRK.command(cell_plan({**PLAN, **plan}), URL)
    assert (cmd[cmd.index("--timeout") + 1] if "--timeout" in cmd else None) == timeout


def test_output_without_the_report_line_is_incomplete_only_when_the_script_ran() -> None:
    plain = read_data("wrk", "latency.txt")
    assert WRK.incomplete(plain, None) is None
    assert "printed no BENCH-STACK-WRK-REPORT line" in str(WRK.incomplete(plain, SCRIPT))
    assert WRK.incomplete(read_data("wrk", "report-slow.txt"), SCRIPT) is None


def test_the_report_counts_the_slow_requests() -> None:
    raw = read_data("wrk", "report-slow.txt")
    parsed = WRK.parse(raw)
    assert WRK.per_request(parsed, None, raw, None, SCRIPT) == [] and parsed.errors["over_threshold"] is None
    assert WRK.per_request(parsed, 300.0, raw, None, SCRIPT) == []
    assert parsed.errors["over_threshold"] == 12


def test_errors_that_never_completed_are_attempts_and_timeouts_have_no_latency() -> None:
    errors = {"connect": 3, "read": 2, "write": 1, "timeout": 4, "status": 5}
    assert WRK.failed_count(errors) == 15
    # Only the 5 status errors have a latency: 7 slow responses are at least 2 more bad requests.
    assert error_count(WRK.counting, {**errors, "over_threshold": 7}) == 17
    assert WRK.attempts(100, errors) == 106


def test_threads_and_keepalive() -> None:
    assert WRK.keepalive(LoadPlan("wrk", keepalive=False)) is True
    plain, four = LoadPlan("wrk"), LoadPlan("wrk", threads=4)
    assert (WRK.threads(plain, 1), WRK.threads(plain, 8), WRK.threads(four, 8)) == (1, 2, 4)
    assert WRK.cores(["taskset", "-c", "0-3", "wrk", "-t", "4", "-c", "8", URL]) == 4
    assert WRK.cores(["wrk", "-t3", "-c", "8", URL]) == 3
    assert WRK.warmup_command(cell_plan({**PLAN, "warmup": {"duration_s": 2}}), URL)[:7] == [
        "wrk", "-t", "2", "-c", "8", "-d", "2s",
    ]  # fmt: skip
    assert WRK.warmup_bound_s(cell_plan({**PLAN, "warmup": {"duration_s": 2}})) == 62
    assert WRK.duration_bound(cell_plan(PLAN))


def test_plan_checks_name_the_field() -> None:
    problems: list[str] = []
    assert not WRK.check_plan("p", {"tool": "wrk", "requests": 5, "keepalive": False}, problems)
    assert problems == [
        "p.duration_s: wrk needs a duration in seconds",
        "p.requests: wrk runs for a duration, not a number of requests",
        "p.keepalive: wrk always keeps connections alive; use ab for keepalive: false",
    ]
