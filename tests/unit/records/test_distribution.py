"""Whole latency distributions (benchstack.records.distribution) from real captures: wrk's histogram against
the percentiles wrk printed in the same run, ab's against its own -g file, httperf's against its own summary
(tests/data/README.md: latency/ and httperf/hist-*)."""

import gzip
import math
import re

import pytest
from conftest import DATA, read_data

from benchstack.kinds.loadtools import ab, parse, wrk
from benchstack.kinds.loadtools.perrequest import ab_requests, wrk_report
from benchstack.kinds.loadtools.wrk import time_ms
from benchstack.records import distribution
from benchstack.records.distribution import (
    Distribution,
    DistributionError,
    bucket,
    bucket_width_us,
    from_counts,
    from_dict,
    from_values,
    merge,
)
from benchstack.records.model import ParseError

WRK_CAPTURES = ["wrk-fast", "wrk-slow", "wrk-pair-lg1", "wrk-pair-lg2", "wrk-late-lg1", "wrk-late-lg2"]
HTTPERF_CAPTURES = ["ok", "slow", "timeouts", "5xx", "reset", "fd-unavail", "addrunavail"]


def read_tsv(folder: str, name: str) -> str:
    path = DATA / folder / name
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes()).decode("utf-8")
    return path.read_text(encoding="utf-8")


def nearest_rank_directly(values: list[int], p: float) -> int:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(round(p / 100 * len(ordered), 9))) - 1]


def half_print_digit_us(ms: float) -> float:
    """Half of the last digit wrk prints (2 decimals of us, ms or s: "635.00us", "9.55ms", "1.00s")."""
    if ms < 1:
        return 0.005
    return 5.0 if ms < 1000 else 5000.0


# ---------------------------------------------------------------- wrk


@pytest.mark.parametrize("name", WRK_CAPTURES)
def test_wrk_histogram_percentiles_are_within_one_bucket_of_what_wrk_printed(name: str) -> None:
    text = read_data("latency", f"{name}.txt")
    dist = parse("wrk", text).latency_dist
    assert dist is not None and dist.source == "wrk" and dist.corrected
    printed = {int(p): time_ms(v) for p, v in re.findall(r"^\s+(\d+)%\s+(\S+)\s*$", text, re.M)}
    exact = wrk_report(text)["latency_us"]  # wrk's own percentiles, to the microsecond, same run
    for p in (50, 75, 90, 99):
        ours = dist.percentile_us(p)
        width = bucket_width_us(wrk.RESOLUTION, ours)
        # wrk ranks round(p/100 * N + 0.5), nearest rank is ceil(p/100 * N): one sample apart when
        # p/100 * N is whole (wrk-slow's p50), so the neighbouring bucket's first value is within one bucket.
        assert abs(exact[f"p{p}"] - ours) <= width, (p, ours, exact[f"p{p}"])
        # and wrk's printed figure, rounded to 2 decimals of its unit
        assert abs(printed[p] * 1000 - ours) <= width + half_print_digit_us(printed[p]), (p, ours, printed[p])


def test_wrk_histogram_holds_every_sample_of_the_corrected_histogram_and_counts_real_requests() -> None:
    text = read_data("latency", "wrk-slow.txt")
    report = wrk_report(text)
    parsed = parse("wrk", text)
    dist = parsed.latency_dist
    assert dist is not None
    # wrk added synthetic samples for coordinated omission: 426 samples for 266 requests
    assert (dist.samples, report["samples"]) == (426, 426)
    assert dist.requests == report["recorded"] == parsed.requests_completed == 266
    # too few real requests for the tail percentiles, and the cell says why
    assert parsed.latency_ms["p99.9"] is None and parsed.latency_ms["p99.99"] is None
    assert dist.to_dict()["unsupported"] == {
        "p99.9": "266 requests; p99.9 needs at least 1,000",
        "p99.99": "266 requests; p99.99 needs at least 10,000",
    }


def test_wrk_with_enough_requests_has_both_tail_percentiles_in_order() -> None:
    parsed = parse("wrk", read_data("latency", "wrk-fast.txt"))
    lat = parsed.latency_ms
    assert parsed.latency_dist is not None and parsed.latency_dist.requests == 111330
    order = [lat[k] for k in ("p50", "p75", "p90", "p99", "p99.9", "p99.99")]
    assert None not in order and order == sorted(order)
    assert lat["p99.99"] <= lat["max"]  # wrk printed max 30.06ms
    assert lat["min"] == 0.035  # wrk prints no minimum: the histogram's lowest value


