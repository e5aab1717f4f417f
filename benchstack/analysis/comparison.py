"""Each stack against the run's baseline: the answer a run is for ("x2: faster, 1.21x x1, 1.12-1.30").

For every stack other than the baseline (run.json ``experiment.load.baseline``; the experiment's first stack
when none is recorded), per target, tool, keep-alive and level: the ratio of its req/s to the baseline's,
**paired by round**. Round k of every load point is measured in the same stretch of time (rounds interleave
the load points, the baseline's cell in the middle of each round: :func:`benchstack.plan.experiment.paired`),
so a slow minute of the host slows both sides of a pair; the ratio within a round cancels it, where a ratio
of two medians would not. A pair is a repetition number at which both stacks have a counted cell
(:func:`benchstack.results.cell.counted`: a disturbed cell pairs with nothing) and both req/s are above 0.

The ratio is the Hodges-Lehmann estimate of the pairs' log ratios (the median of their Walsh averages), with
the interval that inverts Wilcoxon's signed-rank test (:func:`benchstack.analysis.stats.shift_ci`), both
turned back into ratios. Every comparison ends in one **state**:

* ``equivalent``: the interval lies wholly within 1 +- ``load.equivalence`` (the margin): no difference, or
  one smaller than the margin (the sentence says which);
* ``faster`` / ``slower``: the interval lies wholly above / below 1, and reaches past the margin;
* ``unresolved``: the interval holds 1 and reaches past the margin, or there are too few pairs for an
  interval; ``pairs_needed`` says about how many pairs would resolve it at the spread seen (the interval
  narrows as 1 / sqrt(n)).

**Error control.** The extra rounds look at every comparison after every round and stop once it is resolved
(:mod:`benchstack.measure.repetitions`); looking often inflates the chance of calling a difference that is not
there. Each look's intervals are therefore at ``load.confidence`` (0.99 by default), which keeps the
false-difference rate of a comparison over a whole run near 5 % (``scripts/simulate-comparisons.py``), and
Holm's step-down adjustment spreads that over the run's comparisons: the comparison with the smallest
signed-rank p-value gets alpha / m, the next alpha / (m - 1), ..., so a run of four comparisons does not call
false differences four times as often, while a stack that is clearly faster costs the others almost nothing.
Each target's comparisons are one family (a target answers its own question; the extra rounds of a target
judge its comparisons alone). Each comparison records the confidence of its own interval.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchstack.analysis.loadpoints import tool_label
from benchstack.analysis.stats import min_pairs, shift_ci, signed_rank_p
from benchstack.plan.loadplan import DEFAULT_CONFIDENCE, DEFAULT_EQUIVALENCE
from benchstack.plan.targets import target_of
from benchstack.results.cell import Cell, counted, group_key, level_label, window_start

FASTER = "faster"
SLOWER = "slower"
EQUIVALENT = "equivalent"
UNRESOLVED = "unresolved"
STATES = (FASTER, SLOWER, EQUIVALENT, UNRESOLVED)
RESOLVED = (FASTER, SLOWER, EQUIVALENT)


@dataclass(frozen=True)
class Settings:
    """What a run's comparisons are judged by: the equivalence margin and each look's confidence (before
    Holm's adjustment)."""

    margin: float = DEFAULT_EQUIVALENCE
    confidence: float = DEFAULT_CONFIDENCE

    @classmethod
    def of(cls, run_info: dict[str, Any] | None) -> Settings:
        """run.json's ``experiment.load.equivalence`` and ``confidence``; the defaults where absent."""
        exp = (run_info or {}).get("experiment")
        load = exp.get("load") if isinstance(exp, dict) else None
        load = load if isinstance(load, dict) else {}
        margin, confidence = load.get("equivalence"), load.get("confidence")
        return cls(
            margin=float(margin) if isinstance(margin, int | float) else DEFAULT_EQUIVALENCE,
            confidence=float(confidence) if isinstance(confidence, int | float) else DEFAULT_CONFIDENCE,
        )


@dataclass(frozen=True)
class Comparison:
    stack: str
    baseline: str
    target: str | None  # None for cells that name no target
    tool: str
    keepalive: bool
    level: int  # concurrency, or an open-loop tool's offered rate
    pairs: int  # rounds in which both stacks have a counted cell
    ratio: float | None  # the Hodges-Lehmann ratio stack / baseline; None without a pair
    low: float | None  # its interval at ``confidence``; None below the pairs an interval needs
    high: float | None
    state: str  # one of STATES
    margin: float = DEFAULT_EQUIVALENCE
    confidence: float | None = None  # of this comparison's interval, after Holm's adjustment
    p: float | None = None  # the signed-rank test's two-sided p-value that the ratio is 1
    pairs_needed: int | None = None  # unresolved: about how many pairs would resolve it
    gap_s: float | None = None  # median seconds between the starts of a pair's two cells

    @property
    def sentence(self) -> str:
        """One plain sentence: ``x2: faster, 1.21x the req/s of x1 (1.12-1.30; 24 pairs, 3.1 s apart)``."""
        head = f"{self.stack}: "
        pairs = f"{self.pairs} pairs" + (f" {self.gap_s:.1f} s apart" if self.gap_s is not None else "")
        margin = f"+-{_pct(self.margin)}"
        if self.low is None or self.high is None:
            needed = self.pairs_needed or 0
            if self.ratio is None:
                return f"{head}unresolved: no pair of rounds with {self.baseline} ({needed} needed)"
            return (
                f"{head}unresolved, {_number(self.ratio)}x the req/s of {self.baseline}: too few pairs for "
                f"an interval ({self.pairs}, {needed} needed)"
            )
        ratio, low, high = _shown(self)
        interval = f"{low}-{high}; {pairs}"
        if self.state == EQUIVALENT:
            smaller = ""
            if self.low > 1 or self.high < 1:
                smaller = f": {'faster' if self.low > 1 else 'slower'}, by less than the margin"
            return f"{head}equivalent to {self.baseline} within {margin} ({ratio}x, {interval}{smaller})"
        if self.state == UNRESOLVED:
            return (
                f"{head}unresolved, {ratio}x the req/s of {self.baseline} ({interval}): neither a difference "
                f"nor within {margin}; about {self.pairs_needed} pairs would resolve it"
            )
        return f"{head}{self.state}, {ratio}x the req/s of {self.baseline} ({interval})"

    @property
    def resolved(self) -> bool:
        return self.state in RESOLVED

    def to_dict(self) -> dict[str, Any]:
        """What run.json ``comparisons`` holds: the fields (figures rounded) and the sentence."""
        return {
            "stack": self.stack,
            "baseline": self.baseline,
            "target": self.target,
            "tool": self.tool,
            "keepalive": self.keepalive,
            "level": self.level,
            "pairs": self.pairs,
            "ratio": _rounded(self.ratio, 4),
            "low": _rounded(self.low, 4),
            "high": _rounded(self.high, 4),
            "state": self.state,
            "margin": self.margin,
            "confidence": _rounded(self.confidence, 6),
            "p": _rounded(self.p, 6),
            "pairs_needed": self.pairs_needed,
            "gap_s": _rounded(self.gap_s, 2),
            "sentence": self.sentence,
        }


def _rounded(x: float | None, digits: int) -> float | None:
    return None if x is None else round(x, digits)


def _pct(share: float) -> str:
    return f"{100 * share:g} %"


def _number(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}f}"


