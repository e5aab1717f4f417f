"""Whether the hosts measured the stacks and not themselves: the load tool as the bottleneck
(``loadgen_saturated``: its own CPU time, or for v1 cells its loadgen's CPU idle), the load tool and the
stacks on shared CPUs in loopback mode (``loopback_shared_cores``: the CPU split), and a capacity limit
within reach (``capacity``: backlog, open files, from the fingerprints).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchstack.analysis.capacity import capacity_warnings
from benchstack.analysis.checks.base import Reason, Run, cell_ids, pct
from benchstack.common.numbers import as_number, is_int
from benchstack.kinds.loadtools import find
from benchstack.records.cellparts import CpuUsage, Vmstat, Window
from benchstack.records.cellplan import CellPlan, ConnectionLoad
from benchstack.results.cell import Cell, GroupKey, cell_id_of, group_key, planned_key
from benchstack.results.layout import RAW_DIR, loadgen_dir
from benchstack.results.sysstats import parse_vmstat

# cpu_split_problem's answers when the host records no split (as against a split that fails).
ONE_CPU = "1 CPU: no split is possible"
NO_SPLIT = "no CPU split recorded"


def _vmstat_idle(run_dir: Path, cell_id: str, stats: Vmstat | None) -> float | None:
    """Median CPU idle of one loadgen during a cell: from its stats, else from the raw vmstat beside it."""
    if stats is not None and stats.cpu_idle_median is not None:
        return float(stats.cpu_idle_median)
    raw = run_dir / RAW_DIR / f"{cell_id}.vmstat.txt"
    if raw.is_file():
        parsed = parse_vmstat(raw.read_text(encoding="utf-8", errors="replace"))
        if parsed and as_number(parsed.get("cpu_idle_median")) is not None:
            return float(parsed["cpu_idle_median"])
    return None


def loadgen_idle(run_dir: Path, cell: Cell) -> dict[str, float | None]:
    """Each loadgen's median CPU idle (%) during the cell, None where no sample was kept."""
    cid = cell_id_of(cell)
    if cell.merged is not None and cell.merged.per_loadgen:
        return {
            str(one.loadgen): _vmstat_idle(loadgen_dir(run_dir, str(one.loadgen)), cid, one.system)
            for one in cell.merged.per_loadgen
        }
    stats = cell.system.loadgen if cell.system is not None else None
    return {str(cell.loadgen): _vmstat_idle(run_dir, cid, stats)}


def tool_cores(cell: Cell, usage: CpuUsage) -> float | None:
    """How many CPUs the load tool of ``cell`` could keep busy on the loadgen ``usage`` describes: one for ab
    and httperf (single-threaded), wrk's threads; at most the CPUs it was pinned to (``taskset -c``) or the
    machine's."""
    seconds = float(usage.seconds)
    if seconds <= 0:
        return None
    command = cell.command if isinstance(cell.command, list) else []
    cores = float(usage.cpu_s) / seconds
    if len(command) > 2 and command[0] == "taskset":
        pinned = parse_cpulist(command[2])
        cores = min(cores, len(pinned)) if pinned else cores
    adapter = find(cell.tool)
    threads = adapter.cores(command) if adapter is not None else 1
    return min(float(threads), cores) if cores > 0 else None


def _window_s(window: Window | None) -> float | None:
    span = None if window is None else window.span()
    if span is None or span[1] <= span[0]:
        return None
    return span[1] - span[0]


