"""The access logs a run shipped (an experiment's ``logs``, :mod:`benchstack.plan.logship`): which objects of
the store hold them, how many lines they hold against the requests the cells made, and the report's section
that says so, with the cost of shipping on the target.

run.json's ``log_shipping`` (benchstack.plan.resolved.run_record) names the bucket and the run's own prefix.
After measuring, the report step lists the objects under that prefix and counts the lines in each (gzip
objects of one JSON record per access-log line, as the log_shipper role's ``out_s3`` writes them):
:func:`collect` adds ``objects``, ``lines``, ``lines_in_cells`` (the lines logged while a cell of a shipped
stack was measured: its window, to the second, as the fronts log the time) and ``listed_at`` to run.json, or
``problem`` when the store could not be read. Best effort: a store that does not answer is a line in the
report and a warning, never a failed run. boto3 is imported inside the call (benchstack.history.publish),
so the report alone does not load it.
"""

from __future__ import annotations

import gzip
import json
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchstack.report.model import CODE, STRONG, Paragraph, Section, Span, text
from benchstack.results.cell import Cell
from benchstack.results.location import shown
from benchstack.results.runfolder import update_run_json

# The report step waits at most this long for fluentd's last upload (benchmark.yml flushes its buffer when
# measuring ends; an upload takes a second or two), listing the prefix again every POLL_S.
WAIT_S = 20.0
POLL_S = 2.0
# An object larger than this, gunzipped, is counted up to here only (a run's slice is a few MB at most).
MAX_OBJECT_BYTES = 256 * 1024 * 1024
# What shipping cost on the target, measured with scripts/measure-log-shipping.sh (docs/experiment.md).
COST_DOC = "docs/experiment.md#shipping-access-logs"

Window = tuple[float, float]


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def cell_windows(cells: Iterable[Cell], stacks: Iterable[str]) -> list[Window]:
    """When each cell of the shipped ``stacks`` was measured, as whole seconds: from the second its window
    (else ``started_at``) began to the second it ended (else ``started_at + elapsed_s``), which is how
    finely a front logs the time of a request."""
    names = set(stacks)
    out: list[Window] = []
    for cell in cells:
        if cell.stack not in names:
            continue
        try:
            if cell.window is not None:
                start, end = _seconds(cell.window.start), _seconds(cell.window.end)
            else:
                start = _seconds(str(cell.started_at))
                end = start + float(cell.elapsed_s or 0)
        except ValueError:
            continue
        out.append((float(int(start)), float(int(end))))
    return out


def requests_made(cells: Iterable[Cell], stacks: Iterable[str]) -> int:
    """The requests the cells of the shipped ``stacks`` completed, disturbed cells included (their requests
    reached the front as well)."""
    names = set(stacks)
    return sum(c.requests_completed for c in cells if c.stack in names)


def count_lines(body: bytes, windows: list[Window]) -> tuple[int, int]:
    """The access-log lines of one gzip object, and those whose time falls in one of ``windows``."""
    data = zlib.decompressobj(wbits=31).decompress(body, MAX_OBJECT_BYTES)
    lines = in_cells = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        lines += 1
        if not windows:
            continue
        try:
            stamp = json.loads(line).get("time")
            moment = _seconds(str(stamp))
        except (ValueError, AttributeError):
            continue
        if any(start <= moment <= end for start, end in windows):
            in_cells += 1
    return lines, in_cells


def list_objects(store: Any, bucket: str, prefix: str, windows: list[Window]) -> dict[str, Any]:
    """The objects under ``prefix`` with the lines each holds (``store``: a
    :class:`benchstack.history.publish.Store`), and their sums."""
    objects, lines, in_cells = [], 0, 0
    pages = store.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    for page in pages:
        for item in page.get("Contents", []):
            key, size = str(item["Key"]), int(item["Size"])
            body = store.client.get_object(Bucket=bucket, Key=key)["Body"].read()
            try:
                n, k = count_lines(body, windows)
            except (zlib.error, EOFError, gzip.BadGzipFile):
                objects.append({"key": key, "size": size, "lines": None})
                continue
            objects.append({"key": key, "size": size, "lines": n})
            lines += n
            in_cells += k
    return {"objects": objects, "lines": lines, "lines_in_cells": in_cells if windows else None}


