"""What every check of the verdict shares: the run as the checks read it (:class:`Run`: its cells, run.json
and its load points by target), the limits it is held to (:class:`Limits`, from run.json's
``experiment.load``), the :class:`Reason` a check returns, and how messages name cells and load points.

A check (:data:`Check`) takes a :class:`Run` and returns its reasons and its notes for "not checked";
:func:`benchstack.analysis.verdict.run_verdict` runs them in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from benchstack.analysis.comparison import Comparison, run_comparisons
from benchstack.analysis.loadpoints import PointFigures, point_figures
from benchstack.common.numbers import as_number
from benchstack.kinds.loadtools import find
from benchstack.plan.loadplan import (
    DEFAULT_CONFIDENCE,
    DEFAULT_EQUIVALENCE,
    DEFAULT_MAX_CV,
    DEFAULT_MAX_ERROR_RATE,
    DEFAULT_TARGET_PRECISION,
)
from benchstack.plan.targets import TargetPoint, target_of
from benchstack.records.cellplan import DEFAULT_MAX_INTERFERENCE
from benchstack.results.cell import Cell, GroupKey, cell_id_of, level_label

# The fixed limits, recorded in each verdict's limits (run.json ``verdict.limits``).
# A loadgen with less CPU idle than this (median of the per-second samples, %) was the bottleneck.
MIN_LOADGEN_IDLE_PCT = 10.0
# The load tool's own CPU time over what it could use (its threads, on the CPUs it may run on) from which it
# was the bottleneck: ab at 95 % of its one core is measuring ab.
MAX_TOOL_BUSY = 0.95
# Requests started per second in the second half of a cell vs the first: above this relative change, the
# cell was not at steady state (a warm-up too short, a cache filling, a server slowing down).
MAX_DRIFT = 0.2


@dataclass(frozen=True)
class Reason:
    code: str
    status: str  # noisy | invalid: what this reason makes the verdict of its cells
    message: str
    cells: list[str]


@dataclass(frozen=True)
class Limits:
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    max_cv: float = DEFAULT_MAX_CV
    target_precision: float = DEFAULT_TARGET_PRECISION
    max_interference: float = DEFAULT_MAX_INTERFERENCE
    repetitions: int | None = None
    max_repetitions: int | None = None
    min_loadgen_idle_pct: float = MIN_LOADGEN_IDLE_PCT
    max_drift: float = MAX_DRIFT
    max_tool_busy: float = MAX_TOOL_BUSY
    equivalence: float = DEFAULT_EQUIVALENCE
    confidence: float = DEFAULT_CONFIDENCE


def recorded_load(run_info: dict[str, Any] | None) -> dict[str, Any]:
    """The experiment's ``load`` as recorded in run.json; {} when run.json records none."""
    exp = (run_info or {}).get("experiment")
    load = exp.get("load") if isinstance(exp, dict) else None
    return load if isinstance(load, dict) else {}


def limits_of(run_info: dict[str, Any] | None) -> Limits:
    """The experiment's limits as recorded in run.json (``experiment.load``), defaults where absent."""
    load = recorded_load(run_info)
    rate, cv = as_number(load.get("max_error_rate")), as_number(load.get("max_cv"))
    target, interference = as_number(load.get("target_precision")), as_number(load.get("max_interference"))
    reps, cap = as_number(load.get("repetitions")), as_number(load.get("max_repetitions"))
    margin, confidence = as_number(load.get("equivalence")), as_number(load.get("confidence"))
    return Limits(
        max_error_rate=DEFAULT_MAX_ERROR_RATE if rate is None else rate,
        max_cv=DEFAULT_MAX_CV if cv is None else cv,
        target_precision=DEFAULT_TARGET_PRECISION if target is None else target,
        max_interference=DEFAULT_MAX_INTERFERENCE if interference is None else interference,
        repetitions=None if reps is None else int(reps),
        max_repetitions=None if cap is None else int(cap),
        equivalence=DEFAULT_EQUIVALENCE if margin is None else margin,
        confidence=DEFAULT_CONFIDENCE if confidence is None else confidence,
    )


@dataclass
class Run:
    """A run folder's cells and run.json as the checks read them."""

    run_dir: Path
    cells: list[Cell]
    info: dict[str, Any]
    limits: Limits
    # Load points by target: with several targets the same load point on each is judged on its own.
    groups: dict[TargetPoint, list[Cell]]
    # The run's comparisons with its baseline (benchstack.analysis.comparison), where the caller has them.
    given_comparisons: list[Comparison] | None = None

    @cached_property
    def comparisons(self) -> list[Comparison]:
        if self.given_comparisons is not None:
            return self.given_comparisons
        return run_comparisons(self.cells, self.info)

    @cached_property
    def figures(self) -> dict[TargetPoint, PointFigures]:
        """Each load point's req/s figures, computed once for the checks and the load points' verdicts."""
        return {key: point_figures(group) for key, group in self.groups.items()}

    @cached_property
    def compared_points(self) -> set[TargetPoint]:
        """The load points (by target) that take part in a comparison, the baseline's included."""
        found: set[TargetPoint] = set()
        for c in self.comparisons:
            for stack in (c.stack, c.baseline):
                found.add((c.target or "-", (stack, c.tool, c.keepalive, c.level)))
        return found

    @property
    def hosts(self) -> dict[str, dict[str, Any]]:
        hosts = self.info.get("hosts")
        if not isinstance(hosts, dict):
            return {}
        return {str(k): v for k, v in hosts.items() if isinstance(v, dict)}

    def mode(self, cell: Cell) -> str | None:
        return cell.mode or self.info.get("mode")

    def planned(self) -> list[dict[str, Any]] | None:
        exp = self.info.get("experiment")
        plans = exp.get("cells") if isinstance(exp, dict) else None
        if not isinstance(plans, list):
            return None
        return [p for p in plans if isinstance(p, dict) and p.get("cell_id")]

    @cached_property
    def several_targets(self) -> bool:
        named = {target_of(c) for c in self.cells}
        named |= {str(p["target"]) for p in self.planned() or [] if p.get("target")}
        return len(named) > 1

    def label(self, key: TargetPoint) -> str:
        """A load point as messages name it; with several targets, on which one."""
        target, point = key
        return f"{point_label(point)} on {target}" if self.several_targets else point_label(point)


def point_label(key: GroupKey) -> str:
    stack, tool, keepalive, level = key
    adapter = find(tool)
    shown_tool = adapter.short_label(keepalive) if adapter is not None else tool
    return f"{stack} {shown_tool} {level_label(tool, level)}"


def cell_ids(cells: Iterable[Cell]) -> list[str]:
    return [cell_id_of(c) for c in cells]


def pct(share: float) -> str:
    return f"{100 * share:.1f} %"


Check = Callable[[Run], tuple[list[Reason], list[str]]]
