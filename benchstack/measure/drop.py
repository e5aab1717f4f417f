"""``bench-stack drop RUN CELL_ID...``: take stored cells out of a run; resuming it measures them again.

A cell is never edited or deleted: dropping moves it, with its raw files (``raw/<cell_id>.*``) and, for a
cell merged from several loadgens, each loadgen's own cell and raw files, into
``<run>/dropped/<UTC time>/`` in the same layout, where no report, validate or resume reads it. The
resumed run (``-e bench_run_dir=RUN``) then finds the cell missing and measures it, as after an interrupted
run. Refused while another run holds the run folder's lock (:mod:`benchstack.measure.runlock`): it may be
measuring.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from benchstack.measure.runlock import alive, read_entry
from benchstack.results.layout import CELLS_DIR, DROPPED_DIR, LOADGENS_DIR, LOCK_FILE, RAW_DIR

_ID = re.compile(r"[A-Za-z0-9._-]+")


class DropError(ValueError):
    """The cells cannot be dropped; the message says why."""


def cell_name(name: str) -> str:
    """A cell id from an id or a cell file's path (``cells/<id>.json``)."""
    base = Path(name).name
    return base[: -len(".json")] if base.endswith(".json") else base


def _files(base: Path, cell_id: str) -> list[Path]:
    """The cell file and raw files of ``cell_id`` in ``base`` (a run folder or a loadgen's folder)."""
    found = [base / CELLS_DIR / f"{cell_id}.json"] if (base / CELLS_DIR / f"{cell_id}.json").is_file() else []
    # raw/<cell_id>.txt, .vmstat.txt, .target.vmstat.txt, .requests.tsv (no other cell's id ends in '.')
    raw = base / RAW_DIR
    return found + (sorted(raw.glob(f"{cell_id}.*")) if raw.is_dir() else [])


def drop_cells(
    run_dir: str | Path, names: Sequence[str], now: datetime | None = None
) -> tuple[Path, list[str]]:
    """Move the named cells out of ``run_dir`` (module docstring); (the folder they went to, their ids).

    Every name is checked first: an unknown or ill-formed one refuses them all (DropError), nothing moved."""
    run = Path(run_dir)
    if not (run / "run.json").is_file() and not (run / CELLS_DIR).is_dir():
        raise DropError(f"{run}: not a bench-stack run folder (no run.json, no cells/)")
    holder = read_entry(run / LOCK_FILE)
    if holder and alive(holder) is not False:
        raise DropError(
            f"{run} is in use by a bench-stack run (pid {holder.get('pid')} on {holder.get('host')} since "
            f"{holder.get('at')}): drop cells once it has ended"
        )
    ids = list(dict.fromkeys(cell_name(n) for n in names))
    moves: list[tuple[Path, Path]] = []
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    dest = run / DROPPED_DIR / stamp
    n = 1
    while dest.exists():
        n += 1
        dest = run / DROPPED_DIR / f"{stamp}-{n}"
    loadgens = (
        sorted(p for p in (run / LOADGENS_DIR).iterdir() if p.is_dir())
        if (run / LOADGENS_DIR).is_dir()
        else []
    )
    for cell_id in ids:
        if not _ID.fullmatch(cell_id) or cell_id.startswith("."):
            raise DropError(f"{cell_id!r} is not a cell id")
        found = [(p, dest / p.relative_to(run)) for p in _files(run, cell_id)]
        for lg in loadgens:
            found += [(p, dest / p.relative_to(run)) for p in _files(lg, cell_id)]
        if not any(p.suffix == ".json" for p, _ in found):
            raise DropError(f"{run}: no stored cell {cell_id}")
        moves += found
    for src, to in moves:
        to.parent.mkdir(parents=True, exist_ok=True)
        src.rename(to)
    return dest, ids
