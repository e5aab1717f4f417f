"""The hosts as the top of the report names them: each host of run.json with its roles (target, loadgen)
and what it is (CPU model and count, distribution, kernel, memory, the CPU split of loopback mode), or,
without host records, the names the cells carry."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from benchstack.common.numbers import as_number
from benchstack.plan.targets import host_type, loadgens_of, run_targets
from benchstack.results.cell import Cell


def distinct(values: Iterable[object]) -> str:
    """The values of a field of the cells, each once, sorted and joined; ``-`` without any (None)."""
    found = sorted({str(v) for v in values if v is not None})
    return ", ".join(found) if found else "-"


def host_text(fingerprint: object) -> str:
    """What a host is, from its fingerprint: CPU model and count, distribution, kernel, memory and the CPU
    split of loopback mode."""
    if not isinstance(fingerprint, dict):
        return host_type(None)
    parts = [host_type(fingerprint)]
    if fingerprint.get("kernel"):
        parts.append(f"kernel {fingerprint['kernel']}")
    memory = as_number(fingerprint.get("memory_mb"))
    if memory is None and str(fingerprint.get("memory_mb") or "").isdigit():
        memory = float(fingerprint["memory_mb"])
    if memory:
        parts.append(
            f"{memory / 1024:.0f} GB memory" if memory >= 10240 else f"{memory / 1024:.1f} GB memory"
        )
    split = fingerprint.get("cpu_split")
    if isinstance(split, dict) and split.get("stack_cpus") is not None:
        parts.append(f"stacks on CPU {split['stack_cpus']}, load tool on CPU {split.get('loadgen_cpus')}")
    return ", ".join(parts)


def host_lines(run_info: dict[str, Any] | None, cells: list[Cell]) -> list[str]:
    """A line per host of run.json (its roles and :func:`host_text`); the hosts the cells name without one."""
    info = run_info or {}
    hosts = info.get("hosts")
    if not isinstance(hosts, dict) or not hosts:
        roles = f"target: {distinct(c.target for c in cells)}, loadgen: {distinct(c.loadgen for c in cells)}"
        return [f"hosts: {roles}"]
    if set(hosts) <= {"target", "loadgen"}:  # run/v1: one record per role
        return ["hosts: " + ", ".join(f"{role}: {host_name(h)}" for role, h in hosts.items())]
    targets = set(run_targets(run_info)) | {c.target for c in cells if c.target}
    loadgens = set(info.get("loadgens") or []) | set(loadgens_of(cells))
    lines = []
    for name, fingerprint in hosts.items():
        roles = " and ".join(r for r, names in (("target", targets), ("loadgen", loadgens)) if name in names)
        lines.append(f"host {name}{f' ({roles})' if roles else ''}: {host_text(fingerprint)}")
    return lines


def host_name(host: object) -> str:
    if isinstance(host, dict):
        return str(host.get("name") or host.get("hostname") or "?")
    if isinstance(host, list):
        return ", ".join(host_name(h) for h in host)
    return str(host)
