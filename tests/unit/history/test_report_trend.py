"""The report's "Over time" section (benchstack/report/trend.py, issue 42): this run's comparisons beside the
earlier runs of the same experiment recorded in the history database, as a table and a plot; nothing without
a database or an earlier run; a database that cannot be read is one line, never a failed report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import NOT_DRAWN

import benchstack.report.plots
from benchstack.history.record import import_run
from benchstack.report.build import write_report
from tests.unit.history.history_cases import new_engine, run_copy


def section(report: Path) -> str:
    text = report.read_text(encoding="utf-8")
    if "## Over time" not in text:
        return ""
    return text.split("## Over time", 1)[1].split("\n## ", 1)[0]


def rows(part: str) -> list[list[str]]:
    lines = [line for line in part.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def test_a_run_without_a_history_database_has_no_over_time_section(tmp_path: Path) -> None:
    run = run_copy(tmp_path / "results", "r0")
    assert section(write_report(run, html_report=False)) == ""


@pytest.fixture
def only_the_trend_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a test marked drawn, only plots/trend.png rasterized, the one plot it checks: the report's other
    plots (~0.1 s each, ~0.8 s of the test) are test_report's; here they are the stand-in of the tests not
    marked drawn."""
    drawn = benchstack.report.plots._save

    def trend_only(plt: Any, fig: Any, path: Path) -> Path:
        if path.name == "trend.png":
            saved: Path = drawn(plt, fig, path)
            return saved
        path.parent.mkdir(parents=True, exist_ok=True)
        plt.close(fig)
        path.write_bytes(NOT_DRAWN)
        return path

    monkeypatch.setattr(benchstack.report.plots, "_save", trend_only)


@pytest.mark.drawn
@pytest.mark.usefixtures("only_the_trend_drawn")
def test_the_earlier_runs_of_the_experiment_come_first_then_this_run_with_its_own_figures(
    tmp_path: Path,
) -> None:
    results = tmp_path / "results"
    engine = new_engine(tmp_path)
    try:
        for name, days in (("r1", 1), ("r2", 2)):
            import_run(engine, run_copy(results, name, days=days))
        # Recorded later than the run being reported: not "earlier", left out.
        import_run(engine, run_copy(results, "r9", days=9))
        # Another experiment's run, at the same time: left out.
        other = run_copy(results, "other", days=2)
        info = json.loads((other / "run.json").read_text(encoding="utf-8"))
        info["experiment"]["name"] = "another-experiment"
        (other / "run.json").write_text(json.dumps(info), encoding="utf-8")
        import_run(engine, other)
        # The same experiment's name with another definition (its sha256): left out.
        changed = run_copy(results, "changed", days=2)
        info = json.loads((changed / "run.json").read_text(encoding="utf-8"))
        info["experiment_sha256"] = "0" * 64
        (changed / "run.json").write_text(json.dumps(info), encoding="utf-8")
        import_run(engine, changed)
    finally:
        engine.dispose()
    current = run_copy(results, "r3", days=3, slower={"sinatra-thin-x2-nginx": 0.7})
    report = write_report(current, html_report=True)
    table = rows(section(report))
    assert [r[0] for r in table] == ["run", "r1", "r2", "r3"]
    header = table[0]
    x2 = header.index("sinatra-thin-x2-nginx wrk c32")
    assert table[1][x2].startswith("faster 1.") and table[2][x2] == table[1][x2]
    # This run's own comparison, computed from its cells (x2 at 0.7 of its req/s: slower than x1 now).
    mine = json.loads((current / "run.json").read_text(encoding="utf-8"))["comparisons"]
    x2_now = next(c for c in mine if c["stack"] == "sinatra-thin-x2-nginx")
    assert table[3][x2].startswith(f"{x2_now['state']} ") and table[3][x2] != table[1][x2]
    assert (current / "plots" / "trend.png").stat().st_size > 10_000
    assert "plots/trend.png" in (current / "report.html").read_text(encoding="utf-8") or "trend" in (
        current / "report.html"
    ).read_text(encoding="utf-8")


def test_a_run_whose_experiment_has_no_earlier_run_has_no_section(tmp_path: Path) -> None:
    results = tmp_path / "results"
    engine = new_engine(tmp_path)
    try:
        import_run(engine, run_copy(results, "later", days=5))
    finally:
        engine.dispose()
    first = run_copy(results, "first", days=1)
    stale = first / "plots" / "trend.png"  # an earlier report's, from a database since moved away
    stale.parent.mkdir(exist_ok=True)
    stale.write_bytes(b"png")
    assert section(write_report(first, html_report=True)) == ""
    assert not stale.exists()


def test_a_database_that_cannot_be_read_is_said_in_one_line_and_the_report_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCH_STACK_DB", "postgresql+psycopg://bench:s3cret-pw@127.0.0.1:9/bench")
    run = run_copy(tmp_path / "results", "r0")
    part = section(write_report(run, html_report=False))
    assert "could not be read" in part and "s3cret-pw" not in part
    assert "## Verdict" in (run / "report.md").read_text(encoding="utf-8")
