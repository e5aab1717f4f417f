"""How precisely the median req/s of each load point that takes part in no comparison is known: its 95 %
interval against ``load.target_precision`` (``precision``, with what ended the rounds short of it and how many
more would reach it), and disturbed cells that could not all be measured again (``disturbed``).
"""

from __future__ import annotations

import math

from benchstack.analysis.checks.base import Reason, Run, cell_ids, pct, recorded_load
from benchstack.analysis.stats import MIN_MEDIAN_CI_VALUES
from benchstack.common.numbers import as_number
from benchstack.plan.loadplan import MAX_CELLS_PER_COUNTED
from benchstack.plan.targets import TargetPoint, by_target_point, target_of
from benchstack.results.cell import cell_id_of, group_key, left_out


def check_precision(run: Run) -> tuple[list[Reason], list[str]]:
    """Only load points that take part in no comparison: for the others the comparisons are the answer
    (``unresolved``, :mod:`benchstack.analysis.checks.answer`), and a median's interval is information."""
    limits = run.limits
    reasons = []
    compared = run.compared_points
    for key, group in run.groups.items():
        n = len(group)
        if not n or key in compared:
            continue
        reached = run.figures[key].precision
        cap = limits.max_repetitions
        if reached is None:
            message = (
                f"{run.label(key)}: precision unknown: {n} counted rounds, {MIN_MEDIAN_CI_VALUES} needed "
                "for a 95 % interval of the median req/s"
            )
            if cap is not None and cap < MIN_MEDIAN_CI_VALUES:
                message += f" (raise load.max_repetitions from {cap} to {MIN_MEDIAN_CI_VALUES} or more)"
        elif reached > limits.target_precision:
            message = (
                f"{run.label(key)}: median req/s known to +-{pct(reached)} over {n} rounds, short of "
                f"load.target_precision +-{pct(limits.target_precision)}"
            )
            needed = rounds_needed_text(reached, limits.target_precision, n)
            message += f" ({what_ended(run, key, n, cap)}; {needed})"
        else:
            continue
        reasons.append(Reason("precision", "noisy", message, cell_ids(group)))
    return reasons, []


def rounds_needed(reached: float, target: float, n: int) -> int:
    """Counted rounds that would bring a median known to +-``reached`` over ``n`` rounds to +-``target`` at
    the same spread: an interval's width shrinks as 1 / sqrt(n)."""
    return math.ceil(n * (reached / target) ** 2 - 1e-9)


def rounds_needed_text(reached: float, target: float, n: int) -> str:
    needed = rounds_needed(reached, target, n)
    return f"at this spread about {needed} counted rounds would reach it, {needed - n} more"


def what_ended(run: Run, key: TargetPoint, n: int, cap: int | None) -> str:
    """What ended a load point's rounds short of its target, as far as its cells tell."""
    if cap is not None and n >= cap:
        return f"load.max_repetitions {cap} reached"
    target, point = key
    measured = sum(1 for c in run.cells if target_of(c) == target and group_key(c) == point)
    if cap is not None and measured >= MAX_CELLS_PER_COUNTED * cap:
        return f"{measured} cells in all, the bound of {MAX_CELLS_PER_COUNTED} x load.max_repetitions"
    budget = as_number(recorded_load(run.info).get("max_seconds"))
    if budget:
        return f"the time budget, load.max_seconds {budget:g}, ended the rounds"
    return "the run ended its rounds early (stopped, or resumed without them)"


def check_disturbed(run: Run) -> tuple[list[Reason], list[str]]:
    """Disturbed cells were measured again; a load point left with fewer counted cells than planned
    rounds is noisy."""
    out = left_out(run.cells)
    why = {id(c): reasons for c, reasons in out}
    disturbed = [c for c, _ in out]
    if not disturbed:
        return [], []
    reasons = []
    planned = run.limits.repetitions
    short = {
        key: group
        for key, group in by_target_point(disturbed).items()
        if planned is not None and len(run.groups.get(key, [])) < planned
    }
    for key, group in short.items():
        counted_n = len(run.groups.get(key, []))
        message = (
            f"{run.label(key)}: {len(group)} disturbed cells and only {counted_n} of {planned} planned "
            f"rounds counted: {why[id(group[-1])][0]}"
        )
        reasons.append(Reason("disturbed", "noisy", message, cell_ids(group)))
    first = why[id(disturbed[0])][0]
    notes = [
        f"disturbed: {len(disturbed)} cells were disturbed or collapsed, kept as evidence, left out of the "
        f"statistics and measured again (first: {cell_id_of(disturbed[0])}: {first})"
    ]
    return reasons, notes