def tool_busy(cell: Cell) -> dict[str, float]:
    """Per loadgen of a v2 cell, the load tool's CPU over what it could use (1.0: every core it could run
    on, for the whole run), from the CPU time its shell's ``times`` counted around it
    (``interference.hosts``) over the tool's window (else the snapshots' span)."""
    adapter = find(cell.tool)
    if adapter is not None and adapter.spinning:
        # It keeps its core busy whatever the load, so its own CPU says nothing about being the
        # bottleneck (an open-loop tool that falls behind misses its rate instead).
        return {}
    hosts = cell.interference.hosts if cell.interference is not None else {}
    out = {}
    for name, usage in hosts.items():
        if usage is None or usage.tool_s is None:
            continue
        cores = tool_cores(cell, usage)
        window = cell.window
        if cell.merged is not None:
            own = next((p for p in cell.merged.per_loadgen if p.loadgen == name), None)
            window = own.window if own is not None else None
        seconds = _window_s(window) or float(usage.seconds)
        if cores and seconds:
            out[name] = float(usage.tool_s) / (seconds * cores)
    return out


def check_loadgen_saturated(run: Run) -> tuple[list[Reason], list[str]]:
    floor = run.limits.min_loadgen_idle_pct
    most = run.limits.max_tool_busy
    reasons, unknown, loopback = [], 0, 0
    for key, group in run.groups.items():
        tool_bound: list[tuple[Cell, str, float]] = []
        busy: list[tuple[Cell, str, float]] = []
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
                f"{run.label(key)}: the load tool on {loadgens} used up to {pct(highest)} of the CPU it "
                f"could use in {len(cells)} of {len(group)} cells (from {pct(most)}): the number measures "
                "the load tool, not the stack"
            )
            reasons.append(Reason("loadgen_saturated", "invalid", message, cell_ids(cells)))
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
        reasons.append(Reason("loadgen_saturated", "invalid", message, cell_ids(cells)))
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


def check_loopback(run: Run) -> tuple[list[Reason], list[str]]:
    shared: dict[str, list[Cell]] = {}
    problems: set[str] = set()
    for cell in run.cells:
        if run.mode(cell) != "loopback":
            continue
        problem = cpu_split_problem(run.hosts.get(str(cell.target)))
        if problem is not None:
            problems.add(problem)
            shared.setdefault(f"{cell.target} ({problem})", []).append(cell)
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
    return [Reason("loopback_shared_cores", "noisy", message, cell_ids(cells))], []


def _load_of(cell: Cell, by_id: dict[str, CellPlan], by_key: dict[GroupKey, CellPlan]) -> ConnectionLoad:
    """The connections the cell's plan may hold open; for a cell whose plan run.json lacks (or holds in a
    form from before), what the cell tells: its tool, load level and threshold (no timeout)."""
    plan = by_id.get(cell_id_of(cell)) or by_key.get(group_key(cell))
    if plan is not None:
        return plan.connection_load()
    open_loop = cell.rate is not None
    return ConnectionLoad(cell.tool, None if open_loop else cell.concurrency, cell.rate, cell.threshold_ms)


def _plans(run: Run) -> list[CellPlan]:
    """run.json's cell plans, read back (:meth:`CellPlan.from_dict`); one that is not a whole cell plan (an
    older run's) is left out."""
    plans = []
    for p in run.planned() or []:
        try:
            plans.append(CellPlan.from_dict(p))
        except ValueError:
            continue
    return plans


def check_capacity(run: Run) -> tuple[list[Reason], list[str]]:
    hosts = run.hosts
    if not hosts:
        return [], ["capacity (backlog, open files): run.json holds no host fingerprints"]
    plans = _plans(run)
    by_id = {p.cell_id: p for p in plans}
    by_key: dict[GroupKey, CellPlan] = {}
    for p in plans:
        if p.concurrency is not None or p.rate is not None:
            by_key.setdefault(planned_key(p), p)
    found: dict[str, list[str]] = {}
    for cell in run.cells:
        loadgens = cell.merged.loadgens if cell.merged is not None else [cell.loadgen]
        load = _load_of(cell, by_id, by_key)
        target = hosts.get(str(cell.target))
        for lg in loadgens or [None]:
            for warning in capacity_warnings([load], target, hosts.get(str(lg))):
                ids = found.setdefault(warning, [])
                if cell_id_of(cell) not in ids:
                    ids.append(cell_id_of(cell))
    return [Reason("capacity", "noisy", w, ids) for w, ids in found.items()], []
