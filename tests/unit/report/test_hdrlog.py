"""HdrHistogram interval logs (issue 41): each cell's distribution as ``hdr/<cell id>.hlog``, written with
the hdrhistogram package and read back here with the package's own log reader, from real captures (wrk's
histogram, ab's per-request file, httperf's bins): the same samples bucket by bucket within HdrHistogram's
3 significant digits, the same percentiles within 0.1 %, one interval per cell over the cell's window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cell_records import record, records
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
from test_report_latency import cell

from benchstack.cli import main
from benchstack.kinds.loadtools import wrk
from benchstack.records import distribution
from benchstack.records.distribution import Distribution
from benchstack.report.build import write_report
from benchstack.report.hdrlog import HOUR_NS, histogram_of, log_text, write_hdr_logs
from benchstack.results.cell import json_cell_id, write_cell
from benchstack.results.layout import HDR_DIR

LADDER = (0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 100)


def read_log(path: Path) -> list[HdrHistogram]:
    """Every interval of a log, as the package's reader decodes them."""
    reader = HistogramLogReader(str(path), HdrHistogram(1, HOUR_NS, 3))
    try:
        intervals = []
        while (interval := reader.get_next_interval_histogram()) is not None:
            intervals.append(interval)
        return intervals
    finally:
        reader.close()


def summed(intervals: list[HdrHistogram]) -> HdrHistogram:
    total = HdrHistogram(1, HOUR_NS, 3)
    for interval in intervals:
        total.add(interval)
    return total


def value_at_rank(dist: Distribution, rank: int) -> int:
    seen = 0
    for value, count in dist.counts:
        seen += count
        if seen >= rank:
            return value
    raise AssertionError(f"rank {rank} past {seen} samples")


def assert_same_distribution(read: HdrHistogram, dist: Distribution) -> None:
    """``read`` holds ``dist``'s samples: every count in the HdrHistogram bucket of its value (a bucket is at
    most 1/1024 of its values wide: 3 significant digits), nothing else, and each percentile within 0.1 %
    of the sample of the same rank (HdrHistogram rounds p x n to the nearest rank)."""
    assert read.get_total_count() == dist.samples
    expected: dict[int, int] = {}
    for value_us, count in dist.counts:
        ns = value_us * 1000
        lowest = read.get_lowest_equivalent_value(ns)
        assert read.get_highest_equivalent_value(ns) - lowest < max(1, ns / 1000)
        expected[lowest] = expected.get(lowest, 0) + count
    assert {value: read.get_count_at_value(value) for value in expected} == expected
    for p in LADDER:
        want_ns = 1000 * value_at_rank(dist, max(1, int(p * dist.samples / 100 + 0.5)))
        got = read.get_value_at_percentile(p)
        assert read.values_are_equivalent(got, want_ns), (p, got, want_ns)
        assert abs(got - want_ns) <= want_ns / 1000, (p, got, want_ns)


def record_distribution(one: dict[str, Any]) -> Distribution | None:
    """The distribution of a cell written as JSON, as the record read from it gives it."""
    return record(one).distribution()


def httperf_cell() -> dict[str, Any]:
    return cell("httperf", "hist-slow", "h", 1, rate=200, duration_s=5)


CELLS = {
    "wrk": lambda: cell("wrk", "wrk-pair-lg1", "a-stack", 1, duration_s=4),
    "ab": lambda: cell("ab", "ab-slow", "a-stack", 1, requests=2000),
    "httperf": httperf_cell,
}


@pytest.mark.parametrize("tool", list(CELLS))
def test_a_cells_log_reads_back_as_its_distribution_over_its_window(tool: str, tmp_path: Path) -> None:
    one = {
        **CELLS[tool](),
        "window": {"start": "2025-01-02T03:04:05.250Z", "end": "2025-01-02T03:04:09.375Z"},
    }
    dist = record_distribution(one)
    assert dist is not None and dist.source == tool and len(dist.counts) > 10
    [path] = write_hdr_logs(tmp_path, records([one]))
    assert path == tmp_path / HDR_DIR / f"{json_cell_id(one)}.hlog"
    [interval] = read_log(path)
    assert_same_distribution(interval, dist)
    start = 1735787045.250  # 2025-01-02T03:04:05.250Z
    assert interval.get_start_time_stamp() == pytest.approx(start * 1000, abs=1)
    assert interval.get_end_time_stamp() == pytest.approx((start + 4.125) * 1000, abs=1)
    # The format's own lines, as HdrHistogram's tools expect them before the interval.
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "#[Histogram log format version 1.2]"
    assert lines[-3].startswith("#[StartTime: 1735787045.250 (seconds since epoch), 2025-01-02T03:04:05.250")
    assert lines[-2] == '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"'
    start_s, length, top, payload = lines[-1].split(",")
    assert (float(start_s), float(length)) == (0.0, 4.125)
    top_ms = dist.counts[-1][0] / 1000
    assert top_ms - 1 < float(top) <= top_ms * 1.001  # ms, rounded down by the package's writer
    assert HdrHistogram.decode(payload).get_total_count() == dist.samples


def test_a_cell_without_a_window_spans_its_elapsed_seconds(tmp_path: Path) -> None:
    one = cell("ab", "ab-slow", "a-stack", 1, requests=2000, elapsed_s=2.5)
    assert one.get("window") is None
    [interval] = read_log(write_hdr_logs(tmp_path, records([one]))[0])
    start = 1735787045.0  # started_at, 2025-01-02T03:04:05Z
    assert interval.get_start_time_stamp() == pytest.approx(start * 1000, abs=1)
    assert interval.get_end_time_stamp() == pytest.approx((start + 2.5) * 1000, abs=1)


