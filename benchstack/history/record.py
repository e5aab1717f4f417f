"""A run folder recorded in the history database: the run, its hosts and their fingerprints, its load
points, its comparisons and its verdict's reasons, with the figures the report shows: the verdict and the
comparisons as :mod:`benchstack.report.build` computes them once per run, and the load points as
loadpoints.csv holds them (:func:`benchstack.report.csvfiles.loadpoint_rows`), never computed another way.

Importing is idempotent: a run is one row, keyed by :func:`run_uid` (its folder name, seed and experiment
hash, so the same run imported from a copy is the same row); a folder whose content did not change
(:func:`content_hash`: run.json and the cells) writes nothing; one that changed (a resumed run with more
cells, a report that stored its verdict) replaces the run's rows in one transaction. Nothing in the run
folder is written."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from benchstack.analysis.comparison import Comparison
from benchstack.analysis.summary import RunData, comparisons_of, loadpoint_rows, verdict_of
from benchstack.analysis.verdict import Verdict
from benchstack.history.database import HistoryError
from benchstack.history.schema import ComparisonRow, HostRow, LoadPointRow, ReasonRow, RunRow
from benchstack.plan.targets import by_target_point
from benchstack.results.cell import Cell, cell_paths, counted, load_cells, window_start
from benchstack.results.layout import RUN_INFO
from benchstack.results.runfolder import read_run_info

# The fingerprint fields a host row has as columns (the whole fingerprint is kept beside them).
HOST_COLUMNS = ("cpu_model", "cpu_count", "kernel", "distribution", "architecture", "virtualization")


@dataclass(frozen=True)
class Imported:
    run_dir: Path
    uid: str
    outcome: str  # added | updated | unchanged

    def line(self) -> str:
        return f"{self.outcome}: {self.run_dir} ({self.uid[:12]})"


def content_hash(run_dir: Path) -> str:
    """sha256 over run.json and every cell file (names and bytes): what a changed run folder changes."""
    digest = hashlib.sha256()
    for path in [run_dir / RUN_INFO, *cell_paths(run_dir)]:
        if path.is_file():
            digest.update(path.relative_to(run_dir).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def run_uid(name: str, run_info: dict[str, Any] | None) -> str:
    """A run's key in every database: its folder name, seed and experiment hash."""
    info = run_info or {}
    key = json.dumps([name, info.get("seed"), info.get("experiment_sha256")], separators=(",", ":"))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _fingerprint_hash(fingerprint: object) -> str | None:
    if not isinstance(fingerprint, dict):
        return None
    text = json.dumps(fingerprint, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _when(posix: float | None) -> datetime | None:
    return None if posix is None else datetime.fromtimestamp(posix, UTC)


def _span(cells: list[Cell]) -> tuple[datetime | None, datetime | None]:
    """When the first cell's window began and the last one's ended."""
    starts = [(window_start(c), float(c.elapsed_s or 0.0)) for c in cells]
    known = [(s, e) for s, e in starts if s is not None]
    if not known:
        return None, None
    return _when(min(s for s, _ in known)), _when(max(s + e for s, e in known))


def _hosts(run_info: dict[str, Any]) -> list[HostRow]:
    hosts = v if isinstance(v := run_info.get("hosts"), dict) else {}
    targets, loadgens = set(run_info.get("targets") or []), set(run_info.get("loadgens") or [])
    rows = []
    for name in sorted(set(hosts) | targets | loadgens):
        fingerprint = hosts.get(name)
        fp = fingerprint if isinstance(fingerprint, dict) else {}
        role = "both" if name in targets and name in loadgens else "target" if name in targets else "loadgen"
        count = fp.get("cpu_count")
        rows.append(
            HostRow(
                name=name,
                role=role,
                **{
                    k: (str(fp[k]) if fp.get(k) is not None else None)
                    for k in HOST_COLUMNS
                    if k != "cpu_count"
                },
                cpu_count=int(count) if isinstance(count, int | str) and str(count).isdigit() else None,
                fingerprint_sha256=_fingerprint_hash(fingerprint),
                fingerprint=fingerprint if isinstance(fingerprint, dict) else None,
            )
        )
    return rows


def run_rows(run_dir: Path, run: RunData | None = None, recorded_path: str | None = None) -> RunRow:
    """The run folder as database rows (not yet in a session); ``run``: the run as the report read it;
    ``recorded_path``: where the run is kept, when not ``run_dir`` (a published run fetched into a
    temporary folder is recorded at its URL)."""
    if run is None:
        try:
            run = RunData(run_dir, load_cells(run_dir), read_run_info(run_dir))
        except ValueError as exc:
            raise HistoryError(str(exc)) from None
    cells, run_info = run.cells, run.run_info
    if not cells:
        raise HistoryError(f"{run_dir}: no cells (not a run folder?)")
    info = run_info or {}
    verdict, comparisons = verdict_of(run), comparisons_of(run)
    started, ended = _span(cells)
    experiment = v if isinstance(v := info.get("experiment"), dict) else {}
    name = str(experiment.get("name") or cells[0].experiment or "-")
    row = RunRow(
        uid=run_uid(run_dir.name, run_info),
        name=run_dir.name,
        path=recorded_path or str(run_dir.resolve()),
        experiment=name,
        experiment_sha256=info.get("experiment_sha256"),
        started_at=started,
        ended_at=ended,
        verdict=verdict.status,
        bench_stack_version=info.get("bench_stack_version"),
        mode=info.get("mode") or cells[0].mode,
        seed=info.get("seed") if isinstance(info.get("seed"), int) else None,
        cells=len(cells),
        content_sha256=content_hash(run_dir),
        imported_at=datetime.now(UTC),
    )
    row.hosts = _hosts(info)
    row.load_points = _load_point_rows(cells, verdict, comparisons)
    row.comparisons = [
        ComparisonRow(
            target=c["target"] or "-",
            **{k: c[k] for k in ("stack", "baseline", "tool", "keepalive", "level", "state", "ratio")},
            **{k: c[k] for k in ("low", "high", "pairs", "margin", "confidence")},
        )
        for c in (found.to_dict() for found in comparisons)
    ]
    row.reasons = [
        ReasonRow(
            position=position,
            code=reason.code,
            status=reason.status,
            message=reason.message,
            cells=list(reason.cells),
        )
        for position, reason in enumerate(verdict.reasons)
    ]
    return row


def _load_point_rows(
    cells: list[Cell], verdict: Verdict, comparisons: list[Comparison]
) -> list[LoadPointRow]:
    """A row per load point of the run (its figures as the report's loadpoints.csv has them), with the
    req/s of each counted repetition."""
    groups = by_target_point(cells)
    rows = []
    for point in loadpoint_rows(cells, verdict, comparisons):
        target = point["target"] or "-"
        key = (point["stack"], point["tool"], point["keepalive"], point["level"])
        kept = sorted(counted(groups.get((target, key), [])), key=lambda c: c.repetition or 0)
        rows.append(
            LoadPointRow(
                target=target,
                **{k: point[k] for k in ("stack", "tool", "keepalive", "level", "status", "counted")},
                **{k: point[k] for k in ("disturbed", "median_rps", "ci_low", "ci_high", "precision")},
                **{k: point[k] for k in ("latency_mean_ms", "latency_p50_ms", "latency_p99_ms")},
                error_count=point["error_count"],
                error_rate=point["error_rate"],
                rps=[float(c.rps) for c in kept],
            )
        )
    return rows


def import_run(
    engine: Engine,
    run_dir: str | os.PathLike[str],
    run: RunData | None = None,
    recorded_path: str | None = None,
) -> Imported:
    """Record the run folder ``run_dir``: added, updated (its content changed) or unchanged. ``run``: the
    run as the report read it (its verdict and comparisons computed once), else it is read here;
    ``recorded_path``: see :func:`run_rows`."""
    # results/latest is a link: the run is its folder, by the folder's own name.
    directory = Path(run_dir).resolve()
    if not directory.is_dir():
        raise HistoryError(f"{directory}: not a directory")
    try:
        uid = run_uid(directory.name, run.run_info if run is not None else read_run_info(directory))
    except ValueError as exc:
        raise HistoryError(str(exc)) from None
    with Session(engine) as session, session.begin():
        old = session.scalars(select(RunRow).where(RunRow.uid == uid)).one_or_none()
        if old is not None and old.content_sha256 == content_hash(directory):
            return Imported(directory, uid, "unchanged")
        new = run_rows(directory, run, recorded_path)
        if old is not None:
            session.delete(old)
            session.flush()
        session.add(new)
    return Imported(directory, uid, "added" if old is None else "updated")