def shown_ratio(
    state: str, ratio: float, low: float, high: float, margin: float | None = None
) -> tuple[str, str, str]:
    """Ratio and bounds as printed: two decimals, three when two would hide what decided the state (a bound
    of 1.00 on an interval that excludes 1, or a bound on the margin's own figure, when it is known)."""
    two = (_number(low), _number(high))
    edges = {"1.00"} | ({_number(1 - margin), _number(1 + margin)} if margin is not None else set())
    digits = 3 if state != UNRESOLVED and set(two) & edges else 2
    return _number(ratio, digits), _number(low, digits), _number(high, digits)


def _shown(c: Comparison) -> tuple[str, str, str]:
    assert c.ratio is not None and c.low is not None and c.high is not None
    return shown_ratio(c.state, c.ratio, c.low, c.high, c.margin)


def state_of(low: float | None, high: float | None, margin: float) -> str:
    """The state an interval of the ratio gives (module docstring); unresolved without one. Equivalence comes
    first: an interval inside the margin is ``equivalent`` even when it excludes 1 (a difference smaller than
    the margin), so a stack a little faster than the baseline ends the same way in every run, instead of
    ``faster`` in runs that happened to measure long enough and ``equivalent`` in the others."""
    if low is None or high is None:
        return UNRESOLVED
    if low >= 1 - margin and high <= 1 + margin:
        return EQUIVALENT
    if low > 1:
        return FASTER
    if high < 1:
        return SLOWER
    return UNRESOLVED


def pairs_needed(logs: Sequence[float], estimate: float, half_width: float, margin: float) -> int:
    """About how many pairs would resolve a comparison whose interval over ``len(logs)`` pairs has
    ``half_width`` (in log space) around ``estimate``: the interval narrows as 1 / sqrt(n), and it resolves
    once it is narrower than the distance to 1 (a difference) or fits inside the margin (equivalence),
    whichever comes first."""
    n = len(logs)
    equivalence_room = min(math.log1p(margin) - estimate, estimate - math.log1p(-margin))
    room = max(abs(estimate), equivalence_room)
    if room <= 0 or half_width <= 0:
        return n + 1
    return max(n + 1, math.ceil(n * (half_width / room) ** 2))


