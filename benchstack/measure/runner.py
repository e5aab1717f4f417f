"""Measure one cell: warm up, run the load tool through a given executor, keep the raw output, store the cell.

The executor runs a command on the loadgen and returns (rc, stdout, stderr); the Ansible action plugin
passes one that goes through the host's connection, tests pass one that replays captured output. Every
command runs under ``timeout`` so a stuck tool cannot hold a run forever.

Every load command runs in a folder of its own on the loadgen that nothing outlives, whatever ends the
command, and each cell first stops what an earlier, interrupted run left running there
(:mod:`benchstack.measure.remote`). Around the measured command the runner also:

* runs ``vmstat -n 1`` beside it (:mod:`benchstack.results.sysstats`; kept as ``raw/<cell>.vmstat.txt``,
  averaged into ``system.loadgen``). The target's side is the same host in loopback mode; in network mode a
  second executor (``target_execute``, which the bench_cell action opens on the target's own connection) runs
  vmstat there too, kept as ``raw/<cell>.target.vmstat.txt`` and averaged into ``system.target``;
* collects every cell's latency distribution (:mod:`benchstack.records.distribution`), whatever the plan: ab
  gets ``-g requests.tsv`` in the command's folder, printed after ab's report (kept as
  ``raw/<cell>.requests.tsv``: about 44 bytes per request, written by ab after its run, so the measured run
  is unchanged); wrk gets the Lua report
  script (written once to the loadgen, under /var/lib/bench-stack when writable, else /tmp, named by its
  SHA-256), which prints wrk's histogram from ``done()``, after the run; httperf runs with ``-v -v`` and
  prints its lifetime histogram. With a ``threshold_ms`` the same data counts the slow requests
  (:mod:`benchstack.kinds.loadtools.perrequest`), and wrk gets a ``--timeout`` above the threshold (max(2 s, 2
  x threshold)) unless the plan sets one, so slow responses are counted as slow rather than dropped as
  timeouts;
* for httperf (open loop) the ``--timeout`` is the threshold, so a response slower than the threshold is
  aborted there and counted as a ``timeout`` error (the seed's rule: slower than the threshold is an
  error), and the cell says so in its notes;
* reads the loadgen's clock just before and after the measured command, to the millisecond (printed as
  ``BENCH-STACK-WINDOW <start> <end>`` to stderr): the cell's ``window``, which a merge of several loadgens
  cuts to (:mod:`benchstack.measure.merge`).
"""

from __future__ import annotations

import re
import shlex
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchstack.kinds.loadtools import by_name, warmup_tool
from benchstack.kinds.loadtools.base import Executor, LoadTool
from benchstack.kinds.loadtools.loadcmd import http_url
from benchstack.measure import hostevents, interference, stackunits
from benchstack.measure.celloptions import CellOptions
from benchstack.measure.remote import (
    WINDOW_MARKER,
    load_script,
    measured_script,
    split_measured,
    sweep_command,
    target_vmstat_start,
    target_vmstat_stop,
)
from benchstack.plan.topology import loopback
from benchstack.records.cellparts import CpuUsage, Interference, SystemStats, Window
from benchstack.records.cellplan import CellPlan
from benchstack.records.model import Parsed
from benchstack.results.cell import (
    Cell,
    CellExistsError,
    make_cell,
    planned_cell_id,
    qualified_cell_id,
    read_cell,
    validate_cell,
    write_cell,
)
from benchstack.results.files import probe_writable, storage_problem, write_atomic
from benchstack.results.formats import RUN_SCHEMA
from benchstack.results.layout import CELLS_DIR, LOADGENS_DIR, RAW_DIR
from benchstack.results.runfolder import experiment_hash, update_run_json
from benchstack.results.sysstats import vmstat_means

__all__ = [
    "CellFailed",
    "CellOptions",
    "StorageFailed",
    "Target",
    "measure_cell",
    "run_folder_problem",
    "write_run_info",
]
_WINDOW = re.compile(r"^" + WINDOW_MARKER + r" (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)\s*$", re.M)


