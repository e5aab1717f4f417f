"""The host's own speed through a run: how far the baseline's req/s moved between the first and the last
third of its counted cells, and whether it trended (Kendall's tau of req/s against time, scipy).

A VM's speed drifts on its own (the same stack read 6,539 then 4,953 req/s an hour apart on the test VM, each
interval excluding the other), while ratios measured in the same rounds hold. So an absolute median and its
interval describe this sitting on this host only; this figure says how much the sitting itself moved, and
the comparisons (paired within rounds) are the run's answer.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any

from benchstack.analysis.loadpoints import tool_label
from benchstack.plan.targets import by_target_point
from benchstack.results.cell import Cell, counted, level_label, window_start

# Fewest counted cells for a drift figure: three per third.
MIN_DRIFT_CELLS = 9
# Below this p, the trend is named as one.
TREND_P = 0.05
# What the figure means, said once wherever it is shown.
MEANING = (
    "Absolute figures hold for this sitting on this host; the comparisons are paired within rounds and do "
    "not depend on it."
)


@dataclass(frozen=True)
class Drift:
    stack: str
    target: str | None
    tool: str
    keepalive: bool
    level: int
    cells: int  # counted cells, in the order they were measured
    first: float | None  # median req/s of the first third
    last: float | None  # and of the last third
    ratio: float | None  # last / first
    tau: float | None  # Kendall's tau of req/s against the cells' start times
    p: float | None  # its two-sided p-value

    @property
    def sentence(self) -> str:
        """``sinatra-thin-x1 (wrk c32): 0.93x in the last third of its cells against the first (...)``."""
        where = f"{self.stack} ({tool_label(self.tool, self.keepalive)} {level_label(self.tool, self.level)}"
        where += f" on {self.target})" if self.target else ")"
        if self.ratio is None or self.first is None or self.last is None:
            return f"{where}: too few counted cells for a figure ({self.cells}, {MIN_DRIFT_CELLS} needed)"
        trend = "no trend shown"
        if self.p is not None and self.tau is not None and self.p < TREND_P:
            trend = "rising" if self.tau > 0 else "falling"
        return (
            f"{where}: {self.ratio:.2f}x in the last third of its cells against the first ({_rps(self.last)} "
            f"against {_rps(self.first)} req/s; Kendall's tau {_tau(self.tau)}, p {_p(self.p)}: {trend})"
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key, digits in (("first", 1), ("last", 1), ("ratio", 4), ("tau", 4), ("p", 6)):
            if d[key] is not None:
                d[key] = round(d[key], digits)
        return {**d, "sentence": self.sentence}


def _rps(x: float) -> str:
    return f"{x:,.0f}"


def _tau(tau: float | None) -> str:
    return "-" if tau is None else f"{tau:+.2f}"


def _p(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def drift_text(found: list[Drift]) -> str:
    """The drift as a run prints it at its end: empty without a figure."""
    shown = [d for d in found if d.ratio is not None]
    if not shown:
        return ""
    return "\n".join(["Host speed through the run:", *(f"  {d.sentence}" for d in shown), MEANING]) + "\n"


def host_drift(cells: list[Cell], baseline: str | None) -> list[Drift]:
    """One record per target and load point of ``baseline`` (none without a baseline)."""
    if baseline is None:
        return []
    out = []
    for (target, point), group in by_target_point(c for c in cells if c.stack == baseline).items():
        timed = [(t, float(c.rps)) for c in counted(group) if (t := window_start(c)) is not None and c.rps]
        timed.sort()
        stack, tool, keepalive, level = point
        base: dict[str, Any] = dict(
            stack=stack,
            target=None if target == "-" else target,
            tool=tool,
            keepalive=keepalive,
            level=level,
            cells=len(timed),
        )
        if len(timed) < MIN_DRIFT_CELLS:
            out.append(Drift(**base, first=None, last=None, ratio=None, tau=None, p=None))
            continue
        third = len(timed) // 3
        first = statistics.median(r for _, r in timed[:third])
        last = statistics.median(r for _, r in timed[-third:])
        from scipy.stats import kendalltau  # ~2 s to import: only the report needs it

        result = kendalltau([t for t, _ in timed], [r for _, r in timed])
        tau, p = float(result.statistic), float(result.pvalue)
        out.append(
            Drift(
                **base,
                first=first,
                last=last,
                ratio=last / first if first else None,
                tau=None if math.isnan(tau) else tau,
                p=None if math.isnan(p) else p,
            )
        )
    return out
