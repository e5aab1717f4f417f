"""One verdict per run and per load point: valid, noisy or invalid, and why, each reason naming its cells.

* **invalid**: the numbers do not measure what they claim: the stacks failed verification, the run stopped or
  is incomplete, a cell's share of failed requests is above ``load.max_error_rate``, or the loadgen was the
  bottleneck.
* **noisy**: the numbers measure the stack but are uncertain: the median req/s is not known to
  ``load.target_precision``, disturbed cells could not all be replaced, a cell was not at steady state, the
  load tool shared CPUs with the stacks, a capacity limit was within reach, or nothing records that the
  stacks were verified.
* **valid**: none of the reasons applies.

Load-point checks judge the counted cells only: a disturbed cell
(:func:`benchstack.results.cell.is_disturbed`) is evidence, measured again, and never counted. A load point's
verdict is the worst of the reasons naming any of its cells; the run's is the worst of all.
Checks that had no data to work on are listed under ``not_checked``; they do not change the status.
Responses slower than ``load.threshold_ms`` are a result, not a reason to doubt it: they are listed per load
point under ``slow`` (:func:`slow_load_points`) and change no status; ``validate --fail-on-slow`` gates on
them (:func:`slow_above_limit`).

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
                                ones: :func:`benchstack.results.model.failed_rate`) above
                                ``load.max_error_rate``
loadgen_saturated      invalid  the load tool's own CPU time (``interference.hosts.<loadgen>.tool_s``)
                                reached :data:`MAX_TOOL_BUSY` of what it could use (its threads on its CPUs);
                                v1 cells in network mode: the loadgen's median CPU idle during the cell
                                below :data:`MIN_LOADGEN_IDLE_PCT` (``system.loadgen.cpu_idle_median``, or
                                the raw vmstat beside the cell)
precision              noisy    the 95 % interval of a load point's median req/s (counted cells) is wider
                                than +-``load.target_precision`` after the extra rounds, or unknown (fewer
                                than 6 counted cells)
disturbed              noisy    a load point kept fewer counted cells than ``load.repetitions``: its
                                disturbed cells (``disturbed``) could not all be measured again
loopback_shared_cores  noisy    loopback mode with a CPU split in ``hosts.<target>.cpu_split`` that is not
                                disjoint or not readable; with no split recorded (the default), a note
                                under "not checked" instead
capacity               noisy    :func:`benchstack.analysis.capacity.capacity_warnings` on the cell's plan and
                                the fingerprints in run.json ``hosts``
not_steady             noisy    ab -g data (``raw/<cell>.requests.tsv``): requests started per second in
                                the cell's second half differ from the first half by more than
                                :data:`MAX_DRIFT` (wrk and httperf keep no per-second data)
=====================  =======  ==========================================================================

run.json fields the playbooks write for these checks (beside ``experiment``, ``mode`` and ``hosts``):
``verify: {passed: bool, at: ISO 8601 time, stacks: [stack names]}``;
``hosts.<name>.cpu_split: {loadgen_cpus: "0", stack_cpus: "1"}`` (cpulists as ``taskset -c`` takes them), or
null when the split is off; ``stopped: [{cell, reason: hung|timeout|failed, message, at}]``
(:func:`benchstack.results.runfolder.record_stop`).
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from benchstack.analysis.capacity import capacity_warnings
from benchstack.analysis.stats import MIN_MEDIAN_CI_VALUES, median_ci, relative_half_width
from benchstack.common.numbers import as_number, is_int
from benchstack.kinds.loadtools import find
from benchstack.kinds.loadtools.base import no_steady_data_note, unmeasured_slow_note
from benchstack.measure.merge import loadgen_dir, window_span
from benchstack.measure.perrequest import AB_GNUPLOT_HEADER
from benchstack.measure.repetitions import MAX_CELLS_PER_COUNTED
from benchstack.measure.sysstats import parse_vmstat
from benchstack.plan.experiment import (
    DEFAULT_MAX_CV,
    DEFAULT_MAX_ERROR_RATE,
    DEFAULT_MAX_INTERFERENCE,
    DEFAULT_TARGET_PRECISION,
)
from benchstack.plan.targets import TargetPoint, by_target_point, target_of, target_point
from benchstack.results.cell import GroupKey, cell_id_of, counted, group_key, left_out, level_label
from benchstack.results.model import ERROR_KINDS, attempts, failed_rate, slow_rate
from benchstack.results.runfolder import stops

STATUSES = ("valid", "noisy", "invalid")  # from best to worst
# A loadgen with less CPU idle than this (median of the per-second samples, %) was the bottleneck.
MIN_LOADGEN_IDLE_PCT = 10.0
# The load tool's own CPU time over what it could use (its threads, on the CPUs it may run on) from which it
# was the bottleneck: ab at 95 % of its one core is measuring ab.
MAX_TOOL_BUSY = 0.95
# Requests started per second in the second half of a cell vs the first: above this relative change, the
# cell was not at steady state (a warm-up too short, a cache filling, a server slowing down).
MAX_DRIFT = 0.2
# Whole seconds (the first and last, partial, left out) a cell needs for its halves to be compared.
MIN_DRIFT_SECONDS = 4
RAW_DIR = "raw"
# cpu_split_problem's answers when the host records no split (as against a split that fails).
ONE_CPU = "1 CPU: no split is possible"
NO_SPLIT = "no CPU split recorded"


@dataclass(frozen=True)
class Reason:
    code: str
    status: str  # noisy | invalid: what this reason makes the verdict of its cells
    message: str
    cells: list[str]


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
        point = _point_label((self.stack, self.tool, self.keepalive, self.level))
        return f"{point} on {self.target}" if self.target else point


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


# ---------------------------------------------------------------- reading the run


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
    return Limits(
        max_error_rate=DEFAULT_MAX_ERROR_RATE if rate is None else rate,
        max_cv=DEFAULT_MAX_CV if cv is None else cv,
        target_precision=DEFAULT_TARGET_PRECISION if target is None else target,
        max_interference=DEFAULT_MAX_INTERFERENCE if interference is None else interference,
        repetitions=None if reps is None else int(reps),
        max_repetitions=None if cap is None else int(cap),
    )


@dataclass
class _Run:
    run_dir: Path
    cells: list[dict[str, Any]]
    info: dict[str, Any]
    limits: Limits
    # Load points by target: with several targets the same load point on each is judged on its own.
    groups: dict[TargetPoint, list[dict[str, Any]]]

    @property
    def hosts(self) -> dict[str, dict[str, Any]]:
        hosts = self.info.get("hosts")
        if not isinstance(hosts, dict):
            return {}
        return {str(k): v for k, v in hosts.items() if isinstance(v, dict)}

    def mode(self, cell: dict[str, Any]) -> str | None:
        return cell.get("mode") or self.info.get("mode")

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
        return f"{_point_label(point)} on {target}" if self.several_targets else _point_label(point)


def _point_label(key: GroupKey) -> str:
    stack, tool, keepalive, level = key
    adapter = find(tool)
    shown_tool = adapter.short_label(keepalive) if adapter is not None else tool
    return f"{stack} {shown_tool} {level_label(tool, level)}"


def _ids(cells: Iterable[dict[str, Any]]) -> list[str]:
    return [cell_id_of(c) for c in cells]


def _pct(share: float) -> str:
    return f"{100 * share:.1f} %"


# ---------------------------------------------------------------- the checks

Check = Callable[[_Run], tuple[list[Reason], list[str]]]


def check_verified(run: _Run) -> tuple[list[Reason], list[str]]:
    verify = run.info.get("verify")
    every = _ids(run.cells)
    if not isinstance(verify, dict):
        return [
            Reason(
                "not_verified",
                "noisy",
                "run.json records no verification before load (playbooks/verify.yml): nothing shows that the "
                "stacks answered correctly before they were measured",
                every,
            )
        ], []
    if verify.get("passed") is not True:
        detail = f": {verify['message']}" if verify.get("message") else ""
        return [Reason("verify_failed", "invalid", f"verification before load failed{detail}", every)], []
    stacks = verify.get("stacks")
    if not isinstance(stacks, list):
        return [], []
    unverified = [c for c in run.cells if c.get("stack") not in stacks]
    if not unverified:
        return [], []
    names = sorted({str(c.get("stack")) for c in unverified})
    return [
        Reason(
            "not_verified",
            "noisy",
            f"measured without being verified before load: {', '.join(names)}",
            _ids(unverified),
        )
    ], []


STOP_WHAT = {"hung": "the stack hung", "timeout": "the load tool did not finish within its time bound"}


def check_stopped(run: _Run) -> tuple[list[Reason], list[str]]:
    stored = set(_ids(run.cells))
    reasons = []
    for stop in stops(run.info):
        cell, why = str(stop["cell"]), stop.get("reason")
        code = "hung_stack" if why in ("hung", "timeout") else "stopped"
        what = STOP_WHAT.get(str(why), "the cell failed")
        at = f" at {stop['at']}" if stop.get("at") else ""
        detail = f" ({stop['message']})" if stop.get("message") else ""
        if cell in stored:
            message = f"{cell}: {what} once{at}{detail}; a resumed run measured the cell since"
            if code == "hung_stack":
                message += ", but the stack may hang again under this load"
            reasons.append(Reason(code, "noisy", message, [cell]))
        else:
            reasons.append(Reason(code, "invalid", f"the run stopped at {cell}{at}: {what}{detail}", [cell]))
    return reasons, []


def check_incomplete(run: _Run) -> tuple[list[Reason], list[str]]:
    planned = run.planned()
    if planned is None:
        return [], ["completeness: run.json lists no planned cells (experiment.cells)"]
    stored = set(_ids(run.cells))
    missing = [str(p["cell_id"]) for p in planned if p["cell_id"] not in stored]
    if not missing:
        return [], []
    message = (
        f"{len(missing)} of {len(planned)} planned cells were not measured: the run was interrupted or "
        "stopped (resume it with -e bench_run_dir=<this run>)"
    )
    return [Reason("incomplete", "invalid", message, missing)], []


def _error_kinds(cells: list[dict[str, Any]]) -> str:
    kinds = [k for k in ERROR_KINDS if k != "over_threshold"]  # slow is not failed (slow_load_points)
    totals = {k: sum(int((c.get("errors") or {}).get(k) or 0) for c in cells) for k in kinds}
    present = sorted(((k, n) for k, n in totals.items() if n), key=lambda item: -item[1])
    return ", ".join(f"{k} {n}" for k, n in present)


def _counters(cell: dict[str, Any]) -> tuple[str, int, dict[str, int | None]]:
    """What the rates of :mod:`benchstack.results.model` take, from a stored cell."""
    return str(cell.get("tool")), int(cell.get("requests_completed") or 0), cell.get("errors") or {}


def _failed_rate(cell: dict[str, Any]) -> float:
    return failed_rate(*_counters(cell))


def check_error_rate(run: _Run) -> tuple[list[Reason], list[str]]:
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
            f"{run.label(key)}: failed requests up to {_pct(highest)} in {len(bad)} of {len(judged)} cells, "
            f"above load.max_error_rate {_pct(limit)}" + (f" ({kinds})" if kinds else "")
        )
        reasons.append(Reason("error_rate", "invalid", message, _ids(bad)))
    return reasons, []


def _slow_rate(cell: dict[str, Any]) -> float | None:
    return slow_rate(*_counters(cell))


def slow_load_points(run: _Run) -> tuple[list[SlowLoadPoint], list[str]]:
    """Each load point with responses over its threshold in its counted cells, and what was not counted."""
    limit = run.limits.max_error_rate
    found: list[SlowLoadPoint] = []
    unmeasured: dict[str, int] = {}
    for key, group in run.groups.items():
        judged = counted(group)
        for c in judged:
            if c.get("threshold_ms") is not None and _slow_rate(c) is None:
                unmeasured[str(c.get("tool"))] = unmeasured.get(str(c.get("tool")), 0) + 1
        slow = [c for c in judged if int((c.get("errors") or {}).get("over_threshold") or 0)]
        if not slow:
            continue
        over = sum(int(c["errors"]["over_threshold"]) for c in slow)
        measured = [c for c in judged if _slow_rate(c) is not None]
        requests = sum(attempts(*_counters(c)) for c in measured)
        highest = max(_slow_rate(c) or 0.0 for c in slow)
        threshold = max(float(c.get("threshold_ms") or 0) for c in slow)
        message = (
            f"{run.label(key)}: {over} of {requests} responses slower than {threshold:g} ms "
            f"({_pct(over / max(requests, 1))})"
        )
        if len(measured) > 1:
            message += f", up to {_pct(highest)} in one of {len(measured)} cells"
        if highest > limit:
            message += f", above load.max_error_rate {_pct(limit)}"
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
                cells=_ids(slow),
                target=None if target == "-" else target,
            )
        )
    notes = []
    for tool, n in sorted(unmeasured.items()):
        adapter = find(tool)
        notes.append(adapter.unmeasured_slow_note(n) if adapter else unmeasured_slow_note(tool, n))
    return found, notes


def slow_above_limit(v: Verdict) -> list[SlowLoadPoint]:
    """The load points where a cell's share of slow responses is above ``load.max_error_rate``: what
    ``validate --fail-on-slow`` fails on."""
    return [s for s in v.slow if s.highest_rate > v.limits.max_error_rate]


def check_precision(run: _Run) -> tuple[list[Reason], list[str]]:
    limits = run.limits
    reasons = []
    for key, group in run.groups.items():
        n = len(group)
        if not n:
            continue
        reached = relative_half_width([c.get("rps") for c in group])
        cap = limits.max_repetitions
        if reached is None:
            message = (
                f"{run.label(key)}: precision unknown: {n} counted rounds, {MIN_MEDIAN_CI_VALUES} needed "
                "for a 95 % interval of the median req/s"
            )
            if cap is not None and cap < MIN_MEDIAN_CI_VALUES:
                message += f" (raise load.max_repetitions from {cap} to {MIN_MEDIAN_CI_VALUES} or more)"
        elif reached > limits.target_precision:
            message = (
                f"{run.label(key)}: median req/s known to +-{_pct(reached)} over {n} rounds, short of "
                f"load.target_precision +-{_pct(limits.target_precision)}"
            )
            needed = rounds_needed_text(reached, limits.target_precision, n)
            message += f" ({_what_ended(run, key, n, cap)}; {needed})"
        else:
            continue
        reasons.append(Reason("precision", "noisy", message, _ids(group)))
    return reasons, []


def rounds_needed(reached: float, target: float, n: int) -> int:
    """Counted rounds that would bring a median known to +-``reached`` over ``n`` rounds to +-``target`` at
    the same spread: an interval's width shrinks as 1 / sqrt(n)."""
    return math.ceil(n * (reached / target) ** 2 - 1e-9)


