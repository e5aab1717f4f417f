"""Filters over the run's plan (benchstack.plan.resolved) for the playbooks and roles: capacity warnings (they
need the hosts' fingerprints, which the plan comes before), and an app server's start command and helper files
with this host's folders in them. What the plan computes without facts (each host's roles, target, address,
peers, front checks) is in the plan itself (benchstack.plan.resolved.with_hosts)."""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleFilterError

from benchstack.analysis.capacity import capacity_warnings
from benchstack.kinds.servers import host_command
from benchstack.records.cellplan import CellPlan


def bench_capacity_warnings(
    cells: list[dict[str, Any]], target: dict[str, Any] | None, loadgen: dict[str, Any] | None
) -> list[str]:
    """Warnings when the experiment's connection counts exceed the hosts' backlog or open-files limits
    (``cells``: the plan's cell plans, as the plan fact holds them)."""
    try:
        loads = [CellPlan.from_dict(c).connection_load() for c in cells]
    except ValueError as exc:
        raise AnsibleFilterError(f"bench_capacity_warnings: {exc}") from exc
    return capacity_warnings(loads, target, loadgen)


def bench_server_command(command: str, values: dict[str, Any]) -> str:
    """A plan's start command (``server.exec``) with its placeholders (``{ruby_bin}``, ...) replaced by the
    host's ``values``; an error naming a placeholder the host has no value for."""
    try:
        return host_command(command, values)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def bench_helper_files(helpers: list[dict[str, str]], folders: dict[str, Any]) -> list[dict[str, str]]:
    """The helper files of the stacks' servers (``server.helper_files``), each once, their ``dest`` under the
    host's ``folders``."""
    out: dict[str, dict[str, str]] = {}
    for helper in helpers:
        out.setdefault(
            helper["src"], {"src": helper["src"], "dest": bench_server_command(helper["dest"], folders)}
        )
    return list(out.values())


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "bench_capacity_warnings": bench_capacity_warnings,
            "bench_server_command": bench_server_command,
            "bench_helper_files": bench_helper_files,
        }
