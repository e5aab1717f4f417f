"""What the requests of each load point's counted cells did: failed ones above ``load.max_error_rate``
make it invalid (``error_rate``); slow ones, over ``load.threshold_ms``, are a result and only reported
(:class:`SlowLoadPoint`).

The rates are :mod:`benchstack.records.model`'s, from a stored cell's counters.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchstack.analysis.checks.base import Reason, Run, cell_ids, pct, point_label
from benchstack.kinds.loadtools import by_name, find
from benchstack.kinds.loadtools.base import unmeasured_slow_note
from benchstack.records.model import ERROR_KINDS, Counting, attempts, failed_rate, slow_rate
from benchstack.results.cell import Cell, counted


@dataclass(frozen=True)
class SlowLoadPoint:
    """A load point's responses slower than ``load.threshold_ms``, in its counted cells: reported, never a
    reason (a slow stack is what the benchmark measured)."""

    stack: str
    tool: str
    keepalive: bool
    level: int
    threshold_ms: float
    over_threshold: int  # slow responses, all cells together
    requests: int  # requests attempted in those cells
    highest_rate: float  # the largest share of one cell: what --fail-on-slow holds against max_error_rate
    message: str
    cells: list[str]  # the cells with slow responses
    target: str | None = None

    @property
    def label(self) -> str:
        """The load point and the target it was measured on."""
        point = point_label((self.stack, self.tool, self.keepalive, self.level))
        return f"{point} on {self.target}" if self.target else point


def _error_kinds(cells: list[Cell]) -> str:
    kinds = [k for k in ERROR_KINDS if k != "over_threshold"]  # slow is not failed (slow_load_points)
    totals = {k: sum(c.errors.get(k) or 0 for c in cells) for k in kinds}
    present = sorted(((k, n) for k, n in totals.items() if n), key=lambda item: -item[1])
    return ", ".join(f"{k} {n}" for k, n in present)


def _counters(cell: Cell) -> tuple[Counting, int, dict[str, int | None]]:
    """What the rates of :mod:`benchstack.records.model` take, from a stored cell (its tool's rules)."""
    return by_name(cell.tool).counting, cell.requests_completed, cell.errors


def _failed_rate(cell: Cell) -> float:
    return failed_rate(*_counters(cell))


def check_error_rate(run: Run) -> tuple[list[Reason], list[str]]:
    """Failed requests only (connect, read, write, timeout, status, length, exceptions), in the counted cells:
    a disturbed cell is measured again, and its failures are evidence, not the result."""
    limit = run.limits.max_error_rate
    reasons = []
    for key, group in run.groups.items():
        judged = counted(group)
        bad = [c for c in judged if _failed_rate(c) > limit]
        if not bad:
            continue
        highest = max(_failed_rate(c) for c in bad)
        kinds = _error_kinds(bad)
        message = (
            f"{run.label(key)}: failed requests up to {pct(highest)} in {len(bad)} of {len(judged)} cells, "
            f"above load.max_error_rate {pct(limit)}" + (f" ({kinds})" if kinds else "")
        )
        reasons.append(Reason("error_rate", "invalid", message, cell_ids(bad)))
    return reasons, []


def _slow_rate(cell: Cell) -> float | None:
    return slow_rate(*_counters(cell))


def slow_load_points(run: Run) -> tuple[list[SlowLoadPoint], list[str]]:
    """Each load point with responses over its threshold in its counted cells, and what was not counted."""
    limit = run.limits.max_error_rate
    found: list[SlowLoadPoint] = []
    unmeasured: dict[str, int] = {}
    for key, group in run.groups.items():
        judged = counted(group)
        for c in judged:
            if c.threshold_ms is not None and _slow_rate(c) is None:
                unmeasured[c.tool] = unmeasured.get(c.tool, 0) + 1
        slow = [c for c in judged if c.errors.get("over_threshold")]
        if not slow:
            continue
        over = sum(c.errors.get("over_threshold") or 0 for c in slow)
        measured = [c for c in judged if _slow_rate(c) is not None]
        requests = sum(attempts(*_counters(c)) for c in measured)
        highest = max(_slow_rate(c) or 0.0 for c in slow)
        threshold = max(float(c.threshold_ms or 0) for c in slow)
        message = (
            f"{run.label(key)}: {over} of {requests} responses slower than {threshold:g} ms "
            f"({pct(over / max(requests, 1))})"
        )
        if len(measured) > 1:
            message += f", up to {pct(highest)} in one of {len(measured)} cells"
        if highest > limit:
            message += f", above load.max_error_rate {pct(limit)}"
        target, (stack, tool, keepalive, level) = key
        found.append(
            SlowLoadPoint(
                stack=stack,
                tool=tool,
                keepalive=keepalive,
                level=level,
                threshold_ms=threshold,
                over_threshold=over,
                requests=requests,
                highest_rate=highest,
                message=message,
                cells=cell_ids(slow),
                target=None if target == "-" else target,
            )
        )
    notes = []
    for tool, n in sorted(unmeasured.items()):
        adapter = find(tool)
        notes.append(adapter.unmeasured_slow_note(n) if adapter else unmeasured_slow_note(tool, n))
    return found, notes
