"""Each stack against the run's baseline: the answer a run is for ("x2 behind nginx: 1.21x x1, 1.12-1.30").

For every stack other than the baseline (run.json ``experiment.load.baseline``; the experiment's first stack
when none is recorded), per target, tool, keep-alive and level: the ratio of its req/s to the baseline's,
**paired by round**. Round k of every load point is measured in the same stretch of time (rounds interleave
the load points), so a slow minute of the host slows both sides of a pair; the ratio within a round cancels
it, where a ratio of two medians would not. A pair is a repetition number at which both stacks have a counted
cell (:func:`benchstack.cell.counted`: a disturbed cell pairs with nothing) and the baseline's req/s is above
0. The ratio is the median of the per-round ratios, with the distribution-free 95 % interval of that median
(:func:`benchstack.stats.median_ci`), which needs 6 pairs: with fewer, the comparison has no interval and
says so.

Verdict: ``faster`` when the whole interval is above 1, ``slower`` when it is below 1, ``no difference
shown`` when it holds 1, ``too few rounds`` without an interval.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from benchstack.cell import counted, group_key, level_label
from benchstack.loadpoints import tool_label
from benchstack.stats import MIN_MEDIAN_CI_VALUES, median_ci
from benchstack.targets import target_of

FASTER = "faster"
SLOWER = "slower"
NO_DIFFERENCE = "no difference shown"
TOO_FEW = "too few rounds"
VERDICTS = (FASTER, SLOWER, NO_DIFFERENCE, TOO_FEW)


@dataclass(frozen=True)
class Comparison:
    stack: str
    baseline: str
    target: str | None  # None for cells that name no target
    tool: str
    keepalive: bool
    level: int  # concurrency, or an open-loop tool's offered rate
    pairs: int  # rounds in which both stacks have a counted cell
    ratio: float | None  # median of the per-round ratios stack / baseline; None without a pair
    low: float | None  # its 95 % interval; None below MIN_MEDIAN_CI_VALUES pairs
    high: float | None
    verdict: str  # one of VERDICTS

    @property
    def sentence(self) -> str:
        """One plain sentence: ``x2: 1.21x the req/s of x1 (1.12-1.30)``."""
        head = f"{self.stack}: "
        if self.verdict == TOO_FEW:
            needed = f"({self.pairs}, {MIN_MEDIAN_CI_VALUES} needed) for an interval"
            if self.ratio is None:  # no pair at all
                return f"{head}too few paired rounds with {self.baseline} {needed}"
            ratio = _number(self.ratio)
            return f"{head}{ratio}x the req/s of {self.baseline}; too few paired rounds {needed}"
        ratio, low, high = _shown(self)
        if self.verdict == NO_DIFFERENCE:
            return f"{head}no difference shown from {self.baseline} ({low}-{high})"
        return f"{head}{ratio}x the req/s of {self.baseline} ({low}-{high})"

    def to_dict(self) -> dict[str, Any]:
        """What run.json ``comparisons`` holds: the fields and the sentence."""
        return {**asdict(self), "sentence": self.sentence}


def _number(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}f}"


def _shown(c: Comparison) -> tuple[str, str, str]:
    """Ratio and bounds as printed: two decimals, three when two would show a bound of 1.00 on an interval
    that excludes 1 (a reader would take "faster (1.00-1.04)" for a contradiction)."""
    assert c.ratio is not None and c.low is not None and c.high is not None
    digits = 2
    if c.verdict in (FASTER, SLOWER) and _number(c.low if c.verdict == FASTER else c.high) == "1.00":
        digits = 3
    return _number(c.ratio, digits), _number(c.low, digits), _number(c.high, digits)


def interval_verdict(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return TOO_FEW
    if low > 1:
        return FASTER
    if high < 1:
        return SLOWER
    return NO_DIFFERENCE


def _rounds(cells: list[dict[str, Any]]) -> dict[int, float]:
    """req/s by repetition number of one stack's counted cells at one load point (on one target)."""
    found: dict[int, float] = {}
    for cell in counted(cells):
        rep, rps = cell.get("repetition"), cell.get("rps")
        if rep is not None and rps is not None:
            found[int(rep)] = float(rps)
    return found


def paired_ratios(cells: list[dict[str, Any]], baseline_cells: list[dict[str, Any]]) -> list[float]:
    """Per round both have counted, in round order: req/s over the baseline's (rounds where the
    baseline's req/s is 0 have no ratio and are left out)."""
    ours, theirs = _rounds(cells), _rounds(baseline_cells)
    return [ours[r] / theirs[r] for r in sorted(set(ours) & set(theirs)) if theirs[r] > 0]


