"""The httperf adapter: an offered rate, its --timeout, its descriptor limit, on captured httperf output."""

from __future__ import annotations

from conftest import cell_plan, read_data

from benchstack.kinds.loadtools.httperf import TOOL as HTTPERF

URL = "http://127.0.0.1:8004/x"
PLAN = {"tool": "httperf", "rate": 500, "duration_s": 10, "concurrency": None, "keepalive": False}


def test_the_command_offers_the_rate_for_the_duration_with_the_threshold_as_timeout() -> None:
    cmd = HTTPERF.command(cell_plan({**PLAN, "threshold_ms": 250}), URL)
    assert cmd[cmd.index("--rate") + 1 :] == [
        "500",
        "--num-conns",
        "5000",
        "--num-calls",
        "1",
        "--timeout",
        "0.25",
    ]
    assert HTTPERF.command(cell_plan(PLAN), URL)[-1] == "5"  # never without a timeout
    assert HTTPERF.bound_s(cell_plan({**PLAN, "threshold_ms": 250})) == 10 + 1 + 60


def test_a_warmup_runs_at_the_offered_rate_for_its_duration_or_request_count() -> None:
    by_requests = {**PLAN, "warmup": {"requests": 1200}}
    assert HTTPERF.warmup_s(cell_plan(by_requests)) == 3  # ceil(1200 / 500)
    assert HTTPERF.warmup_s(cell_plan({**PLAN, "warmup": {"requests": 1}})) == 1
    assert "1500" in HTTPERF.warmup_command(cell_plan(by_requests), URL)  # 500/s x 3 s
    assert HTTPERF.warmup_bound_s(cell_plan({**PLAN, "warmup": {"duration_s": 4}})) == 4 + 5 + 60


def test_a_threshold_is_its_timeout_and_the_cell_says_so() -> None:
    assert HTTPERF.cell_notes(cell_plan(PLAN)) == []
    (note,) = HTTPERF.cell_notes(cell_plan({**PLAN, "threshold_ms": 250}))
    assert note.startswith("httperf aborted responses slower than the threshold (250 ms)")
    assert "aborts a response slower than the threshold" in HTTPERF.unmeasured_slow_note(3)


def test_connections_beyond_select_are_warned_of() -> None:
    plan = cell_plan({**PLAN, "rate": 400, "timeout_s": 3}).connection_load()
    assert HTTPERF.open_connections(plan) == 1200
    assert HTTPERF.fd_limit == 1024
    assert HTTPERF.fd_warning(plan, 1200, 992) == (
        "httperf at 400/s with a 3 s timeout may hold 1200 connections; it can hold about 992 (select's "
        "FD_SETSIZE) and counts the rest as fd-unavail errors"
    )


def test_failed_connections_are_attempts_counted_once() -> None:
    parsed = HTTPERF.parse(read_data("httperf", "hist-fd-unavail.txt"))
    assert HTTPERF.failed_count(parsed.errors) == 78
    assert HTTPERF.attempts(parsed.requests_completed, parsed.errors) == 150


def test_open_loop_labels_and_a_spinning_core() -> None:
    assert (HTTPERF.level_label(500), HTTPERF.label(False), HTTPERF.cell_part(False)) == (
        "500/s", "httperf (open loop)", "httperf",
    )  # fmt: skip
    assert HTTPERF.spinning and HTTPERF.open_loop and HTTPERF.probe_command(URL, 5, 8) is None
    assert HTTPERF.version_probe is not None  # its output prints no version


def test_plan_checks_refuse_closed_loop_fields() -> None:
    problems: list[str] = []
    assert not HTTPERF.check_plan("p", {"tool": "httperf", "concurrency": 4, "keepalive": True}, problems)
    assert problems == [
        "p.concurrency: not for httperf (open loop: the load is the offered rate, not a number of clients)",
        "p.keepalive: httperf runs one request per connection here",
        "p.duration_s: httperf needs a duration in seconds",
    ]
