"""Action: measure one cell on this loadgen and store it in the run folder on the controller.

Thin by design: it gathers arguments, runs commands through the host's connection and hands everything
else to ``benchstack.measure.runner``. A cell already stored is not measured again, so a rerun resumes.

In network mode it also opens a connection to the target (the target's own connection variables, as the
inventory gives them) so the runner can take the target's system stats during the cell and, before it,
check the units of the cell's stack (``units``: restarted when down, ``benchstack.measure.stackunits``).
With ``peers`` (several loadgens loading one target at once) each loadgen stores its cell under
``loadgens/<loadgen>/`` in the run folder, the measured runs start together at a
barrier on the controller (after each one's warm-up and pause), and only the first peer (the lead) takes the
target's stats; the bench_merge action then merges the cells (``benchstack.measure.merge``).

The lead alone checks the stack's units before the cell, for every peer, and restarts one that is down (the
run's bound on restarts, ``benchstack.measure.stackunits.RestartBudget``, counts it once): the others send
no check, so two loadgens never restart one unit at once (a loopback peer that is not the lead included).
That covers them: their measured runs wait at the barrier for the lead's go, which it gives only after its
check; a lead whose check fails leaves the barrier, and theirs fail with it. A unit down when the measured
run begins is read from the target's state line, which the lead takes (a loopback peer reads its own), and
makes its cell disturbed, and so the merged cell. A cell some of the peers
stored and others did not (a run interrupted between them) is measured again by all of them
(``benchstack.measure.resume``).

A cell is measured only while the playbook that started it runs: Ansible's workers live in sessions of
their own, so a playbook that dies without passing a signal on (a lost terminal's SIGHUP, a SIGKILL) would
leave them measuring the rest of the run beside the user's resume. A worker whose playbook is gone measures
nothing more and records nothing in the run folder: it checks its playbook before the cell, after the
measured command and again just before storing. The load commands of other playbook runs still running
on a host are stopped before each cell (``benchstack.measure.remote``).

A failed cell stops the run: it is recorded in run.json's ``stopped`` with this playbook run's id, and the
later cells of the same playbook run are not measured (skipped, naming the failed cell). With
``keep_going`` (``-e bench_keep_going=true``) the failure is recorded and the action does not fail, so the
rest of the cells are measured; the run's verdict stays invalid until a resume measures the failed cell.

A storage failure (the run folder's ``cells/`` or ``raw/`` not writable before the cell's load, or a write
of the cell or its raw output failing: ``benchstack.measure.runner.StorageFailed``) stops the run whatever
``keep_going``: no later cell of this playbook run is measured, on any loadgen, since it would be lost too.
Its stop (reason ``storage``: errno, path) goes to run.json, or, when run.json cannot be written either,
aside in the controller's temporary folder (``benchstack.results.runfolder.stop_aside``; the failure says
so; recorded in run.json and removed when the run stops or a resume writes run.json); the failure names the
resume command. playbooks/benchmark.yml then gives up the hosts.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from ansible import constants as C
from ansible.errors import AnsibleActionFail, AnsibleError

from benchstack.actionargs import BenchAction, action_args
from benchstack.kinds.loadtools.base import Executor
from benchstack.measure.barrier import (
    BarrierBroken,
    barrier_dir,
    join,
    leave_barrier,
    playbook_run_id,
    release,
    wait_for_peers,
)
from benchstack.measure.remote import batch_script, split_batch, without_tty
from benchstack.measure.resume import decide, set_aside
from benchstack.measure.runlock import worker
from benchstack.measure.runner import CellFailed, CellOptions, StorageFailed, Target, cell_path, measure_cell
from benchstack.measure.stackunits import RestartBudget
from benchstack.records.cellplan import CellPlan
from benchstack.results.cell import Cell
from benchstack.results.files import read_json, storage_problem
from benchstack.results.layout import loadgen_dir
from benchstack.results.runfolder import record_stop, resume_command, stop_of_run

# How long a loadgen waits at the barrier for the others (their warm-ups may differ in length).
BARRIER_TIMEOUT_S = 300

# What a task may pass: the options documented in plugins/modules/bench_cell.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    ARGS = ARGS
    CHECK_MODE = "check mode: no load is sent"

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        try:
            plan = CellPlan.from_dict(args["cell"])
        except ValueError as exc:
            raise self.failure(f"cell: {exc}") from None
        loadgen = task_vars.get("inventory_hostname", "")
        peers = [str(p) for p in args.get("peers") or [loadgen]]
        if loadgen not in peers:
            raise self.failure(f"peers {peers} do not include this loadgen {loadgen}")
        run_dir = Path(args["run_dir"])
        where = Target(host=args["host"], target=args["target"], loadgen=loadgen)
        merging = len(peers) > 1
        store = loadgen_dir(run_dir, loadgen) if merging else run_dir
        if merging and not decide(run_dir, plan.cell_id, peers):
            # Done by every peer (the merge may still be due): nobody measures, nobody waits.
            done = cell_path(store, plan.cell_id)
            done = done if done.exists() else cell_path(run_dir, plan.cell_id)
            result.update(changed=False, cell=read_json(done, "a cell"))
            return result
        if not playbook_running():
            orphaned(f"{plan.cell_id}: the playbook that started this cell has ended")
        # Processes of this playbook run on the hosts are its own; those of other runs are leftovers.
        run_id = playbook_run()
        stopped = stopped_before(run_dir, store, plan.cell_id, run_id, args["keep_going"])
        if stopped is not None:
            result.update(changed=False, skipped=True, msg=stopped)
            return result
        execute, options, barrier = self._options(
            args, task_vars, plan.cell_id, where, run_dir, peers, run_id
        )
        try:
            cell, measured = measured_cell(plan, where, store, run_dir, execute, args["experiment"], options)
        except CellFailed as exc:
            return failed_cell(result, exc, run_dir, plan.cell_id, run_id, args["keep_going"])
        finally:
            if barrier is not None:
                leave_barrier(barrier, peers)
        result.update(changed=measured, cell=cell.to_dict())
        return result

    def _options(
        self,
        args: dict[str, Any],
        task_vars: dict[str, Any],
        cell_id: str,
        where: Target,
        run_dir: Path,
        peers: list[str],
        run_id: str,
    ) -> tuple[Executor, CellOptions, Path | None]:
        """The loadgen's executor, what the runner adds (the barrier's hooks, the target's connection for its
        stats and units, the checks that the playbook still runs) and the barrier (several loadgens)."""
        lead = where.loadgen == peers[0]

        def still_running() -> None:
            if not playbook_running():
                orphaned(f"{cell_id}: the playbook that started this cell has ended (not stored)")

        notes: list[str] = []
        barrier: Path | None = None
        before: Callable[[], None] | None = None
        go: Callable[[], None] | None = None
        if len(peers) > 1:
            barrier, before, go = barrier_hooks(run_dir, cell_id, where.loadgen, peers, notes)
        execute = self.executor()
        target_execute = target_control = None
        units = list(args.get("units") or [])
        if where.mode == "network" and lead and (args["target_stats"] or units):
            # One connection to the target: its stats during the cell, its stack's units before it.
            target_control = self._target_executor(task_vars, args["target"])
            target_execute = target_control if args["target_stats"] else None

        def execute_many(commands: list[str]) -> list[tuple[int, str, str]]:
            _, out, _ = execute(batch_script(commands))
            return split_batch(out, len(commands))

        options = CellOptions(
            probe_version=True,
            execute_many=execute_many,
            target_execute=target_execute,
            before_measure=before,
            measure_now=go,
            cpus=args.get("cpus") or None,
            run_id=run_id,
            notes=notes,
            before_store=still_running,
            units=units,
            target_control=target_control,
            # The lead checks (and restarts) the target's units for every peer, once: the others' measured
            # runs wait for its go, which it gives after its check (module docstring).
            check_units=lead,
            restarts=RestartBudget(run_dir, run_id),
        )
        return execute, options, barrier

    def _target_executor(self, task_vars: dict[str, Any], target: str) -> Executor | None:
        """Run commands on the target through a connection of its own (as the inventory defines it).

        Best effort: when no connection can be made, the cell is still measured and the runner notes the
        missing target stats.
        """
        hostvars = task_vars.get("hostvars") or {}
        if target not in hostvars:
            return _failing(f"target {target} is not in the inventory")
        hv = hostvars[target]
        try:
            conn_type = hv.get("ansible_connection") or C.DEFAULT_TRANSPORT
            if conn_type == "smart":
                conn_type = "ssh"
            play_context = self._play_context.copy()
            play_context.remote_addr = hv.get("ansible_host") or target
            loader = self._shared_loader_obj.connection_loader
            conn = loader.get(conn_type, play_context, None)
            if conn is None:
                return _failing(f"no connection plugin {conn_type}")
            names = set(C.config.get_plugin_vars("connection", conn._load_name))
            options = {k: hv[k] for k in names if k in hv}
            options.setdefault("inventory_hostname", target)
            options.setdefault("ansible_host", hv.get("ansible_host") or target)
            conn.set_options(var_options=options)
            # vmstat needs no privileges; the unit check restarts a unit through sudo -n when not root.
            conn.set_become_plugin(None)
            without_tty(conn)
        except (AnsibleError, KeyError, TypeError) as exc:
            return _failing(f"no connection to the target: {exc}")

        def execute(command: str) -> tuple[int, str, str]:
            try:
                rc, out, err = conn.exec_command(command)
            except AnsibleError as exc:
                return 1, "", str(exc)
            return rc, out.decode(errors="replace"), err.decode(errors="replace")

        return execute


def stopped_before(run_dir: Path, store: Path, cell_id: str, run_id: str, keep_going: bool) -> str | None:
    """Why this cell is not measured: this playbook run stopped at an earlier cell (with ``keep_going``,
    only a storage failure stops it); None when it did not, or when the cell is stored already."""
    # A storage failure stops the run even with keep_going: a later cell would be lost as well.
    stop = stop_of_run(run_dir, run_id, reasons=("storage",) if keep_going else None)
    if stop is None or cell_path(store, cell_id).exists():
        return None
    past = (
        f"once {run_dir} can be written again, resume: {resume_command(run_dir)}"
        if stop.get("reason") == "storage"
        else "resume it, or run with -e bench_keep_going=true to measure past a failed cell"
    )
    return f"not measured: this run stopped at cell {stop['cell']} ({stop.get('reason')}); {past}"


def barrier_hooks(
    run_dir: Path, cell_id: str, loadgen: str, peers: list[str], notes: list[str]
) -> tuple[Path, Callable[[], None], Callable[[], None]]:
    """Several loadgens on one cell: this loadgen joins the cell's barrier (its cell of an interrupted run
    set aside first, said in ``notes``); the barrier and the runner's hooks: wait for the peers, and the
    lead's go."""
    # One barrier per playbook run (the workers' parent is ansible-playbook) and cell.
    barrier = barrier_dir(cell_id, os.getppid())
    aside = set_aside(run_dir, loadgen, cell_id)
    if aside is not None:
        notes.append(
            f"measured again with every loadgen: this loadgen's cell of an interrupted run, stored "
            f"while another's was not, is kept in {aside.relative_to(run_dir)}"
        )
    join(barrier, loadgen)

    def before() -> None:
        try:
            wait_for_peers(barrier, loadgen, peers, BARRIER_TIMEOUT_S, gone=playbook_gone, lead=peers[0])
        except (TimeoutError, BarrierBroken) as exc:
            raise CellFailed(f"{cell_id}: {exc}") from exc

    def go() -> None:
        # The lead has taken its round trip to the target (its stats): the others start with it.
        if loadgen == peers[0]:
            release(barrier, loadgen)

    return barrier, before, go