def test_wrk_responses_slower_than_its_timeout_are_not_requests_of_the_distribution() -> None:
    parsed = parse("wrk", read_data("latency", "wrk-timeouts.txt"))  # --timeout 1s: 8 of 176 timed out
    dist = parsed.latency_dist
    assert dist is not None and (parsed.requests_completed, parsed.errors["timeout"]) == (176, 8)
    assert dist.requests == 168 == wrk_report(read_data("latency", "wrk-timeouts.txt"))["recorded"]
    assert dist.counts[-1][0] < 1_000_000


def test_a_wrk_histogram_that_does_not_add_up_to_its_samples_is_refused() -> None:
    text = read_data("latency", "wrk-slow.txt").replace('"histogram":[[55,2],', '"histogram":[[55,1],', 1)
    assert text != read_data("latency", "wrk-slow.txt")
    with pytest.raises(ParseError, match="holds 425 samples, the line says 426"):
        parse("wrk", text)


def test_an_ab_g_file_cut_inside_its_last_line_is_refused() -> None:
    tsv = read_data("latency", "ab-slow.tsv")
    with pytest.raises(ParseError, match="cut short"):
        ab_requests(tsv[:-3])


def test_wrk_run_where_every_request_failed_has_no_distribution() -> None:
    parsed = parse("wrk", read_data("latency", "wrk-drop.txt"))
    assert parsed.requests_completed == 0 and parsed.latency_dist is None


def test_the_lua_script_buckets_wrk_values_with_the_bits_python_expects() -> None:
    lua = (DATA.parent.parent / "benchstack" / "data" / "wrk_report.lua").read_text(encoding="utf-8")
    exact_below = int(re.search(r"^local EXACT_BELOW = (\d+)", lua, re.M).group(1))
    assert exact_below == 1 << wrk.RESOLUTION.bits
    # and the values in a real capture are already buckets: bucketing again changes nothing
    histogram = wrk_report(read_data("latency", "wrk-fast.txt"))["histogram"]
    assert all(bucket(v, wrk.RESOLUTION.bits) == v for v, _ in histogram)
    assert len({v for v, _ in histogram}) == len(histogram)


# ---------------------------------------------------------------- ab


@pytest.mark.parametrize(
    ("folder", "name"),
    [
        ("latency", "ab-slow.tsv"),
        ("latency", "ab-pair-lg1.tsv.gz"),
        ("latency", "ab-late-lg2.tsv.gz"),
        ("ab", "gnuplot-slow.tsv"),
        ("ab", "gnuplot-mixed.tsv"),
        ("multi", "ab-lg1.tsv"),
    ],
)
def test_ab_percentiles_from_the_distribution_equal_those_of_its_g_file(folder: str, name: str) -> None:
    times = [ms for _, ms in ab_requests(read_tsv(folder, name))]
    dist = from_values(ab.RESOLUTION, (ms * 1000 for ms in times))
    assert dist.samples == dist.requests == len(times)
    figures = dist.latency_ms()
    for key, p in (("p50", 50), ("p75", 75), ("p90", 90), ("p99", 99), ("p99.9", 99.9), ("p99.99", 99.99)):
        needed = distribution.TAIL_MIN_REQUESTS.get(key, (p, 0))[1]
        expected = nearest_rank_directly(times, p) if len(times) >= needed else None
        assert figures[key] == expected, key
    assert (dist.counts[0][0], dist.counts[-1][0]) == (min(times) * 1000, max(times) * 1000)


def test_ab_distribution_has_ab_s_1_ms_resolution() -> None:
    dist = from_values(
        ab.RESOLUTION, (ms * 1000 for _, ms in ab_requests(read_data("latency", "ab-slow.tsv")))
    )
    assert dist.unit_us == 1000 and all(v % 1000 == 0 for v, _ in dist.counts)
    assert not dist.corrected


# ---------------------------------------------------------------- httperf


@pytest.mark.parametrize("name", HTTPERF_CAPTURES)
def test_httperf_p50_is_its_own_median_and_the_histogram_holds_every_reply(name: str) -> None:
    text = read_data("httperf", f"hist-{name}.txt")
    parsed = parse("httperf", text)
    dist = parsed.latency_dist
    assert dist is not None and dist.samples == parsed.requests_completed
    median = float(re.search(r"median ([\d.]+)", text).group(1))
    assert dist.percentile_ms(50) == median
    low, high = (float(x) for x in re.search(r"min ([\d.]+) avg [\d.]+ max ([\d.]+)", text).groups())
    # bins are 1 ms wide and stored at their centres
    assert abs(dist.counts[0][0] / 1000 - low) <= 0.5 and abs(dist.counts[-1][0] / 1000 - high) <= 0.5