def collect(
    run_dir: str | Path,
    cells: list[Cell],
    opener: Callable[[str | None], Any] | None = None,
    wait_s: float = WAIT_S,
    poll_s: float = POLL_S,
) -> dict[str, Any] | None:
    """List the run's shipped objects and count their lines into run.json's ``log_shipping`` (returned);
    None when the run ships nothing. Waits up to ``wait_s`` for the lines of every request the cells made
    (fluentd's last upload), no longer. Never raises for the store: its problem is recorded instead.
    ``opener``: endpoint -> store (default :func:`benchstack.history.publish.open_store`)."""
    path = Path(run_dir) / "run.json"
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    shipping = info.get("log_shipping") if isinstance(info, dict) else None
    if not isinstance(shipping, dict):
        return None
    stacks = list(shipping.get("stacks") or [])
    windows = cell_windows(cells, stacks)
    wanted = requests_made(cells, stacks)
    found: dict[str, Any]
    try:
        if opener is None:
            from benchstack.history.publish import open_store

            opener = open_store
        store = opener(shipping.get("endpoint"))
        deadline = time.monotonic() + wait_s
        while True:
            found = _listed(store, shipping, windows)
            # The cells' own lines: warm-ups' lines would make up for the last upload's.
            arrived = found["lines_in_cells"] if windows else found["lines"]
            if arrived >= wanted or time.monotonic() + poll_s > deadline:
                break
            time.sleep(poll_s)
        found["problem"] = None
    except Exception as exc:  # noqa: BLE001 - best effort: any failure of the store is a line, not a failed run
        why = store_problem(exc)
        found = {"objects": None, "lines": None, "lines_in_cells": None, "problem": why}
    found["listed_at"] = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    if found["objects"] is None:
        found.pop("objects")

    def put(d: dict[str, Any]) -> None:
        d["log_shipping"] = {**(d.get("log_shipping") or shipping), **found}

    update_run_json(Path(run_dir), put, create=False)
    return {**shipping, **found}


def _listed(store: Any, shipping: Mapping[str, Any], windows: list[Window]) -> dict[str, Any]:
    try:
        return list_objects(store, str(shipping["bucket"]), str(shipping["run_prefix"]), windows)
    except Exception as exc:
        if hasattr(store, "error"):
            raise store.error(exc, f"listing s3://{shipping['bucket']}/{shipping['run_prefix']}") from None
        raise


def store_problem(exc: BaseException) -> str:
    """One line for what went wrong, a URL's credentials masked (a StoreError masks the keys in use)."""
    return shown(str(exc).splitlines()[0]) if str(exc) else type(exc).__name__


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def section(run_info: Mapping[str, Any] | None, cells: list[Cell]) -> Section | None:
    """The report's "Access-log shipping" section; None in a run that shipped nothing."""
    shipping = (run_info or {}).get("log_shipping")
    if not isinstance(shipping, dict):
        return None
    stacks = list(shipping.get("stacks") or [])
    where = f"s3://{shipping.get('bucket')}/{shipping.get('run_prefix')}"
    endpoint = shipping.get("endpoint")
    blocks = [
        Paragraph(
            text(
                "fluentd shipped the access logs of ",
                " and ".join(shipping.get("fronts") or []) or "the fronts",
                " to ",
                Span(where, CODE),
                f" (at {endpoint})." if endpoint else ".",
            )
        ),
        Paragraph(
            text(
                Span("Measured with shipping on:", STRONG),
                " " + (", ".join(stacks) or "no stack"),
                f" ({sum(1 for c in cells if c.stack in set(stacks))} cells). Their fronts logged "
                "every request and fluentd tailed and uploaded the log on the target, which costs the "
                f"target CPU: compare them only with runs that ship too ({COST_DOC}).",
            )
        ),
    ]
    made = requests_made(cells, stacks)
    if shipping.get("problem"):
        blocks.append(Paragraph(text(f"The store could not be read: {shipping['problem']}.")))
    elif shipping.get("lines") is not None:
        objects = shipping.get("objects") or []
        unread = sum(1 for o in objects if o.get("lines") is None)
        lines, in_cells = int(shipping["lines"]), shipping.get("lines_in_cells")
        counted = f"{lines:,} access-log lines in {len(objects)} objects"
        if unread:
            counted += f" ({unread} not gzip, not counted)"
        compared = f"; the cells completed {made:,} requests"
        if in_cells is not None:
            compared += (
                f", and {int(in_cells):,} lines fall in their windows ({_share(int(in_cells), made)} of "
                "them; the rest are warm-ups, checks and probes)"
            )
        blocks.append(Paragraph(text(counted + compared + ".")))
    else:
        blocks.append(Paragraph(text("The store was not listed (the report was written without it).")))
    return Section("Access-log shipping", tuple(blocks))
