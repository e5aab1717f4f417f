"""Filters for host checks: kernel settings (host tuning) and a loopback host's CPU split, which need the
host's facts."""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleFilterError

from benchstack.plan import cpusplit
from benchstack.provision import tuning


def bench_sysctl_values(stdout: str, names: list[str]) -> dict[str, str | None]:
    """Values from one ``sysctl NAME...`` run's output; None where a key cannot be read."""
    return tuning.read_values(list(names), stdout)


def bench_sysctl_to_write(wanted: dict[str, Any], current: dict[str, str | None]) -> list[dict[str, str]]:
    """Settings present here whose value differs from the wanted one."""
    return tuning.to_write(wanted, current)


def bench_sysctl_record(
    wanted: dict[str, Any],
    original: dict[str, str | None],
    after: dict[str, str | None],
    writes: list[dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per setting: wanted, original, value now, set or skipped (with the reason)."""
    return tuning.sysctl_record(wanted, original, after, writes or [])


def bench_sysctl_restore(
    original: dict[str, str | None], current: dict[str, str | None]
) -> list[dict[str, str]]:
    """Settings to put back to their original value."""
    return tuning.restore_list(original, current)


def bench_nofile_record(session: dict[str, Any], user: str, wanted: int) -> dict[str, Any]:
    """The benchmark user's open-files limit as a session really gets it, set or skipped."""
    return tuning.nofile_record(user, int(wanted), session)


def bench_cpu_split(vcpus: Any, setting: str, loopback: bool) -> dict[str, str] | None:
    """The loopback host's CPU split (load tool vs stacks), or None (benchstack.plan.cpusplit)."""
    try:
        return cpusplit.cpu_split(int(vcpus), str(setting), bool(loopback))
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "bench_cpu_split": bench_cpu_split,
            "bench_sysctl_values": bench_sysctl_values,
            "bench_sysctl_to_write": bench_sysctl_to_write,
            "bench_sysctl_record": bench_sysctl_record,
            "bench_sysctl_restore": bench_sysctl_restore,
            "bench_nofile_record": bench_nofile_record,
        }
