"""The report's latency distributions: each load point's repetitions pooled beside the median of their
percentiles, the percentile-spectrum plots, and cells.csv's tail columns, from real captures."""

import csv
import math
from pathlib import Path
from typing import Any

import pytest
from cell_records import records
from conftest import STORED_META, read_data

from benchstack.kinds.loadtools import ab, parse
from benchstack.kinds.loadtools.perrequest import ab_requests
from benchstack.records import distribution
from benchstack.report.build import distribution_rows, write_report
from benchstack.report.latency import latency_text
from benchstack.results.cell import cell_to_dict, make_cell, write_cell


def cell(tool: str, name: str, stack: str, repetition: int, **meta: Any) -> dict[str, Any]:
    folder = "latency" if name.startswith(("wrk-", "ab-")) else tool
    parsed = parse(tool, read_data(folder, f"{name}.txt"))
    if tool == "ab":
        times = [ms * 1000 for _, ms in ab_requests(read_data(folder, f"{name}.tsv"))]
        distribution.attach(parsed, distribution.from_values(ab.RESOLUTION, times), True)
    meta = {**STORED_META, "experiment": "demo", "target": "t1", "loadgen": "t1", "mode": "loopback", **meta}
    return cell_to_dict(make_cell(parsed, stack=stack, repetition=repetition, **meta))


def wrk_repetitions() -> list[dict[str, Any]]:
    # two real wrk runs of the same load point (c16), as two repetitions of one stack
    return [cell("wrk", f"wrk-pair-lg{n}", "a-stack", n, duration_s=4) for n in (1, 2)]


def test_pooled_percentiles_come_from_every_request_of_every_repetition() -> None:
    reps = wrk_repetitions()
    pooled_row, median_row = distribution_rows(records(reps))
    merged = distribution.merge([distribution.from_dict(c["latency_dist"]) for c in reps])
    assert pooled_row["over repetitions"] == "pooled" and median_row["over repetitions"] == "median"
    assert pooled_row["requests"] == f"{merged.requests:,}" == "133,242"
    # the pool's to three significant digits; the median of two to what their range supports
    assert pooled_row["p99 ms"] == latency_text([merged.percentile_ms(99)])
    assert len(pooled_row["p99 ms"].replace(".", "").lstrip("0")) == 3
    p99s = sorted(c["latency_ms"]["p99"] for c in reps)
    assert median_row["p99 ms"] == latency_text(p99s)
    assert float(median_row["p99 ms"]) == pytest.approx((p99s[0] + p99s[1]) / 2, abs=0.05)
    assert pooled_row["p99 ms"] != median_row["p99 ms"]  # a median of percentiles is not the pool's


def test_a_disturbed_repetition_is_pooled_with_nothing() -> None:
    first, second = wrk_repetitions()
    alone = distribution_rows(records([first]))
    pooled_row, median_row = distribution_rows(records([first, {**second, "disturbed": ["steal 12 %"]}]))
    assert pooled_row["n"] == median_row["n"] == "1 (+1 disturbed)"
    assert {k: v for k, v in pooled_row.items() if k != "n"} == {
        k: v for k, v in alone[0].items() if k != "n"
    }
    assert {k: v for k, v in median_row.items() if k != "n"} == {
        k: v for k, v in alone[1].items() if k != "n"
    }


def test_pooling_reaches_tail_percentiles_no_single_repetition_supports() -> None:
    # five repetitions of 2,000 ab requests: 10,000 together, enough for p99.99; none alone is
    reps = [cell("ab", "ab-slow", "a-stack", n, requests=2000) for n in range(1, 6)]
    pooled_row, median_row = distribution_rows(records(reps))
    assert all(c["latency_ms"]["p99.99"] is None for c in reps)
    assert median_row["p99.99 ms"] == "-" and pooled_row["p99.99 ms"] != "-"
    assert pooled_row["requests"] == "10,000" and median_row["requests"] == "2,000"


@pytest.mark.drawn
def test_report_has_a_labelled_distribution_table_spectrum_plots_and_tail_columns(tmp_path: Path) -> None:
    for c in wrk_repetitions() + [cell("wrk", "wrk-fast", "b-stack", 1, duration_s=3, concurrency=32)]:
        write_cell(tmp_path, c)
    text = write_report(tmp_path).read_text(encoding="utf-8")
    assert "## Latency distributions" in text
    assert "| a-stack | wrk | c16 | 2 | pooled | 133,242 |" in text
    assert "| a-stack | wrk | c16 | 2 | median | 66,621 |" in text
    assert "wrk: corrected for coordinated omission by wrk itself" in text
    plots = sorted(p.name for p in (tmp_path / "plots").glob("spectrum-*"))
    assert plots == ["spectrum-wrk-c16.png", "spectrum-wrk-c32.png"]  # one per load point
    assert (tmp_path / "plots" / plots[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<h2>Latency distributions</h2>" in page and "<td>pooled</td>" in page
    with (tmp_path / "cells.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert "latency_dist" not in rows[0] and rows[0]["latency_ms.p99.99"] != ""


def test_a_run_without_distributions_has_no_distribution_section_or_spectrum(tmp_path: Path) -> None:
    old = cell("wrk", "latency", "a-stack", 1, duration_s=3)  # tests/data/wrk/latency.txt: no histogram
    assert old["latency_dist"] is None
    write_cell(tmp_path, old)
    text = write_report(tmp_path).read_text(encoding="utf-8")
    assert "## Latency distributions" not in text
    assert not list((tmp_path / "plots").glob("spectrum-*"))


def test_the_spectrum_goes_as_far_as_the_requests_support_and_meets_the_percentiles() -> None:
    from benchstack.report.plots import nines, spectrum_points

    small = distribution.from_dict(cell("ab", "ab-slow", "s", 1, requests=2000)["latency_dist"])
    points = spectrum_points(small)
    assert points[-1][0] == math.log10(2000)  # 3.3 nines: past p99.9, short of p99.99
    assert [y for _, y in points] == sorted(y for _, y in points)
    by_x = dict(points)
    assert by_x[nines(50)] == small.percentile_ms(50)
    big = distribution.from_dict(wrk_repetitions()[0]["latency_dist"])
    assert spectrum_points(big)[-1] == (4.0, big.percentile_ms(99.99))


def test_the_spectrum_turns_to_a_log_latency_axis_when_a_tail_dwarfs_the_medians() -> None:
    from benchstack.report.plots import log_scale, spectrum_points

    def points(name: str) -> list[tuple[float, float]]:
        dist = parse("wrk", read_data("latency", f"{name}.txt")).latency_dist
        assert dist is not None
        return spectrum_points(dist)

    fast, slow = points("wrk-fast"), points("wrk-slow")  # 0.6 to 30 ms; 0.25 ms to 1 s
    assert not log_scale([fast])
    assert log_scale([slow]) and log_scale([fast, slow])
