"""Cells grouped by load point, and the labels a load point is shown with, for every table and plot of a run
(:mod:`benchstack.report.build`, :mod:`benchstack.report.plots`, :mod:`benchstack.analysis.compare`).

A load point is (stack, tool, keep-alive, level): :func:`benchstack.results.cell.group_key`.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from benchstack.analysis.stats import MedianInterval, median_ci, outliers
from benchstack.common.numbers import median
from benchstack.kinds.loadtools import find
from benchstack.results.cell import Cell, GroupKey, group_key, level_label


@dataclass(frozen=True)
class PointFigures:
    """A load point's req/s over its counted cells, computed once for the verdict, its precision check, the
    extra rounds and the report: the values, their median, the 95 % interval of the median, its half-width
    over the median (the precision) and how many values are outliers."""

    rps: tuple[float, ...]
    median: float | None
    interval: MedianInterval | None
    precision: float | None
    outliers: int

    @property
    def n(self) -> int:
        return len(self.rps)

    @property
    def spread(self) -> float | None:
        """How far the median is known, to round it by: :func:`spread_of` without computing the interval
        again."""
        if self.interval is not None:
            return (self.interval.high - self.interval.low) / 2
        return (max(self.rps) - min(self.rps)) / 2 if self.n > 1 else None


def point_figures(kept: Sequence[Cell]) -> PointFigures:
    """:class:`PointFigures` of a load point's counted cells (:func:`benchstack.results.cell.counted`)."""
    rps = tuple(float(c.rps) for c in kept)
    middle = statistics.median(rps) if rps else None
    interval = median_ci(rps)
    # As relative_half_width gives it, from the interval already computed.
    precision = (interval.high - interval.low) / 2 / abs(middle) if interval and middle else None
    return PointFigures(rps, middle, interval, precision, sum(outliers(rps)))


def by_load_point(cells: Iterable[Cell]) -> dict[GroupKey, list[Cell]]:
    """Cells by load point, sorted by key; each group in the order of ``cells``."""
    groups: dict[GroupKey, list[Cell]] = {}
    for cell in cells:
        groups.setdefault(group_key(cell), []).append(cell)
    return {k: groups[k] for k in sorted(groups)}


def groups_of(cells: Iterable[Cell]) -> dict[GroupKey, list[Cell]]:
    """Cells by load point, sorted by key; each group sorted by repetition."""
    return {k: sorted(g, key=lambda c: c.repetition or 0) for k, g in by_load_point(cells).items()}


def tool_label(tool: str, keepalive: bool) -> str:
    """``ab -k`` for ab with keep-alive, ``httperf (open loop)``, else the tool."""
    adapter = find(tool)
    return adapter.label(keepalive) if adapter is not None else tool


def loadgen_count(cells: Sequence[Cell]) -> int:
    """How many loadgens measured these cells together (1 unless they are merged cells)."""
    return max([len(c.merged.loadgens) if c.merged else 1 for c in cells] or [1])


def load_label(tool: str, keepalive: bool, loadgens: int = 1) -> str:
    """The tool column: ``ab -k`` for keep-alive, ``wrk x2 loadgens`` for merged cells."""
    label = tool_label(tool, keepalive)
    return label if loadgens <= 1 else f"{label} x{loadgens} loadgens"


def n_text(kept: int, disturbed: int, outlying: int = 0) -> str:
    """A table's n: the counted cells, how many of their req/s are outliers, and the disturbed cells kept
    beside them (``8, 1 outlier (+2 disturbed)``)."""
    text = str(kept)
    if outlying:
        text += f", {outlying} outlier{'' if outlying == 1 else 's'}"
    if disturbed:
        text += f" (+{disturbed} disturbed)"
    return text


def point_columns(key: GroupKey, cells: Sequence[Cell]) -> dict[str, str]:
    """The stack, tool and load columns of a load point's row; ``cells`` are the ones the row shows."""
    stack, tool, keepalive, level = key
    return {
        "stack": stack,
        "tool": load_label(tool, keepalive, loadgen_count(cells)),
        "load": level_label(tool, level),
    }


def per_loadgen(group: Sequence[Cell]) -> bool:
    """Merged cells without merged percentiles: each loadgen's latency is its own (``merged.latency``)."""
    return any(c.merged is not None and c.merged.latency == "per-loadgen" for c in group)


def latency_median(group: Sequence[Cell], key: str) -> float | None:
    """A latency figure's median over the cells (repetitions) of a load point; None for merged cells without
    merged percentiles (:func:`per_loadgen`: the report shows each loadgen's)."""
    if per_loadgen(group):
        return None
    return median([c.latency_ms.value(key) for c in group])


def error_total(group: Sequence[Cell]) -> int:
    """Failed requests in the cells of a load point (the report's errors, loadpoints.csv's error_count)."""
    return sum(c.error_count for c in group)


def mean_error_rate(group: Sequence[Cell]) -> float | None:
    """The mean of the cells' error rates (the report's error rate, loadpoints.csv's); None without a cell."""
    rates = [float(c.error_rate) for c in group]
    return statistics.fmean(rates) if rates else None


def spread_of(values: list[float]) -> float | None:
    """How far the median of ``values`` is known, to round it by (:func:`benchstack.common.numbers.step_for`):
    half the width of its 95 % interval (:func:`benchstack.analysis.stats.median_ci`), else of their range;
    None for fewer than two values."""
    interval = median_ci(values)
    if interval is not None:
        return (interval.high - interval.low) / 2
    return (max(values) - min(values)) / 2 if len(values) > 1 else None
