"""Cells the tests write as JSON, read into :class:`benchstack.results.cell.Cell` records as a stored cell is
(:meth:`Cell.from_dict`): whole, or only the fields a test is about (the others a valid cell's)."""

from collections.abc import Iterable
from typing import Any

from benchstack.results.cell import Cell

# A cell's fields where a test leaves them out: one ab load point, measured once, without errors, and no
# metadata (a test that reads a field sets it: an absent start, target or mode changes what is judged).
CELL_BASE: dict[str, Any] = {
    "schema": "bench-stack/cell/v2",
    **dict.fromkeys(("experiment", "stack", "target", "loadgen", "mode", "tool_version", "command", "url")),
    "tool": "ab",
    "concurrency": 1,
    "keepalive": False,
    **dict.fromkeys(("requests", "duration_s", "repetition", "started_at", "elapsed_s")),
    "requests_completed": 100,
    "rps": 100.0,
    "transfer_bytes": 0,
    "latency_ms": {"mean": None, "stdev": None, "min": None, "max": None, "p50": None, "p75": None,
                   "p90": None, "p99": None},
    "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0, "status": 0, "length": 0, "exceptions": 0,
               "over_threshold": None},
    "error_count": 0,
    "error_rate": 0.0,
    "keepalive_requests": None,
    "threshold_ms": None,
    "raw_output": None,
    "status": "ok",
    "notes": [],
}  # fmt: skip


def record(fields: dict[str, Any]) -> Cell:
    """The Cell of a cell written as JSON, whole or in part (:data:`CELL_BASE` fills the rest)."""
    return Cell.from_dict({**CELL_BASE, **fields})


def records(cells: Iterable[dict[str, Any]]) -> list[Cell]:
    """:func:`record` of each."""
    return [record(c) for c in cells]


def merged_json(cells: Iterable[dict[str, Any]], requests: Any = None) -> dict[str, Any]:
    """:func:`benchstack.measure.merge.merge_cells` of loadgens' cells written as JSON, as its JSON."""
    from benchstack.measure.merge import merge_cells

    return merge_cells(records(cells), requests).to_dict()
