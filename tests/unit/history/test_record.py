"""A run folder recorded in the history database: the figures the report shows, once, however often it is
imported; a changed folder (a resumed run) updates its records."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from history_cases import CAPTURED, new_engine, run_copy
from sqlalchemy import Engine, func, select, text
from sqlalchemy.orm import Session

from benchstack.history.database import HistoryError
from benchstack.history.queries import runs, utc
from benchstack.history.record import import_run
from benchstack.history.schema import Base, ComparisonRow, HostRow, LoadPointRow, ReasonRow, RunRow

RUN_JSON = json.loads((CAPTURED / "run.json").read_text(encoding="utf-8"))


def all_rows(engine: Engine) -> dict[str, list[tuple[object, ...]]]:
    with engine.connect() as c:
        return {
            t: [tuple(r) for r in c.execute(text(f"SELECT * FROM {t} ORDER BY id"))]
            for t in Base.metadata.tables
        }


def test_a_captured_run_is_recorded_with_the_figures_its_report_shows(tmp_path: Path) -> None:
    engine = new_engine(tmp_path)
    done = import_run(engine, run_copy(tmp_path, "01-new-quiet"))
    assert done.outcome == "added"
    (run,) = runs(engine)
    assert (run.name, run.experiment, run.verdict, run.mode, run.cells) == (
        "01-new-quiet", "sinatra-thin-nginx", "valid", "loopback", 54,
    )  # fmt: skip
    assert run.experiment_sha256 == RUN_JSON["experiment_sha256"]
    assert run.bench_stack_version == "0.1.0" and run.seed == 2045473252
    # The first cell's window began at 19:39:29.499, the last one ended at 19:42:41.083 (report.md's run).
    assert utc(run.started_at) == datetime(2026, 12, 4, 19, 39, 29, 499000, UTC)
    assert utc(run.ended_at) == datetime(2026, 12, 4, 19, 42, 41, 83000, UTC)
    (host,) = run.hosts
    assert (host.name, host.role, host.cpu_model, host.cpu_count, host.kernel) == (
        "bench-local", "both", "AMD EPYC", 2, "6.18.44-fc-v1252",
    )  # fmt: skip
    assert host.fingerprint == RUN_JSON["hosts"]["bench-local"] and len(host.fingerprint_sha256 or "") == 64
    # The load points are the verdict's, as run.json stored them when the report was written.
    stored = {p["stack"]: p for p in RUN_JSON["verdict"]["load_points"]}
    assert {p.stack for p in run.load_points} == set(stored)
    for p in run.load_points:
        want = stored[p.stack]
        got = (p.status, p.counted, p.disturbed, p.median_rps, p.ci_low, p.ci_high, p.precision)
        assert got == tuple(
            want[k]
            for k in ("status", "counted", "disturbed", "median_rps", "ci_low", "ci_high", "precision")
        )
        assert len(p.rps or []) == p.counted
    # report.md's results table: nginx-static's p50 0.60 ms, p99 3.72 ms, no errors.
    nginx = next(p for p in run.load_points if p.stack == "nginx-static")
    assert (f"{nginx.latency_p50_ms:.2f}", f"{nginx.latency_p99_ms:.2f}", nginx.error_count) == (
        "0.60",
        "3.72",
        0,
    )
    compared = {c["stack"]: c for c in RUN_JSON["comparisons"]}
    assert {c.stack for c in run.comparisons} == set(compared)
    for c in run.comparisons:
        want = compared[c.stack]
        assert (c.state, c.ratio, c.low, c.high, c.pairs, c.baseline) == tuple(
            want[k] for k in ("state", "ratio", "low", "high", "pairs", "baseline")
        )


def test_importing_a_run_twice_changes_nothing(tmp_path: Path) -> None:
    engine = new_engine(tmp_path)
    run_dir = run_copy(tmp_path, "01-new-quiet")
    assert import_run(engine, run_dir).outcome == "added"
    before = all_rows(engine)
    assert import_run(engine, run_dir).outcome == "unchanged"
    assert all_rows(engine) == before


def test_the_same_run_imported_from_a_copy_elsewhere_is_one_run(tmp_path: Path) -> None:
    engine = new_engine(tmp_path)
    import_run(engine, run_copy(tmp_path / "a", "01-new-quiet"))
    assert import_run(engine, run_copy(tmp_path / "b", "01-new-quiet")).outcome == "unchanged"
    assert len(runs(engine)) == 1


def test_a_run_imported_through_results_latest_is_the_run_by_its_own_name(tmp_path: Path) -> None:
    engine = new_engine(tmp_path)
    run_dir = run_copy(tmp_path / "results", "01-new-quiet")
    (tmp_path / "results" / "latest").symlink_to(run_dir.name)
    import_run(engine, tmp_path / "results" / "latest")
    assert import_run(engine, run_dir).outcome == "unchanged"
    assert [(r.name, r.path) for r in runs(engine)] == [("01-new-quiet", str(run_dir))]


def test_a_resumed_run_with_more_cells_updates_its_records(tmp_path: Path) -> None:
    engine = new_engine(tmp_path)
    run_dir = run_copy(tmp_path, "01-new-quiet")
    aside = tmp_path / "aside"
    aside.mkdir()
    for path in sorted((run_dir / "cells").glob("nginx-static__*.json")):
        shutil.move(path, aside / path.name)  # a run stopped before nginx-static's cells
    assert import_run(engine, run_dir).outcome == "added"
    (run,) = runs(engine)
    # Its verdict names the planned load point it lacks: invalid (incomplete), nginx-static without a figure.
    nginx = {p.stack: p for p in run.load_points}["nginx-static"]
    assert (run.cells, run.verdict, nginx.counted, nginx.median_rps) == (44, "invalid", 0, None)
    for path in aside.iterdir():
        shutil.move(path, run_dir / "cells" / path.name)  # resumed: its cells are there
    assert import_run(engine, run_dir).outcome == "updated"
    (run,) = runs(engine)
    nginx = {p.stack: p for p in run.load_points}["nginx-static"]
    assert (run.cells, run.verdict, nginx.counted, nginx.median_rps) == (54, "valid", 10, 47232.88)
    # The old rows went with the old run: one host, five load points, four comparisons.
    with Session(engine) as s:
        counts = [
            s.scalar(select(func.count()).select_from(t))
            for t in (RunRow, HostRow, LoadPointRow, ComparisonRow)
        ]
        assert counts == [1, 1, 5, 4]
        assert s.scalar(select(func.count()).select_from(ReasonRow)) == len(RUN_JSON["verdict"]["reasons"])


def test_a_folder_without_cells_is_refused_in_one_line(tmp_path: Path) -> None:
    engine = new_engine(tmp_path)
    with pytest.raises(HistoryError, match="no cells"):
        import_run(engine, tmp_path)
    with pytest.raises(HistoryError, match="not a directory"):
        import_run(engine, tmp_path / "nothing")
    assert runs(engine) == []
