"""Does the load fit the hosts? Compare each plan's connection count with the limits in the fingerprints.

A load tool that opens more connections than the target's accept backlog or either side's open-files limit
measures refused connections and dropped SYNs, not the stack. These checks warn before anything is measured.
"""

from __future__ import annotations

from typing import Any

# File descriptors a load tool needs beside its connections (stdio, epoll, timers, its own files).
TOOL_FD_OVERHEAD = 32


def _int(value: object) -> int | None:
    try:
        return int(str(value).split()[0])
    except (ValueError, IndexError):
        return None


def capacity_warnings(
    cells: list[dict[str, Any]], target: dict[str, Any] | None, loadgen: dict[str, Any] | None
) -> list[str]:
    """Warnings for the largest concurrency in ``cells`` against the hosts' fingerprints."""
    if not cells:
        return []
    conc = max(int(c["concurrency"]) for c in cells)
    out: list[str] = []
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
