"""Compare two runs load point by load point: median req/s and p99 latency over the counted repetitions
(:func:`benchstack.results.cell.counted`), and whether the req/s change is beyond the noise: the Mann-Whitney
U test (two-sided, as Go's benchstat compares), "yes" below p = 0.05, "~" (no difference shown) above, "n/a"
when either run has fewer than 4 counted repetitions of the load point, the fewest with which a rank test can
show a difference at 5 %. Why not Welch's t-test, as before: with 2 repetitions a side it called 3 of 6
tuned/stock pairs significant, in opposite directions; it assumes normal req/s, which a noisy host does not
give. The hosts and setup come first: every difference in run.json that can explain a change
(:mod:`benchstack.analysis.hostdiff`).

Runs with several targets are compared target by target: each run's targets in run.json's order, paired by
position (as :mod:`benchstack.analysis.hostdiff` pairs the hosts), one table per pair; one target on each side
is one table, whatever the targets are called. Two targets of one run are compared the same way
(``bench-stack compare RUN --targets A B``).

Both runs' absolute figures move with the host's speed: on the 2-core test VM the same stacks measured 20-28 %
apart in runs minutes apart, while each stack's ratio to the baseline held (docs/how-it-works.md). When both
runs have the same baseline stack, a second table therefore compares each stack's ratio to it (paired by
round within each run, :mod:`benchstack.analysis.comparison`): a change of the host's speed cancels there, a
change of one stack does not. Its "significant" is the same rank test on the two runs' paired ratios.

``compare A B --fail-on-regression [--margin X]`` (:func:`regressions`) judges each load point both runs have,
on the same counted cells: the ratio of B's req/s to A's is the Hodges-Lehmann shift of their log req/s
(unpaired: the median of every log b - log a) with the 95 % interval that inverts the Mann-Whitney test
(:func:`benchstack.analysis.stats.two_sample_shift_ci`), turned back into ratios. A load point **regressed**
when that whole interval lies below 1 - margin (its high end < 1 - X): B is slower by more than the margin at
95 % confidence (97.5 % one-sided). Fewer than 4 counted cells on either side give no interval, and no
regression is shown there (the line says so)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from benchstack.analysis.comparison import paired_ratios
from benchstack.analysis.loadpoints import groups_of, loadgen_count, n_text, point_columns, tool_label
from benchstack.analysis.stats import MIN_RANK_TEST_VALUES, mann_whitney, median_ci, two_sample_shift_ci
from benchstack.common.numbers import fmt, median
from benchstack.plan.targets import by_target
from benchstack.results.cell import Cell, GroupKey, counted, level_label

ALPHA = 0.05
COLUMNS = (
    "stack", "tool", "load", "n A", "n B", "req/s A", "req/s B", "req/s change",
    "p99 A ms", "p99 B ms", "p99 change", "significant",
)  # fmt: skip


def _change(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "-"
    if a == 0:
        return "-" if b == 0 else "new"
    return f"{100 * (b - a) / a:+.1f}%"


def p_text(p: float) -> str:
    """p as the column shows it: 2 decimals, 3 below 0.1 (so 0.049 does not read as 0.05)."""
    if p < 0.001:
        return "<0.001"
    return f"={p:.2f}" if p >= 0.1 else f"={p:.3f}"


def significance(a: list[Cell], b: list[Cell], alpha: float = ALPHA) -> str:
    """'yes (p=0.008)' / '~ (p=0.40)' (no difference shown) for the req/s of two load points' counted
    repetitions; 'n/a (n<4)' when either side has fewer than 4."""
    return rank_text([c.rps for c in counted(a)], [c.rps for c in counted(b)], alpha)


def rank_text(a: Sequence[float | None], b: Sequence[float | None], alpha: float = ALPHA) -> str:
    """:func:`significance` of two samples of values."""
    test = mann_whitney(a, b)
    if test is None:
        return f"n/a (n<{MIN_RANK_TEST_VALUES})"
    return f"{'yes' if test.p < alpha else '~'} (p{p_text(test.p)})"


def compare_rows(cells_a: list[Cell], cells_b: list[Cell]) -> list[dict[str, str]]:
    """One row per load point present in both runs; every figure from counted cells."""
    groups_a, groups_b = groups_of(cells_a), groups_of(cells_b)
    rows = []
    for key in sorted(set(groups_a) & set(groups_b)):
        all_a, all_b = groups_a[key], groups_b[key]
        a, b = counted(all_a), counted(all_b)
        rps_a, rps_b = median([c.rps for c in a]), median([c.rps for c in b])
        p99_a = median([c.latency_ms.p99 for c in a])
        p99_b = median([c.latency_ms.p99 for c in b])
        rows.append(
            {
                **point_columns(key, all_b),
                "n A": n_text(len(a), len(all_a) - len(a)),
                "n B": n_text(len(b), len(all_b) - len(b)),
                "req/s A": fmt(rps_a),
                "req/s B": fmt(rps_b),
                "req/s change": _change(rps_a, rps_b),
                "p99 A ms": fmt(p99_a),
                "p99 B ms": fmt(p99_b),
                "p99 change": _change(p99_a, p99_b),
                "significant": significance(all_a, all_b)
                if loadgen_count(a) == loadgen_count(b)
                else f"not comparable ({loadgen_count(a)} vs {loadgen_count(b)} loadgens)",
            }
        )
    return rows


BASELINE_COLUMNS = ("stack", "tool", "load", "pairs A", "pairs B", "x baseline A", "x baseline B", "change",
                    "significant")  # fmt: skip


def _ratio_text(ratios: list[float]) -> str:
    if not ratios:
        return "-"
    interval = median_ci(ratios)
    shown = f"{median(ratios):.2f}x"
    return f"{shown} ({interval.low:.2f}-{interval.high:.2f})" if interval else shown


def baseline_rows(cells_a: list[Cell], cells_b: list[Cell], baseline: str) -> list[dict[str, str]]:
    """One row per other stack's load point that both runs measured beside ``baseline``: each run's median
    ratio to the baseline over paired rounds (with its 95 % interval), the change of that ratio, and the
    rank test on the two runs' ratios."""
    groups_a, groups_b = groups_of(cells_a), groups_of(cells_b)
    rows = []
    for key in sorted(set(groups_a) & set(groups_b)):
        stack, tool, keepalive, level = key
        base = (baseline, tool, keepalive, level)
        if stack == baseline or base not in groups_a or base not in groups_b:
            continue
        ra = paired_ratios(groups_a[key], groups_a[base])
        rb = paired_ratios(groups_b[key], groups_b[base])
        rows.append(
            {
                **point_columns(key, groups_b[key]),
                "pairs A": str(len(ra)),
                "pairs B": str(len(rb)),
                "x baseline A": _ratio_text(ra),
                "x baseline B": _ratio_text(rb),
                "change": _change(median(ra), median(rb)),
                "significant": rank_text(ra, rb),
            }
        )
    return rows


