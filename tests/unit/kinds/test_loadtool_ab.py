"""The ab adapter: what the runner, the experiment and the verdict ask of it, on captured ab output."""

from __future__ import annotations

import pytest
from conftest import cell_plan, read_data

from benchstack.kinds.loadtools.ab import TOOL as AB
from benchstack.plan.loadplan import LoadPlan
from benchstack.records.model import error_count

URL = "http://127.0.0.1:8001/hello"
PLAN = {"tool": "ab", "concurrency": 20, "requests": 400, "duration_s": None, "keepalive": True}


def test_the_measured_command_asks_for_the_g_file_and_keeps_the_plans_keepalive() -> None:
    setup, notes = AB.per_request_setup(lambda _: pytest.fail("ab needs nothing on the loadgen"))
    assert (setup, notes) == ("requests.tsv", [])
    assert AB.command(cell_plan(PLAN), URL, setup) == [
        "ab", "-n", "400", "-c", "20", "-k", "-g", "requests.tsv", URL,
    ]  # fmt: skip
    assert AB.command(cell_plan({**PLAN, "keepalive": False, "timeout_s": 3}), URL) == [
        "ab", "-n", "400", "-c", "20", "-s", "3", URL,
    ]  # fmt: skip


def test_a_warmup_never_asks_fewer_requests_than_clients_and_is_bounded_like_any_ab_run() -> None:
    plan = {**PLAN, "warmup": {"requests": 5}}
    assert AB.warmup_command(cell_plan(plan), URL) == ["ab", "-n", "20", "-c", "20", "-k", URL]
    assert AB.warmup_bound_s(cell_plan(plan)) == AB.bound_s(cell_plan(PLAN)) == 600 + 60
    assert AB.bound_s(cell_plan({**PLAN, "duration_s": 30})) == 90
    assert not AB.duration_bound(cell_plan({**PLAN, "duration_s": 30}))  # -t only caps a request count


def test_overlapping_counters_count_a_bad_request_once() -> None:
    parsed = AB.parse(read_data("ab", "mixed-status-length.txt"))
    assert (parsed.errors["status"], parsed.errors["length"]) == (503, 503)
    assert AB.failed_count(parsed.errors) == 503
    # All 503 have a latency: up to 503 slow responses may be the same requests.
    assert error_count(AB.counting, {**parsed.errors, "over_threshold": 600}) == 600
    assert AB.attempts(parsed.requests_completed, {**parsed.errors, "connect": 4}) == 1004


def test_the_g_file_gives_the_distribution_and_the_slow_requests() -> None:
    parsed = AB.parse(read_data("ab", "gnuplot-slow.txt"))
    tsv = read_data("ab", "gnuplot-slow.tsv")
    assert AB.per_request(parsed, 300.0, "", tsv, "requests.tsv") == []
    assert parsed.errors["over_threshold"] == 31
    assert parsed.latency_dist is not None and parsed.latency_dist.samples == 400


def test_a_g_file_of_another_run_is_not_used_and_says_why() -> None:
    parsed = AB.parse(read_data("ab", "gnuplot-slow.txt"))
    short = "\n".join(read_data("ab", "gnuplot-slow.tsv").splitlines()[:101]) + "\n"
    notes = AB.per_request(parsed, 300.0, "", short, "requests.tsv")
    assert notes == [
        "ab -g holds 100 request times for 400 complete requests: not used (over_threshold not measured)"
    ]
    assert parsed.errors["over_threshold"] is None and parsed.latency_dist is None
    assert AB.per_request(parsed, None, "", None, "requests.tsv") == [
        "no per-request data: ab wrote no -g file"
    ]


def test_plan_checks_name_the_field() -> None:
    problems: list[str] = []
    assert not AB.check_plan("p", {"tool": "ab", "threads": 2}, problems)
    assert problems == [
        "p.requests: ab needs a number of requests",
        "p.threads: ab is single-threaded; threads applies to wrk only",
    ]
    assert AB.check_plan("p", {"tool": "ab", "requests": 10, "duration_s": 5}, problems := [])
    assert problems == []


def test_labels_tell_the_keepalive_variant_apart() -> None:
    assert (AB.cell_part(True), AB.cell_part(False)) == ("ab-k", "ab")
    assert (AB.label(True), AB.short_label(False), AB.level_label(8)) == ("ab -k", "ab", "c8")
    assert AB.keepalive(LoadPlan("ab", keepalive=True)) and not AB.keepalive(LoadPlan("ab"))
    assert AB.threads(LoadPlan("ab", concurrency=20), 20) is None and AB.cores(["ab", "-c", "20", URL]) == 1
