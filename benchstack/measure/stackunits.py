"""A cell measures the whole stack or it is not counted: every unit that serves the cell's stack is active
before its load, and a unit that is down is restarted first, a bounded number of times.

The plan names the units of each stack (``stack_units``, :func:`benchstack.plan.roles.stack_units`): its
app server instances (``bench-<stack>@<i>.service``) and its front (``nginx.service``, its Apache instance),
each with where it listens. Before every cell the runner sends :func:`check_command` to the target (in
loopback mode the loadgen is the target, in the cell's first batch; in network mode over the target's own
connection): it reads each unit's ``ActiveState`` (one ``systemctl show`` per unit: a few milliseconds) and
restarts one that is not active, at most :data:`RESTART_ATTEMPTS` times, waiting up to
:data:`ACTIVE_WAIT_S` after each for it to be active, then up to :data:`LISTEN_WAIT_S` for it to listen
where the plan says (an active thin is still loading its app). It prints one line per unit
(:func:`parse_check`):

    BENCH-STACK-UNIT <unit> <state before> <state after> <restart attempts> <seconds> <listening>

A unit restarted and active again is a note of the cell (:func:`restart_notes`). A unit still down after
its attempts stops the cell before its measured run (:func:`still_down`): the runner raises, the run
stops there like any failed cell (run.json's ``stopped`` names the unit, the verdict is invalid) and a
resume measures the rest once the stack is fixed.

The bound is per run, not per cell: a unit that keeps dying would otherwise get its restarts before each of
its cells. :class:`RestartBudget` keeps the restarts each unit of each target has had in this playbook run
(``<run>/.bench-stack.restarts.json``, under a lock: loadgens of several targets measure at once), and the
check is given what is left (:func:`check_command`'s ``attempts``). Once a unit has had
:data:`RESTART_ATTEMPTS` restarts, the next time it is found down it is not restarted: the run stops as for
a unit that cannot be brought back. A resume (another playbook run) starts with the whole bound again.

Independently of that check, the state line the measured command prints when the cell begins
(:mod:`benchstack.measure.hostevents`) is read for the same units: a unit of the stack that was not active
then makes the cell disturbed (:func:`down_reasons`), so no cell is counted with part of its stack down,
whatever brought it down between the check and the load.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchstack.measure.hostevents import State
from benchstack.results.layout import RESTARTS_FILE

MARKER = "BENCH-STACK-UNIT"
# Restarts of one unit in one run (RestartBudget), and how long each waits for the unit to be active again.
RESTART_ATTEMPTS = 2
# Where a run folder keeps its restarts (RestartBudget).
ACTIVE_WAIT_S = 10
# After a restart the unit is active before its server listens (thin loads the app first): how long the
# check waits for it to listen where the plan says (its socket in /proc/net/unix, its port listening in
# /proc/net/tcp or tcp6), and the pause after a restart when the plan names no address.
LISTEN_WAIT_S = 20
SETTLE_S = 2
# What one `systemctl restart` may take (a unit whose start hangs).
RESTART_BOUND_S = 30


@dataclass(frozen=True)
class StackUnit:
    """A unit that serves a stack and where it listens (``unix:<socket>``, ``tcp:<port>``, or None)."""

    unit: str
    listen: str | None = None


def stack_units(items: Sequence[str | Mapping[str, Any]]) -> list[StackUnit]:
    """The plan's ``stack_units`` of one stack (``{unit, listen}`` each; a bare name has no address)."""
    return [
        StackUnit(i) if isinstance(i, str) else StackUnit(str(i["unit"]), i.get("listen") or None)
        for i in items
    ]


def _listening(listen: str | None) -> str:
    """Shell condition: something listens at ``listen`` (``false`` when there is nothing to look for)."""
    kind, _, where = (listen or "").partition(":")
    if kind == "unix" and where:
        return f"awk -v p={shlex.quote(where)} '$NF == p {{ f = 1 }} END {{ exit !f }}' /proc/net/unix"
    if kind == "tcp" and where.isdigit():
        port = f":{int(where):04X}"
        return (
            f'awk -v p={port} \'$4 == "0A" && substr($2, length($2) - 4) == p {{ f = 1 }} '
            "END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null"
        )
    return "false"


