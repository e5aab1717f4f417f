"""Loopback hosts: the load tool and the stacks on disjoint CPUs.

When one host runs both the load tool and the stacks (loopback mode), they compete for the same cores and
each number partly measures the other. With ``bench_cpu_split: auto`` (the default is ``off``) and at least
2 CPUs, the load tool runs on the first half of the CPUs (``taskset -c``) and every stack service (app server
units, nginx, Apache instances) on the rest (systemd ``CPUAffinity=``); the split is recorded in the
fingerprint. ``off`` leaves the scheduler alone.
"""

from __future__ import annotations

SETTINGS = ("auto", "off")


def cpulist(first: int, last: int) -> str:
    """A CPU list as taskset and systemd take it: ``3`` or ``2-3``."""
    return str(first) if first == last else f"{first}-{last}"


def cpu_split(vcpus: int, setting: str, loopback: bool) -> dict[str, str] | None:
    """``{"loadgen_cpus": ..., "stack_cpus": ...}`` for a loopback host with at least 2 CPUs and the
    setting ``auto``; None otherwise (network mode, one CPU, or ``off``)."""
    if setting not in SETTINGS:
        raise ValueError(f"bench_cpu_split must be one of {', '.join(SETTINGS)}, not {setting!r}")
    if setting == "off" or not loopback or vcpus < 2:
        return None
    tool = max(1, vcpus // 2)
    return {"loadgen_cpus": cpulist(0, tool - 1), "stack_cpus": cpulist(tool, vcpus - 1)}