def measured_cell(
    plan: CellPlan,
    where: Target,
    store: Path,
    run_dir: Path,
    execute: Executor,
    experiment: str,
    options: CellOptions,
) -> tuple[Cell, bool]:
    """The cell, measured while this worker is registered in the run folder."""
    with contextlib.ExitStack() as registered:
        # Registered while it measures: a resume of a killed run waits for it
        # (benchstack.measure.runlock). The run folder's first write of the cell.
        try:
            registered.enter_context(worker(run_dir, os.getpid()))
        except OSError as exc:
            raise StorageFailed(
                f"{plan.cell_id}: the run folder cannot be written, nothing measured: {storage_problem(exc)}"
            ) from exc
        return measure_cell(plan, where, store, execute, experiment=experiment, options=options)


def failed_cell(
    result: dict[str, Any], exc: CellFailed, run_dir: Path, cell_id: str, run_id: str, keep_going: bool
) -> dict[str, Any]:
    """A cell that failed: recorded in run.json, then the task fails (the run stops), or with
    ``keep_going`` warns, so the next cells are measured."""
    if not playbook_running():
        orphaned(f"{exc} (the playbook has ended: not recorded)")
    # The run stops here: run.json says where and why, for the verdict (benchstack.analysis.verdict), and
    # which playbook run stopped, so its later cells are not measured.
    unrecorded = record_stop(run_dir, cell_id, exc.reason, str(exc), run=run_id)
    if isinstance(exc, StorageFailed) or unrecorded:
        raise AnsibleActionFail(
            f"{exc}{'; ' + unrecorded if unrecorded else ''}: the run stops here, no further cell is measured"
        ) from None
    if keep_going:
        result.update(changed=False, failed_cell=True, msg=f"{exc} (recorded; going on: keep_going)")
        result["warnings"] = [f"cell failed, measuring the next ones (keep_going): {exc}"]
        return result
    raise AnsibleActionFail(str(exc)) from exc


def playbook_running() -> bool:
    """Whether the ansible-playbook that forked this worker still runs (outside a worker: True)."""
    parent = multiprocessing.parent_process()
    return parent is None or os.getppid() == parent.pid


def orphaned(message: str) -> NoReturn:
    """Stop a worker whose playbook is gone: nobody reads its result, and reporting it would wait forever
    (a worker left by a SIGHUP'd playbook was seen blocked there). Outside a worker: an action failure."""
    if multiprocessing.parent_process() is not None:
        os._exit(1)
    raise AnsibleActionFail(message)


def playbook_run() -> str:
    """This playbook run's id: its ansible-playbook's pid and start (a resume is another playbook run)."""
    return playbook_run_id(os.getppid())


def playbook_gone() -> str | None:
    return None if playbook_running() else "the playbook that started this cell has ended"


def _failing(reason: str) -> Executor:
    def execute(command: str) -> tuple[int, str, str]:
        return 1, "", reason

    return execute