def _rounds(cells: list[Cell]) -> dict[int, Cell]:
    """One stack's counted cells at one load point (on one target) with req/s above 0, by repetition."""
    found: dict[int, Cell] = {}
    for cell in counted(cells):
        if cell.repetition is not None and cell.rps > 0:
            found[cell.repetition] = cell
    return found


def pairs_of(cells: list[Cell], baseline_cells: list[Cell]) -> list[tuple[float, float | None]]:
    """Per round both have counted, in round order: the log of req/s over the baseline's, and the seconds
    between the starts of the two cells' measured windows (None where a cell records no start)."""
    ours, theirs = _rounds(cells), _rounds(baseline_cells)
    out = []
    for r in sorted(set(ours) & set(theirs)):
        a, b = ours[r], theirs[r]
        ta, tb = window_start(a), window_start(b)
        out.append(
            (math.log(float(a.rps) / float(b.rps)), None if ta is None or tb is None else abs(ta - tb))
        )
    return out


def paired_ratios(cells: list[Cell], baseline_cells: list[Cell]) -> list[float]:
    """Per round both have counted, in round order: req/s over the baseline's."""
    return [math.exp(log) for log, _ in pairs_of(cells, baseline_cells)]


@dataclass(frozen=True)
class _Pairing:
    stack: str
    baseline: str
    first: Cell
    pairs: list[tuple[float, float | None]]


def _judged(p: _Pairing, confidence: float, margin: float, holm_p: float | None) -> Comparison:
    """One comparison at the confidence Holm gave it."""
    _, tool, keepalive, level = group_key(p.first)
    logs = [log for log, _ in p.pairs]
    gaps = [g for _, g in p.pairs if g is not None]
    interval = shift_ci(logs, confidence)
    ratio = None
    if interval is not None:
        ratio = math.exp(interval.estimate)
    elif logs:
        ratio = math.exp(statistics.median(logs))
    low, high = (math.exp(interval.low), math.exp(interval.high)) if interval else (None, None)
    state = state_of(low, high, margin)
    needed = None
    if state == UNRESOLVED:
        if interval is None:
            needed = min_pairs(confidence)
        else:
            half = (interval.high - interval.low) / 2
            needed = pairs_needed(logs, (interval.high + interval.low) / 2, half, margin)
    return Comparison(
        stack=p.stack,
        baseline=p.baseline,
        target=p.first.target,
        tool=tool,
        keepalive=keepalive,
        level=level,
        pairs=len(logs),
        ratio=ratio,
        low=low,
        high=high,
        state=state,
        margin=margin,
        confidence=confidence,
        p=holm_p,
        pairs_needed=needed,
        gap_s=statistics.median(gaps) if gaps else None,
    )