def rounds_needed_text(reached: float, target: float, n: int) -> str:
    needed = rounds_needed(reached, target, n)
    return f"at this spread about {needed} counted rounds would reach it, {needed - n} more"


def _what_ended(run: _Run, key: TargetPoint, n: int, cap: int | None) -> str:
    """What ended a load point's rounds short of its precision target, as far as its cells tell."""
    if cap is not None and n >= cap:
        return f"load.max_repetitions {cap} reached"
    target, point = key
    measured = sum(1 for c in run.cells if target_of(c) == target and group_key(c) == point)
    if cap is not None and measured >= MAX_CELLS_PER_COUNTED * cap:
        return f"{measured} cells in all, the bound of {MAX_CELLS_PER_COUNTED} x load.max_repetitions"
    budget = as_number(recorded_load(run.info).get("max_seconds"))
    if budget:
        return f"the time budget, load.max_seconds {budget:g}, ended the rounds"
    return "the run ended its rounds early (stopped, or resumed without them)"


def check_disturbed(run: _Run) -> tuple[list[Reason], list[str]]:
    """Disturbed cells were measured again; a load point left with fewer counted cells than planned
    rounds is noisy."""
    out = left_out(run.cells)
    why = {id(c): reasons for c, reasons in out}
    disturbed = [c for c, _ in out]
    if not disturbed:
        return [], []
    reasons = []
    planned = run.limits.repetitions
    short = {
        key: group
        for key, group in by_target_point(disturbed).items()
        if planned is not None and len(run.groups.get(key, [])) < planned
    }
    for key, group in short.items():
        counted_n = len(run.groups.get(key, []))
        message = (
            f"{run.label(key)}: {len(group)} disturbed cells and only {counted_n} of {planned} planned "
            f"rounds counted: {why[id(group[-1])][0]}"
        )
        reasons.append(Reason("disturbed", "noisy", message, _ids(group)))
    first = why[id(disturbed[0])][0]
    notes = [
        f"disturbed: {len(disturbed)} cells were disturbed or collapsed, kept as evidence, left out of the "
        f"statistics and measured again (first: {cell_id_of(disturbed[0])}: {first})"
    ]
    return reasons, notes


