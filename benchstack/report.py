"""Reports of a run folder: report.md (summary + table) and cells.csv.

The report is a list of sections (:data:`SECTIONS`), each a function of the :class:`RunData`; plots can be
added as one more section that writes its PNG files next to report.md and returns the Markdown that shows
them.
"""

from __future__ import annotations

import csv
import json
import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchstack.cell import FIELDS, load_cells
from benchstack.model import ERROR_KINDS, LATENCY_KEYS

COLUMNS = ("stack", "tool", "conc", "n", "req/s", "mean ms", "p50 ms", "p99 ms", "errors", "error rate")


@dataclass
class RunData:
    run_dir: Path
    cells: list[dict[str, Any]]
    run_info: dict[str, Any] | None


def _group_key(cell: dict[str, Any]) -> tuple[str, str, bool, int]:
    return (
        str(cell.get("stack") or "-"),
        str(cell["tool"]),
        bool(cell.get("keepalive")),
        int(cell["concurrency"]),
    )


def _tool_label(tool: str, keepalive: bool) -> str:
    return f"{tool} -k" if keepalive and tool == "ab" else tool


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _errors_cell(cells: list[dict[str, Any]]) -> str:
    total = sum(int(c.get("error_count") or 0) for c in cells)
    kinds: dict[str, int] = {}
    for c in cells:
        for kind in ERROR_KINDS:
            n = (c.get("errors") or {}).get(kind)
            if n:
                kinds[kind] = kinds.get(kind, 0) + n
    if not kinds:
        return str(total)
    return f"{total} ({', '.join(f'{k} {n}' for k, n in kinds.items())})"


def summary_rows(cells: list[dict[str, Any]]) -> list[dict[str, str]]:
    """One row per (stack, tool, keep-alive, concurrency): medians over repetitions, error sums."""
    groups: dict[tuple[str, str, bool, int], list[dict[str, Any]]] = {}
    for cell in cells:
        groups.setdefault(_group_key(cell), []).append(cell)
    rows = []
    for key in sorted(groups):
        stack, tool, keepalive, conc = key
        group = groups[key]
        lat = [c.get("latency_ms") or {} for c in group]
        rates = [float(c.get("error_rate") or 0.0) for c in group]
        rows.append(
            {
                "stack": stack,
                "tool": _tool_label(tool, keepalive),
                "conc": str(conc),
                "n": str(len(group)),
                "req/s": _fmt(_median([c.get("rps") for c in group])),
                "mean ms": _fmt(_median([x.get("mean") for x in lat])),
                "p50 ms": _fmt(_median([x.get("p50") for x in lat])),
                "p99 ms": _fmt(_median([x.get("p99") for x in lat])),
                "errors": _errors_cell(group),
                "error rate": f"{100 * statistics.fmean(rates):.2f}%",
            }
        )
    return rows


def summary_table(cells: list[dict[str, Any]]) -> str:
    """A Markdown table of the cells, sorted by stack, tool and concurrency; repetitions are aggregated:
    req/s and latencies are medians over the n repetitions, errors are summed, the error rate is the mean."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for row in summary_rows(cells):
        lines.append("| " + " | ".join(row[c].replace("|", "\\|") for c in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def _read_run_info(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / "run.json"
    if not path.is_file():
        return None
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from exc
    return info if isinstance(info, dict) else None


def _distinct(cells: list[dict[str, Any]], key: str) -> str:
    values = sorted({str(c[key]) for c in cells if c.get(key) is not None})
    return ", ".join(values) if values else "-"


def section_summary(run: RunData) -> str:
    info = run.run_info or {}
    exp = info.get("experiment")
    name = exp.get("name") if isinstance(exp, dict) else exp
    lines = [f"# bench-stack report: {name or _distinct(run.cells, 'experiment')}", ""]
    hosts = info.get("hosts")
    if isinstance(hosts, dict):
        host_text = ", ".join(f"{role}: {_host_name(h)}" for role, h in hosts.items())
    else:
        host_text = f"target: {_distinct(run.cells, 'target')}, loadgen: {_distinct(run.cells, 'loadgen')}"
    lines += [
        f"- run: `{run.run_dir.name}`",
        f"- hosts: {host_text}",
        f"- mode: {info.get('mode') or _distinct(run.cells, 'mode')}",
        f"- cells: {len(run.cells)}",
    ]
    if info.get("bench_stack_version"):
        lines.append(f"- bench-stack: {info['bench_stack_version']}")
    return "\n".join(lines) + "\n"


def _host_name(host: object) -> str:
    if isinstance(host, dict):
        return str(host.get("name") or host.get("hostname") or "?")
    if isinstance(host, list):
        return ", ".join(_host_name(h) for h in host)
    return str(host)


def section_table(run: RunData) -> str:
    return (
        "## Results\n\n"
        + summary_table(run.cells)
        + "\nreq/s and latency: median over the n repetitions; errors: sum, with the tool's own counters in "
        "brackets (ab counts one bad request under several of them); error rate: mean over repetitions.\n"
    )


def section_notes(run: RunData) -> str:
    notes: dict[str, list[str]] = {}
    for cell in run.cells:
        for note in cell.get("notes") or []:
            notes.setdefault(note, []).append(str(cell.get("stack") or "-"))
    if not notes:
        return ""
    lines = ["## Notes from the parsers", ""]
    for note, stacks in notes.items():
        lines.append(f"- {note} ({len(stacks)} cells: {', '.join(sorted(set(stacks)))})")
    return "\n".join(lines) + "\n"


SECTIONS: list[Callable[[RunData], str]] = [section_summary, section_table, section_notes]


def render_report(run: RunData) -> str:
    return "\n".join(part for part in (section(run) for section in SECTIONS) if part)


CSV_COLUMNS: tuple[str, ...] = tuple(
    [f for f in FIELDS if f not in ("latency_ms", "errors", "notes")]
    + [f"latency_{k}_ms" for k in LATENCY_KEYS]
    + [f"errors_{k}" for k in ERROR_KINDS]
)


def _csv_row(cell: dict[str, Any]) -> dict[str, Any]:
    row = {k: cell.get(k) for k in FIELDS if k not in ("latency_ms", "errors", "notes")}
    if isinstance(row.get("command"), list):
        row["command"] = " ".join(row["command"])
    for k in LATENCY_KEYS:
        row[f"latency_{k}_ms"] = (cell.get("latency_ms") or {}).get(k)
    for k in ERROR_KINDS:
        row[f"errors_{k}"] = (cell.get("errors") or {}).get(k)
    return {k: "" if v is None else v for k, v in row.items()}


def write_csv(path: Path, cells: list[dict[str, Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for cell in sorted(cells, key=lambda c: (*_group_key(c), c.get("repetition") or 0)):
            writer.writerow(_csv_row(cell))


def write_report(run_dir: str | os.PathLike[str]) -> Path:
    """Write ``report.md`` and ``cells.csv`` into the run folder; returns the path of report.md."""
    directory = Path(run_dir)
    run = RunData(directory, load_cells(directory), _read_run_info(directory))
    report = directory / "report.md"
    report.write_text(render_report(run), encoding="utf-8")
    write_csv(directory / "cells.csv", run.cells)
    return report
