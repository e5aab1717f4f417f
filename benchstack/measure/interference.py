"""Interference: the CPU time that was not ours while a cell was measured.

We start every process of a benchmark, so we know which CPU time is ours: a local host's whole container,
or on a real host our units (the stacks' instances under ``system-bench*.slice``, the fronts' services and
the per-stack Apache instances ``apache2@``/``httpd@``, which systemd puts in ``system-apache2.slice`` /
``system-httpd.slice``) plus the load tool (the measured shell's children's CPU, from ``times`` just before
and after the tool).
The host's CPU time comes from the first line of ``/proc/stat``, which inside a container is the whole
machine's. Around the measured command
the runner takes a snapshot of both (:data:`SNAPSHOT_FUNCTION`, one line, :func:`parse_snapshot`); the
difference over the window gives, per host (:func:`host_usage`):

* ``busy_s``: the machine's busy CPU seconds (user, nice, system, irq, softirq; steal apart),
* ``ours_s``: ours, ``tool_s``: the load tool's own (loadgens), ``steal_s`` and ``cpu_s`` (all CPU time:
  CPUs x seconds).

Hosts that share a kernel (the same ``boot_id``: containers on one machine, loopback) are one machine, and
our CPU is the sum of their ``ours_s`` (:func:`summarize`). Foreign CPU is the machine's busy time minus ours;
as shares of ``cpu_s``, foreign and steal are the cell's ``interference``. A cell whose foreign + steal share
is above ``load.max_interference`` is disturbed (:func:`disturbed_reasons`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from benchstack.records.cellparts import CpuUsage, Interference

MARKER = "BENCH-STACK-CPU"
# How every disturbed reason about interference starts (a merge tells them from a loadgen's own).
INTERFERENCE_REASON = "interference:"

# Shell (POSIX sh) that prints one snapshot line: time, USER_HZ, boot id, whose CPU counter it read
# (container-usec, container-ns, units-usec or none) and its value, then "cpu" and /proc/stat's first line.
SNAPSHOT_FUNCTION = (
    "bench_snap() { "
    'set -- $(head -n 1 /proc/stat); shift; c="$*"; o=none; '
    "if systemd-detect-virt -cq 2>/dev/null; then "
    "p=$(sed -n 's/^0:://p' /proc/1/cgroup); p=${p%/init.scope}; "
    "for f in /sys/fs/cgroup$p/cpu.stat /sys/fs/cgroup/unified$p/cpu.stat; do "
    'if [ -r "$f" ]; then o="container-usec $(awk \'$1 == "usage_usec" {print $2}\' "$f")"; break; fi; '
    "done; "
    'if [ "$o" = none ]; then '
    "p=$(awk -F: '$2 ~ /(^|,)cpuacct(,|$)/ {print $3}' /proc/1/cgroup); p=${p%/init.scope}; "
    "for f in /sys/fs/cgroup/cpuacct$p/cpuacct.usage /sys/fs/cgroup/cpu,cpuacct$p/cpuacct.usage; do "
    'if [ -r "$f" ]; then o="container-ns $(cat "$f")"; break; fi; '
    "done; fi; "
    'elif r=${BENCH_STACK_CGROUP_ROOT:-/sys/fs/cgroup}; [ -f "$r/cgroup.controllers" ]; then u=0; '
    "for f in $r/system.slice/system-bench*.slice/cpu.stat "
    "$r/system.slice/nginx.service/cpu.stat "
    "$r/system.slice/apache2.service/cpu.stat $r/system.slice/system-apache2.slice/cpu.stat "
    "$r/system.slice/httpd.service/cpu.stat $r/system.slice/system-httpd.slice/cpu.stat "
    "$r/system.slice/php*-fpm.service/cpu.stat; "
    'do [ -r "$f" ] && u=$((u + $(awk \'$1 == "usage_usec" {print $2}\' "$f"))); done; '
    'o="units-usec $u"; fi; '
    "b=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo -); "
    'echo "$(date +%s.%N) $(getconf CLK_TCK) $b $o cpu $c"; '
    "}"
)

_SNAP = re.compile(
    r"^(?P<t>\d+(?:\.\d+)?) (?P<hz>\d+) (?P<boot>\S+) "
    r"(?:(?P<kind>container-usec|container-ns|units-usec) (?P<ours>\d+)|none) cpu (?P<cpu>[\d ]+)$"
)
_TIMES = re.compile(r"(\d+)m([\d.]+)s")
# /proc/stat's cpu line: user nice system idle iowait irq softirq steal [guest guest_nice]
BUSY_FIELDS = (0, 1, 2, 5, 6)
STEAL_FIELD = 7


@dataclass(frozen=True)
class Snapshot:
    at: float
    hz: int
    boot_id: str
    ours_kind: str | None  # container-usec | container-ns | units-usec, or None: not readable
    ours_s: float | None
    cpu: tuple[int, ...]


def marked(text: str) -> dict[str, str]:
    """The ``BENCH-STACK-CPU <what> <payload>`` lines of ``text`` (what: before, after, times), the last of
    each."""
    found = {}
    for line in text.splitlines():
        if line.startswith(MARKER + " "):
            what, _, payload = line[len(MARKER) + 1 :].partition(" ")
            found[what] = payload.strip()
    return found


def without_marks(text: str) -> str:
    """``text`` without its ``BENCH-STACK-CPU`` lines."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith(MARKER + " "))