def holm_levels(p_values: Sequence[float | None], alpha: float) -> list[float]:
    """Holm's step-down alpha of each hypothesis, in the order given: sorted by p, the i-th smallest (from 0)
    is tested at alpha / (m - i) while every smaller one was rejected; from the first that is not, every
    later one keeps that step's alpha. A missing p (no pair) sorts last."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i] is None, p_values[i] or 0.0))
    levels = [alpha] * m
    stopped: float | None = None
    for step, i in enumerate(order):
        level = alpha / (m - step) if stopped is None else stopped
        levels[i] = level
        p = p_values[i]
        if stopped is None and (p is None or p > level):
            stopped = level
    return levels


def judge(pairings: Sequence[_Pairing], settings: Settings) -> list[Comparison]:
    """Every comparison of one target, Holm-adjusted together (module docstring)."""
    ps = [signed_rank_p([log for log, _ in p.pairs]) if p.pairs else None for p in pairings]
    alphas = holm_levels(ps, 1.0 - settings.confidence)
    return [_judged(p, 1.0 - a, settings.margin, pv) for p, a, pv in zip(pairings, alphas, ps, strict=True)]


def compare_to_baseline(
    cells: list[Cell],
    baseline: str,
    stack_order: Sequence[str] = (),
    settings: Settings | None = None,
) -> list[Comparison]:
    """Every other stack against ``baseline``, at each target, tool, keep-alive and level where both were
    measured; sorted by target, tool, keep-alive, level, then the stacks in ``stack_order`` (the
    experiment's), the others by name. Disturbed cells are kept in the groups but never paired."""
    groups: dict[tuple[str, str, bool, int], dict[str, list[Cell]]] = {}
    for cell in cells:
        stack, tool, keepalive, level = group_key(cell)
        groups.setdefault((target_of(cell), tool, keepalive, level), {}).setdefault(stack, []).append(cell)
    rank = {name: i for i, name in enumerate(stack_order)}
    pairings: dict[str, list[_Pairing]] = {}  # by target: each target's comparisons are one family
    for point in sorted(groups):
        by_stack = groups[point]
        if baseline not in by_stack:
            continue
        others = sorted((s for s in by_stack if s != baseline), key=lambda s: (rank.get(s, len(rank)), s))
        for s in others:
            first = (by_stack[s] or by_stack[baseline])[0]
            pairing = _Pairing(s, baseline, first, pairs_of(by_stack[s], by_stack[baseline]))
            pairings.setdefault(point[0], []).append(pairing)
    return [c for target in pairings for c in judge(pairings[target], settings or Settings())]


def experiment_stacks(run_info: dict[str, Any] | None) -> list[str]:
    """The stack names run.json's experiment lists, in its order."""
    exp = (run_info or {}).get("experiment")
    stacks = exp.get("stacks") if isinstance(exp, dict) else None
    if not isinstance(stacks, list):
        return []
    return [str(s["name"]) for s in stacks if isinstance(s, dict) and s.get("name")]


def baseline_of(run_info: dict[str, Any] | None, cells: list[Cell]) -> str | None:
    """run.json's ``experiment.load.baseline``; else the experiment's first stack; else (no run.json) the
    first stack of the cells by name; None without cells."""
    exp = (run_info or {}).get("experiment")
    load = exp.get("load") if isinstance(exp, dict) else None
    if isinstance(load, dict) and isinstance(load.get("baseline"), str) and load["baseline"]:
        return str(load["baseline"])
    stacks = experiment_stacks(run_info) or sorted({c.stack or "-" for c in cells})
    return stacks[0] if stacks else None


def run_comparisons(cells: list[Cell], run_info: dict[str, Any] | None) -> list[Comparison]:
    """The run's comparisons against its baseline (:func:`baseline_of`), judged by its settings."""
    baseline = baseline_of(run_info, cells)
    if baseline is None:
        return []
    return compare_to_baseline(cells, baseline, experiment_stacks(run_info), Settings.of(run_info))


def grouped(comparisons: list[Comparison], several_targets: bool) -> dict[str, list[Comparison]]:
    """The comparisons under a heading per tool and level (``wrk c32``, ``ab -k c100``), with the target
    (``wrk c32 on web-b``) when the run has several."""
    found: dict[str, list[Comparison]] = {}
    for c in comparisons:
        heading = f"{tool_label(c.tool, c.keepalive)} {level_label(c.tool, c.level)}"
        if several_targets:
            heading += f" on {c.target or '-'}"
        found.setdefault(heading, []).append(c)
    return found


def intro(found: Sequence[Comparison], settings: Settings) -> str:
    """What the comparisons' figures are, for the run's own settings."""
    levels = sorted({c.confidence for c in found if c.confidence is not None})
    shown = "-" if not levels else "-".join(dict.fromkeys(f"{100 * c:g} %" for c in (levels[0], levels[-1])))
    return (
        f"Each stack against the baseline, {found[0].baseline}, over pairs of cells of the same round: the "
        "Hodges-Lehmann ratio of its req/s to the baseline's, with its interval from Wilcoxon's signed-rank "
        f"test at {shown} (load.confidence {100 * settings.confidence:g} % per look, Holm-adjusted over the "
        f"run's {len(found)} comparisons, so that the rounds' repeated looks and the comparisons together "
        "call a false difference in about 5 % of runs). faster or slower: the interval excludes 1; "
        f"equivalent: it lies within 1 +-{_pct(settings.margin)} (load.equivalence); unresolved: neither, "
        "with about how "
        "many pairs would resolve it."
    )


def missing_baseline(cells: list[Cell], run_info: dict[str, Any] | None) -> str | None:
    """Why the run has no comparison when its baseline was not measured; None when it was."""
    baseline = baseline_of(run_info, cells)
    if baseline is None or baseline in {c.stack or "-" for c in cells}:
        return None
    return f"No comparisons: the baseline, {baseline}, has no cells in this run."


def several_targets(cells: list[Cell]) -> bool:
    return len({target_of(c) for c in cells}) > 1


def comparisons_text(
    cells: list[Cell], run_info: dict[str, Any] | None, found: list[Comparison] | None = None
) -> str:
    """The comparisons as a run prints them at its end: a line per tool and level, a sentence per stack
    under it; empty for a run of one stack. ``found``: the run's comparisons where they were computed
    already (:func:`run_comparisons`)."""
    if found is None:
        found = run_comparisons(cells, run_info)
    if not found:
        why = missing_baseline(cells, run_info)
        return f"{why}\n" if why else ""
    lines = [f"Comparisons (baseline {found[0].baseline}):"]
    for heading, group in grouped(found, several_targets(cells)).items():
        lines.append(f"{heading}:")
        lines += [f"  {c.sentence}" for c in group]
    return "\n".join(lines) + "\n"