def _vmstat_idle(run_dir: Path, cell_id: str, stats: object) -> float | None:
    """Median CPU idle of one loadgen during a cell: from its stats, else from the raw vmstat beside it."""
    if isinstance(stats, dict) and as_number(stats.get("cpu_idle_median")) is not None:
        return float(stats["cpu_idle_median"])
    raw = run_dir / RAW_DIR / f"{cell_id}.vmstat.txt"
    if raw.is_file():
        parsed = parse_vmstat(raw.read_text(encoding="utf-8", errors="replace"))
        if parsed and as_number(parsed.get("cpu_idle_median")) is not None:
            return float(parsed["cpu_idle_median"])
    return None


def loadgen_idle(run_dir: Path, cell: dict[str, Any]) -> dict[str, float | None]:
    """Each loadgen's median CPU idle (%) during the cell, None where no sample was kept."""
    cid = cell_id_of(cell)
    merged = cell.get("merged")
    if isinstance(merged, dict) and merged.get("per_loadgen"):
        return {
            str(one.get("loadgen")): _vmstat_idle(
                loadgen_dir(run_dir, str(one.get("loadgen"))), cid, one.get("system")
            )
            for one in merged["per_loadgen"]
        }
    stats = (cell.get("system") or {}).get("loadgen")
    return {str(cell.get("loadgen")): _vmstat_idle(run_dir, cid, stats)}