def baseline_table(cells_a: list[Cell], cells_b: list[Cell], baseline: str) -> list[str]:
    """The markdown lines of the second table (module docstring); none when no stack pairs."""
    rows = baseline_rows(cells_a, cells_b, baseline)
    if not rows:
        return []
    return [
        "",
        f"Against each run's baseline, {baseline} (ratios paired by round: a change of the host's speed "
        "between the runs cancels here, a change of one stack does not):",
        "",
        "| " + " | ".join(BASELINE_COLUMNS) + " |",
        "|" + "|".join("---" for _ in BASELINE_COLUMNS) + "|",
        *("| " + " | ".join(row[c] for c in BASELINE_COLUMNS) + " |" for row in rows),
    ]


def _label(key: GroupKey) -> str:
    stack, tool, keepalive, conc = key
    return f"{stack} {tool_label(tool, keepalive)} {level_label(tool, conc)}"


def _count(differences: list[str]) -> str:
    return f"{len(differences)} difference{'' if len(differences) == 1 else 's'}"


def differences_heading(differences: list[str]) -> str:
    """The line over the host and setup differences, or the one saying there are none."""
    if not differences:
        return (
            "Hosts and setup: no difference found (CPU, kernel, distribution, packages, configs, sysctls, "
            "tuning, mode, CPU split, load settings, stack definitions)."
        )
    return f"Hosts and setup: {_count(differences)} that can explain a change (A -> B):"