class CellFailed(RuntimeError):
    """The load tool ran but its output could not be made into a cell.

    ``reason`` says why, for run.json's ``stopped`` (:func:`benchstack.results.runfolder.record_stop`):
    ``hung`` (the stack answered nothing and failed nothing), ``timeout`` (the tool did not finish within its
    bound) or ``failed`` (anything else).
    """

    def __init__(self, message: str, reason: str = "failed") -> None:
        super().__init__(message)
        self.reason = reason


class StorageFailed(CellFailed):
    """The run folder could not be written: the cell (or its raw output) failed to store, or a probe before
    the cell's load found the folder not writable (EACCES, EPERM, EROFS, ENOSPC). ``reason`` ``storage``:
    the run stops there whatever ``keep_going``, since every later cell would be measured into the void
    (plugins/action/bench_cell.py); nothing of the cell is stored, so a resume measures it again."""

    def __init__(self, message: str) -> None:
        super().__init__(message, reason="storage")


def _unwritable(folders: Sequence[Path]) -> tuple[Path, OSError] | None:
    """The first of ``folders`` that does not take a probe write
    (:func:`benchstack.results.files.probe_writable`), with the error; None when all do."""
    for folder in folders:
        try:
            probe_writable(folder)
        except OSError as exc:
            return folder, exc
    return None


def check_storage(run_dir: Path, cell_id: str) -> None:
    """StorageFailed, before any load is sent, when the run folder's ``cells/`` or ``raw/`` cannot be
    written (:func:`benchstack.results.files.probe_writable`)."""
    found = _unwritable([run_dir / CELLS_DIR, run_dir / RAW_DIR])
    if found is not None:
        folder, exc = found
        raise StorageFailed(
            f"{cell_id}: the run folder cannot be written, nothing measured: {storage_problem(exc, folder)}"
        ) from exc


def run_folder_problem(run_dir: Path) -> str | None:
    """Why the run folder cannot keep this run, in one line naming the errno and the path, or None; asked
    before any load is sent (playbooks/benchmark.yml: before the stacks' restart and the noise probe, which
    are 5 s of load). A probe write (nothing left behind, no folder made) into the run folder (or, for a new
    run, the folder above where it will be made), then into its ``cells/`` and ``raw/`` and each loadgen's
    (several loadgens on one target), those that exist."""
    stores = [run_dir]
    if (run_dir / LOADGENS_DIR).is_dir():
        stores += sorted(p for p in (run_dir / LOADGENS_DIR).iterdir() if p.is_dir())
    folders = [run_dir] + [s / d for s in stores for d in (CELLS_DIR, RAW_DIR) if (s / d).exists()]
    found = _unwritable(folders)
    if found is None:
        return None
    folder, exc = found
    return (
        f"the run folder {run_dir} cannot be written ({storage_problem(exc, folder)}): no load is sent; make "
        "it writable (or free space) and run again"
    )


def _store_failed(cell_id: str, exc: OSError, path: Path, written: list[Path]) -> StorageFailed:
    """The error of a failed write of ``path``; the raw files of this cell written before it are removed
    (best effort), so nothing of the cell stays."""
    for done in written:
        try:
            done.unlink(missing_ok=True)
        except OSError:
            pass
    return StorageFailed(
        f"{cell_id}: cannot store the cell, nothing of it is kept: {storage_problem(exc, path)}"
    )


@dataclass(frozen=True)
class Target:
    """Where the loadgen sends its load."""

    host: str
    target: str
    loadgen: str

    @property
    def mode(self) -> str:
        return "loopback" if loopback(self.loadgen, self.target) else "network"


def cell_path(run_dir: Path, cell_id: str) -> Path:
    return run_dir / CELLS_DIR / f"{cell_id}.json"


def _bound_s(plan: CellPlan) -> int:
    return by_name(plan.tool).bound_s(plan)


def _bounded(cmd: list[str], seconds: int) -> str:
    return shlex.join(["timeout", "--kill-after=5", str(seconds), *cmd])


