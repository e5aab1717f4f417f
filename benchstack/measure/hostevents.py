"""A host's state just before and just after a cell: did it boot, restart or lose a unit of ours meanwhile?

A cell measured while its target rebooted, while its container restarted, while systemd was still booting,
or while one of our units stopped, failed or was restarted measures that event, not the stack; its req/s
can still look plausible. Around the measured command the runner prints one line per host
(:data:`STATE_FUNCTION`, marked like the CPU snapshots so the raw files stay clean,
:mod:`benchstack.measure.interference`):

    BENCH-STACK-CPU state0 <boot id> <PID 1 start (ticks)> <ticks/s> <uptime s> <systemd state> <units>

``<units>`` is what ``systemctl show`` says of the loaded units of ours (``bench-*``, nginx, apache2/httpd,
php-fpm): the :data:`UNIT_PROPERTIES` of each, its lines joined by commas (two between units; ``-`` when
none), read back by the drift read's own parser (:func:`benchstack.provision.hoststate.show_blocks`).

:func:`reasons` compares the two lines of a host: a cell is disturbed (kept, left out of the statistics and
measured again) when the boot id or PID 1's start changed (a reboot, a container restart), when systemd was
still starting or PID 1 had run less than :data:`BOOT_SETTLE_S` when the cell began, or when any unit of
ours changed (stopped, started, restarted by systemd). A host whose
state after the cell could not be read at all is disturbed too: it stopped answering during the cell. A unit
that was already down when the cell began did not change; the same line judges the units of the cell's own
stack for that (:func:`benchstack.measure.stackunits.down_reasons`).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchstack.measure.interference import MARKER, marked
from benchstack.provision.hoststate import show_blocks

BEFORE, AFTER = "state0", "state1"
# Less than this since PID 1 started, the host is still booting (its units, caches and JITs settling): the
# case seen was a cell 1.5 s after `docker restart`, stored as good.
BOOT_SETTLE_S = 15.0
REASONS = ("restart:", "booting:", "failure:")
UNIT_PATTERNS = "'bench-*' 'nginx*.service' 'apache2*.service' 'httpd*.service' 'php*-fpm.service'"
# What a unit's state holds, in this order after its Id: a changed activation or NRestarts is a restart.
UNIT_PROPERTIES = (
    "Id",
    "ActiveState",
    "ActiveEnterTimestampMonotonic",
    "NRestarts",
    "InactiveEnterTimestampMonotonic",
)

STATE_FUNCTION = (
    "bench_state() { "
    "b=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo -); "
    "i=$(sed 's/.*) //' /proc/1/stat 2>/dev/null | cut -d' ' -f20); "
    "u=$(cut -d' ' -f1 /proc/uptime 2>/dev/null); "
    "s=$(systemctl is-system-running 2>/dev/null); "
    # Names and numbers only (no space, no comma): one word of the line, its lines joined by commas.
    f"n=$(systemctl show {' '.join(f'-p {p}' for p in UNIT_PROPERTIES)} {UNIT_PATTERNS} 2>/dev/null | "
    "tr '\\n' ,); "
    'echo "$b ${i:--} $(getconf CLK_TCK 2>/dev/null || echo 100) ${u:--} ${s:--} ${n:--}"; '
    "}"
)


def print_state(what: str) -> str:
    """Shell that prints a state line marked ``what`` (needs :data:`STATE_FUNCTION` defined)."""
    return f'echo "{MARKER} {what} $(bench_state)"'


@dataclass(frozen=True)
class State:
    boot_id: str
    init_start: int | None  # PID 1's start, in ticks after boot
    hz: int
    uptime_s: float | None
    system: str  # systemctl is-system-running, or "-"
    units: dict[str, tuple[str, ...]]

    @property
    def init_age_s(self) -> float | None:
        """How long PID 1 had run (a container's own uptime; a host's boot)."""
        if self.init_start is None or self.uptime_s is None:
            return None
        return self.uptime_s - self.init_start / self.hz


def parse_state(text: str) -> State | None:
    """One state line's payload (after ``state0``/``state1``); None when it is not one."""
    parts = text.split()
    if len(parts) != 6:
        return None
    boot, init, hz, uptime, system, units = parts
    try:
        hz_n = int(hz) or 100
        init_n = None if init == "-" else int(init)
        up = None if uptime == "-" else float(uptime)
    except ValueError:
        return None
    found: dict[str, tuple[str, ...]] = {}
    if units != "-":
        for props in show_blocks(units.replace(",", "\n")):
            if props.get("Id"):
                found[props["Id"]] = tuple(props.get(p, "") for p in UNIT_PROPERTIES[1:])
    return State(boot, init_n, hz_n, up, system, found)


def states(text: str) -> tuple[State | None, State | None]:
    """The (before, after) states a host's marked lines hold."""
    marks = marked(text)
    return (
        parse_state(marks[BEFORE]) if BEFORE in marks else None,
        parse_state(marks[AFTER]) if AFTER in marks else None,
    )


def _unit_change(name: str, before: tuple[str, ...] | None, after: tuple[str, ...] | None) -> str | None:
    if before == after:
        return None
    if before is None or after is None:
        return f"{name} ({'appeared' if before is None else 'gone'})"
    state0, state1 = before[0], after[0]
    if state0 != state1:
        return f"{name} ({state0} -> {state1})"
    if len(before) > 2 and len(after) > 2 and before[2] != after[2]:
        return f"{name} (restarted by systemd: NRestarts {before[2]} -> {after[2]})"
    return f"{name} (stopped and started again)"


def reasons(before: State | None, after: State | None, host: str, after_read: bool = True) -> list[str]:
    """Why a cell is disturbed by what happened to ``host`` (module docstring); empty when nothing did.

    ``after_read``: whether the host answered after the cell at all (False with a ``before``: it stopped
    answering). Without a ``before`` nothing can be judged (a host that printed no state line)."""
    if before is None:
        return []
    if after is None:
        why = "did not answer" if not after_read else "printed no state line"
        return [f"restart: {host} {why} after the cell: it restarted or stopped during it"]
    found = []
    if before.boot_id != after.boot_id:
        found.append(f"restart: {host} rebooted during the cell (its boot id changed)")
    elif before.init_start != after.init_start:
        found.append(f"restart: {host}'s PID 1 started again during the cell (a container restart)")
    if before.system in ("starting", "initializing"):
        found.append(f"booting: {host}'s systemd was still {before.system} when the cell began")
    age = before.init_age_s
    if age is not None and age < BOOT_SETTLE_S:
        found.append(
            f"booting: {host}'s PID 1 had run {age:.2f} s when the cell began (less than {BOOT_SETTLE_S:g} s)"
        )
    if before.boot_id == after.boot_id and before.init_start == after.init_start:
        names = sorted(set(before.units) | set(after.units))
        changed = [c for n in names if (c := _unit_change(n, before.units.get(n), after.units.get(n)))]
        if changed:
            found.append(f"failure: units of ours on {host} changed during the cell: {', '.join(changed)}")
    return found
