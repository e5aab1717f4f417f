import re

import pytest
from conftest import DATA, read_data

from benchstack.kinds.loadtools import wrk
from benchstack.records.model import ParseError


def test_wrk_latency_run_gives_every_summary_figure() -> None:
    p = wrk.parse(read_data("wrk", "latency.txt"))
    assert p.tool == "wrk"
    assert p.tool_version is None
    assert p.url == "http://127.0.0.1:18080/hello/bar"
    assert p.threads == 2
    assert p.concurrency == 32
    assert p.keepalive is True
    assert p.requests_completed == 385776
    assert p.duration_s == 3.1
    assert p.rps == 124440.66
    assert p.extra["configured_duration"] == "3s"
    assert p.error_count == 0


def test_wrk_converts_microseconds_and_milliseconds() -> None:
    p = wrk.parse(read_data("wrk", "latency.txt"))
    assert p.latency_ms == {
        "mean": 0.97,
        "stdev": 4.1,
        "min": None,
        "max": 81.11,
        "p50": 0.16,
        "p75": 0.291,
        "p90": 2.33,
        "p99": 9.98,
        # no histogram without bench-stack's report script: no tail percentiles
        "p99.9": None,
        "p99.99": None,
    }


def test_wrk_converts_read_size_with_1024_multipliers() -> None:
    p = wrk.parse(read_data("wrk", "latency.txt"))
    assert p.transfer_bytes == round(58.13 * 1024 * 1024)
    assert p.extra["transfer_per_s_bytes"] == round(18.75 * 1024 * 1024)


def test_wrk_converts_thread_request_counts_with_1000_multipliers() -> None:
    p = wrk.parse(read_data("wrk", "latency.txt"))
    assert p.extra["thread_req_per_s_avg"] == 63590.0
    assert p.extra["thread_req_per_s_max"] == 106360.0


def test_wrk_without_latency_flag_has_no_percentiles() -> None:
    p = wrk.parse(read_data("wrk", "no-latency.txt"))
    assert p.latency_ms["mean"] == 4.78
    assert p.latency_ms["max"] == 170.78
    assert [p.latency_ms[k] for k in ("p50", "p75", "p90", "p99")] == [None] * 4
    assert p.requests_completed == 253008


def test_wrk_counts_non_2xx_or_3xx_as_status_errors() -> None:
    p = wrk.parse(read_data("wrk", "mixed-status.txt"))
    assert p.errors["status"] == 84886
    assert p.requests_completed == 169284
    assert p.error_count == 84886
    assert p.error_rate == pytest.approx(84886 / 169284)


def test_wrk_all_404_is_error_rate_one() -> None:
    p = wrk.parse(read_data("wrk", "non2xx.txt"))
    assert p.errors["status"] == p.requests_completed == 215943
    assert p.error_rate == 1.0


def test_wrk_read_errors_with_no_completed_request() -> None:
    p = wrk.parse(read_data("wrk", "read-errors.txt"))
    assert p.requests_completed == 0
    assert p.rps == 0.0
    assert p.errors["read"] == 49419
    assert p.error_count == 49419
    assert p.error_rate == 1.0  # read errors are attempts that never completed
    assert all(v is None for v in p.latency_ms.values())  # wrk prints 0.00us placeholders


def test_wrk_write_errors_rate_counts_failed_attempts() -> None:
    p = wrk.parse(read_data("wrk", "server-stopped.txt"))
    assert p.errors["write"] == 1574
    assert p.requests_completed == 24184
    assert p.error_rate == pytest.approx(1574 / (24184 + 1574))
    assert p.latency_ms["mean"] == pytest.approx(0.34586)


def test_wrk_timeouts_are_completed_requests_without_latency() -> None:
    p = wrk.parse(read_data("wrk", "timeouts.txt"))
    assert p.requests_completed == 12
    assert p.errors["timeout"] == 12
    assert p.error_rate == 1.0
    assert all(v is None for v in p.latency_ms.values())


def test_wrk_converts_seconds() -> None:
    p = wrk.parse(read_data("wrk", "seconds-latency.txt"))
    assert p.latency_ms["mean"] == 1000.0
    assert p.latency_ms["stdev"] == 1.04
    assert p.latency_ms["p99"] == 1000.0
    assert p.transfer_bytes == round(2.09 * 1024)
    assert p.extra["transfer_per_s_bytes"] == 713  # "712.69B"