def tool_cores(cell: dict[str, Any], usage: dict[str, Any]) -> float | None:
    """How many CPUs the load tool of ``cell`` could keep busy on the loadgen ``usage`` describes: one for ab
    and httperf (single-threaded), wrk's threads; at most the CPUs it was pinned to (``taskset -c``) or the
    machine's."""
    seconds = float(usage.get("seconds") or 0)
    if seconds <= 0:
        return None
    command = cell.get("command") if isinstance(cell.get("command"), list) else []
    cores = float(usage.get("cpu_s") or 0) / seconds
    if len(command) > 2 and command[0] == "taskset":
        pinned = parse_cpulist(command[2])
        cores = min(cores, len(pinned)) if pinned else cores
    adapter = find(cell.get("tool"))
    threads = adapter.cores(command) if adapter is not None else 1
    return min(float(threads), cores) if cores > 0 else None


def _window_s(cell: dict[str, Any]) -> float | None:
    span = window_span(cell)
    if span is None or span[1] <= span[0]:
        return None
    return span[1] - span[0]


def tool_busy(cell: dict[str, Any]) -> dict[str, float]:
    """Per loadgen of a v2 cell, the load tool's CPU over what it could use (1.0: every core it could run
    on, for the whole run), from the CPU time its shell's ``times`` counted around it
    (``interference.hosts``) over the tool's window (else the snapshots' span)."""
    adapter = find(cell.get("tool"))
    if adapter is not None and adapter.spinning:
        # It keeps its core busy whatever the load, so its own CPU says nothing about being the
        # bottleneck (an open-loop tool that falls behind misses its rate instead).
        return {}
    hosts = (cell.get("interference") or {}).get("hosts") or {}
    merged = cell.get("merged")
    out = {}
    for name, usage in hosts.items():
        if not isinstance(usage, dict) or usage.get("tool_s") is None:
            continue
        cores = tool_cores(cell, usage)
        own = (
            cell
            if not isinstance(merged, dict)
            else next((p for p in merged.get("per_loadgen") or [] if p.get("loadgen") == name), {})
        )
        seconds = _window_s(own) or float(usage["seconds"])
        if cores and seconds:
            out[str(name)] = float(usage["tool_s"]) / (seconds * cores)
    return out


