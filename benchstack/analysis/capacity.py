"""Does the load fit the hosts? Compare each plan's connection count with the limits in the fingerprints.

A load tool that opens more connections than the target's accept backlog or either side's open-files limit
measures refused connections and dropped SYNs, not the stack. These checks warn before anything is measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchstack.kinds.loadtools import by_name, find
from benchstack.records.cellplan import ConnectionLoad

# File descriptors a load tool needs beside its connections (stdio, epoll, timers, its own files).
TOOL_FD_OVERHEAD = 32


def _int(value: object) -> int | None:
    try:
        return int(str(value).split()[0])
    except (ValueError, IndexError):
        return None


def connections(load: ConnectionLoad) -> int:
    """The most connections a cell can hold open: its concurrency, or for an open-loop cell its rate times
    its timeout (every connection of that window still waiting)."""
    if load.concurrency is not None:
        return int(load.concurrency)
    return by_name(load.tool).open_connections(load)


def capacity_warnings(
    loads: Sequence[ConnectionLoad], target: dict[str, Any] | None, loadgen: dict[str, Any] | None
) -> list[str]:
    """Warnings for the largest connection count of the cells' ``loads`` against the hosts' fingerprints
    (each a cell plan's, :meth:`benchstack.records.cellplan.CellPlan.connection_load`)."""
    if not loads:
        return []
    conc = max(connections(c) for c in loads)
    out: list[str] = []
    # Tools that hold fewer descriptors than the open-files limit allows (httperf: select's FD_SETSIZE).
    limited = [c for c in loads if c.concurrency is None and getattr(find(c.tool), "fd_limit", None)]
    worst = max(limited, key=connections, default=None)
    if worst is not None:
        tool = by_name(worst.tool)
        limit = int(tool.fd_limit or 0)
        if connections(worst) + TOOL_FD_OVERHEAD > limit:
            out.append(tool.fd_warning(worst, connections(worst), limit - TOOL_FD_OVERHEAD))
    somaxconn = _int(((target or {}).get("sysctls") or {}).get("net.core.somaxconn"))
    if somaxconn is not None and conc > somaxconn:
        out.append(
            f"concurrency {conc} exceeds the target's net.core.somaxconn {somaxconn}: "
            "connections beyond the accept backlog are dropped or refused"
        )
    for role, fp in (("loadgen", loadgen), ("target", target)):
        nofile = _int((fp or {}).get("nofile_limit"))
        if nofile is not None and conc + TOOL_FD_OVERHEAD > nofile:
            out.append(
                f"concurrency {conc} needs about {conc + TOOL_FD_OVERHEAD} open files on the {role}, "
                f"whose limit is {nofile}"
            )
    return out
