import pytest
from conftest import read_data

from benchstack.kinds.loadtools import parse
from benchstack.kinds.loadtools.httperf import httperf_command
from benchstack.records.model import Parsed, ParseError


def httperf(name: str) -> Parsed:
    return parse("httperf", read_data("httperf", name))


def test_httperf_reads_replies_rate_latency_and_the_url_from_its_echoed_command() -> None:
    p = httperf("ok.txt")
    assert p.url == "http://127.0.0.1:80/"
    assert p.requests_completed == 1000
    assert p.duration_s == 4.995
    lat = p.latency_ms
    assert lat["min"] is not None and lat["p50"] is not None and lat["max"] is not None
    assert lat["min"] <= lat["p50"] <= lat["max"]
    assert p.latency_ms["p99"] is None  # httperf prints no percentiles; none are made up
    assert p.error_count == 0 and p.error_rate == 0.0
    assert p.keepalive is False
    assert p.transfer_bytes == 853 * 1000


@pytest.mark.parametrize(
    ("name", "test_duration_s", "request_rate"),
    [("ok.txt", 4.995, 200.2), ("keepalive-calls5.txt", 2.993, 501.2), ("status404.txt", 2.992, 100.3)],
)
def test_httperf_rps_is_the_request_rate_httperf_printed_when_every_request_got_a_reply(
    name: str, test_duration_s: float, request_rate: float
) -> None:
    # "Total: ... test-duration 4.995 s" and "Request rate: 200.2 req/s" as httperf printed them (one decimal)
    p = httperf(name)
    assert p.duration_s == test_duration_s
    assert p.rps == pytest.approx(request_rate, abs=0.05)


def test_httperf_rps_leaves_out_the_requests_that_timed_out() -> None:
    # httperf printed "Request rate: 47.4 req/s": 200 requests, of which 50 got no reply before the timeout.
    p = httperf("client-timeouts.txt")
    assert p.rps == pytest.approx(47.4 * 150 / 200, abs=0.05)


def test_httperf_concurrency_is_the_peak_it_observed() -> None:
    assert httperf("ok.txt").concurrency == 6
    assert httperf("keepalive-calls5.txt").concurrency == 11


def test_httperf_refused_connections_are_connect_errors_over_all_attempts() -> None:
    p = httperf("connrefused.txt")
    assert p.requests_completed == 0
    assert p.errors["connect"] == 200
    assert p.error_count == 200 and p.error_rate == 1.0
    assert p.latency_ms["mean"] is None  # httperf prints 0.0 when nothing completed: not a latency


def test_httperf_4xx_replies_are_status_errors() -> None:
    p = httperf("status404.txt")
    assert p.errors["status"] == 300 and p.requests_completed == 300
    assert p.error_rate == 1.0


def test_httperf_responses_slower_than_its_timeout_are_timeout_errors() -> None:
    p = httperf("client-timeouts.txt")
    # Every fourth answer slept 0.5 s against a 0.3 s timeout.
    assert p.errors["timeout"] == 50
    assert p.requests_completed == 150
    assert p.error_count == 50
    assert p.error_rate == pytest.approx(50 / 200)
    assert p.latency_ms["max"] < 300  # the slow ones are not in the latency figures


def test_httperf_with_several_calls_per_connection_keeps_only_the_mean_reply_time() -> None:
    p = httperf("keepalive-calls5.txt")
    assert p.keepalive is True and p.requests_completed == 1500
    assert p.latency_ms["mean"] is not None
    assert p.latency_ms["p50"] is None and p.latency_ms["max"] is None
    assert any("5 calls per connection" in n for n in p.notes)


def test_httperf_parser_rejects_other_output() -> None:
    with pytest.raises(ParseError, match="not httperf output"):
        parse("httperf", read_data("ab", "normal.txt"))
    with pytest.raises(ParseError, match="httperf printed no results: httperf: connect"):
        parse("httperf", "httperf: connect: Invalid argument\n")


def test_httperf_command_offers_rate_for_duration_with_a_timeout_and_asks_for_its_histogram() -> None:
    cmd = httperf_command("http://10.0.0.5:8004/hello/bar?x=1", 500, 10, 0.3)
    assert cmd == [
        "httperf", "--verbose", "--verbose", "--hog", "--server", "10.0.0.5", "--port", "8004",
        "--uri", "/hello/bar?x=1",
        "--rate", "500", "--num-conns", "5000", "--num-calls", "1", "--timeout", "0.3",
    ]  # fmt: skip


def test_httperf_command_always_has_a_timeout() -> None:
    assert httperf_command("http://h:80/", 1, 1)[-2:] == ["--timeout", "5"]
    with pytest.raises(ValueError, match="rate must be a positive integer"):
        httperf_command("http://h:80/", 0, 1)


# ---------------------------------------------------------------- error kinds, real captures (issue 18)


def test_httperf_reset_connections_are_read_errors_and_not_in_the_latency() -> None:
    p = httperf("hist-reset.txt")  # the server reset every third connection after reading the request
    assert (p.errors["read"], p.requests_completed) == (100, 200)
    assert p.error_count == 100 and p.error_rate == pytest.approx(100 / 300)
    assert p.latency_dist is not None and p.latency_dist.samples == 200


def test_httperf_out_of_descriptors_is_an_exception_error() -> None:
    p = httperf("hist-fd-unavail.txt")  # ulimit -n 40 while every answer took 2 s
    assert p.errors["exceptions"] == 78 and p.requests_completed == 72
    assert p.error_rate == pytest.approx(78 / 150)
    assert p.latency_ms["p50"] == 2004.5  # httperf's own median


def test_httperf_out_of_ports_is_an_exception_error() -> None:
    # httperf 0.9.0 counts EADDRNOTAVAIL as "other" (its addrunavail counter is never incremented)
    p = httperf("hist-addrunavail.txt")
    assert p.errors["exceptions"] == 90 and p.requests_completed == 10
    assert p.error_rate == pytest.approx(90 / 100)


def test_httperf_5xx_replies_are_status_errors_with_a_latency() -> None:
    p = httperf("hist-5xx.txt")  # nginx answered 503 to about half of the requests
    assert p.errors["status"] == 295 and p.requests_completed == 600
    assert p.error_rate == pytest.approx(295 / 600)
    assert p.latency_dist is not None and p.latency_dist.samples == 600  # 5xx answers have a latency too


def test_httperf_output_whose_histogram_misses_connections_is_refused() -> None:
    text = read_data("httperf", "hist-ok.txt").replace("\n             1.5 ", "\n             1.5 1", 1)
    with pytest.raises(ParseError, match="lifetime histogram holds .* connections for 2500 replies"):
        parse("httperf", text)