def differences_text(differences: list[str]) -> list[str]:
    """The lines that list the host and setup differences (or say there are none) before the table."""
    if not differences:
        return [differences_heading(differences), ""]
    return [differences_heading(differences), "", *(f"- {d}" for d in differences), ""]


def compare_table(
    cells_a: list[Cell],
    cells_b: list[Cell],
    name_a: str = "A",
    name_b: str = "B",
    differences: list[str] | None = None,
    order_a: Sequence[str] = (),
    order_b: Sequence[str] = (),
    baseline: str | None = None,
) -> str:
    """Markdown: which run is A and B, the host and setup ``differences`` (when given), the table (one per
    pair of targets when a run has several: :func:`target_pairs`), with ``baseline`` (both runs' baseline
    stack) the ratios to it (:func:`baseline_table`), and the load points only one run has."""
    lines = [f"A: {name_a}", f"B: {name_b}", ""]
    if differences is not None:
        lines += differences_text(differences)
    pairs, unpaired = target_pairs(cells_a, cells_b, order_a, order_b)
    only: list[str] = []
    for i, (target_a, target_b, a, b) in enumerate(pairs):
        if target_a is not None:
            lines += ([""] if i else []) + [f"### target {target_a} -> {target_b}", ""]
        lines += ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
        for row in compare_rows(a, b):
            lines.append("| " + " | ".join(row[c] for c in COLUMNS) + " |")
        if baseline is not None:
            lines += baseline_table(a, b, baseline)
        groups_a, groups_b = set(groups_of(a)), set(groups_of(b))
        on = "" if target_a is None else f" (target {target_a} -> {target_b})"
        for name, points in (("A", groups_a - groups_b), ("B", groups_b - groups_a)):
            if points:
                only.append(f"Only in {name}{on}: {', '.join(_label(k) for k in sorted(points))}.")
    lines += [
        "",
        "change: (B - A) / A of the medians over the counted repetitions (a disturbed cell is listed in n, "
        "never counted); significant: the Mann-Whitney U test on their req/s, yes below p = "
        f"{ALPHA}, ~ above it (no difference shown), n/a below {MIN_RANK_TEST_VALUES} counted repetitions "
        "on either side.",
    ]
    lines += only
    lines += [
        f"Only in {name}: target {target} (no target of the other run at its place)."
        for name, target in unpaired
    ]
    return "\n".join(lines) + "\n"


Pair = tuple[str | None, str | None, list[Cell], list[Cell]]


def target_pairs(
    cells_a: list[Cell],
    cells_b: list[Cell],
    order_a: Sequence[str] = (),
    order_b: Sequence[str] = (),
) -> tuple[list[Pair], list[tuple[str, str]]]:
    """(target in A, target in B, A's cells, B's cells) per pair of targets, and ("A"|"B", target) for the
    targets left without a partner. One target on each side: one pair named (None, None), as before
    runs could have several. ``order_a``/``order_b``: each run's targets as run.json lists them."""
    groups_a, groups_b = by_target(cells_a, order_a), by_target(cells_b, order_b)
    if len(groups_a) <= 1 and len(groups_b) <= 1:
        return [(None, None, cells_a, cells_b)], []
    names_a, names_b = list(groups_a), list(groups_b)
    pairs: list[Pair] = [
        (ta, tb, groups_a[ta], groups_b[tb]) for ta, tb in zip(names_a, names_b, strict=False)
    ]
    n = len(pairs)
    unpaired = [("A", t) for t in names_a[n:]] + [("B", t) for t in names_b[n:]]
    return pairs, unpaired


