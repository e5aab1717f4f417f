"""Extra rounds: measure load points again until their median req/s is known to the target precision.

Every load point first gets ``load.repetitions`` rounds. Then, round by round, a load point gets one more
cell while any of these holds (:func:`more_needed`):

* fewer than ``load.repetitions`` of its cells count: a disturbed cell
  (:func:`benchstack.results.cell.is_disturbed`) is kept as evidence and measured again;
* its precision is not known or not good enough: the half-width of the distribution-free 95 % interval of
  the median of its counted req/s, over the median (:func:`benchstack.analysis.stats.relative_half_width`), is
  unknown (fewer than 6 counted cells) or above ``load.target_precision``.

Comparisons pair a stack's cells with the baseline's by round (:mod:`benchstack.analysis.comparison`), so:

* when a stack's load point gets a round, the baseline's load point of the same tool and level gets it too;
* a stack's load point whose comparison has fewer than 6 pairs (its own or the baseline's cells of a round
  disturbed) gets a round too, with the baseline's, while both are below their bounds;
* an extra cell's repetition number is its round's, the same for every cell of the round (one more than the
  target's highest so far), so a repetition number names one stretch of time: a load point that skipped
  rounds has gaps in its numbers, and never pairs cells measured minutes apart.

Bounds: at most ``load.max_repetitions`` counted cells, at most twice that many cells in all (a host that
disturbs every cell ends the rounds), and no round starts once ``load.max_seconds`` have passed since the
target's first cell. A round's cells are in a random order drawn from the run's seed.
The playbook asks for the next round with :func:`extra_cells` and measures it, until the answer is empty.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from benchstack.analysis.comparison import paired_ratios
from benchstack.analysis.loadpoints import by_load_point
from benchstack.analysis.stats import MIN_MEDIAN_CI_VALUES, relative_half_width
from benchstack.plan.experiment import CellPlan, Experiment, LoadPoint, cell_plan, load_points, shuffled
from benchstack.plan.loadplan import Load
from benchstack.plan.targets import for_target
from benchstack.results.cell import counted, load_cells

# Cells in all, disturbed ones included, per counted cell allowed: the bound on measuring again.
MAX_CELLS_PER_COUNTED = 2


def precision(cells_of_point: Sequence[dict[str, Any]]) -> float | None:
    """The load point's precision: the relative half-width of its median's 95 % interval over the counted
    cells (None below 6 of them)."""
    return relative_half_width([c.get("rps") for c in counted(list(cells_of_point))])


def below_bounds(cells_of_point: Sequence[dict[str, Any]], load: Load) -> bool:
    """Whether one load point may get another cell: below ``load.max_repetitions`` counted cells and twice
    that many in all."""
    cells = list(cells_of_point)
    cap = load.repetition_cap
    return len(counted(cells)) < cap and len(cells) < MAX_CELLS_PER_COUNTED * cap


def more_needed(cells_of_point: Sequence[dict[str, Any]], load: Load) -> bool:
    """Whether one load point's stored cells call for another round (module docstring)."""
    cells = list(cells_of_point)
    good = counted(cells)
    if not below_bounds(cells, load):
        return False
    if len(good) < load.repetitions:
        return True
    reached = precision(good)
    return reached is None or reached > load.target_precision


def first_extra_round(planned: Sequence[CellPlan], exp: Experiment) -> bool:
    """Whether ``planned`` (an answer of :func:`extra_cells`) is the run's first extra round: it holds the
    first repetition after the regular ones. Later rounds hold none: a load point is due again only while it
    was due in every round before (its stored cells change only when it is measured)."""
    return bool(planned) and min(int(c.repetition) for c in planned) == exp.load.repetitions + 1


def _over_budget(stored: Sequence[dict[str, Any]], load: Load, now: datetime | None) -> bool:
    budget = load.max_seconds
    started = [c.get("started_at") for c in stored if c.get("started_at")]
    if not budget or not started:
        return False
    first = min(datetime.fromisoformat(str(s).replace("Z", "+00:00")) for s in started)
    return ((now or datetime.now(UTC)) - first).total_seconds() > float(budget)


def extra_cells(
    run_dir: str | os.PathLike[str],
    exp: Experiment,
    target: str | None = None,
    targets: Sequence[str] = (),
    seed: int | None = None,
    now: datetime | None = None,
) -> list[CellPlan]:
    """The next round: one more cell of every load point that needs one, in the round's random order
    (``seed``; without one, in stack and plan order).

    Only load points whose first ``load.repetitions`` repetitions are all stored are considered (the regular
    rounds come first). Every cell of the round has the round's repetition number. ``target``: only that
    target's load points, planned on it (with ``targets``, the run's: the ids start with the target when
    there are several, :mod:`benchstack.plan.targets`).
    """
    load = exp.load
    stored = [c for c in load_cells(run_dir) if c.get("experiment") in (None, exp.name)]
    if target is not None:
        stored = [c for c in stored if c.get("target") == target]
    if _over_budget(stored, load, now):
        return []
    groups = by_load_point(stored)
    points = [(stack, point) for stack in exp.stacks for point in load_points(exp)]

    def key_of(stack: dict[str, Any], point: LoadPoint) -> tuple[str, str, bool, int]:
        return (stack["name"], *point.key)

    # The round's number, shared by its cells: comparisons pair cells by it (module docstring).
    this_round = 1 + max((int(c["repetition"]) for c in stored if c.get("repetition") is not None), default=0)
    regular = set(range(1, load.repetitions + 1))

    def ready(key: tuple[str, str, bool, int]) -> bool:
        cells = groups.get(key, [])
        return regular <= {int(c["repetition"]) for c in cells if c.get("repetition") is not None}

    def baseline_key(key: tuple[str, str, bool, int]) -> tuple[str, str, bool, int]:
        return (str(load.baseline), *key[1:])

    due: dict[tuple[str, str, bool, int], tuple[dict[str, Any], LoadPoint, int]] = {}
    for stack, point in points:
        key = key_of(stack, point)
        if not ready(key):
            continue
        cells = groups.get(key, [])
        base = groups.get(baseline_key(key), [])
        if more_needed(cells, load) or (
            stack["name"] != load.baseline
            and ready(baseline_key(key))  # the baseline is measured here (a run may spread stacks on targets)
            and below_bounds(cells, load)
            and below_bounds(base, load)
            and len(paired_ratios(cells, base)) < MIN_MEDIAN_CI_VALUES
        ):
            due[key] = (stack, point, this_round)
    for stack, point in points:
        key = key_of(stack, point)
        if stack["name"] != load.baseline or key in due:
            continue
        if not any(k[1:] == key[1:] for k in due):
            continue
        if below_bounds(groups.get(key, []), load):
            due[key] = (stack, point, this_round)
    order = [due[key_of(*pair)] for pair in points if key_of(*pair) in due]
    if seed is not None and order:
        order = shuffled(order, seed, max(item[2] for item in order))
    planned = [cell_plan(exp, stack, point, repetition) for stack, point, repetition in order]
    if target is None:
        return planned
    return [for_target(p, target, several=len(targets) > 1) for p in planned]
