import re

import pytest
from conftest import DATA, read_data

from benchstack.kinds.loadtools import ab, parse
from benchstack.records.model import ParseError


def test_ab_normal_run_gives_every_summary_figure() -> None:
    p = ab.parse(read_data("ab", "normal.txt"))
    assert p.tool == "ab"
    assert p.tool_version == "2.3"
    assert p.url == "http://127.0.0.1:18080/hello/bar"
    assert p.concurrency == 50
    assert p.threads is None
    assert p.keepalive is False
    assert p.keepalive_requests is None
    assert p.requests_completed == 2000
    assert p.duration_s == 0.105
    assert p.rps == 18967.23
    assert p.transfer_bytes == 306000
    assert p.error_count == 0
    assert p.error_rate == 0.0


def test_ab_latency_mean_stdev_min_max_are_the_total_row_and_the_rest_its_percentiles() -> None:
    p = ab.parse(read_data("ab", "normal.txt"))
    assert p.latency_ms == {
        "mean": 3.0,
        "stdev": 0.6,
        "min": 1.0,
        "max": 5.0,
        "p50": 3.0,
        "p75": 3.0,
        "p90": 3.0,
        "p99": 4.0,
        # no per-request data in ab's own output: the tail percentiles need its -g file
        "p99.9": None,
        "p99.99": None,
    }
    assert p.extra["time_per_request_all_ms"] == 0.053
    assert p.extra["p100_ms"] == 5.0


@pytest.mark.parametrize(
    ("folder", "name", "mean", "time_per_request"),
    [
        ("ab", "normal.txt", 3.0, 2.636),
        # 50 clients against an overloaded stack: ab's "Time per request" (50 x 3.968 s / 3000) is above the
        # mean of the requests' own times (Total: 65), as 147.65 was above 114.58 ms in the issue's cell.
        ("multi", "ab-lg1.txt", 65.0, 66.129),
        ("latency", "ab-slow.txt", 60.0, 61.455),
    ],
)
def test_ab_mean_is_the_per_request_mean_not_abs_time_per_request(
    folder: str, name: str, mean: float, time_per_request: float
) -> None:
    p = ab.parse(read_data(folder, name))
    assert p.latency_ms["mean"] == mean
    assert p.extra["time_per_request_ms"] == time_per_request


def test_ab_keepalive_run_reports_keepalive_requests() -> None:
    p = ab.parse(read_data("ab", "keepalive.txt"))
    assert p.keepalive is True
    assert p.keepalive_requests == 5000
    assert p.concurrency == 100
    assert p.requests_completed == 5000
    assert p.rps == 98386.46
    assert p.latency_ms["mean"] == 1.0


def test_ab_counts_non_2xx_as_status_errors() -> None:
    p = ab.parse(read_data("ab", "non2xx.txt"))
    # "Failed requests: 0" yet every response was a 404: Non-2xx is its own counter.
    assert p.extra["failed_requests"] == 0
    assert p.errors["status"] == 1000
    assert p.requests_completed == 1000
    assert p.error_count == 1000
    assert p.error_rate == 1.0


def test_ab_reads_length_failures_from_breakdown() -> None:
    p = ab.parse(read_data("ab", "length-failures.txt"))
    assert p.errors == {
        "connect": 0,
        "read": 0,
        "write": 0,
        "timeout": 0,
        "status": 0,
        "length": 248,
        "exceptions": 0,
        "over_threshold": None,
    }
    assert p.error_count == 248
    assert p.error_rate == 0.248


def test_ab_does_not_double_count_non_2xx_that_also_failed_length() -> None:
    p = ab.parse(read_data("ab", "mixed-status-length.txt"))
    assert p.errors["status"] == 503
    assert p.errors["length"] == 503
    assert p.error_count == 503
    assert p.error_rate == 0.503
    assert any("both Non-2xx and Length" in n for n in p.notes)


def test_ab_counts_one_reset_once_though_ab_counts_it_three_times() -> None:
    p = ab.parse(read_data("ab", "receive-errors.txt"))
    assert p.extra["failed_requests"] == 300
    assert (p.errors["read"], p.errors["length"], p.errors["exceptions"]) == (100, 100, 100)
    assert p.requests_completed == 300
    assert p.error_count == 100
    assert p.error_rate == pytest.approx(1 / 3)


