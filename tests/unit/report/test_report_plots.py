"""What the report's plots draw (the figures as matplotlib holds them, before any PNG), and the report's words
where a plot would say nothing: the comparisons chart, throughput with the interval of the median sorted by
value on a log axis when one stack dwarfs the rest, no error-rate chart without errors, the host line, and a
reason's cells summarised."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cell_records import records
from test_report import cell, reps
from test_verdict import FINGERPRINT

from benchstack.analysis.comparison import Comparison
from benchstack.analysis.summary import RunData
from benchstack.report import plots
from benchstack.report.build import build_report
from benchstack.report.render import cells_text, markdown


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The figures the plots make, kept open to be read (their files hold a marker, no PNG)."""
    figures: list[Any] = []

    def keep(plt: Any, fig: Any, path: Path) -> Path:
        figures.append(fig)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"kept by the test")
        return path

    monkeypatch.setattr(plots, "_save", keep)
    yield figures
    import matplotlib.pyplot as plt

    plt.close("all")


def comparison(stack: str, ratio: float, low: float | None, high: float | None, state: str) -> Comparison:
    return Comparison(stack, "x1", "t1", "wrk", True, 32, 12, ratio, low, high, state, margin=0.05)


def labels(ax: Any) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()]


def test_the_comparisons_chart_draws_each_ratio_with_its_interval_a_line_at_1_and_the_band(
    tmp_path: Path, drawn: list[Any]
) -> None:
    found = [
        comparison("x2", 1.17, 1.09, 1.28, "faster"),
        comparison("x1-nginx", 0.944, 0.889, 0.999, "slower"),
        comparison("static", 4.64, 4.05, 5.16, "faster"),
        comparison("x4", 1.03, None, None, "unresolved"),
    ]
    [path] = plots.comparison_plot(found, tmp_path)
    assert path == tmp_path / "plots" / "comparisons.png"
    [ax] = drawn[0].axes
    assert labels(ax) == ["x1-nginx", "x4", "x2", "static"]  # the fastest on top
    assert [t.get_text() for t in ax.texts] == [
        "slower 0.94x", "unresolved 1.03x", "faster 1.17x", "faster 4.64x",
    ]  # fmt: skip
    assert ax.get_xscale() == "log"  # 4.6x beside 0.94x
    low, high = ax.get_xlim()
    assert low < 0.889 and high > 5.16
    assert any(list(line.get_xdata()) == [1.0, 1.0] for line in ax.lines)
    [band] = ax.patches
    assert band.get_x() == pytest.approx(0.95) and band.get_width() == pytest.approx(0.10)
    # the intervals: an error bar per comparison that has one
    bars = [c for c in ax.collections if len(c.get_segments()) == 1]
    spans = sorted((seg[0][0], seg[1][0]) for c in bars for seg in c.get_segments())
    assert spans == [pytest.approx(s) for s in [(0.889, 0.999), (1.09, 1.28), (4.05, 5.16)]]
    ticks = [t for t in ax.get_xticks() if low <= t <= high]
    assert 1.0 in ticks and len(ticks) >= 3


def test_no_comparison_with_a_ratio_draws_no_chart(tmp_path: Path, drawn: list[Any]) -> None:
    assert plots.comparison_plot([comparison("x2", 1.0, None, None, "unresolved")][:0], tmp_path) == []
    assert drawn == []


@pytest.mark.parametrize(("low", "high"), [(0.8, 5.6), (0.9, 1.3), (0.04, 120.0), (0.85, 1.15), (0.5, 2.5)])
def test_ratio_ticks_keep_1_and_never_crowd(low: float, high: float) -> None:
    import math

    ticks = plots.ratio_ticks(low, high)
    assert 1.0 in ticks and len(ticks) >= 2
    span = math.log10(high / low)
    assert all(math.log10(b / a) >= span / 8 for a, b in zip(ticks, ticks[1:], strict=False))


def rps_cells(stack: str, base: float, n: int = 6) -> list[dict[str, Any]]:
    return [{**c, "stack": stack} for c in reps([base * (1 + 0.01 * i) for i in range(n)])]


def test_throughput_sorts_by_value_shows_the_interval_and_turns_log_when_one_stack_dwarfs_the_rest(
    tmp_path: Path, drawn: list[Any]
) -> None:
    cells = rps_cells("x1", 1000.0) + rps_cells("static", 5000.0) + rps_cells("x2", 1200.0)
    [path] = plots.throughput_plots(records(cells), tmp_path, baseline="x1")
    assert path.name == "throughput-ab.png"
    [ax] = drawn[0].axes
    assert labels(ax) == ["x1 (baseline)", "x2", "static"]
    assert ax.get_xscale() == "log"
    # median 1025 with the 95 % interval of the median (six values: 1003.6-1046.4), not min-max (1000-1050)
    [[(low, _), (high, _)]] = drawn[0].axes[0].collections[0].get_segments()
    assert (low, high) == (pytest.approx(1003.6, abs=0.1), pytest.approx(1046.4, abs=0.1))
    assert ax.texts[0].get_text() == "1025 (1004-1046)"