def warmup_command(plan: CellPlan, url: str) -> list[str] | None:
    """The unrecorded warm-up run before a cell, or None when the experiment has none."""
    tool = warmup_tool(plan.tool, plan.warmup)
    return None if tool is None else by_name(tool).warmup_command(plan, url)


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def window_of(text: str) -> Window | None:
    """The cell's ``window`` ({start, end} in UTC, milliseconds) from the line the measured script printed
    (:func:`benchstack.measure.remote.measured_script`); None without one (a ``date`` that has no ``%N``)."""
    m = _WINDOW.search(text)
    if m is None:
        return None
    start, end = float(m.group(1)), float(m.group(2))
    return Window(start=_utc(start), end=_utc(max(start, end)))


def load_command(plan: CellPlan, url: str, per_request: str | None = None) -> list[str]:
    """The measured command of a cell ``plan`` against ``url``; ``per_request`` is what the tool's
    :meth:`~benchstack.kinds.loadtools.base.LoadTool.per_request_setup` gave (ab's ``-g`` file, wrk's report
    script)."""
    return by_name(plan.tool).command(plan, url, per_request)


class _TargetVmStat:
    """vmstat on the target for the duration of the measured command (best effort: a failure is a note)."""

    def __init__(self, execute: Executor, seconds: int, run_id: str) -> None:
        self.execute = execute
        self.handle: tuple[int, str] | None = None
        self.problem: str | None = None
        self.stopped = 0
        rc, out, err = execute(target_vmstat_start(run_id, seconds))
        # The target's state line before the cell (benchstack.measure.hostevents), printed on stderr.
        self.state_text = err
        parts = out.split()
        if rc == 0 and len(parts) == 3 and parts[0].isdigit() and parts[2].isdigit():
            self.handle = (int(parts[0]), parts[1])
            self.stopped = int(parts[2])
        else:
            self.problem = f"vmstat did not start (exit code {rc}): {(err or out).strip()[:200]}"

    def stop(self) -> str | None:
        if self.handle is None:
            return None
        _, out, _ = self.execute(target_vmstat_stop(*self.handle))
        return out


def _one_by_one(execute: Executor) -> Callable[[list[str]], list[tuple[int, str, str]]]:
    return lambda commands: [execute(command) for command in commands]


def _pinned(cmd: list[str], cpus: str | None) -> list[str]:
    """The command on ``cpus`` (taskset -c), or as it is."""
    return ["taskset", "-c", cpus, *cmd] if cpus else cmd


@dataclass(frozen=True)
class _Cell:
    """One cell being measured: what every step of :func:`measure_cell` reads."""

    plan: CellPlan
    where: Target
    run_dir: Path
    execute: Executor
    experiment: str
    options: CellOptions
    run_id: str
    url: str
    tool: LoadTool
    units: list[str]

    @property
    def id(self) -> str:
        return self.plan.cell_id

    @property
    def raw_rel(self) -> str:
        return f"{RAW_DIR}/{self.id}.txt"


@dataclass(frozen=True)
class _Measured:
    """What the measured command left: its command line, times, output and both hosts' vmstat."""

    command: list[str]
    started: datetime
    elapsed: float
    rc: int
    out: str
    err: str
    vmstat_text: str | None
    tsv: str | None
    target_vmstat: _TargetVmStat | None
    target_text: str | None

    @property
    def raw(self) -> str:
        """The tool's output as kept in raw/<cell>.txt: stdout, then stderr on a line of its own."""
        out, err = self.out, self.err
        return out if not err else f"{out}{'' if out.endswith(chr(10)) or not out else chr(10)}{err}"