def check_loadgen_saturated(run: _Run) -> tuple[list[Reason], list[str]]:
    floor = run.limits.min_loadgen_idle_pct
    most = run.limits.max_tool_busy
    reasons, unknown, loopback = [], 0, 0
    for key, group in run.groups.items():
        tool_bound: list[tuple[dict[str, Any], str, float]] = []
        busy: list[tuple[dict[str, Any], str, float]] = []
        for cell in group:
            own = tool_busy(cell)
            if own:
                # Its own CPU tells whether the tool was the bottleneck, in either mode.
                tool_bound += [(cell, lg, share) for lg, share in own.items() if share >= most]
                continue
            if run.mode(cell) != "network":
                loopback += 1
                continue
            idle = loadgen_idle(run.run_dir, cell)
            unknown += all(v is None for v in idle.values())
            busy += [(cell, lg, v) for lg, v in idle.items() if v is not None and v < floor]
        if tool_bound:
            cells = list({cell_id_of(c): c for c, _, _ in tool_bound}.values())
            loadgens = ", ".join(sorted({lg for _, lg, _ in tool_bound}))
            highest = max(v for _, _, v in tool_bound)
            message = (
                f"{run.label(key)}: the load tool on {loadgens} used up to {_pct(highest)} of the CPU it "
                f"could use in {len(cells)} of {len(group)} cells (from {_pct(most)}): the number measures "
                "the load tool, not the stack"
            )
            reasons.append(Reason("loadgen_saturated", "invalid", message, _ids(cells)))
        if not busy:
            continue
        cells = list({cell_id_of(c): c for c, _, _ in busy}.values())
        loadgens = ", ".join(sorted({lg for _, lg, _ in busy}))
        lowest = min(v for _, _, v in busy)
        message = (
            f"{run.label(key)}: the loadgen ({loadgens}) had a median CPU idle as low as {lowest:g} % in "
            f"{len(cells)} of {len(group)} cells (below {floor:g} %): the number measures the load tool, "
            "not the stack"
        )
        reasons.append(Reason("loadgen_saturated", "invalid", message, _ids(cells)))
    notes = []
    if unknown:
        notes.append(f"loadgen saturation: {unknown} network-mode cells kept no vmstat sample")
    if loopback:
        notes.append(
            f"loadgen saturation: {loopback} loopback cells without the load tool's own CPU time (cells from "
            "before v2), where vmstat measures the whole host and cannot tell the tool's CPU from the stack's"
        )
    return reasons, notes