def check_command(
    units: Sequence[StackUnit],
    wait_s: float = ACTIVE_WAIT_S,
    listen_s: float = LISTEN_WAIT_S,
    settle_s: float = SETTLE_S,
    attempts: Mapping[str, int] | None = None,
) -> str:
    """Shell that prints each unit's state (module docstring), restarting a unit that is not active (after
    ``systemctl reset-failed``, so a unit that hit its start limit can start again): as root, or through
    ``sudo -n`` (the inventory's sudo user over the target's own connection), at most ``attempts[unit]``
    times (what the run's :class:`RestartBudget` has left; :data:`RESTART_ATTEMPTS` for a unit it does not
    name). Bounded: at most :data:`RESTART_ATTEMPTS` x (:data:`RESTART_BOUND_S` + ``wait_s``) + ``listen_s``
    seconds per unit.
    A unit restarted and active is then given up to ``listen_s`` to listen where the plan says (or
    ``settle_s`` when it names no address); the line's last field says whether it did (``yes``, ``no``,
    ``-``: not restarted, or no address)."""
    polls = max(1, int(wait_s / 0.5))
    listen_polls = max(1, int(listen_s / 0.5))
    parts = [
        'st() { systemctl show -p ActiveState "$1" 2>/dev/null | cut -d= -f2; }',
        'if [ "$(id -u)" = 0 ]; then sc=""; else sc="sudo -n"; fi',
    ]
    for unit in units:
        name = shlex.quote(unit.unit)
        listening = _listening(unit.listen)
        limit = max(0, min(RESTART_ATTEMPTS, int((attempts or {}).get(unit.unit, RESTART_ATTEMPTS))))
        parts.append(
            f'u={name}; s=$(st "$u"); s=${{s:-unknown}}; n=$s; a=0; l=-; t0=$(date +%s); '
            f'while [ "$n" != active ] && [ $a -lt {limit} ]; do a=$((a+1)); '
            f'$sc systemctl reset-failed "$u" > /dev/null 2>&1; '
            f'$sc timeout {RESTART_BOUND_S} systemctl restart "$u" > /dev/null 2>&1; i=0; '
            f'while [ $i -lt {polls} ]; do n=$(st "$u"); n=${{n:-unknown}}; '
            '[ "$n" = active ] && break; sleep 0.5; i=$((i+1)); done; done; '
            'if [ $a -gt 0 ] && [ "$n" = active ]; then '
            + (
                f"l=no; i=0; while [ $i -lt {listen_polls} ]; do if {listening}; then l=yes; break; fi; "
                "sleep 0.5; i=$((i+1)); done; "
                if unit.listen and listening != "false"
                else f"sleep {settle_s:g}; "
            )
            + "fi; "
            f'echo "{MARKER} $u $s $n $a $(($(date +%s) - t0)) $l"'
        )
    return "; ".join(parts)


@dataclass(frozen=True)
class UnitCheck:
    """One unit as :func:`check_command` found it before the cell (and left it)."""

    unit: str
    before: str
    after: str
    attempts: int
    seconds: int
    # After a restart: "yes" it listened where the plan says, "no" not within the wait; "-": not asked.
    listening: str = "-"

    @property
    def active(self) -> bool:
        return self.after == "active"


def parse_check(text: str, units: Sequence[str]) -> list[UnitCheck]:
    """Each of ``units`` (names) as the check's output says; a unit it printed no line for (the check did not
    run to it: no systemd, a lost connection) is ``unknown``."""
    found: dict[str, UnitCheck] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 7 or parts[0] != MARKER or not (parts[4].isdigit() and parts[5].isdigit()):
            continue
        found[parts[1]] = UnitCheck(parts[1], parts[2], parts[3], int(parts[4]), int(parts[5]), parts[6])
    return [found.get(u) or UnitCheck(u, "unknown", "unknown", 0, 0) for u in units]


