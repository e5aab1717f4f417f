"""One verdict per run and per load point: valid, noisy or invalid, and why, each reason naming its cells.

* **invalid**: the numbers do not measure what they claim: the stacks failed verification, the run stopped or
  is incomplete, a cell's share of failed requests is above ``load.max_error_rate``, or the loadgen was the
  bottleneck.
* **noisy**: the numbers measure the stack but the answer is uncertain: a comparison with the baseline is
  unresolved (neither a difference nor equivalent when the rounds ended), the median req/s of a load point
  that takes part in no comparison is not known to ``load.target_precision``, disturbed cells could not all
  be replaced, a cell was not at steady state, the
  load tool shared CPUs with the stacks, a capacity limit was within reach, or nothing records that the
  stacks were verified.
* **valid**: none of the reasons applies: every comparison resolved, nothing invalid. The precision of a
  compared load point's absolute median is information (each load point's interval), not a reason: the host's
  own speed moves absolute figures between sittings (:mod:`benchstack.analysis.drift`).

Load-point checks judge the counted cells only: a disturbed cell
(:func:`benchstack.results.cell.is_disturbed`) is evidence, measured again, and never counted. A load point's
verdict is the worst of the reasons naming any of its cells; the run's is the worst of all.
Checks that had no data to work on are listed under ``not_checked``; they do not change the status.
Responses slower than ``load.threshold_ms`` are a result, not a reason to doubt it: they are listed per load
point under ``slow`` (:func:`benchstack.analysis.checks.errors.slow_load_points`) and change no status;
``validate --fail-on-slow`` gates on them (:func:`slow_above_limit`).

This module holds the verdict's types and runs the checks (:data:`CHECKS`, in the order their reasons are
listed); each check is in the module of :mod:`benchstack.analysis.checks` that answers its question:
``completeness`` (verify_failed, not_verified, stopped, hung_stack, incomplete), ``errors`` (error_rate, and
the slow responses), ``answer`` (unresolved), ``precision`` (precision, disturbed), ``hosts``
(loadgen_saturated, loopback_shared_cores, capacity), ``steady`` (not_steady). ``checks.base`` reads the
run for them and holds the fixed limits named below (MIN_LOADGEN_IDLE_PCT, MAX_TOOL_BUSY, MAX_DRIFT;
MIN_DRIFT_SECONDS is steady's).

What each check reads (docs/verdict.md says what to do about each):

=====================  =======  ==========================================================================
code                   status   triggered by
=====================  =======  ==========================================================================
verify_failed          invalid  run.json ``verify.passed`` is not true
not_verified           noisy    run.json has no ``verify`` record, or its ``verify.stacks`` lacks a stack
stopped                invalid  run.json ``stopped`` names a cell that is not stored (the run stopped there)
hung_stack             invalid  as stopped, with ``reason`` hung or timeout; noisy once a resumed run
                                stored the cell (it hung once)
incomplete             invalid  cells planned in run.json ``experiment.cells`` that are not stored
error_rate             invalid  a counted cell's share of failed requests (``error_rate`` without the slow
                                ones: :func:`benchstack.records.model.failed_rate`) above
                                ``load.max_error_rate``
loadgen_saturated      invalid  the load tool's own CPU time (``interference.hosts.<loadgen>.tool_s``)
                                reached ``MAX_TOOL_BUSY`` of what it could use (its threads on its CPUs);
                                v1 cells in network mode: the loadgen's median CPU idle during the cell
                                below ``MIN_LOADGEN_IDLE_PCT`` (``system.loadgen.cpu_idle_median``, or
                                the raw vmstat beside the cell)
unresolved             noisy    a comparison with the baseline (:mod:`benchstack.analysis.comparison`) is
                                unresolved after the extra rounds: its interval holds 1 and reaches past
                                1 +- ``load.equivalence``, or it has too few pairs for an interval
precision              noisy    a load point that takes part in no comparison: the 95 % interval of its
                                median req/s (counted cells) is wider than +-``load.target_precision`` after
                                the extra rounds, or unknown (fewer than 6 counted cells)
disturbed              noisy    a load point kept fewer counted cells than ``load.repetitions``: its
                                disturbed cells (``disturbed``) could not all be measured again
loopback_shared_cores  noisy    loopback mode with a CPU split in ``hosts.<target>.cpu_split`` that is not
                                disjoint or not readable; with no split recorded (the default), a note
                                under "not checked" instead
capacity               noisy    :func:`benchstack.analysis.capacity.capacity_warnings` on the cell's plan and
                                the fingerprints in run.json ``hosts``
not_steady             noisy    ab -g data (``raw/<cell>.requests.tsv``): requests started per second in
                                the cell's second half differ from the first half by more than
                                ``MAX_DRIFT`` (wrk and httperf keep no per-second data)
=====================  =======  ==========================================================================

run.json fields the playbooks write for these checks (beside ``experiment``, ``mode`` and ``hosts``):
``verify: {passed: bool, at: ISO 8601 time, stacks: [stack names]}``;
``hosts.<name>.cpu_split: {loadgen_cpus: "0", stack_cpus: "1"}`` (cpulists as ``taskset -c`` takes them), or
null when the split is off; ``stopped: [{cell, reason: hung|timeout|failed|storage, message, at}]``
(:func:`benchstack.results.runfolder.record_stop`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchstack.analysis.checks.answer import check_unresolved
from benchstack.analysis.checks.base import Check, Limits, Reason, Run, limits_of
from benchstack.analysis.checks.completeness import check_incomplete, check_stopped, check_verified
from benchstack.analysis.checks.errors import SlowLoadPoint, check_error_rate, slow_load_points
from benchstack.analysis.checks.hosts import check_capacity, check_loadgen_saturated, check_loopback
from benchstack.analysis.checks.precision import check_disturbed, check_precision
from benchstack.analysis.checks.steady import check_steady_state
from benchstack.analysis.comparison import Comparison
from benchstack.analysis.loadpoints import point_figures
from benchstack.plan.targets import TargetPoint, by_target_point, target_of, target_point
from benchstack.results.cell import Cell, cell_id_of, counted, left_out, planned_point

STATUSES = ("valid", "noisy", "invalid")  # from best to worst


@dataclass(frozen=True)
class LoadPointVerdict:
    stack: str
    tool: str
    keepalive: bool
    level: int
    status: str
    reasons: list[str]  # codes
    target: str | None = None  # the target the load point was measured on
    # v2: the counted cells' median req/s, its distribution-free 95 % interval (None below 6 cells) and
    # half-width over the median, and how many cells counted and were disturbed.
    counted: int = 0
    disturbed: int = 0
    median_rps: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    precision: float | None = None


@dataclass
class Verdict:
    status: str
    reasons: list[Reason]
    load_points: list[LoadPointVerdict]
    not_checked: list[str] = field(default_factory=list)
    limits: Limits = field(default_factory=Limits)
    slow: list[SlowLoadPoint] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def worst(statuses: Iterable[str]) -> str:
    return max(statuses, key=STATUSES.index, default="valid")


def slow_above_limit(v: Verdict) -> list[SlowLoadPoint]:
    """The load points where a cell's share of slow responses is above ``load.max_error_rate``: what
    ``validate --fail-on-slow`` fails on."""
    return [s for s in v.slow if s.highest_rate > v.limits.max_error_rate]


CHECKS: list[Check] = [
    check_verified,
    check_stopped,
    check_incomplete,
    check_error_rate,
    check_loadgen_saturated,
    check_unresolved,
    check_precision,
    check_disturbed,
    check_loopback,
    check_capacity,
    check_steady_state,
]


def run_verdict(
    run_dir: str | os.PathLike[str],
    cells: list[Cell],
    run_info: dict[str, Any] | None,
    comparisons: list[Comparison] | None = None,
) -> Verdict:
    """The verdict of a run folder's ``cells`` with its run.json (``run_info``; None when there is none);
    ``comparisons``: the run's (:func:`benchstack.analysis.comparison.run_comparisons`) where the caller
    computed them already."""
    info = run_info or {}
    run = Run(Path(run_dir), cells, info, limits_of(info), by_target_point(counted(cells)), comparisons)
    reasons: list[Reason] = []
    not_checked: list[str] = []
    for check in CHECKS:
        found, notes = check(run)
        reasons += found
        not_checked += notes
    slow, notes = slow_load_points(run)
    return Verdict(
        status=worst(r.status for r in reasons),
        reasons=reasons,
        load_points=_load_points(run, reasons),
        not_checked=not_checked + notes,
        limits=run.limits,
        slow=slow,
    )


def _load_points(run: Run, reasons: list[Reason]) -> list[LoadPointVerdict]:
    key_of = {cell_id_of(c): target_point(c) for c in run.cells}
    # A plan from before targets were planned names none: its cells are the one measured target's.
    measured = {target_of(c) for c in run.cells}
    default = measured.pop() if len(measured) == 1 else "-"
    for plan in run.planned() or []:
        try:
            key_of.setdefault(str(plan["cell_id"]), (str(plan.get("target") or default), planned_point(plan)))
        except (KeyError, TypeError, ValueError):
            continue
    by_key: dict[TargetPoint, list[Reason]] = {k: [] for k in sorted(set(key_of.values()))}
    for reason in reasons:
        for key in {key_of[c] for c in reason.cells if c in key_of}:
            by_key[key].append(reason)
    disturbed = by_target_point([c for c, _ in left_out(run.cells)])
    out = []
    for (target, point), found in by_key.items():
        figures = run.figures.get((target, point)) or point_figures([])
        ci, reached = figures.interval, figures.precision
        out.append(
            LoadPointVerdict(
                stack=point[0],
                tool=point[1],
                keepalive=point[2],
                level=point[3],
                status=worst(r.status for r in found),
                reasons=sorted({r.code for r in found}),
                target=None if target == "-" else target,
                counted=figures.n,
                disturbed=len(disturbed.get((target, point), [])),
                median_rps=round(figures.median, 2) if figures.median is not None else None,
                ci_low=round(ci.low, 2) if ci else None,
                ci_high=round(ci.high, 2) if ci else None,
                precision=round(reached, 4) if reached is not None else None,
            )
        )
    return out