def measure_cell(
    plan: CellPlan,
    where: Target,
    run_dir: Path,
    execute: Executor,
    experiment: str,
    options: CellOptions = CellOptions(),  # noqa: B008 - frozen: one shared default is safe
) -> tuple[Cell, bool]:
    """Measure ``plan`` unless its cell is already stored (read as every reader reads it,
    :func:`benchstack.results.cell.read_cell`); return (cell, measured_now).

    ``execute`` runs a command on the loadgen; ``options`` (:class:`CellOptions`) what the caller adds.
    Storage: before any command is sent, ``cells/`` and ``raw/`` must take a probe write, and a raw file or
    the cell that fails to write removes what this cell wrote: both raise :class:`StorageFailed` (the errno's
    name, its text, the path), with nothing of the cell stored.
    """
    path = cell_path(run_dir, plan.cell_id)
    if path.exists():
        return read_cell(path), False
    # Nothing is measured into a folder that cannot keep it.
    check_storage(run_dir, plan.cell_id)
    cell = _Cell(
        plan,
        where,
        run_dir,
        execute,
        experiment,
        options,
        run_id=options.run_id or uuid.uuid4().hex[:12],
        url=http_url(where.host, plan.port, plan.path),
        tool=by_name(plan.tool),
        units=[u.unit for u in stackunits.stack_units(options.units)],
    )
    notes = list(options.notes)
    tool_version, per_request = _before_load(cell, notes)
    cmd = load_command(plan, cell.url, per_request)
    notes += cell.tool.cell_notes(plan)
    measured = _measured_run(cell, _pinned(cmd, options.cpus), notes)
    written = _store_raw(cell, measured)
    parsed = _parsed(cell, measured, per_request, tool_version, notes)
    record = _cell_record(cell, measured, parsed, notes)
    if options.before_store is not None:
        options.before_store()
    try:
        write_cell(run_dir, record)
    except CellExistsError:
        raise
    except OSError as exc:
        raise _store_failed(cell.id, exc, path, written) from exc
    return record, True


def _attempts_left(cell: _Cell, planned: Sequence[stackunits.StackUnit]) -> dict[str, int] | None:
    """The restarts each unit has left in the run (None: the whole bound)."""
    restarts = cell.options.restarts
    if not planned or not cell.options.check_units or restarts is None:
        return None
    try:
        return restarts.left(cell.where.target, cell.units)
    except OSError as exc:
        raise StorageFailed(
            f"{cell.id}: the run folder cannot be read, nothing measured: "
            f"{storage_problem(exc, restarts.path)}"
        ) from exc


def _before_load(cell: _Cell, notes: list[str]) -> tuple[str | None, str | None]:
    """Everything before the measured run, in one batch (one round trip): the sweep first, so no leftover
    loads the stack during the warm-up; then the units' check (loopback), the version probe and the tool's
    setup; the warm-up last, so only the pause lies between it and the measured run. Returns (the tool's
    version, the tool's per-request setup); what it found goes to ``notes``."""
    options = cell.options
    planned = stackunits.stack_units(options.units)
    left = _attempts_left(cell, planned)
    batch = [sweep_command(cell.run_id)]
    check = None
    if planned and options.check_units and cell.where.mode == "loopback":
        check = stackunits.check_command(planned, attempts=left)
        batch.append(check)
    elif planned and options.check_units and options.target_control is not None:
        _, out, _ = options.target_control(stackunits.check_command(planned, attempts=left))
        notes += _brought_back(cell.plan, cell.where, cell.units, out, options.restarts)
    probe = cell.tool.version_probe if options.probe_version and options.tool_version is None else None
    setup = cell.tool.setup_command()
    warm = _warmup_script(cell)
    batch += [command for command in (probe, setup, warm) if command]
    replies = iter((options.execute_many or _one_by_one(cell.execute))(batch))
    rc, out, _ = next(replies)
    if rc == 0 and out.strip().isdigit() and int(out.strip()):
        notes.append(_swept_note(int(out.strip()), "loadgen"))
    if check:
        _, out, _ = next(replies)
        notes += _brought_back(cell.plan, cell.where, cell.units, out, options.restarts)
    tool_version = options.tool_version
    if probe:
        _, out, err = next(replies)
        tool_version = (out or err).strip() or None
    per_request, more = cell.tool.setup_result(*(next(replies) if setup else (0, "", "")))
    notes += more
    if cell.plan.pause_s:
        options.sleep(float(cell.plan.pause_s))
    return tool_version, per_request


def _warmup_script(cell: _Cell) -> str | None:
    """The warm-up's script (bounded, pinned with the load tool), or None when the experiment has none."""
    warm = warmup_command(cell.plan, cell.url)
    if warm is None:
        return None
    bound = by_name(warmup_tool(cell.plan.tool, cell.plan.warmup)).warmup_bound_s(cell.plan)
    return load_script(cell.run_id, _bounded(_pinned(warm, cell.options.cpus), bound))


