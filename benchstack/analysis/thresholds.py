"""The experiment's thresholds (``load.thresholds``), checked at report time, like k6's.

Each threshold holds one metric to ``min`` and/or ``max`` (both inclusive) on every load point its scope
matches (``stack``, ``tool``, ``level``; a run with several targets: each target's load points apart), and
gives one :class:`ThresholdCheck` per load point. The values are the report's, over the same cells: the
counted ones (:func:`benchstack.results.cell.counted`; a disturbed cell is never judged):

* ``rps``: the median req/s (the Results table's req/s);
* ``error_rate``: the mean of the cells' error rates, every kind of error counted, slow responses
  (``over_threshold``) too (the Results table's error rate);
* ``mean_ms``, ``p50_ms``, ``p90_ms``, ``p99_ms``, ``p99.9_ms``: the latency of every request of the counted
  cells pooled (their distributions summed, as the Latency distributions table shows); where a cell has no
  distribution, the median over the cells of each one's figure (the Results table's), and ``basis`` says
  which;
* ``ratio``: the comparison of the stack with the baseline (:mod:`benchstack.analysis.comparison`): its
  Hodges-Lehmann ratio of req/s, paired by round; the baseline itself is never judged.

A threshold is judged on that one figure, not on an interval (as k6 judges): ``passed`` is true when the
figure lies within the limits. One without a value (no counted cell, a tool that gives no such figure, no
pair with the baseline) has ``passed`` false: a gate that passed on missing data would pass a broken run.
A threshold that matches no load point of the run is one check without a load point, failed.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from benchstack.analysis.checks.base import recorded_load
from benchstack.analysis.comparison import Comparison
from benchstack.analysis.loadpoints import latency_median, mean_error_rate, tool_label
from benchstack.plan.loadplan import Threshold
from benchstack.plan.targets import by_target_point
from benchstack.records import distribution
from benchstack.results.cell import Cell, counted, level_label


@dataclass(frozen=True)
class ThresholdCheck:
    """One threshold on one load point: what run.json ``thresholds`` holds, one entry each."""

    threshold: int  # its index in load.thresholds
    text: str  # the threshold as written: ``p99_ms <= 300 (stack x2)``
    metric: str
    min: float | None
    max: float | None
    passed: bool
    value: float | None  # the measured figure; None: nothing to judge (then passed is false)
    basis: (
        str  # what the value is: "median of 6 cells", "pooled, 6 cells", "ratio, 12 pairs", "no load point"
    )
    stack: str | None = None
    target: str | None = None
    tool: str | None = None
    keepalive: bool | None = None
    level: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """What run.json ``thresholds`` holds: every field, the load point's left out when none matched."""
        d = asdict(self)
        if self.tool is None:
            for key in ("stack", "target", "tool", "keepalive", "level"):
                del d[key]
        return d

    @property
    def load_point(self) -> str:
        """``x2 ab -k c8`` (with ``on TARGET`` when the run has several targets)."""
        if self.stack is None or self.tool is None or self.level is None:
            return "-"
        where = f" on {self.target}" if self.target else ""
        tool = tool_label(self.tool, bool(self.keepalive))
        return f"{self.stack} {tool} {level_label(self.tool, self.level)}{where}"

    @property
    def value_text(self) -> str:
        if self.value is None:
            return "no value"
        if self.metric == "error_rate":
            return f"{100 * self.value:.2f} %"
        return f"{self.value:.3f}x" if self.metric == "ratio" else f"{self.value:,.4g}"


def thresholds_of(run_info: dict[str, Any] | None) -> list[Threshold]:
    """The thresholds recorded in run.json's ``experiment.load.thresholds`` (none before run.json v6)."""
    written = recorded_load(run_info).get("thresholds")
    if not isinstance(written, list):
        return []
    return [Threshold.from_dict(t) for t in written if isinstance(t, dict) and "metric" in t]


def _matches(t: Threshold, stack: str, tool: str, level: int) -> bool:
    return (
        (t.stack is None or t.stack == stack)
        and (t.tool is None or t.tool == tool)
        and (t.level is None or t.level == level)
    )


def _latency(cells: list[Cell], metric: str) -> tuple[float | None, str]:
    key = metric.removesuffix("_ms")
    pool = distribution.pooled([c.distribution() for c in cells])
    if pool is not None:
        figures = {**pool.latency_ms(), "mean": pool.moments_ms()["mean"]}
        return figures.get(key), f"pooled, {len(cells)} cells"
    return latency_median(cells, key), f"median of {len(cells)} cells"


def point_value(metric: str, cells: list[Cell]) -> tuple[float | None, str]:
    """The figure ``metric`` of one load point's counted ``cells`` and what it is (module docstring)."""
    if not cells:
        return None, "no counted cell"
    if metric == "rps":
        rps = [float(c.rps) for c in cells]
        return (statistics.median(rps) if rps else None), f"median of {len(rps)} cells"
    if metric == "error_rate":
        return mean_error_rate(cells), f"mean of {len(cells)} cells"
    return _latency(cells, metric)


def check_thresholds(
    cells: list[Cell],
    thresholds: Iterable[Threshold],
    comparisons: list[Comparison],
) -> list[ThresholdCheck]:
    """Every threshold on every load point of ``cells`` it matches (module docstring), in the order of the
    thresholds, then of the load points."""
    groups = by_target_point(counted(cells))
    every = by_target_point(cells)  # a load point whose cells are all disturbed is still a load point
    several = len({target for target, _ in every}) > 1
    out: list[ThresholdCheck] = []
    for i, t in enumerate(thresholds):
        head: dict[str, Any] = {
            "threshold": i,
            "text": t.text,
            "metric": t.metric,
            "min": t.min,
            "max": t.max,
        }
        found: list[ThresholdCheck] = []
        if t.metric == "ratio":
            for c in comparisons:
                if not _matches(t, c.stack, c.tool, c.level):  # a comparison never holds the baseline
                    continue
                found.append(
                    ThresholdCheck(
                        **head,
                        passed=c.ratio is not None and t.passes(c.ratio),
                        value=c.ratio,
                        basis=f"ratio to {c.baseline}, {c.pairs} pairs",
                        stack=c.stack,
                        target=c.target if several else None,
                        tool=c.tool,
                        keepalive=c.keepalive,
                        level=c.level,
                    )
                )
        else:
            for target, (stack, tool, keepalive, level) in sorted(every):
                if not _matches(t, stack, tool, level):
                    continue
                value, basis = point_value(
                    t.metric, groups.get((target, (stack, tool, keepalive, level)), [])
                )
                found.append(
                    ThresholdCheck(
                        **head,
                        passed=value is not None and t.passes(value),
                        value=None if value is None else round(value, 6),
                        basis=basis,
                        stack=stack,
                        target=target if several else None,
                        tool=tool,
                        keepalive=keepalive,
                        level=level,
                    )
                )
        out += found or [ThresholdCheck(**head, passed=False, value=None, basis="no load point matches")]
    return out


def failed(checks: Iterable[ThresholdCheck]) -> list[ThresholdCheck]:
    return [c for c in checks if not c.passed]


def thresholds_text(checks: list[ThresholdCheck]) -> str:
    """What the end of a run prints: a line per check; empty without thresholds."""
    if not checks:
        return ""
    bad = failed(checks)
    lines = [f"Thresholds: {len(checks) - len(bad)} of {len(checks)} passed" + (", FAILED" if bad else "")]
    for c in checks:
        lines.append(
            f"- {'passed' if c.passed else 'FAILED'} {c.text}: {c.load_point}: {c.value_text} ({c.basis})"
        )
    return "\n".join(lines) + "\n"