# compare --fail-on-regression: the default margin (a share of A's req/s) and the interval's confidence.
DEFAULT_MARGIN = 0.05
REGRESSION_CONFIDENCE = 0.95


@dataclass(frozen=True)
class RegressionCheck:
    """One load point of two runs: B's req/s over A's with its interval, and whether it regressed."""

    label: str  # ``x2 ab -k c8`` (with the targets when the runs have several)
    n_a: int
    n_b: int
    ratio: float | None  # Hodges-Lehmann, B / A; None without a value on either side
    low: float | None  # the interval; None below 4 counted cells a side
    high: float | None
    regressed: bool

    @property
    def sentence(self) -> str:
        if self.ratio is None:
            return f"{self.label}: no req/s to compare (n A {self.n_a}, n B {self.n_b})"
        if self.low is None or self.high is None:
            return (
                f"{self.label}: {self.ratio:.3f}x, no interval (n A {self.n_a}, n B {self.n_b}; "
                f"{MIN_RANK_TEST_VALUES} a side needed): no regression shown"
            )
        verdict = "REGRESSION" if self.regressed else "no regression shown"
        return (
            f"{self.label}: {self.ratio:.3f}x ({self.low:.3f}-{self.high:.3f}; n A {self.n_a}, "
            f"n B {self.n_b}): {verdict}"
        )


def _log_rps(cells: list[Cell]) -> list[float]:
    return [math.log(float(c.rps)) for c in cells if c.rps > 0]


def regression_check(label: str, cells_a: list[Cell], cells_b: list[Cell], margin: float) -> RegressionCheck:
    """One load point's :class:`RegressionCheck` from its cells in A and in B (counted ones only)."""
    a, b = _log_rps(counted(cells_a)), _log_rps(counted(cells_b))
    shift = two_sample_shift_ci(a, b, REGRESSION_CONFIDENCE)
    if shift is None:
        mid_a, mid_b = median(a), median(b)
        ratio = math.exp(mid_b - mid_a) if mid_a is not None and mid_b is not None else None
        return RegressionCheck(label, len(a), len(b), ratio, None, None, False)
    high = math.exp(shift.high)
    return RegressionCheck(
        label, len(a), len(b), math.exp(shift.estimate), math.exp(shift.low), high, high < 1 - margin
    )


def regressions(
    cells_a: list[Cell],
    cells_b: list[Cell],
    margin: float = DEFAULT_MARGIN,
    order_a: Sequence[str] = (),
    order_b: Sequence[str] = (),
) -> list[RegressionCheck]:
    """Every load point both runs measured (target by target, as :func:`compare_table` pairs them)."""
    pairs, _ = target_pairs(cells_a, cells_b, order_a, order_b)
    found = []
    for target_a, target_b, a, b in pairs:
        groups_a, groups_b = groups_of(a), groups_of(b)
        on = "" if target_a is None else f" (target {target_a} -> {target_b})"
        for key in sorted(set(groups_a) & set(groups_b)):
            found.append(regression_check(_label(key) + on, groups_a[key], groups_b[key], margin))
    return found


def regression_text(checks: list[RegressionCheck], margin: float) -> str:
    """The lines compare prints under its tables with --fail-on-regression."""
    bad = sum(c.regressed for c in checks)
    lines = [
        "",
        f"Regressions (--fail-on-regression, margin {100 * margin:g} %): B's req/s over A's per load point, "
        f"Hodges-Lehmann with its {100 * REGRESSION_CONFIDENCE:g} % Mann-Whitney interval; a regression when "
        f"the whole interval is below {1 - margin:g}. {bad} of {len(checks)} load points regressed.",
        "",
        *(f"- {c.sentence}" for c in checks),
    ]
    return "\n".join(lines) + "\n"