def test_wrk_converts_minutes_gigabytes_and_metric_suffixes_synthetic() -> None:
    p = wrk.parse(read_data("wrk", "units-synthetic.txt"))
    assert p.duration_s == 60.0
    assert p.latency_ms["mean"] == 0.85
    assert p.latency_ms["stdev"] == 1200.0
    assert p.latency_ms["max"] == 90000.0
    assert p.latency_ms["p75"] == 12.34
    assert p.latency_ms["p90"] == 1250.0
    assert p.latency_ms["p99"] == 120000.0
    assert p.transfer_bytes == round(2.05 * 1024**3)
    assert p.extra["thread_req_per_s_avg"] == 1.2e6
    assert p.extra["thread_req_per_s_stdev"] == 950e3
    assert p.extra["thread_req_per_s_max"] == 2.1e9
    assert p.errors["connect"] == 7
    assert p.error_count == 7 + 11 + 3 + 42 + 1234


@pytest.mark.parametrize(
    ("text", "ms"),
    [("160.00us", 0.16), ("2.33ms", 2.33), ("1.00s", 1000.0), ("1.50m", 90000.0), ("2.00h", 7200000.0)],
)
def test_wrk_time_units(text: str, ms: float) -> None:
    assert wrk.time_ms(text) == ms


@pytest.mark.parametrize(
    ("text", "n"),
    [("0.00B", 0), ("512.00B", 512), ("1.50KB", 1536), ("2.00MB", 2097152), ("1.00TB", 1024**4)],
)
def test_wrk_binary_units(text: str, n: int) -> None:
    assert wrk.binary_bytes(text) == n


def test_wrk_unknown_unit_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="cannot read time"):
        wrk.time_ms("3.00days")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("connect-refused.txt", "unable to connect to 127.0.0.1:18099 Connection refused"),
        ("usage-error.txt", "Usage: wrk <options> <url>"),
    ],
)
def test_wrk_failure_without_summary_is_a_parse_error_with_wrks_message(name: str, message: str) -> None:
    with pytest.raises(ParseError, match="wrk printed no results") as info:
        wrk.parse(read_data("wrk", name))
    assert message in str(info.value)


def test_wrk_parser_rejects_ab_output() -> None:
    with pytest.raises(ParseError, match="not wrk output"):
        wrk.parse(read_data("ab", "normal.txt"))


def test_wrk_parser_names_missing_lines() -> None:
    text = read_data("wrk", "latency.txt").replace("Requests/sec:", "Reqs/sec:")
    with pytest.raises(ParseError, match="'Requests/sec'"):
        wrk.parse(text)


# Every capture's outcome: (requests, Requests/sec, as wrk printed them; failed requests: socket errors plus
# non-2xx/3xx), or the start of the ParseError it raises. A new capture must be added here.
WRK_CAPTURES: dict[str, tuple[int, float, int] | str] = {
    "connect-refused.txt": "wrk printed no results: unable to connect to 127.0.0.1:18099 Connection refused",
    "hung-server.txt": (0, 0.0, 0),
    "latency.txt": (385776, 124440.66, 0),
    "mixed-status.txt": (169284, 83931.56, 84886),
    "no-latency.txt": (253008, 121420.95, 0),
    "non2xx.txt": (215943, 102820.99, 215943),
    "read-errors.txt": (0, 0.0, 49419),
    "report-fast.txt": (223910, 73014.67, 0),
    "report-slow.txt": (169, 56.06, 0),
    "report-timeouts.txt": (199, 66.03, 7),
    "report-wide-spread.txt": (128349, 42323.17, 123526),
    "seconds-latency.txt": (8, 2.66, 0),
    "server-stopped.txt": (24184, 8048.69, 1574),
    "timeouts.txt": (12, 3.99, 12),
    "units-synthetic.txt": (72000000, 1200000.00, 1297),
    "usage-error.txt": "wrk printed no results: Usage: wrk <options> <url>",
}


def test_every_wrk_capture_has_its_outcome_listed() -> None:
    assert sorted(WRK_CAPTURES) == sorted(p.name for p in (DATA / "wrk").glob("*.txt"))


@pytest.mark.parametrize("name", sorted(WRK_CAPTURES))
def test_each_wrk_capture_gives_what_wrk_printed_or_its_parse_error(name: str) -> None:
    expected = WRK_CAPTURES[name]
    if isinstance(expected, str):
        with pytest.raises(ParseError, match=f"^{re.escape(expected)}"):
            wrk.parse(read_data("wrk", name))
        return
    p = wrk.parse(read_data("wrk", name))
    assert (p.requests_completed, p.rps, p.error_count) == expected