def print_snapshot(what: str) -> str:
    """Shell that prints a snapshot line marked ``what`` (needs :data:`SNAPSHOT_FUNCTION` defined)."""
    return f'echo "{MARKER} {what} $(bench_snap)"'


def usage_from_text(text: str) -> tuple[CpuUsage | None, str | None]:
    """A host's :func:`host_usage` from the marked lines a measured script printed, and why not when it
    cannot be had."""
    marks = marked(text)
    if "before" not in marks or "after" not in marks:
        return None, "no CPU snapshots around the measured command"
    before, after = parse_snapshot(marks["before"]), parse_snapshot(marks["after"])
    if before is None or after is None:
        return (
            None,
            f"unreadable CPU snapshot: {(marks['before'] if before is None else marks['after'])[:120]}",
        )
    tool_s = children_cpu_s(marks.get("times", ""))
    if tool_s is not None and "times0" in marks:
        tool_s = max(0.0, tool_s - (children_cpu_s(marks["times0"]) or 0.0))
    usage = host_usage(before, after, tool_s)
    if usage is None:
        return None, "the CPU snapshots do not pair (the host rebooted or a counter went back)"
    return usage, None


def parse_snapshot(text: str) -> Snapshot | None:
    """One snapshot line (:data:`SNAPSHOT_FUNCTION`'s output); None when it is not one."""
    m = _SNAP.match(text.strip())
    if m is None:
        return None
    cpu = tuple(int(x) for x in m.group("cpu").split())
    if len(cpu) < STEAL_FIELD + 1:
        return None
    kind, ours = m.group("kind"), m.group("ours")
    scale = {"container-usec": 1e-6, "units-usec": 1e-6, "container-ns": 1e-9}
    return Snapshot(
        at=float(m.group("t")),
        hz=int(m.group("hz")) or 100,
        boot_id=m.group("boot"),
        ours_kind=kind,
        ours_s=int(ours) * scale[kind] if kind else None,
        cpu=cpu,
    )


def children_cpu_s(times_output: str) -> float | None:
    """User + system CPU seconds of the shell's children from the builtin ``times`` (its last line)."""
    lines = [line for line in times_output.splitlines() if line.strip()]
    if not lines:
        return None
    values = _TIMES.findall(lines[-1])
    if len(values) != 2:
        return None
    return sum(60 * int(m) + float(s) for m, s in values)


