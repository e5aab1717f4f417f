"""Compare two runs load point by load point: median req/s and p99 latency, and whether the req/s change is
beyond the noise (Welch's t-test over the repetitions, two-sided, p < 0.05; "n/a" when either run has fewer
than two repetitions of the load point). The hosts and setup come first: every difference in run.json that
can explain a change (:mod:`benchstack.hostdiff`)."""

from __future__ import annotations

from typing import Any

from benchstack.cell import GroupKey, level_label
from benchstack.loadpoints import groups_of, loadgen_count, point_columns, tool_label
from benchstack.numbers import fmt, median
from benchstack.stats import welch_t_test

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


def significance(a: list[dict[str, Any]], b: list[dict[str, Any]], alpha: float = ALPHA) -> str:
    """'yes (p=...)' / 'no (p=...)' for the req/s of two groups of repetitions, 'n/a' below two each."""
    test = welch_t_test([c.get("rps") for c in a], [c.get("rps") for c in b])
    if test is None:
        return "n/a"
    return f"{'yes' if test.p < alpha else 'no'} (p={test.p:.3g})"


def compare_rows(cells_a: list[dict[str, Any]], cells_b: list[dict[str, Any]]) -> list[dict[str, str]]:
    """One row per load point present in both runs."""
    groups_a, groups_b = groups_of(cells_a), groups_of(cells_b)
    rows = []
    for key in sorted(set(groups_a) & set(groups_b)):
        a, b = groups_a[key], groups_b[key]
        rps_a, rps_b = median([c.get("rps") for c in a]), median([c.get("rps") for c in b])
        p99_a = median([(c.get("latency_ms") or {}).get("p99") for c in a])
        p99_b = median([(c.get("latency_ms") or {}).get("p99") for c in b])
        rows.append(
            {
                **point_columns(key, b),
                "n A": str(len(a)),
                "n B": str(len(b)),
                "req/s A": fmt(rps_a),
                "req/s B": fmt(rps_b),
                "req/s change": _change(rps_a, rps_b),
                "p99 A ms": fmt(p99_a),
                "p99 B ms": fmt(p99_b),
                "p99 change": _change(p99_a, p99_b),
                "significant": significance(a, b)
                if loadgen_count(a) == loadgen_count(b)
                else f"not comparable ({loadgen_count(a)} vs {loadgen_count(b)} loadgens)",
            }
        )
    return rows


def _label(key: GroupKey) -> str:
    stack, tool, keepalive, conc = key
    return f"{stack} {tool_label(tool, keepalive)} {level_label(tool, conc)}"


def _count(differences: list[str]) -> str:
    return f"{len(differences)} difference{'' if len(differences) == 1 else 's'}"


def differences_text(differences: list[str]) -> list[str]:
    """The lines that list the host and setup differences (or say there are none) before the table."""
    if not differences:
        return [
            "Hosts and setup: no difference found (CPU, kernel, distribution, packages, configs, sysctls, "
            "tuning, mode, CPU split, load settings, stack definitions).",
            "",
        ]
    return (
        [f"Hosts and setup: {_count(differences)} that can explain a change (A -> B):", ""]
        + [f"- {d}" for d in differences]
        + [""]
    )


def compare_table(
    cells_a: list[dict[str, Any]],
    cells_b: list[dict[str, Any]],
    name_a: str = "A",
    name_b: str = "B",
    differences: list[str] | None = None,
) -> str:
    """Markdown: which run is A and B, the host and setup ``differences`` (when given), the table, and the
    load points only one run has."""
    lines = [f"A: {name_a}", f"B: {name_b}", ""]
    if differences is not None:
        lines += differences_text(differences)
    lines += ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for row in compare_rows(cells_a, cells_b):
        lines.append("| " + " | ".join(row[c] for c in COLUMNS) + " |")
    groups_a, groups_b = set(groups_of(cells_a)), set(groups_of(cells_b))
    lines += [
        "",
        "change: (B - A) / A of the medians over repetitions; significant: Welch's t-test on the req/s "
        f"of the repetitions, p < {ALPHA} (n/a below two repetitions on either side).",
    ]
    for name, only in (("A", groups_a - groups_b), ("B", groups_b - groups_a)):
        if only:
            lines.append(f"Only in {name}: {', '.join(_label(k) for k in sorted(only))}.")
    return "\n".join(lines) + "\n"
