"""Adaptive repetitions: measure a load point again while its req/s spread is above ``load.max_cv``.

Every load point first gets ``load.repetitions`` repetitions. Then, round by round, each load point whose
repetitions so far have a coefficient of variation of req/s above ``load.max_cv`` (or fewer than two
repetitions, so no spread is known yet) gets one more, until it is quiet or has ``load.max_repetitions``.
A load point still noisy at the cap is marked noisy in the report. The playbook asks for the extra cells
with :func:`extra_cells` after each round; the answer is empty once nothing needs more.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from benchstack.cell import load_cells
from benchstack.experiment import CellPlan, Experiment, cell_plan, load_points, plan_keepalive, rotated
from benchstack.loadpoints import by_load_point
from benchstack.stats import coefficient_of_variation
from benchstack.targets import for_target


def is_noisy(cells_of_group: Sequence[dict[str, Any]], max_cv: float) -> bool:
    """Whether the req/s of these repetitions vary more than ``max_cv`` (False below two repetitions)."""
    cv = coefficient_of_variation([c.get("rps") for c in cells_of_group])
    return cv is not None and cv > max_cv


def more_repetitions_needed(
    cells_of_group: Sequence[dict[str, Any]], max_cv: float, max_repetitions: int
) -> bool:
    """Whether one load point's repetitions call for another: below the cap and noisy or spread unknown."""
    n = len(cells_of_group)
    if n >= max_repetitions:
        return False
    if n < 2:
        return True
    return is_noisy(cells_of_group, max_cv)


def extra_cells(
    run_dir: str | os.PathLike[str], exp: Experiment, target: str | None = None, targets: Sequence[str] = ()
) -> list[CellPlan]:
    """The next repetition of every load point that needs one, in measuring order.

    Only load points whose first ``load.repetitions`` repetitions are all stored are considered (the regular
    cells come first). Each extra cell continues its load point's repetition numbers; cells are ordered by
    repetition, then by the stack order of that repetition (rotated, as in :func:`experiment.cells`).
    ``target``: only that target's load points, planned on it (with ``targets``, the run's, the ids start
    with the target when there are several: :mod:`benchstack.targets`).
    """
    load = exp.load
    stored = [c for c in load_cells(run_dir) if c.get("experiment") in (None, exp.name)]
    if target is not None:
        stored = [c for c in stored if c.get("target") == target]
    groups = by_load_point(stored)
    wanted: list[tuple[int, int, int, CellPlan]] = []
    points = [(stack, plan, level) for stack in exp.stacks for plan, level in load_points(exp)]
    for order, (stack, plan, level) in enumerate(points):
        stored = groups.get((stack["name"], plan["tool"], plan_keepalive(plan), level), [])
        done = {int(c["repetition"]) for c in stored if c.get("repetition") is not None}
        if not set(range(1, load["repetitions"] + 1)) <= done:
            continue
        if more_repetitions_needed(stored, load["max_cv"], load["max_repetitions"]):
            repetition = max(done) + 1
            position = [s["name"] for s in rotated(exp.stacks, repetition)].index(stack["name"])
            wanted.append((repetition, position, order, cell_plan(exp, stack, plan, level, repetition)))
    planned = [item[3] for item in sorted(wanted, key=lambda w: w[:3])]
    if target is None:
        return planned
    return [for_target(p, target, several=len(targets) > 1) for p in planned]
