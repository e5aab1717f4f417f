"""Filters over the run's plan (benchstack.plan) for the playbooks and roles: front checks as a loadgen
reaches the target, capacity warnings, which loadgens load which target and which targets a run measures,
and an app server's start command and helper files with this host's folders in them."""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleFilterError

from benchstack.capacity import capacity_warnings
from benchstack.servers import host_command
from benchstack.stacks import front_checks
from benchstack.topology import TopologyError, loadgen_targets, measured_targets


def bench_front_checks(stacks: list[dict[str, Any]], host: str) -> list[dict[str, Any]]:
    """A request and expected body for every resolved stack's public port on ``host``."""
    return front_checks(stacks, host)


def bench_capacity_warnings(
    cells: list[dict[str, Any]], target: dict[str, Any] | None, loadgen: dict[str, Any] | None
) -> list[str]:
    """Warnings when the experiment's connection counts exceed the hosts' backlog or open-files limits."""
    return capacity_warnings(cells, target, loadgen)


def bench_loadgen_targets(loadgens: list[str], targets: list[str], hostvars: Any) -> dict[str, str]:
    """Each loadgen's target (its bench_target, itself when it is a target, else the first target)."""
    try:
        return loadgen_targets(
            loadgens, targets, {lg: hostvars[lg].get("bench_target") for lg in loadgens if lg in hostvars}
        )
    except TopologyError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def bench_measured_targets(loadgens: list[str], targets: list[str], hostvars: Any) -> list[str]:
    """The targets these loadgens load, in the targets group's order: what one run measures (none without
    loadgens: a play of targets alone measures nothing)."""
    if not loadgens:
        return []
    return measured_targets(bench_loadgen_targets(loadgens, targets, hostvars), targets)


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
            "bench_front_checks": bench_front_checks,
            "bench_capacity_warnings": bench_capacity_warnings,
            "bench_loadgen_targets": bench_loadgen_targets,
            "bench_measured_targets": bench_measured_targets,
            "bench_server_command": bench_server_command,
            "bench_helper_files": bench_helper_files,
        }