def parse_cpulist(text: object) -> set[int] | None:
    """CPUs of a cpulist like ``0``, ``1-3`` or ``0,2-3`` (as taskset -c and CPUAffinity= take them)."""
    if is_int(text):
        return {text}
    if isinstance(text, list):
        parts = [str(x) for x in text]
    elif isinstance(text, str):
        parts = text.replace(" ", ",").split(",")
    else:
        return None
    cpus: set[int] = set()
    for part in filter(None, (p.strip() for p in parts)):
        low, _, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            return None
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus or None


def cpu_split_problem(fingerprint: dict[str, Any] | None) -> str | None:
    """Why a loopback host's load tool and stacks shared CPUs, or None when its split keeps them apart."""
    split = (fingerprint or {}).get("cpu_split")
    if not isinstance(split, dict):
        if str((fingerprint or {}).get("cpu_count")).strip() == "1":
            return ONE_CPU
        return NO_SPLIT
    tool, stacks = parse_cpulist(split.get("loadgen_cpus")), parse_cpulist(split.get("stack_cpus"))
    if tool is None or stacks is None:
        return f"unreadable CPU split {split}"
    if tool & stacks:
        return f"the CPU split overlaps (load tool {sorted(tool)}, stacks {sorted(stacks)})"
    return None


def check_loopback(run: _Run) -> tuple[list[Reason], list[str]]:
    shared: dict[str, list[dict[str, Any]]] = {}
    problems: set[str] = set()
    for cell in run.cells:
        if run.mode(cell) != "loopback":
            continue
        problem = cpu_split_problem(run.hosts.get(str(cell.get("target"))))
        if problem is not None:
            problems.add(problem)
            shared.setdefault(f"{cell.get('target')} ({problem})", []).append(cell)
    if not shared:
        return [], []
    cells = [c for group in shared.values() for c in group]
    idles = [v for c in cells for v in loadgen_idle(run.run_dir, c).values() if v is not None]
    busy = sum(1 for v in idles if v < run.limits.min_loadgen_idle_pct)
    hosts = ", ".join(sorted(shared))
    idle = f"less than {run.limits.min_loadgen_idle_pct:g} % CPU idle in {busy} cells"
    if problems <= {ONE_CPU, NO_SPLIT}:
        # No split at all is how the setups this tool reproduces ran (ab beside the server): a property of
        # what was measured, said with the figures, not noise. Precision, disturbed cells and the tool's own
        # CPU (loadgen_saturated) still judge these cells. A recorded split that fails is a broken promise.
        return [], [
            f"stacks apart from the load tool: loopback mode on shared CPUs on {hosts}, so each figure "
            f"measures the stacks and the load tool together{f' ({idle})' if busy else ''}; network mode, or "
            "-e bench_cpu_split=auto, measures the stacks alone"
        ]
    message = (
        f"loopback mode on shared CPUs: the load tool and the stacks competed for the same cores on {hosts}"
    )
    if busy:
        message += f"; the host had {idle}"
    return [Reason("loopback_shared_cores", "noisy", message, _ids(cells))], []


