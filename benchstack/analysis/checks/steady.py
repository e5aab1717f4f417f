"""Whether each cell was at steady state (``not_steady``): requests started per second in its second half
against its first, from ab's per-request data (``raw/<cell>.requests.tsv``, ``ab -g``); tools that keep no
per-second data are listed under "not checked".
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from benchstack.analysis.checks.base import Reason, Run, cell_ids
from benchstack.kinds.loadtools import find
from benchstack.kinds.loadtools.base import no_steady_data_note
from benchstack.kinds.loadtools.perrequest import AB_GNUPLOT_HEADER
from benchstack.results.cell import Cell, cell_id_of
from benchstack.results.layout import RAW_DIR, loadgen_dir

# Whole seconds (the first and last, partial, left out) a cell needs for its halves to be compared.
MIN_DRIFT_SECONDS = 4


def starts_per_second(tsv: str) -> dict[int, int]:
    """Requests started in each second (epoch) from an ``ab -g`` file (its ``seconds`` column)."""
    lines = tsv.splitlines()
    if not lines or tuple(lines[0].split("\t")) != AB_GNUPLOT_HEADER:
        raise ValueError("not an ab -g file")
    counts: dict[int, int] = {}
    for line in lines[1:]:
        fields = line.split("\t")
        if len(fields) == len(AB_GNUPLOT_HEADER) and fields[1].isdigit():
            second = int(fields[1])
            counts[second] = counts.get(second, 0) + 1
    return counts


@dataclass(frozen=True)
class Drift:
    first: float  # requests started per second, mean over the whole seconds of the first half
    second: float
    seconds: int  # whole seconds compared

    @property
    def change(self) -> float:
        """(second - first) / first: -0.48 when the rate fell by 48 %."""
        if not self.first:
            return 0.0 if not self.second else float("inf")
        return (self.second - self.first) / self.first


def drift(counts: dict[int, int]) -> Drift | None:
    """First half against second half of a cell's whole seconds (the partial first and last left out; a
    second without a start counts as 0: a stall). None below :data:`MIN_DRIFT_SECONDS` whole seconds."""
    if not counts:
        return None
    inner = [counts.get(s, 0) for s in range(min(counts) + 1, max(counts))]
    if len(inner) < MIN_DRIFT_SECONDS:
        return None
    half = len(inner) // 2
    return Drift(statistics.fmean(inner[:half]), statistics.fmean(inner[-half:]), 2 * half)


def _tsv_paths(run_dir: Path, cell: Cell) -> list[Path]:
    cid = cell_id_of(cell)
    if cell.merged is not None and cell.merged.loadgens:
        return [loadgen_dir(run_dir, lg) / RAW_DIR / f"{cid}.requests.tsv" for lg in cell.merged.loadgens]
    return [run_dir / RAW_DIR / f"{cid}.requests.tsv"]


def check_steady_state(run: Run) -> tuple[list[Reason], list[str]]:
    limit = run.limits.max_drift
    reasons = []
    no_data: dict[str, int] = {}
    short = 0
    for key, group in run.groups.items():
        drifting: list[tuple[Cell, Drift]] = []
        for cell in group:
            paths = [p for p in _tsv_paths(run.run_dir, cell) if p.is_file()]
            if not paths:
                no_data[cell.tool] = no_data.get(cell.tool, 0) + 1
                continue
            measured = False
            for path in paths:
                try:
                    d = drift(starts_per_second(path.read_text(encoding="utf-8", errors="replace")))
                except ValueError:
                    d = None
                if d is None:
                    continue
                measured = True
                if abs(d.change) > limit:
                    drifting.append((cell, d))
            short += not measured
        if not drifting:
            continue
        cell, d = max(drifting, key=lambda item: abs(item[1].change))
        cells = list({cell_id_of(c): c for c, _ in drifting}.values())
        message = (
            f"{run.label(key)}: requests started per second changed {100 * d.change:+.0f} % from the "
            f"first half of the cell to the second ({d.first:.0f} -> {d.second:.0f}, {d.seconds} whole "
            f"seconds) in {len(cells)} of {len(group)} cells (more than {100 * limit:.0f} %): not at steady "
            "state"
        )
        reasons.append(Reason("not_steady", "noisy", message, cell_ids(cells)))
    notes = []
    for tool, n in sorted(no_data.items()):
        adapter = find(tool)
        notes.append(adapter.no_steady_data_note(n) if adapter else no_steady_data_note(tool, n))
    if short:
        notes.append(
            f"steady state: {short} ab cells have fewer than {MIN_DRIFT_SECONDS} whole seconds of -g data"
        )
    return reasons, notes
