"""Run folders for the history's tests: copies of a captured real run (tests/data/history/01-new-quiet, a
default run of sinatra-thin-nginx: 54 cells, verdict valid), renamed, moved in time and with a stack made
slower, so that a history of several runs on one host can be built in tmp_path."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

from sqlalchemy import Engine

from benchstack.history.database import open_database

CAPTURED = Path(__file__).resolve().parents[2] / "data" / "history" / "01-new-quiet"


def _later(when: str, days: int) -> str:
    # The captured run's times are all on 2026-12-04 (cells' started_at and window).
    assert when.startswith("2026-12-04T"), when
    return f"2026-12-{4 + days:02d}T" + when.removeprefix("2026-12-04T")


def run_copy(
    root: Path,
    name: str,
    days: int = 0,
    slower: dict[str, float] | None = None,
    fingerprint: dict[str, object] | None = None,
    repetitions: int | None = None,
) -> Path:
    """The captured run as ``root/name``, measured ``days`` later, each stack in ``slower`` at that share of
    its req/s, the target's fingerprint changed by ``fingerprint``; with ``repetitions``, only that many of
    each load point's cells (r1, r2, ...): a smaller folder (11 files, not 55; a report ~0.055 s of CPU, not
    ~0.09 s) for the tests where the number of cells proves nothing: a store's round trips, the report
    step's history and publish."""
    run_dir = root / name
    shutil.copytree(CAPTURED, run_dir, ignore=lambda folder, names: names if folder.endswith("cells") else [])
    for file, text in _cells(days, tuple(sorted((slower or {}).items()))).items():
        if repetitions is None or int(file.removesuffix(".json").rsplit("__r", 1)[1]) <= repetitions:
            (run_dir / "cells" / file).write_text(text, encoding="utf-8")
    if fingerprint:
        info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        info["hosts"]["bench-local"].update(fingerprint)
        (run_dir / "run.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return run_dir


@functools.cache
def _cells(days: int, slower: tuple[tuple[str, float], ...]) -> dict[str, str]:
    """The captured cells' files moved ``days`` later, each stack in ``slower`` at that share of its req/s:
    made once a session for each (88 copies of 54 cells, ~0.7 s of JSON each session)."""
    texts = {}
    for path in sorted((CAPTURED / "cells").glob("*.json")):
        cell = json.loads(path.read_text(encoding="utf-8"))
        cell["started_at"] = _later(cell["started_at"], days)
        cell["window"] = {k: _later(v, days) for k, v in cell["window"].items()}
        cell["rps"] = round(cell["rps"] * dict(slower).get(cell["stack"], 1.0), 2)
        texts[path.name] = json.dumps(cell, indent=2) + "\n"
    return texts


def db_url(tmp_path: Path) -> str:
    """An SQLite database where a run's report step puts it: results/history.sqlite."""
    return f"sqlite:///{tmp_path / 'results' / 'history.sqlite'}"


def new_engine(tmp_path: Path) -> Engine:
    return open_database(db_url(tmp_path))
