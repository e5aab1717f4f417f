"""The run's CSV files, views of the same records the report reads (docs/results-format.md#csv-files), and
with cells.csv the cells' HdrHistogram logs (:mod:`benchstack.report.hdrlog`).

cells.csv: one row per cell, one column per field path of the published cell schema, in its order: an
object with fixed keys is flattened (``latency_ms.p50``, ``system.loadgen.cpu_idle``), a list or an object
with open keys (``notes``, ``interference.hosts``, ``merged.per_loadgen``) is one column of JSON; null is
empty, booleans ``true``/``false``. The distribution stays in the cell JSON (bench-stack hist exports it as
CSV; hdr/<cell id>.hlog holds it for HdrHistogram's tools). ``cell_id`` is every cell's id and
``disturbed`` lists why a cell is left out, collapsed ones too.

loadpoints.csv: one row per load point and target, the figures the report shows: the verdict's load points
and the comparisons as run.json holds them, the results table's latency medians and error rate unrounded.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from benchstack.analysis.comparison import Comparison
from benchstack.analysis.summary import loadpoint_rows
from benchstack.analysis.verdict import Verdict
from benchstack.plan.targets import target_of
from benchstack.report.hdrlog import write_hdr_logs
from benchstack.results.cell import Cell, cell_id_of, group_key, left_out
from benchstack.results.formats import CELL_SCHEMA_FILE, load_schema
from benchstack.results.layout import CELLS_CSV

_NOT_IN_CSV = ("latency_dist",)


def _resolved(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _resolved(schema, schema["$defs"][ref.removeprefix("#/$defs/")])
    return node


def _field_paths(
    schema: dict[str, Any], node: dict[str, Any], prefix: tuple[str, ...]
) -> list[tuple[str, ...]]:
    node = _resolved(schema, node)
    properties = node.get("properties")
    if not isinstance(properties, dict) or not properties:
        return [prefix]
    return [p for k, sub in properties.items() for p in _field_paths(schema, sub, (*prefix, k))]


def _csv_paths() -> tuple[tuple[str, ...], ...]:
    schema = load_schema(CELL_SCHEMA_FILE)
    return tuple(
        path
        for name, node in schema["properties"].items()
        if name not in _NOT_IN_CSV
        for path in _field_paths(schema, node, (name,))
    )


CSV_PATHS = _csv_paths()
CSV_COLUMNS: tuple[str, ...] = tuple(".".join(p) for p in CSV_PATHS)


def csv_value(value: object) -> object:
    """A value as a CSV cell: empty for null, ``true``/``false``, JSON for a list or an object."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return value


def _at(cell: dict[str, Any], path: tuple[str, ...]) -> object:
    value: object = cell
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _csv_row(cell: Cell, why: list[str] | None = None) -> dict[str, Any]:
    data = cell.to_dict()  # cells.csv flattens the cell's JSON, by the schema's paths
    row = {name: _at(data, path) for name, path in zip(CSV_COLUMNS, CSV_PATHS, strict=True)}
    row["cell_id"] = cell_id_of(cell)
    row["disturbed"] = [str(r) for r in why or cell.disturbed]
    return {k: csv_value(v) for k, v in row.items()}


def write_csv(path: Path, cells: list[Cell]) -> None:
    """cells.csv: every cell, disturbed and collapsed ones too (columns: :data:`CSV_COLUMNS`)."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        why = {id(c): reasons for c, reasons in left_out(cells)}
        for cell in sorted(cells, key=lambda c: (target_of(c), *group_key(c), c.repetition or 0)):
            writer.writerow(_csv_row(cell, why.get(id(cell))))


def write_cell_files(run_dir: Path, cells: list[Cell]) -> None:
    """The run's views of each cell: ``cells.csv`` (:func:`write_csv`) and ``hdr/<cell id>.hlog``
    (:func:`benchstack.report.hdrlog.write_hdr_logs`)."""
    write_csv(run_dir / CELLS_CSV, cells)
    write_hdr_logs(run_dir, cells)


LOADPOINT_COLUMNS: tuple[str, ...] = (
    "target", "stack", "tool", "keepalive", "level", "status", "counted", "disturbed",
    "median_rps", "ci_low", "ci_high", "precision",
    "latency_mean_ms", "latency_p50_ms", "latency_p99_ms", "error_count", "error_rate",
    "baseline", "state", "ratio", "low", "high", "pairs",
)  # fmt: skip


def write_loadpoints_csv(
    path: Path, cells: list[Cell], verdict: Verdict, comparisons: list[Comparison]
) -> None:
    """loadpoints.csv: :func:`loadpoint_rows` (columns: :data:`LOADPOINT_COLUMNS`)."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=LOADPOINT_COLUMNS)
        writer.writeheader()
        for row in loadpoint_rows(cells, verdict, comparisons):
            writer.writerow({k: csv_value(v) for k, v in row.items()})
