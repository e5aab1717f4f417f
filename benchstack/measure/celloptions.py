"""What a caller adds to the measuring of one cell (:func:`benchstack.measure.runner.measure_cell`): hooks at
fixed points of the cell, connections to the hosts, the unit check and what it already knows. One frozen
record, so the runner's steps share it and each caller (the bench_cell action, tests, scripts) names only
what it sets."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchstack.kinds.loadtools.base import Executor
from benchstack.measure import stackunits

# Runs several commands on the loadgen in one round trip (benchstack.measure.remote.batch_script).
Batch = Callable[[list[str]], list[tuple[int, str, str]]]


@dataclass(frozen=True)
class CellOptions:
    """What a caller adds to :func:`~benchstack.measure.runner.measure_cell`; the defaults measure with no
    hooks, no unit check and no target connection."""

    # The tool's version when the caller knows it; ``probe_version``: else ask the loadgen (the tool's
    # ``version_probe``).
    tool_version: str | None = None
    probe_version: bool = False
    # Several commands in one round trip (:func:`benchstack.measure.remote.batch_script`); None: they go one
    # by one through ``execute``.
    execute_many: Batch | None = None
    # Runs commands on the target, for its system stats in network mode.
    target_execute: Executor | None = None
    # On a loopback host, the CPUs the load tool runs on (``taskset -c``, warm-up included), disjoint from
    # the stacks' (:mod:`benchstack.plan.cpusplit`); the cell's command says so.
    cpus: str | None = None
    # The playbook run (letters, digits, '-'): load commands of other runs still running on the loadgen are
    # stopped before this cell (:func:`benchstack.measure.remote.sweep_command`), this run's are not.
    run_id: str | None = None
    # What the caller has to say about this cell, first among its notes.
    notes: Sequence[str] = ()
    # The pause between the warm-up and the measured run (tests pass one that does not wait).
    sleep: Callable[[float], None] = time.sleep
    # Called after the warm-up and the pause, just before the measured run (the bench_cell action waits
    # there for the other loadgens of the same cell).
    before_measure: Callable[[], None] | None = None
    # Called after the target's stats have started, right before the measured run, even when they failed
    # to start (bench_cell: the lead's go, which the other loadgens wait for).
    measure_now: Callable[[], None] | None = None
    # Called when the measured command returns and again just before the cell is stored; it raises (or
    # ends the process) when nothing may be stored any more (bench_cell: its playbook has ended), so a
    # killed run's worker writes no raw file and no cell.
    before_store: Callable[[], None] | None = None
    # The units that serve the cell's stack (the plan's ``stack_units``: ``{unit, listen}`` each, or bare
    # names). Before the warm-up each is checked and, when down, restarted (:mod:`benchstack.measure.
    # stackunits`): in loopback mode through ``execute`` (in the first batch), in network mode through
    # ``target_control`` (the target's connection; None: not checked before the cell). A unit still down
    # raises :class:`CellFailed` before the measured run; a unit of them not active when the measured run
    # begins (the target's state line) makes the cell disturbed.
    units: Sequence[str | Mapping[str, Any]] = ()
    target_control: Executor | None = None
    # False: the units are only judged by that state line, not checked nor restarted (several loadgens on
    # one target: only the lead checks them, plugins/action/bench_cell.py).
    check_units: bool = True
    # The run's bound on each unit's restarts (:class:`benchstack.measure.stackunits.RestartBudget`); None:
    # the whole bound before each cell.
    restarts: stackunits.RestartBudget | None = None