def test_httperf_slow_answers_show_in_the_upper_percentiles() -> None:
    # every 8th answer took 300 ms, the others 0-90 ms
    lat = parse("httperf", read_data("httperf", "hist-slow.txt")).latency_ms
    assert lat["p75"] < 100 <= 300 <= lat["p90"] < 400
    assert lat["p99.9"] is None  # 500 requests


def test_httperf_timed_out_requests_are_errors_not_latencies() -> None:
    parsed = parse("httperf", read_data("httperf", "hist-timeouts.txt"))
    assert parsed.errors["timeout"] == 63 and parsed.requests_completed == 437
    assert parsed.latency_dist is not None and parsed.latency_dist.samples == 437
    # the 300 ms answers were aborted at the 0.2 s timeout: none is in the distribution
    assert parsed.latency_dist.counts[-1][0] < 200_000
    assert parsed.latency_ms["p99"] < 200


def test_httperf_with_enough_requests_has_p99_9() -> None:
    lat = parse("httperf", read_data("httperf", "hist-ok.txt")).latency_ms
    assert lat["p99.9"] is not None and lat["p99.99"] is None  # 2,500 requests
    assert lat["p99"] <= lat["p99.9"] <= lat["max"] + 0.5


def test_httperf_without_v_v_has_no_histogram_and_says_so() -> None:
    parsed = parse("httperf", read_data("httperf", "ok.txt"))
    assert parsed.latency_dist is None and parsed.latency_ms["p90"] is None
    assert any("printed no histogram" in n for n in parsed.notes)


def test_httperf_bins_over_a_second_keep_their_centre() -> None:
    # answers held 2 s: bin centres like 2004.5 ms stay exact (12 bits of 0.5 ms units: up to 2047.5 ms)
    dist = parse("httperf", read_data("httperf", "hist-fd-unavail.txt")).latency_dist
    assert dist is not None and all(v % 1000 == 500 for v, _ in dist.counts)


# ---------------------------------------------------------------- the encoding


def test_buckets_are_exact_below_2_to_the_bits_and_within_the_relative_precision_above() -> None:
    for bits in (9, 11, 12):
        assert all(bucket(n, bits) == n for n in range(1 << bits))
        for n in (1 << bits, 3001, 123_457, 9_999_999, 2**40 + 12345):
            b = bucket(n, bits)
            assert b <= n and n - b < 2 ** (n.bit_length() - bits) and (n - b) / n < 2 ** (1 - bits)
            assert bucket(b, bits) == b


def test_merging_sums_every_sample_and_refuses_different_kinds() -> None:
    a = from_values(ab.RESOLUTION, [1000, 2000, 2000])
    b = from_values(ab.RESOLUTION, [2000, 5000])
    m = merge([a, b])
    assert m.counts == ((1000, 1), (2000, 3), (5000, 1)) and m.requests == 5
    with pytest.raises(DistributionError, match="different kinds"):
        merge([a, from_counts(wrk.RESOLUTION, [(1000, 1)])])


def test_a_stored_distribution_round_trips_and_bad_ones_are_refused() -> None:
    dist = parse("wrk", read_data("latency", "wrk-fast.txt")).latency_dist
    assert dist is not None
    stored = dist.to_dict()
    assert from_dict(stored) == dist
    assert distribution.validate(stored) == []
    bad_cases = [
        ({**stored, "counts": list(reversed(stored["counts"]))}, "sorted by value"),
        ({**stored, "samples": stored["samples"] + 1}, "sum of the counts"),
        ({**stored, "unit_us": 0}, "unit_us and significant_bits must be integers >= 1"),
        ({**stored, "counts": [[513, 1]]}, "not a bucket"),
        ({**stored, "counts": [[600, 0]]}, "count>0"),
        ({**stored, "source": None}, "source must name a load tool"),
    ]
    for bad, problem in bad_cases:
        assert any(problem in p for p in distribution.validate(bad)), problem
        with pytest.raises(DistributionError):
            from_dict(bad)
    # Whether its unit, bits and correction are its source's is the caller's check, with the adapter's.
    other = {**stored, "unit_us": 1000, "counts": [[1000, 3]], "samples": 3}
    assert from_dict(other).unit_us == 1000
    assert distribution.validate(other, wrk.RESOLUTION) == ["latency_dist.unit_us must be 1 for wrk"]
    assert distribution.validate(other, ab.RESOLUTION) == [
        "latency_dist.significant_bits must be 11 for ab",
        "latency_dist.corrected must be false for ab",
    ]


def test_percentiles_of_an_empty_distribution_are_null() -> None:
    empty = Distribution("ab", 1000, (), 0, False, 11)
    assert set(empty.latency_ms().values()) == {None}
    assert empty.moments_ms()["mean"] is None