def test_the_largest_values_are_kept_within_the_precision() -> None:
    # An hour and beyond: the histogram widens instead of dropping a value (record_value would say False).
    dist = distribution.from_counts(wrk.RESOLUTION, {1: 3, 250_000: 2, 3_600_000_000: 1, 7_200_000_000: 1})
    read = HdrHistogram.decode(histogram_of(dist).encode())
    assert_same_distribution(read, dist)
    assert read.get_max_value() >= dist.counts[-1][0] * 1000 > HOUR_NS


def test_the_report_writes_a_log_per_cell_and_removes_those_of_dropped_cells(tmp_path: Path) -> None:
    run = tmp_path / "run"
    cells = [cell("wrk", f"wrk-pair-lg{n}", "a-stack", n, duration_s=4) for n in (1, 2)]
    cells[1]["disturbed"] = ["interference: foreign CPU 23 %"]
    cells.append(cell("ab", "ab-slow", "a-stack", 1, requests=2000))
    without = cell("ab", "ab-slow", "b-stack", 1, requests=2000)
    without["latency_dist"] = None  # a cell from before distributions: no log
    for one in [*cells, without]:
        write_cell(run, one)
    stale = run / HDR_DIR / "gone__wrk__c16__r9.hlog"
    stale.parent.mkdir(parents=True)
    stale.write_text("#[a dropped cell's log]\n", encoding="utf-8")
    write_report(run, html_report=False)
    logs = sorted(p.name for p in (run / HDR_DIR).iterdir())
    assert logs == sorted(f"{json_cell_id(c)}.hlog" for c in cells)
    for one in cells:
        path = run / HDR_DIR / f"{json_cell_id(one)}.hlog"
        [interval] = read_log(path)
        dist = record_distribution(one)
        assert dist is not None
        assert_same_distribution(interval, dist)
        disturbed = (
            f"#[{json_cell_id(one)}: left out of the report's statistics: interference: foreign CPU 23 %]"
        )
        assert (disturbed in path.read_text(encoding="utf-8").splitlines()) == bool(one.get("disturbed"))


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """Three repetitions of one load point, a minute apart, written in reverse; the second disturbed."""
    folder = tmp_path / "run"
    for n in (3, 2, 1):
        one = cell("ab", "ab-slow", "s", n, requests=2000, started_at=f"2025-01-02T03:0{n}:05Z", elapsed_s=2)
        if n == 2:
            one["disturbed"] = ["interference: foreign CPU 23 %"]
        write_cell(folder, one)
    return folder


def test_hist_pool_writes_one_interval_per_counted_cell_in_time_order(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [f"s__ab__c20__r{n}" for n in (3, 1, 2)]
    out = tmp_path / "hlog"
    assert main(["hist", str(run), *ids, "--pool", "--hlog", str(out)]) == 0
    assert f"wrote {out / 'pooled.hlog'}" in capsys.readouterr().out
    intervals = read_log(out / "pooled.hlog")
    starts = [i.get_start_time_stamp() / 1000 - intervals[0].get_start_time_stamp() / 1000 for i in intervals]
    assert starts == [0.0, 120.0]  # r1 then r3; r2, disturbed, left out as the report does
    one = record_distribution(cell("ab", "ab-slow", "s", 1, requests=2000))
    assert one is not None
    assert_same_distribution(summed(intervals), distribution.merge([one, one]))
    assert main(["hist", str(run), *ids, "--pool", "--all", "--hlog", "-"]) == 0
    printed = capsys.readouterr()
    (out / "all.hlog").write_text(printed.out, encoding="utf-8")
    assert len(read_log(out / "all.hlog")) == 3
    assert printed.err == ""


def test_hist_writes_a_log_per_cell_named_as_given(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(run.parent)
    assert (
        main(["hist", run.name, "s__ab__c20__r1", f"{run.name}/cells/s__ab__c20__r3.json", "--hlog", "h"])
        == 0
    )
    assert sorted(p.name for p in (run.parent / "h").iterdir()) == [
        "run-cells-s__ab__c20__r3.hlog",
        "s__ab__c20__r1.hlog",
    ]
    assert "2,000 samples" in capsys.readouterr().out
    assert main(["hist", run.name, "s__ab__c20__r1", "s__ab__c20__r3", "--hlog", "-"]) == 1
    assert "--hlog - writes one distribution" in capsys.readouterr().err
    assert main(["hist", run.name, "s__ab__c20__r1", "--hlog", "-", "--csv", "-"]) == 1
    assert "one of --csv - and --hlog -" in capsys.readouterr().err


def test_a_pooled_log_names_the_cells_it_holds() -> None:
    one = cell("ab", "ab-slow", "s", 1, requests=2000)
    dist = record_distribution(one)
    assert dist is not None
    text = log_text([(record(one), dist, ["collapse: 1.0 req/s"])], "pooled: s__ab__c20__r1")
    assert "#[pooled: s__ab__c20__r1]" in text.splitlines()
    assert "#[cell s__ab__c20__r1: stack s, ab c20, repetition 1, target t1, loadgen t1]" in text.splitlines()
    assert "#[s__ab__c20__r1: ab: every request, closed loop, 1 ms; 2,000 samples, 2,000 requests]" in text
    assert "#[s__ab__c20__r1: left out of the report's statistics: collapse: 1.0 req/s]" in text.splitlines()