def _plan_of(
    cell: dict[str, Any], by_id: dict[str, dict[str, Any]], by_key: dict[GroupKey, dict[str, Any]]
) -> dict[str, Any]:
    plan = by_id.get(cell_id_of(cell)) or by_key.get(group_key(cell))
    if plan is not None:
        return plan
    open_loop = cell.get("rate") is not None
    return {
        "tool": cell.get("tool"),
        "concurrency": None if open_loop else cell.get("concurrency"),
        "rate": cell.get("rate"),
        "threshold_ms": cell.get("threshold_ms"),
    }


def check_capacity(run: _Run) -> tuple[list[Reason], list[str]]:
    hosts = run.hosts
    if not hosts:
        return [], ["capacity (backlog, open files): run.json holds no host fingerprints"]
    plans = run.planned() or []
    by_id = {str(p["cell_id"]): p for p in plans}
    by_key: dict[GroupKey, dict[str, Any]] = {}
    for p in plans:
        try:
            by_key.setdefault(group_key(p), p)
        except (KeyError, TypeError, ValueError):
            continue
    found: dict[str, list[str]] = {}
    for cell in run.cells:
        merged = cell.get("merged")
        loadgens = merged.get("loadgens") if isinstance(merged, dict) else [cell.get("loadgen")]
        plan = _plan_of(cell, by_id, by_key)
        target = hosts.get(str(cell.get("target")))
        for lg in loadgens or [None]:
            for warning in capacity_warnings([plan], target, hosts.get(str(lg))):
                ids = found.setdefault(warning, [])
                if cell_id_of(cell) not in ids:
                    ids.append(cell_id_of(cell))
    return [Reason("capacity", "noisy", w, ids) for w, ids in found.items()], []


def starts_per_second(tsv: str) -> dict[int, int]:
    """Requests started in each second (epoch) from an ``ab -g`` file (its ``seconds`` column)."""
    lines = tsv.splitlines()
    if not lines or tuple(lines[0].split("\t")) != AB_GNUPLOT_HEADER:
        raise ValueError("not an ab -g file")
    counts: dict[int, int] = {}
    for line in lines[1:]:
        fields = line.split("\t")
        if len(fields) == len(AB_GNUPLOT_HEADER) and fields[1].isdigit():
            second = int(fields[1])
            counts[second] = counts.get(second, 0) + 1
    return counts


@dataclass(frozen=True)
class Drift:
    first: float  # requests started per second, mean over the whole seconds of the first half
    second: float
    seconds: int  # whole seconds compared

    @property
    def change(self) -> float:
        """(second - first) / first: -0.48 when the rate fell by 48 %."""
        if not self.first:
            return 0.0 if not self.second else float("inf")
        return (self.second - self.first) / self.first


def drift(counts: dict[int, int]) -> Drift | None:
    """First half against second half of a cell's whole seconds (the partial first and last left out; a
    second without a start counts as 0: a stall). None below :data:`MIN_DRIFT_SECONDS` whole seconds."""
    if not counts:
        return None
    inner = [counts.get(s, 0) for s in range(min(counts) + 1, max(counts))]
    if len(inner) < MIN_DRIFT_SECONDS:
        return None
    half = len(inner) // 2
    return Drift(statistics.fmean(inner[:half]), statistics.fmean(inner[-half:]), 2 * half)


def _tsv_paths(run_dir: Path, cell: dict[str, Any]) -> list[Path]:
    cid = cell_id_of(cell)
    merged = cell.get("merged")
    if isinstance(merged, dict) and merged.get("loadgens"):
        return [loadgen_dir(run_dir, str(lg)) / RAW_DIR / f"{cid}.requests.tsv" for lg in merged["loadgens"]]
    return [run_dir / RAW_DIR / f"{cid}.requests.tsv"]