def _measured_run(cell: _Cell, cmd: list[str], notes: list[str]) -> _Measured:
    """The measured command, with vmstat beside it on the loadgen (and on the target in network mode)."""
    options = cell.options
    if options.before_measure is not None:
        options.before_measure()
    stats_s = _bound_s(cell.plan) + 10
    target_vmstat = None
    try:
        if options.target_execute and cell.where.mode == "network":
            target_vmstat = _TargetVmStat(options.target_execute, stats_s, cell.run_id)
            if target_vmstat.stopped:
                notes.append(_swept_note(target_vmstat.stopped, "target"))
    finally:
        if options.measure_now is not None:
            options.measure_now()
    started = datetime.now(UTC)
    t0 = time.monotonic()
    rc, out, err = cell.execute(measured_script(cell.run_id, _bounded(cmd, _bound_s(cell.plan)), stats_s))
    elapsed = time.monotonic() - t0
    target_text = target_vmstat.stop() if target_vmstat else None
    if options.before_store is not None:
        options.before_store()
    out, vmstat_text, tsv = split_measured(out)
    return _Measured(cmd, started, elapsed, rc, out, err, vmstat_text, tsv, target_vmstat, target_text)


def _store_raw(cell: _Cell, measured: _Measured) -> list[Path]:
    """Keep the raw output beside the cell (the tool's, vmstat's, the target's vmstat, ab's requests);
    the files written, or StorageFailed with none of them left."""
    raw = cell.run_dir / RAW_DIR
    raw_files = [(cell.run_dir / cell.raw_rel, measured.raw)]
    if measured.vmstat_text is not None:
        raw_files.append((raw / f"{cell.id}.vmstat.txt", measured.vmstat_text))
    if measured.target_text is not None:
        raw_files.append(
            (raw / f"{cell.id}.target.vmstat.txt", interference.without_marks(measured.target_text))
        )
    if measured.tsv:
        raw_files.append((raw / f"{cell.id}.requests.tsv", measured.tsv))
    written: list[Path] = []
    for raw_path, text in raw_files:
        try:
            write_atomic(raw_path, text)
        except OSError as exc:
            raise _store_failed(cell.id, exc, raw_path, written) from exc
        written.append(raw_path)
    return written


def _parsed(
    cell: _Cell, measured: _Measured, per_request: str | None, tool_version: str | None, notes: list[str]
) -> Parsed:
    """The tool's output parsed (the notes of its per-request data go to ``notes``); CellFailed when the
    tool timed out, its output does not parse or is cut short, or the stack answered nothing."""
    plan, raw, rc, raw_rel = cell.plan, measured.raw, measured.rc, cell.raw_rel
    if rc == 124:
        raise CellFailed(
            f"{cell.id}: {plan.tool} did not finish within {_bound_s(plan)} s; see {raw_rel}",
            reason="timeout",
        )
    try:
        parsed = cell.tool.parse(raw)
    except ValueError as exc:
        raise CellFailed(f"{cell.id}: {exc} (exit code {rc}; raw output in {raw_rel})") from exc
    if parsed.requests_completed == 0 and parsed.error_count == 0:
        # Nothing completed and nothing failed: the stack hung (e.g. workers stuck on idle keep-alive
        # connections). A 0 req/s cell with no errors would read as a clean result; stop instead.
        raise CellFailed(
            f"{cell.id}: {plan.tool} completed no request and counted no error; "
            f"the stack did not answer within the run (raw output in {raw_rel})",
            reason="hung",
        )
    incomplete = cell.tool.incomplete(raw, per_request)
    if incomplete is not None:
        raise CellFailed(f"{cell.id}: {incomplete} (exit code {rc}; raw output in {raw_rel})")
    if parsed.tool_version is None and tool_version:
        parsed.tool_version = tool_version
    notes += cell.tool.per_request(parsed, plan.threshold_ms, raw, measured.tsv, per_request)
    if parsed.latency_dist is None and parsed.requests_completed:
        notes.append("no latency distribution: the percentiles are the tool's own, p99.9 and p99.99 unknown")
    return parsed


