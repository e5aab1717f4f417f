"""Several targets in one run: which cells each target measures, what they are called, and how a run's cells
split by target.

An inventory may hold several targets, each loaded by its own loadgens (:mod:`benchstack.plan.topology`). The
plan (:mod:`benchstack.plan.resolved`) then holds every cell of the experiment once per target, and every
grouping of a run's cells (report tables, plots, verdict load points, adaptive repetitions, compare) keeps the
targets apart.

Cell ids. A run with one target keeps the ids cells always had (``<stack>__<tool>__c<level>__r<rep>``, from
the cell's own fields, :func:`benchstack.results.cell.cell_id`). With several targets the same load point is
measured on each, so the id starts with the target: ``<target>__<stack>__<tool>__c<level>__r<rep>``, and such
a cell records it in its ``cell_id`` field (the fields alone cannot say whether the run had one target or
more). The run folder stays flat (``cells/``, ``raw/``, ``loadgens/<loadgen>/``): every file a cell has (raw
output, vmstat, ab's ``-g`` data, the loadgens' own cells) is named by the cell id, so one prefix keeps every
one of them apart, and everything that names a cell (run.json's ``stopped`` and planned cells, the verdict's
reasons, ``bench-stack hist``, the barrier of a cell's loadgens) names it uniquely without knowing where
a target's folder is.

Measuring order. Target by target (the default): all of one target's cells, its extra repetitions included,
then the next target's, so containers that share one machine do not disturb each other. With
``bench_targets_parallel: true`` every target is measured at the same time, the i-th cell of each together;
only for targets that share nothing (separate machines, separate loadgens).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from benchstack.records.cellplan import CellPlan
from benchstack.results.cell import Cell, GroupKey, group_key, qualified_cell_id

SEQUENTIAL = "sequential"
PARALLEL = "parallel"
# A load point on one target: what the verdict and the adaptive repetitions judge together.
TargetPoint = tuple[str, GroupKey]


def for_target(plan: CellPlan, target: str, several: bool) -> CellPlan:
    """``plan`` measured on ``target``; its id starts with the target when the run has ``several``."""
    cell_id = qualified_cell_id(target, plan.cell_id) if several else plan.cell_id
    return dataclasses.replace(plan, cell_id=cell_id, target=target)


def target_cells(
    planned: Sequence[CellPlan], targets: Sequence[str], parallel: bool = False
) -> list[CellPlan]:
    """Every cell of the experiment on every target, in measuring order: target by target, or (``parallel``)
    the first cell of every target, then the second, ... Without targets (the command line compiles a plan
    with no inventory) the cells as planned."""
    if not targets:
        return list(planned)
    several = len(targets) > 1
    per_target = [[for_target(p, t, several) for p in planned] for t in targets]
    if not parallel:
        return [c for cells in per_target for c in cells]
    return [cells[i] for i in range(len(planned)) for cells in per_target]


def target_of(cell: Cell) -> str:
    return cell.target or "-"


def target_point(cell: Cell) -> TargetPoint:
    return (target_of(cell), group_key(cell))


def by_target_point(cells: Iterable[Cell]) -> dict[TargetPoint, list[Cell]]:
    """Cells by target and load point, sorted by both; each group in the order of ``cells``."""
    groups: dict[TargetPoint, list[Cell]] = {}
    for cell in cells:
        groups.setdefault(target_point(cell), []).append(cell)
    return {k: groups[k] for k in sorted(groups)}


def by_target(cells: Iterable[Cell], order: Sequence[str] = ()) -> dict[str, list[Cell]]:
    """Cells by target: the targets in ``order`` (run.json's ``targets``) first, the others sorted after them;
    each list in the order of ``cells``."""
    found: dict[str, list[Cell]] = {}
    for cell in cells:
        found.setdefault(target_of(cell), []).append(cell)
    ranked = [t for t in order if t in found] + sorted(t for t in found if t not in order)
    return {t: found[t] for t in ranked}


def run_targets(run_info: Mapping[str, Any] | None) -> list[str]:
    """The targets run.json lists (the inventory's order), [] when it lists none."""
    names = (run_info or {}).get("targets")
    return [str(n) for n in names] if isinstance(names, list) else []


def loadgens_of(cells: Iterable[Cell]) -> list[str]:
    """The loadgens that measured these cells (each of a merged cell's), in first-seen order."""
    seen: dict[str, None] = {}
    for cell in cells:
        names: list[str | None] = [cell.loadgen]
        if cell.merged is not None and cell.merged.loadgens:
            names = list(cell.merged.loadgens)
        for name in names:
            if name:
                seen.setdefault(str(name), None)
    return list(seen)


def host_type(fingerprint: Mapping[str, Any] | None) -> str:
    """What kind of host a fingerprint describes, for a heading: CPU model and count, distribution."""
    if not isinstance(fingerprint, Mapping):
        return "no fingerprint recorded"
    parts = []
    model, count = fingerprint.get("cpu_model"), fingerprint.get("cpu_count")
    if model or count:
        cpus = f"{count} CPU{'' if str(count) == '1' else 's'}" if count else ""
        parts.append(", ".join(str(p) for p in (model, cpus) if p))
    if fingerprint.get("distribution"):
        parts.append(str(fingerprint["distribution"]))
    return ", ".join(parts) or "no CPU or distribution recorded"