def check_steady_state(run: _Run) -> tuple[list[Reason], list[str]]:
    limit = run.limits.max_drift
    reasons = []
    no_data: dict[str, int] = {}
    short = 0
    for key, group in run.groups.items():
        drifting: list[tuple[dict[str, Any], Drift]] = []
        for cell in group:
            paths = [p for p in _tsv_paths(run.run_dir, cell) if p.is_file()]
            if not paths:
                no_data[str(cell.get("tool"))] = no_data.get(str(cell.get("tool")), 0) + 1
                continue
            measured = False
            for path in paths:
                try:
                    d = drift(starts_per_second(path.read_text(encoding="utf-8", errors="replace")))
                except ValueError:
                    d = None
                if d is None:
                    continue
                measured = True
                if abs(d.change) > limit:
                    drifting.append((cell, d))
            short += not measured
        if not drifting:
            continue
        cell, d = max(drifting, key=lambda item: abs(item[1].change))
        cells = list({cell_id_of(c): c for c, _ in drifting}.values())
        message = (
            f"{run.label(key)}: requests started per second changed {100 * d.change:+.0f} % from the "
            f"first half of the cell to the second ({d.first:.0f} -> {d.second:.0f}, {d.seconds} whole "
            f"seconds) in {len(cells)} of {len(group)} cells (more than {100 * limit:.0f} %): not at steady "
            "state"
        )
        reasons.append(Reason("not_steady", "noisy", message, _ids(cells)))
    notes = []
    for tool, n in sorted(no_data.items()):
        adapter = find(tool)
        notes.append(adapter.no_steady_data_note(n) if adapter else no_steady_data_note(tool, n))
    if short:
        notes.append(
            f"steady state: {short} ab cells have fewer than {MIN_DRIFT_SECONDS} whole seconds of -g data"
        )
    return reasons, notes


CHECKS: list[Check] = [
    check_verified,
    check_stopped,
    check_incomplete,
    check_error_rate,
    check_loadgen_saturated,
    check_precision,
    check_disturbed,
    check_loopback,
    check_capacity,
    check_steady_state,
]


def run_verdict(
    run_dir: str | os.PathLike[str], cells: list[dict[str, Any]], run_info: dict[str, Any] | None
) -> Verdict:
    """The verdict of a run folder's ``cells`` with its run.json (``run_info``; None when there is none)."""
    info = run_info or {}
    run = _Run(Path(run_dir), cells, info, limits_of(info), by_target_point(counted(cells)))
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


def _load_points(run: _Run, reasons: list[Reason]) -> list[LoadPointVerdict]:
    key_of = {cell_id_of(c): target_point(c) for c in run.cells}
    # A plan from before targets were planned names none: its cells are the one measured target's.
    measured = {target_of(c) for c in run.cells}
    default = measured.pop() if len(measured) == 1 else "-"
    for plan in run.planned() or []:
        try:
            key_of.setdefault(str(plan["cell_id"]), (str(plan.get("target") or default), group_key(plan)))
        except (KeyError, TypeError, ValueError):
            continue
    by_key: dict[TargetPoint, list[Reason]] = {k: [] for k in sorted(set(key_of.values()))}
    for reason in reasons:
        for key in {key_of[c] for c in reason.cells if c in key_of}:
            by_key[key].append(reason)
    disturbed = by_target_point([c for c, _ in left_out(run.cells)])
    out = []
    for (target, point), found in by_key.items():
        rps = [float(c["rps"]) for c in run.groups.get((target, point), []) if c.get("rps") is not None]
        ci = median_ci(rps)
        reached = relative_half_width(rps)
        out.append(
            LoadPointVerdict(
                stack=point[0],
                tool=point[1],
                keepalive=point[2],
                level=point[3],
                status=worst(r.status for r in found),
                reasons=sorted({r.code for r in found}),
                target=None if target == "-" else target,
                counted=len(rps),
                disturbed=len(disturbed.get((target, point), [])),
                median_rps=round(statistics.median(rps), 2) if rps else None,
                ci_low=round(ci.low, 2) if ci else None,
                ci_high=round(ci.high, 2) if ci else None,
                precision=round(reached, 4) if reached is not None else None,
            )
        )
    return out