def test_throughput_of_close_stacks_keeps_a_linear_axis_from_0_and_below_6_cells_no_interval(
    tmp_path: Path, drawn: list[Any]
) -> None:
    cells = rps_cells("x1", 1000.0, n=3) + rps_cells("x2", 1200.0, n=3)
    plots.throughput_plots(records(cells), tmp_path)
    [ax] = drawn[0].axes
    assert ax.get_xscale() == "linear" and ax.get_xlim()[0] == 0
    assert [t.get_text() for t in ax.texts] == ["1010", "1212"]  # a point alone: no interval


def test_no_error_rate_chart_without_errors_the_report_says_so(tmp_path: Path, drawn: list[Any]) -> None:
    cells = reps([1000.0] * 3)
    assert plots.error_plot(records(cells), tmp_path) == [] and drawn == []
    text = markdown(build_report(RunData(tmp_path, records(cells), None)))
    assert "No errors: every request of the 3 counted cells succeeded." in text
    cells[1].update(error_count=4, error_rate=0.03, errors={**cells[1]["errors"], "status": 4})
    [path] = plots.error_plot(records(cells), tmp_path)
    assert path.name == "error-rate.png" and labels(drawn[0].axes[0]) == ["s ab c50"]
    assert "No errors" not in markdown(build_report(RunData(tmp_path, records(cells), None)))


def test_latency_rows_never_overlap_their_labels(tmp_path: Path, drawn: list[Any]) -> None:
    cells = [cell("wrk", "latency.txt", name) for name in ("sinatra-thin-x1-nginx", "sinatra-thin-x2-nginx")]
    plots.latency_plots(records(cells), tmp_path)
    [ax] = drawn[0].axes
    assert labels(ax) == ["sinatra-thin-x1-nginx c32", "sinatra-thin-x2-nginx c32"]
    assert all(t.get_rotation() == 0 for t in ax.get_yticklabels())


def test_the_summary_names_each_host_with_its_cpu_kernel_and_roles(tmp_path: Path) -> None:
    info = {
        "schema": "bench-stack/run/v6",
        "experiment": {"name": "demo"},
        "hosts": {"bench-local": {**FINGERPRINT, "hostname": "bench-local"}},
        "targets": ["bench-local"],
        "loadgens": ["bench-local"],
        "mode": "loopback",
    }
    (tmp_path / "run.json").write_text(json.dumps(info))
    text = markdown(build_report(RunData(tmp_path, records(reps([1000.0])), info)))
    assert (
        "- host bench-local (target and loadgen): AMD EPYC, 2 CPUs, Debian 12.11, kernel 6.18.44-fc-v657, "
        "24 GB memory\n"
    ) in text
    assert "bench-local: bench-local" not in text
    assert f"- run: `{tmp_path.name}`\n" in text


def test_a_reasons_cells_are_summarised_by_load_point() -> None:
    assert cells_text(["x1__wrk__c32__r3"]) == "cell x1__wrk__c32__r3"
    assert cells_text([f"x1__wrk__c32__r{r}" for r in range(1, 13)]) == "12 cells of x1 wrk c32"
    many = [
        f"{s}__wrk__c32__r{r}"
        for s, n in (("a", 2), ("b", 5), ("c", 1), ("d", 3), ("e", 1))
        for r in range(n)
    ]
    assert (
        cells_text(many) == "12 cells: 5 of b wrk c32, 3 of d wrk c32, 2 of a wrk c32 and 2 more load points"
    )


@pytest.mark.parametrize(("low", "high"), [(8000.0, 60000.0), (900.0, 3500.0), (40.0, 90000.0)])
def test_log_ticks_are_round_numbers_inside_the_axis(low: float, high: float) -> None:
    ticks = plots.log_ticks(low, high)
    assert len(ticks) >= 3 and all(low <= t <= high for t in ticks)
    assert all(float(f"{t:.2g}") == t for t in ticks)


def test_throughput_over_several_levels_draws_a_line_per_stack_on_log_ticks(
    tmp_path: Path, drawn: list[Any]
) -> None:
    cells = [
        {**c, "concurrency": level, "rps": c["rps"] * level}
        for level in (10, 50)
        for c in rps_cells("x1", 1000.0) + rps_cells("static", 5000.0)
    ]
    plots.throughput_plots(records(cells), tmp_path)
    [ax] = drawn[0].axes
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["static", "x1"]  # the fastest first
    assert all("e" not in t.get_text() and t.get_text() for t in ax.get_yticklabels())