def compare_pair(
    cells: list[dict[str, Any]], baseline_cells: list[dict[str, Any]], stack: str, baseline: str
) -> Comparison:
    """One stack's cells at one load point (on one target) against the baseline's there."""
    first = (cells or baseline_cells)[0]
    _, tool, keepalive, level = group_key(first)
    ratios = paired_ratios(cells, baseline_cells)
    interval = median_ci(ratios)
    low, high = (interval.low, interval.high) if interval else (None, None)
    return Comparison(
        stack=stack,
        baseline=baseline,
        target=first.get("target"),
        tool=tool,
        keepalive=keepalive,
        level=level,
        pairs=len(ratios),
        ratio=statistics.median(ratios) if ratios else None,
        low=low,
        high=high,
        verdict=interval_verdict(low, high),
    )


def compare_to_baseline(
    cells: list[dict[str, Any]], baseline: str, stack_order: Sequence[str] = ()
) -> list[Comparison]:
    """Every other stack against ``baseline``, at each target, tool, keep-alive and level where both were
    measured; sorted by target, tool, keep-alive, level, then the stacks in ``stack_order`` (the
    experiment's), the others by name. Disturbed cells are kept in the groups but never paired."""
    groups: dict[tuple[str, str, bool, int], dict[str, list[dict[str, Any]]]] = {}
    for cell in cells:
        stack, tool, keepalive, level = group_key(cell)
        groups.setdefault((target_of(cell), tool, keepalive, level), {}).setdefault(stack, []).append(cell)
    rank = {name: i for i, name in enumerate(stack_order)}
    found = []
    for point in sorted(groups):
        by_stack = groups[point]
        if baseline not in by_stack:
            continue
        others = sorted((s for s in by_stack if s != baseline), key=lambda s: (rank.get(s, len(rank)), s))
        found += [compare_pair(by_stack[s], by_stack[baseline], s, baseline) for s in others]
    return found


def experiment_stacks(run_info: dict[str, Any] | None) -> list[str]:
    """The stack names run.json's experiment lists, in its order."""
    exp = (run_info or {}).get("experiment")
    stacks = exp.get("stacks") if isinstance(exp, dict) else None
    if not isinstance(stacks, list):
        return []
    return [str(s["name"]) for s in stacks if isinstance(s, dict) and s.get("name")]


def baseline_of(run_info: dict[str, Any] | None, cells: list[dict[str, Any]]) -> str | None:
    """run.json's ``experiment.load.baseline``; else the experiment's first stack; else (no run.json) the
    first stack of the cells by name; None without cells."""
    exp = (run_info or {}).get("experiment")
    load = exp.get("load") if isinstance(exp, dict) else None
    if isinstance(load, dict) and isinstance(load.get("baseline"), str) and load["baseline"]:
        return str(load["baseline"])
    stacks = experiment_stacks(run_info) or sorted({str(c.get("stack") or "-") for c in cells})
    return stacks[0] if stacks else None


def run_comparisons(cells: list[dict[str, Any]], run_info: dict[str, Any] | None) -> list[Comparison]:
    """The run's comparisons against its baseline (:func:`baseline_of`)."""
    baseline = baseline_of(run_info, cells)
    if baseline is None:
        return []
    return compare_to_baseline(cells, baseline, experiment_stacks(run_info))


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


def intro(baseline: str) -> str:
    return (
        f"Each stack against the baseline, {baseline}: the median over paired rounds of its req/s over "
        "the baseline's (a pair: both stacks' counted cells of one round), with the 95 % interval of that "
        f"median (distribution-free; it needs {MIN_MEDIAN_CI_VALUES} pairs). 'no difference shown': the "
        "interval holds 1."
    )


def missing_baseline(cells: list[dict[str, Any]], run_info: dict[str, Any] | None) -> str | None:
    """Why the run has no comparison when its baseline was not measured; None when it was."""
    baseline = baseline_of(run_info, cells)
    if baseline is None or baseline in {str(c.get("stack") or "-") for c in cells}:
        return None
    return f"No comparisons: the baseline, {baseline}, has no cells in this run."


def several_targets(cells: list[dict[str, Any]]) -> bool:
    return len({target_of(c) for c in cells}) > 1


def comparisons_text(
    cells: list[dict[str, Any]], run_info: dict[str, Any] | None, found: list[Comparison] | None = None
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
