"""System statistics taken during a cell: ``vmstat -n 1`` on the loadgen (procps, on every supported distro).

The runner starts vmstat just before the measured command and stops it right after, so the samples are the
cell's (the warm-up is not in them). vmstat's first line is the average since boot and is left out; every
later line is one second. CPU figures are the mean of the per-second percentages; ``cpu_idle_median`` is the
median of the per-second idle percentages, which a second or two of start-up or tear-down does not move (the
verdict's saturated-loadgen check reads it, :mod:`benchstack.analysis.checks.hosts`).
"""

from __future__ import annotations

import statistics
from typing import Any

from benchstack.records.cellparts import Vmstat

# procps vmstat columns; `st` (steal) and `gu` (guest, procps-ng 4.0.x) are not printed everywhere.
CPU_COLUMNS = {"us": "cpu_user", "sy": "cpu_system", "id": "cpu_idle", "wa": "cpu_iowait", "st": "cpu_steal"}


def parse_vmstat(text: str) -> dict[str, Any] | None:
    """Averages of the per-second samples, or None when vmstat printed none (a run shorter than a second)."""
    header: list[str] | None = None
    rows: list[list[int]] = []
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        if fields[0] == "r" and "us" in fields:
            header = fields
            continue
        if header and len(fields) == len(header) and all(f.isdigit() for f in fields):
            rows.append([int(f) for f in fields])
    samples = rows[1:]  # the first line is the average since boot
    if header is None or not samples:
        return None
    result: dict[str, Any] = {"samples": len(samples)}
    for column, name in CPU_COLUMNS.items():
        if column in header:
            i = header.index(column)
            result[name] = round(statistics.fmean(r[i] for r in samples), 2)
    idle = header.index("id")
    result["cpu_idle_median"] = float(statistics.median(r[idle] for r in samples))
    for column, name in (("r", "run_queue"), ("cs", "context_switches_s"), ("in", "interrupts_s")):
        i = header.index(column)
        result[name] = round(statistics.fmean(r[i] for r in samples), 2)
    return result


def vmstat_means(text: str | None) -> Vmstat | None:
    """:func:`parse_vmstat` as a cell's record, None without a sample (or without vmstat's output)."""
    means = parse_vmstat(text) if text else None
    return None if means is None else Vmstat.from_dict(means)
