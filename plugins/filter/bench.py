"""Filters that expose the benchstack package's stack model to roles and playbooks."""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleFilterError

from benchstack.capacity import capacity_warnings
from benchstack.stacks import StackError, front_checks, instance_checks, needs, normalize_stacks
from benchstack.topology import TopologyError, check_one_load_per_target, loadgen_targets


def bench_stacks(
    stacks: list[dict[str, Any]], run_root: str = "/run/bench-stack", app_root: str = "/opt/bench-stack/apps"
) -> list[dict[str, Any]]:
    """Stacks with defaults filled in and endpoints, units and checks derived."""
    try:
        return normalize_stacks(stacks, run_root=run_root, app_root=app_root)
    except StackError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def bench_stack_needs(stacks: list[dict[str, Any]]) -> dict[str, Any]:
    """Runtimes, gems, apps and fronts a target needs for these stacks."""
    try:
        return needs(stacks)
    except StackError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def bench_instance_checks(stacks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A request and expected body for every app server instance of every stack."""
    try:
        return instance_checks(stacks)
    except StackError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def bench_front_checks(stacks: list[dict[str, Any]], host: str) -> list[dict[str, Any]]:
    """A request and expected body for every stack's public port on ``host``."""
    try:
        return front_checks(stacks, host)
    except StackError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def bench_capacity_warnings(
    cells: list[dict[str, Any]], target: dict[str, Any] | None, loadgen: dict[str, Any] | None
) -> list[str]:
    """Warnings when the experiment's connection counts exceed the hosts' backlog or open-files limits."""
    return capacity_warnings(cells, target, loadgen)


def bench_loadgen_targets(
    loadgens: list[str], targets: list[str], hostvars: Any, single: bool = True
) -> dict[str, str]:
    """Each loadgen's target (its bench_target, itself when it is a target, else the first target).

    ``single``: fail unless every loadgen loads the same target (one run measures one target)."""
    try:
        mapping = loadgen_targets(
            loadgens, targets, {lg: hostvars[lg].get("bench_target") for lg in loadgens if lg in hostvars}
        )
        if single:
            check_one_load_per_target(mapping)
    except TopologyError as exc:
        raise AnsibleFilterError(str(exc)) from exc
    return mapping


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "bench_stacks": bench_stacks,
            "bench_stack_needs": bench_stack_needs,
            "bench_instance_checks": bench_instance_checks,
            "bench_front_checks": bench_front_checks,
            "bench_capacity_warnings": bench_capacity_warnings,
            "bench_loadgen_targets": bench_loadgen_targets,
        }