def _cell_record(cell: _Cell, measured: _Measured, parsed: Parsed, notes: list[str]) -> Cell:
    """The cell with its notes and system stats, judged for interference, overrun and its hosts' events;
    CellFailed when its JSON does not fit the published schema."""
    plan, where = cell.plan, cell.where
    window = window_of(measured.raw)
    if window is None:
        notes.append(
            f"no {WINDOW_MARKER} line from the loadgen: its start and end are unknown to the millisecond, "
            "so a merge cannot cut this cell to the window all loadgens ran in"
        )
    system, more = _system_stats(where, measured.vmstat_text, measured.target_vmstat, measured.target_text)
    parsed.notes += notes + more
    measured_cpu, more = _interference(where, measured.err, measured.target_text, plan)
    parsed.notes += more
    limit = measured_cpu.limit if measured_cpu is not None else None
    disturbed = [] if limit is None else interference.disturbed_reasons(measured_cpu, limit)
    disturbed += overrun_reasons(plan, window)
    disturbed += state_reasons(where, measured.err, measured.target_vmstat, measured.target_text, cell.units)
    record = make_cell(
        parsed,
        experiment=cell.experiment,
        stack=plan.stack,
        target=where.target,
        loadgen=where.loadgen,
        mode=where.mode,
        command=measured.command,
        url=cell.url,
        requests=plan.requests,
        duration_s=plan.duration_s,
        repetition=plan.repetition,
        started_at=measured.started.isoformat(timespec="seconds").replace("+00:00", "Z"),
        elapsed_s=round(measured.elapsed, 3),
        threshold_ms=plan.threshold_ms,
        raw_output=cell.raw_rel,
        system=system,
        rate=plan.rate,
        window=window,
        interference=measured_cpu,
        disturbed=disturbed,
    )
    if plan.target and cell.id == qualified_cell_id(plan.target, planned_cell_id(plan)):
        # A run with several targets: the id starts with the target (benchstack.plan.targets).
        record.cell_id = cell.id
    problems = validate_cell(record.to_dict(), require_meta=True)
    if problems:
        raise CellFailed(f"{cell.id}: invalid cell: {'; '.join(problems)}")
    return record


def _brought_back(
    plan: CellPlan,
    where: Target,
    units: Sequence[str],
    out: str,
    restarts: stackunits.RestartBudget | None = None,
) -> list[str]:
    """The notes of the units the check before the cell restarted, counted in the run's ``restarts``;
    CellFailed when one is still down (:mod:`benchstack.measure.stackunits`)."""
    if stackunits.MARKER not in out:
        # No answer from the target (no connection): its state line when the cell begins still judges.
        return [
            f"the units of stack {plan.stack} were not checked before this cell: the target did not answer"
        ]
    checks = stackunits.parse_check(out, units)
    left = None
    if restarts is not None:
        try:
            left = restarts.spend(where.target, checks)
        except OSError as exc:
            raise StorageFailed(
                f"{plan.cell_id}: cannot count the restarts, nothing measured: "
                f"{storage_problem(exc, restarts.path)}"
            ) from exc
    down = stackunits.still_down(checks, plan.stack, where.target, left)
    if down is not None:
        raise CellFailed(f"{plan.cell_id}: {down}")
    return stackunits.restart_notes(checks)


def _swept_note(count: int, host: str) -> str:
    return (
        f"stopped {count} load command(s) or vmstat of an earlier, interrupted run still running on the "
        f"{host} before this cell"
    )


def _system_stats(
    where: Target,
    text: str | None,
    target_vmstat: _TargetVmStat | None,
    target_text: str | None,
) -> tuple[SystemStats, list[str]]:
    notes = []
    loadgen = vmstat_means(text)
    if text is None:
        notes.append("vmstat printed nothing: the measured command ended before its samples were read")
    elif loadgen is None and not text.lstrip().startswith("procs"):
        notes.append(f"vmstat did not run: {text.strip()[:200]}")
    elif loadgen is None:
        notes.append("vmstat took no sample during the cell (shorter than a second): no system stats")
    if where.mode == "loopback":
        target = loadgen  # one host: the same numbers
    elif target_vmstat is not None:
        target = vmstat_means(target_text)
        if target_vmstat.problem:
            notes.append(f"target: {target_vmstat.problem}")
    else:
        target = None
    return SystemStats(loadgen=loadgen, target=target), notes