def restart_notes(checks: Sequence[UnitCheck]) -> list[str]:
    """The cell's notes: each unit restarted before it and active again."""
    listened = {"yes": ", listening", "no": ", but not yet listening"}
    return [
        f"{c.unit} was {c.before} before this cell: restarted ({c.attempts} "
        f"attempt{'s' if c.attempts > 1 else ''}), active again{listened.get(c.listening, '')} after "
        f"{c.seconds} s"
        for c in checks
        if c.attempts and c.active
    ]


def still_down(
    checks: Sequence[UnitCheck], stack: str, host: str, left: Mapping[str, int] | None = None
) -> str | None:
    """Why the cell cannot measure the whole ``stack`` on ``host`` (its units still down after their
    restarts), or None. ``left``: the restarts the run has left for each unit after this check
    (:meth:`RestartBudget.spend`); a unit with none left says that this run's restarts of it are used."""
    down = [c for c in checks if not c.active]
    if not down:
        return None

    def used(c: UnitCheck) -> str:
        if left is None or left.get(c.unit, RESTART_ATTEMPTS) > 0:
            return ""
        return f" (this run's {RESTART_ATTEMPTS} restarts of it are used)"

    named = ", ".join(
        f"{c.unit} is {c.after}"
        + (f" after {c.attempts} restart{'s' if c.attempts > 1 else ''}" if c.attempts else "")
        + used(c)
        for c in down
    )
    return (
        f"stack {stack} cannot be brought back on {host}: {named}; its cells are not measured with part "
        "of the stack down (see the unit's journal, then resume the run)"
    )


class RestartBudget:
    """The restarts each unit of each target has had in one playbook run (``run``: its id), kept in
    ``<run_dir>/.bench-stack.restarts.json`` (``{"run": ..., "units": {"<host> <unit>": restarts}}``) under a
    lock on the file. A file of another playbook run (a resume's predecessor) counts nothing. OSError when
    the run folder cannot be read or written (the runner stops the run: its storage failed)."""

    def __init__(self, run_dir: str | os.PathLike[str], run: str) -> None:
        self.path = Path(run_dir) / RESTARTS_FILE
        self.run = run

    def _used(self, change: Mapping[str, int] | None = None) -> dict[str, int]:
        if change is None and not self.path.exists():
            return {}
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        with os.fdopen(fd, "r+", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                data = json.loads(fh.read() or "{}")
            except ValueError:  # half written by a killed worker: nothing known
                data = {}
            units = data.get("units") if isinstance(data, dict) and data.get("run") == self.run else None
            used = {k: v for k, v in (units or {}).items() if isinstance(v, int) and v >= 0}
            if change:
                for key, more in change.items():
                    used[key] = used.get(key, 0) + more
                fh.seek(0)
                fh.truncate()
                json.dump({"run": self.run, "units": used}, fh, sort_keys=True)
            return used

    def left(self, host: str, units: Sequence[str]) -> dict[str, int]:
        """The restarts each of ``units`` on ``host`` may still have in this run."""
        used = self._used()
        return {u: max(0, RESTART_ATTEMPTS - used.get(f"{host} {u}", 0)) for u in units}

    def spend(self, host: str, checks: Sequence[UnitCheck]) -> dict[str, int]:
        """Count the restarts ``checks`` made on ``host``; the restarts each unit has left after them."""
        used = self._used({f"{host} {c.unit}": c.attempts for c in checks if c.attempts})
        return {c.unit: max(0, RESTART_ATTEMPTS - used.get(f"{host} {c.unit}", 0)) for c in checks}


def down_reasons(before: State | None, units: Sequence[str], host: str) -> list[str]:
    """Why the cell is disturbed by a unit of its stack that was not active when it began (``before``: the
    host's state line then, :mod:`benchstack.measure.hostevents`; None: not read, nothing to judge). A
    unit systemd no longer holds (stopped and unloaded) is not loaded."""
    if before is None:
        return []
    found = []
    for unit in units:
        state = before.units.get(unit)
        now = state[0] if state else "not loaded"
        if now != "active":
            found.append(f"failure: {unit} was {now} on {host} when the cell began")
    return found
