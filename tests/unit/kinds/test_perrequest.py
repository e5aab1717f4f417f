import pytest
from conftest import read_data

from benchstack.kinds.loadtools import ab, parse, wrk
from benchstack.kinds.loadtools.perrequest import (
    ab_request_times,
    nearest_rank,
    summarize_times,
    wrk_over_threshold,
    wrk_report,
)
from benchstack.records.model import ParseError, error_count, error_rate
from benchstack.results.sysstats import parse_vmstat


def test_ab_g_file_gives_one_time_per_complete_request() -> None:
    times = ab_request_times(read_data("ab", "gnuplot-slow.tsv"))
    assert len(times) == parse("ab", read_data("ab", "gnuplot-slow.txt")).requests_completed == 400
    summary = summarize_times(times, 300)
    assert summary.over_threshold == 31
    assert summary.max_ms == 1013  # ab: "100%   1013 (longest request)"


def test_ab_g_file_of_a_run_with_failures_still_has_every_request() -> None:
    times = ab_request_times(read_data("ab", "gnuplot-mixed.tsv"))
    assert len(times) == 1000  # 516 of them non-2xx, 484 length failures
    assert summarize_times(times, 300).over_threshold == 0


def test_ab_g_parser_rejects_other_text() -> None:
    with pytest.raises(ParseError, match="not an ab -g file"):
        ab_request_times(read_data("ab", "normal.txt"))
    with pytest.raises(ParseError, match="line 2"):
        ab_request_times("starttime\tseconds\tctime\tdtime\tttime\twait\nbroken\n")


def test_nearest_rank_percentiles() -> None:
    values = list(range(1, 101))
    assert [nearest_rank(values, p) for p in (50, 90, 99, 100)] == [50, 90, 99, 100]
    assert nearest_rank([7], 50) == 7
    assert summarize_times([], 300).over_threshold == 0
    assert summarize_times([400], None).over_threshold is None


def test_wrk_report_block_is_read_and_the_wrk_parser_ignores_it() -> None:
    text = read_data("wrk", "report-slow.txt")
    report = wrk_report(text)
    assert report is not None
    assert (report["requests"], report["recorded"], report["samples"]) == (169, 169, 315)
    parsed = parse("wrk", text)
    assert parsed.requests_completed == 169
    assert wrk_over_threshold(report, 169, 0) == (12, None)
    assert wrk_report(read_data("wrk", "latency.txt")) is None


def test_wrk_count_falls_back_to_an_estimate_when_the_undo_does_not_add_up() -> None:
    report = wrk_report(read_data("wrk", "report-slow.txt"))
    assert report is not None
    over, note = wrk_over_threshold({**report, "recorded": 100}, 169, 0)
    assert over == round(169 * 120 / 315)
    assert note is not None and "estimate" in note


def test_wrk_report_with_timeouts_counts_only_recorded_requests() -> None:
    text = read_data("wrk", "report-timeouts.txt")
    report = wrk_report(text)
    parsed = parse("wrk", text)
    assert report is not None and parsed.errors["timeout"] == 7
    assert wrk_over_threshold(report, parsed.requests_completed, 7) == (3, None)


def test_broken_wrk_report_block_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        wrk_report("BENCH-STACK-WRK-REPORT {not json}\n")
    with pytest.raises(ParseError):
        wrk_report('BENCH-STACK-WRK-REPORT {"schema": "other"}\n')


def test_slow_requests_add_to_errors_without_counting_a_failed_slow_request_twice() -> None:
    # wrk: timeouts and socket errors have no latency, so slow requests add to them in full ...
    by_wrk = {"connect": 0, "read": 2, "write": 0, "timeout": 7, "status": 0, "length": 0, "exceptions": 0}
    assert error_count(wrk.COUNTING, {**by_wrk, "over_threshold": 3}) == 12
    # ... but a non-2xx response has a latency and may be one of the slow ones: counted once.
    assert error_count(wrk.COUNTING, {**by_wrk, "status": 5, "over_threshold": 3}) == 2 + 7 + 5
    assert error_count(wrk.COUNTING, {**by_wrk, "status": 5, "over_threshold": 8}) == 2 + 7 + 5 + 3
    # ab: largest counter, then slow requests beyond those that may overlap
    by_ab = {"connect": 0, "read": 0, "write": 0, "timeout": 0, "status": 516, "length": 484, "exceptions": 0}
    assert error_count(ab.COUNTING, {**by_ab, "over_threshold": None}) == 516
    assert error_count(ab.COUNTING, {**by_ab, "over_threshold": 600}) == 600
    assert error_rate(ab.COUNTING, 1000, {**by_ab, "over_threshold": 600}) == pytest.approx(0.6)


def test_vmstat_averages_skip_the_since_boot_line() -> None:
    stats = parse_vmstat(read_data("vmstat", "vmstat-during-wrk.txt"))
    assert stats is not None
    assert stats["samples"] == 9
    assert stats["cpu_user"] == pytest.approx(round((50 + 46 + 51 + 62 + 72 + 71 + 76 + 72 + 73) / 9, 2))
    assert stats["cpu_system"] == pytest.approx(round((45 + 49 + 49 + 18 + 21 + 23 + 22 + 28 + 21) / 9, 2))
    assert set(stats) >= {"cpu_idle", "cpu_iowait", "cpu_steal", "run_queue", "context_switches_s"}


def test_vmstat_without_a_per_second_sample_has_no_stats() -> None:
    first_three = "".join(read_data("vmstat", "vmstat-during-wrk.txt").splitlines(keepends=True)[:3])
    assert parse_vmstat(first_three) is None
    assert parse_vmstat("") is None


def test_wrk_report_over_a_wide_latency_spread_is_exact() -> None:
    # 500 connections against an overloaded stack: latencies from 12 us to 1.1 s.
    text = read_data("wrk", "report-wide-spread.txt")
    report = wrk_report(text)
    assert report is not None and report["histogram_read"] == "ffi"
    parsed = parse("wrk", text)
    assert report["recorded"] == parsed.requests_completed  # the undone correction adds up
    over, note = wrk_over_threshold(report, parsed.requests_completed, parsed.errors["timeout"] or 0)
    assert over == report["over_threshold"] and note is None


def test_wrk_report_that_could_not_read_the_histogram_measures_nothing_and_says_why() -> None:
    report = {"schema": "bench-stack/wrk-report/v1", "histogram_read": "none", "recorded": None}
    over, note = wrk_over_threshold(report, 100, 0)
    assert over is None and note is not None and "could not read wrk's histogram" in note
