"""What a resumed run does with a cell that several loadgens measure together (bench_cell with peers).

A merged cell stands for load the loadgens sent at the same time. A run interrupted between two loadgens
storing their cells of one load point leaves one loadgen's cell without its partner; measuring only the
missing one later and merging the two would sum throughput that never reached the target at once. So every
loadgen of a cell takes the same decision from the run folder (:func:`decide`): the cell is done when the
merged cell, or every loadgen's own cell, is stored (the merge may still be due); otherwise every loadgen
measures it again, and a loadgen whose own cell is stored first sets it aside (:func:`set_aside`) under
``loadgens/<loadgen>/superseded/<its start>/``, with its raw files, where no report or merge reads it.

The loadgens decide before their warm-up and store only after the barrier, which every one of them must
have reached, so none of them can see another's new cell while deciding.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from benchstack.results.files import read_json
from benchstack.results.layout import CELLS_DIR, RAW_DIR, SUPERSEDED_DIR, loadgen_dir


def own_cell(run_dir: Path, loadgen: str, cell_id: str) -> Path:
    return loadgen_dir(run_dir, loadgen) / CELLS_DIR / f"{cell_id}.json"


def decide(run_dir: Path, cell_id: str, peers: Sequence[str]) -> bool:
    """Whether the cell is measured (again) by every loadgen of ``peers``: False when the merged cell or
    every loadgen's own cell is stored."""
    if (run_dir / CELLS_DIR / f"{cell_id}.json").exists():
        return False
    return not all(own_cell(run_dir, lg, cell_id).exists() for lg in peers)


def set_aside(run_dir: Path, loadgen: str, cell_id: str) -> Path | None:
    """Move ``loadgen``'s stored cell of ``cell_id`` and its raw files into
    ``loadgens/<loadgen>/superseded/<started_at>/`` (same layout, so its raw_output still resolves);
    the new folder, or None when it stored none."""
    cell = own_cell(run_dir, loadgen, cell_id)
    if not cell.exists():
        return None
    try:
        started = str(read_json(cell, "a cell").get("started_at") or "unknown")
    except (ValueError, AttributeError):
        started = "unreadable"
    base = loadgen_dir(run_dir, loadgen)
    stamp = re.sub(r"[^0-9A-Za-z]", "", started) or "unknown"
    dest = base / SUPERSEDED_DIR / stamp
    n = 1
    while dest.exists():
        n += 1
        dest = base / SUPERSEDED_DIR / f"{stamp}-{n}"
    (dest / CELLS_DIR).mkdir(parents=True)
    # raw/<cell_id>.txt, .vmstat.txt, .target.vmstat.txt, .requests.tsv (no other cell's id ends in '.')
    for raw in sorted((base / RAW_DIR).glob(f"{cell_id}.*")):
        (dest / RAW_DIR).mkdir(exist_ok=True)
        raw.rename(dest / RAW_DIR / raw.name)
    cell.rename(dest / CELLS_DIR / cell.name)
    return dest