def host_usage(before: Snapshot, after: Snapshot, tool_s: float | None = None) -> CpuUsage | None:
    """One host's CPU over the window between two snapshots (seconds); None when they do not pair (another
    boot, a counter that went back)."""
    if before.boot_id != after.boot_id or len(before.cpu) != len(after.cpu):
        return None
    delta = [a - b for a, b in zip(after.cpu, before.cpu, strict=True)]
    if any(d < 0 for d in delta[: STEAL_FIELD + 1]):
        return None
    hz = float(after.hz)
    cpu_s = sum(delta[: STEAL_FIELD + 1]) / hz
    ours: float | None = None
    if before.ours_kind and before.ours_kind == after.ours_kind:
        assert before.ours_s is not None and after.ours_s is not None
        ours = max(0.0, after.ours_s - before.ours_s)
        if before.ours_kind == "units-usec":
            # Our units' cgroups leave the load tool out; the shell's children are the tool.
            ours += tool_s or 0.0
    return CpuUsage(
        boot_id=after.boot_id,
        seconds=round(after.at - before.at, 3),
        cpu_s=round(cpu_s, 3),
        busy_s=round(sum(delta[i] for i in BUSY_FIELDS) / hz, 3),
        steal_s=round(delta[STEAL_FIELD] / hz, 3),
        ours_s=None if ours is None else round(ours, 3),
        ours_from=before.ours_kind.split("-")[0] if ours is not None and before.ours_kind else None,
        tool_s=None if tool_s is None else round(tool_s, 3),
    )


def summarize(hosts: Mapping[str, CpuUsage | None], limit: float | None = None) -> Interference:
    """The cell's ``interference`` from each host's :func:`host_usage` (None where it is unknown): hosts with
    one boot id are one machine, whose foreign CPU is its busy time minus the sum of their ``ours_s``.
    ``foreign`` and ``steal`` are the largest shares of any machine; null when no machine could tell.
    ``limit``: the ``load.max_interference`` the cell was judged by, recorded with it."""
    machines: dict[str, list[tuple[str, CpuUsage]]] = {}
    for name, usage in hosts.items():
        if usage is not None:
            machines.setdefault(usage.boot_id, []).append((name, usage))
    foreign: float | None = None
    steal: float | None = None
    for members in machines.values():
        # The snapshots of one machine's hosts cover nearly the same window: the widest one is the window.
        widest = max((u for _, u in members), key=lambda u: u.cpu_s)
        if widest.cpu_s <= 0:
            continue
        machine_steal = widest.steal_s / widest.cpu_s
        steal = machine_steal if steal is None else max(steal, machine_steal)
        known = [u.ours_s for _, u in members]
        if any(s is None for s in known):
            continue
        ours = sum(s for s in known if s is not None)
        share = max(0.0, widest.busy_s - ours) / widest.cpu_s
        foreign = share if foreign is None else max(foreign, share)
    return Interference(
        foreign=None if foreign is None else round(foreign, 4),
        steal=None if steal is None else round(steal, 4),
        limit=limit,
        hosts=dict(hosts),
    )


def share_of(foreign: object, steal: object) -> float | None:
    """Foreign + steal share (a cell's ``interference``, a noise probe's); None when neither is known."""
    known = [float(p) for p in (foreign, steal) if isinstance(p, int | float)]
    return sum(known) if known else None


def disturbed_reasons(interference: Interference | None, max_share: float) -> list[str]:
    """Why a cell is disturbed by interference: its foreign + steal share above ``max_share``."""
    if interference is None:
        return []
    foreign, steal = interference.foreign, interference.steal
    share = share_of(foreign, steal)
    if share is None or share <= max_share:
        return []
    parts = []
    if foreign is not None:
        parts.append(f"foreign CPU {100 * foreign:.1f} %")
    if steal:
        parts.append(f"steal {100 * steal:.1f} %")
    return [
        f"{INTERFERENCE_REASON} {' + '.join(parts)} of the host's CPU time during the cell, above "
        f"load.max_interference {100 * max_share:g} %"
    ]