# A duration-bound run (LoadTool.duration_bound: wrk, httperf) that took longer than its duration by this
# share plus OVERRUN_SLACK_S stalled: the host was paused, starved or swapping, and its req/s averages a gap.
OVERRUN_SHARE = 0.25
OVERRUN_SLACK_S = 1.0


def overrun_reasons(plan: CellPlan, window: Window | None) -> list[str]:
    """Why a duration-bound cell is disturbed by its own length: its window (the tool's start and end on
    the loadgen's clock) overran ``duration_s``."""
    duration = plan.duration_s
    if not duration or not by_name(plan.tool).duration_bound(plan) or window is None:
        return []
    start, end = window.span()
    took = end - start
    bound = duration * (1 + OVERRUN_SHARE) + OVERRUN_SLACK_S
    if took <= bound:
        return []
    return [
        f"overrun: the {plan.tool} run took {took:.1f} s for {duration} s (more than {bound:g} s): the "
        "host stalled during the cell (paused, starved or swapping)"
    ]


def state_reasons(
    where: Target,
    loadgen_err: str,
    target_vmstat: _TargetVmStat | None,
    target_text: str | None,
    units: Sequence[str] = (),
) -> list[str]:
    """Why the cell is disturbed by what happened to its hosts during it
    (:mod:`benchstack.measure.hostevents`): the loadgen's state lines (the target's too in loopback mode) and,
    in network mode, the target's; and by a unit of its stack (``units``) that was not active when it began
    (:func:`benchstack.measure.stackunits.down_reasons`, on the target's line)."""
    loadgen_before, loadgen_after = hostevents.states(loadgen_err)
    found = hostevents.reasons(loadgen_before, loadgen_after, where.loadgen)
    if where.mode == "loopback":
        found += stackunits.down_reasons(loadgen_before, units, where.target)
    if target_vmstat is not None and target_vmstat.handle is not None:
        before = hostevents.states(target_vmstat.state_text)[0]
        after = hostevents.states(target_text or "")[1]
        found += hostevents.reasons(before, after, where.target, after_read=bool(target_text))
        found += stackunits.down_reasons(before, units, where.target)
    return found


def _interference(
    where: Target, loadgen_err: str, target_text: str | None, plan: CellPlan
) -> tuple[Interference | None, list[str]]:
    """The cell's interference from the CPU snapshots of the loadgen (and the target in network mode)."""
    hosts: dict[str, CpuUsage | None] = {}
    notes = []
    usage, problem = interference.usage_from_text(loadgen_err)
    hosts[where.loadgen] = usage
    if problem:
        notes.append(f"interference not measured on the loadgen: {problem}")
    if where.mode == "network":
        usage, problem = interference.usage_from_text(target_text or "")
        hosts[where.target] = usage
        if problem and target_text is not None:
            notes.append(f"interference not measured on the target: {problem}")
    if all(u is None for u in hosts.values()):
        return None, notes
    return interference.summarize(hosts, float(plan.max_interference)), notes


def write_run_info(run_dir: Path, info: dict[str, Any]) -> Path:
    """Write run.json (the experiment as run, host fingerprints, versions); rewritten on a resumed run,
    which keeps the earlier attempts' ``stopped`` records (the verdict reads them). A record that does not
    fit the published schema (:mod:`benchstack.results.formats`) is not written: ValueError naming each
    field."""
    from benchstack import __version__

    data = {"schema": RUN_SCHEMA, "bench_stack_version": __version__, **info}
    if isinstance(info.get("experiment"), dict):
        # What a resume checks the run folder against (benchstack.results.runfolder.check_run_dir).
        data["experiment_sha256"] = experiment_hash(info["experiment"])

    def replace(current: dict[str, Any]) -> None:
        # A resumed run keeps the earlier attempts' stops; a loadgen may be recording one right now.
        stopped = current.get("stopped")
        current.clear()
        current.update(data)
        if "stopped" not in info and isinstance(stopped, list) and stopped:
            current["stopped"] = stopped

    update_run_json(run_dir, replace, create=True, unreadable_as_new=True)
    return run_dir / "run.json"