def test_ab_notes_empty_replies_it_counts_as_success() -> None:
    p = ab.parse(read_data("ab", "empty-replies.txt"))
    assert p.requests_completed == 200
    assert p.transfer_bytes == 0
    assert p.error_count == 0
    assert any("received 0 bytes" in n for n in p.notes)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("connect-refused.txt", "apr_socket_recv: Connection refused (111)"),
        ("timeout-fatal.txt", "apr_pollset_poll: The timeout specified has expired (70007)"),
        ("receive-reset-fatal.txt", "apr_socket_recv: Connection reset by peer (104)"),
    ],
)
def test_ab_fatal_error_without_summary_is_a_parse_error_with_abs_message(name: str, message: str) -> None:
    with pytest.raises(ParseError, match="ab printed no results") as info:
        ab.parse(read_data("ab", name))
    assert message in str(info.value)


def test_ab_parser_rejects_wrk_output() -> None:
    with pytest.raises(ParseError, match="not ApacheBench output"):
        ab.parse(read_data("wrk", "latency.txt"))


def test_ab_parser_names_missing_summary_lines() -> None:
    text = read_data("ab", "normal.txt").replace("Complete requests:", "Completed requests:")
    with pytest.raises(ParseError, match="'Complete requests'"):
        ab.parse(text)


def test_ab_failed_requests_without_breakdown_is_a_parse_error() -> None:
    text = read_data("ab", "length-failures.txt").replace(
        "   (Connect: 0, Receive: 0, Length: 248, Exceptions: 0)\n", ""
    )
    with pytest.raises(ParseError, match="248 failed requests"):
        ab.parse(text)


def test_ab_older_breakdown_without_receive_is_read() -> None:
    text = read_data("ab", "length-failures.txt").replace("Receive: 0, ", "")
    assert ab.parse(text).errors["length"] == 248


def test_ab_write_errors_count_as_write() -> None:
    text = read_data("ab", "normal.txt").replace(
        "Failed requests:        0\n", "Failed requests:        0\nWrite errors:           7\n"
    )
    p = ab.parse(text)
    assert p.errors["write"] == 7
    assert p.error_count == 7


def test_parse_dispatches_by_tool_name() -> None:
    assert parse("ab", read_data("ab", "normal.txt")).rps == 18967.23
    with pytest.raises(ValueError, match="unknown tool 'vegeta'"):
        parse("vegeta", "")


# Every capture's outcome: (Complete requests, Requests per second, as ab printed them; distinct failed
# requests, see benchstack.records.model), or the start of the ParseError it raises. A new capture must be
# added here.
AB_CAPTURES: dict[str, tuple[int, float, int] | str] = {
    "connect-refused.txt": "ab printed no results: apr_socket_recv: Connection refused (111)",
    "empty-replies.txt": (200, 5649.72, 0),
    "gnuplot-mixed.txt": (1000, 49972.52, 516),
    "gnuplot-slow.txt": (400, 197.48, 0),
    "keepalive.txt": (5000, 98386.46, 0),
    "length-failures.txt": (1000, 21292.00, 248),
    "mixed-status-length.txt": (1000, 21117.09, 503),
    "non2xx.txt": (1000, 20374.90, 1000),
    "normal.txt": (2000, 18967.23, 0),
    "receive-errors.txt": (300, 2006.50, 100),
    "receive-reset-fatal.txt": "ab printed no results: apr_socket_recv: Connection reset by peer (104)",
    "timeout-fatal.txt": "ab printed no results: apr_pollset_poll: The timeout specified has expired (70007)",
}


def test_every_ab_capture_has_its_outcome_listed() -> None:
    assert sorted(AB_CAPTURES) == sorted(p.name for p in (DATA / "ab").glob("*.txt"))


@pytest.mark.parametrize("name", sorted(AB_CAPTURES))
def test_each_ab_capture_gives_what_ab_printed_or_its_parse_error(name: str) -> None:
    expected = AB_CAPTURES[name]
    if isinstance(expected, str):
        with pytest.raises(ParseError, match=f"^{re.escape(expected)}"):
            ab.parse(read_data("ab", name))
        return
    p = ab.parse(read_data("ab", name))
    assert (p.requests_completed, p.rps, p.error_count) == expected
