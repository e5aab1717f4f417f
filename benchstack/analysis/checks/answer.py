"""Whether the run answered its question: every comparison with the baseline resolved (``unresolved`` names
each one that is not, with about how many pairs would resolve it and what ended its rounds).
"""

from __future__ import annotations

from benchstack.analysis.checks.base import Reason, Run, cell_ids, point_label
from benchstack.analysis.checks.precision import what_ended
from benchstack.analysis.comparison import UNRESOLVED, Comparison
from benchstack.plan.targets import target_of
from benchstack.results.cell import group_key


def _key(c: Comparison, stack: str) -> tuple[str, tuple[str, str, bool, int]]:
    return (c.target or "-", (stack, c.tool, c.keepalive, c.level))


def check_unresolved(run: Run) -> tuple[list[Reason], list[str]]:
    reasons = []
    for c in run.comparisons:
        if c.state != UNRESOLVED:
            continue
        ours, theirs = _key(c, c.stack), _key(c, c.baseline)
        label = point_label(ours[1])
        if run.several_targets:
            label += f" on {ours[0]}"
        cells = [x for x in run.cells if (target_of(x), group_key(x)) in (ours, theirs)]
        needed = c.pairs_needed or 0
        if c.low is None or c.high is None:
            found = f"{c.pairs} pairs with {c.baseline}, too few for an interval"
        else:
            found = (
                f"{c.ratio:.2f}x {c.baseline} ({c.low:.2f}-{c.high:.2f}) over {c.pairs} pairs: neither a "
                f"difference nor within +-{100 * c.margin:g} %"
            )
        # A comparison's rounds are bounded by its pairs (benchstack.measure.repetitions.pairs_below_bounds).
        ended = what_ended(run, ours, c.pairs, run.limits.max_repetitions)
        message = (
            f"{label}: unresolved against {c.baseline}: {found}; about {needed} pairs would resolve it, "
            f"{max(0, needed - c.pairs)} more ({ended})"
        )
        reasons.append(Reason("unresolved", "noisy", message, cell_ids(cells)))
    return reasons, []
