"""The cell: one load point measured once (one repetition), stored as one JSON object (bench-stack/cell/v2).

The format is published as ``benchstack/schemas/cell.schema.json`` and documented field by field in
docs/results-format.md; :func:`validate_cell` checks with that file (:mod:`benchstack.results.formats`).

A cell is written once, atomically, into ``<run>/cells/<cell_id>.json`` and never edited afterwards. Beyond
the first design's fields (experiment, stack, hosts and mode, tool and version, command, url, concurrency,
requests or duration, repetition, start, elapsed seconds, requests completed, req/s, bytes, latency in ms,
errors by kind, error rate, threshold_ms, raw output; docs/results-format.md, "A cell", lists them all), v1
carries ``keepalive`` (part of the load point), ``keepalive_requests`` (ab -k: how many requests really reused
a connection), ``error_count`` (distinct failed requests, see :mod:`benchstack.records.model`), ``status`` and
``notes`` (what the parser saw that a reader should know), and ``system``: CPU averages taken during the cell
(:mod:`benchstack.results.sysstats`) as ``{"loadgen": {...} | null, "target": {...} | null}``. ``system`` was
added after the first v1 cells were written, so a cell without it is still valid v1 (read as null). Beside
``raw/<cell>.txt`` a cell may have ``raw/<cell>.vmstat.txt`` (vmstat during the cell) and
``raw/<cell>.requests.tsv`` (ab -g: one line per request). ``merged`` (also optional, null for one loadgen)
marks a cell merged from several loadgens' cells (:mod:`benchstack.measure.merge`). v2 made ``interference``
and ``disturbed`` required (:mod:`benchstack.measure.interference`); a v1 cell, written before interference
was measured, is read as undisturbed.

Latency distributions (issue 15) are v1 too, as optional additions: ``latency_dist`` (every sample of the
cell as sparse ``[value_us, count]`` pairs, :mod:`benchstack.records.distribution`), ``window`` (when the load
tool started and ended, on the loadgen's clock, to the millisecond: what a merge cuts to) and the tail
percentiles ``p99.9`` and ``p99.99`` in ``latency_ms``. Why not v2: nothing that v1 had changes name, type or
meaning; a cell without them (every cell written before) is still valid and reads the same, and every
reader of v1 (report, compare, cells.csv, jq) reads the new cells unchanged, taking what it knows. A v2
would make every consumer accept two schema names for cells that differ only by what they add, the way
``system``, ``rate`` and ``merged`` were added to v1 before. Cells are written with the distribution's
pairs ten to a line (:func:`dumps_cell`): a cell grows by 1 to 30 KB (scripts/measure-latency-dist.py).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from benchstack.kinds.loadtools import find
from benchstack.records import distribution
from benchstack.records.cellparts import (
    Interference,
    JsonObject,
    Latency,
    Merged,
    SystemStats,
    Window,
    keys_field,
    part,
)
from benchstack.records.cellplan import CellPlan
from benchstack.records.model import Parsed
from benchstack.results import formats
from benchstack.results.files import read_json_and_digest
from benchstack.results.layout import CELLS_DIR

SCHEMA = "bench-stack/cell/v2"
# Earlier cells still read as they are: no interference was measured and none was left out.
READ_SCHEMAS = (SCHEMA, "bench-stack/cell/v1")
MODES = ("loopback", "network")
STATUSES = ("ok",)


class CellExistsError(FileExistsError):
    """A cell file with this id is already stored; cells are never overwritten."""


@dataclass
class Cell(JsonObject):
    """A cell, typed: read from its JSON only by :meth:`Cell.from_dict` (:func:`read_cell`, a loadgen's cell
    in a merge), written only by :meth:`Cell.to_dict` (:func:`write_cell`) in the order it was read
    (``json_keys``); a key the JSON left out (a field added to v1 later) stays out and reads as the schema
    documents: no ``system``, ``interference`` or ``window``, not ``disturbed``."""

    schema: str
    experiment: str | None
    stack: str | None
    target: str | None
    loadgen: str | None
    mode: str | None
    tool: str
    tool_version: str | None
    command: list[str] | str | None
    url: str | None
    concurrency: int
    keepalive: bool | None
    requests: int | None
    duration_s: int | None
    repetition: int | None
    started_at: str | None
    elapsed_s: float | None
    requests_completed: int
    rps: float
    transfer_bytes: int
    latency_ms: Latency = part(Latency, required=True)
    errors: dict[str, int | None] = field(default_factory=dict)
    error_count: int = 0
    error_rate: float = 0.0
    keepalive_requests: int | None = None
    threshold_ms: float | None = None
    raw_output: str | None = None
    status: str = "ok"
    notes: list[str] = field(default_factory=list)
    system: SystemStats | None = part(SystemStats)
    # Open-loop tools only: the offered requests per second (``concurrency`` is then the most connections
    # the tool saw open at once, an observation, not a setting).
    rate: int | None = None
    merged: Merged | None = part(Merged)
    latency_dist: dict[str, Any] | None = None
    window: Window | None = part(Window)
    # Set only where the id is not the one derived from the fields: a run with several targets, whose
    # cell ids start with the target (benchstack.plan.targets).
    cell_id: str | None = None
    # v2: the CPU time that was not ours during the cell (benchstack.measure.interference), and why the cell
    # is disturbed (left out of every statistic and measured again); empty when it is not.
    interference: Interference | None = part(Interference)
    disturbed: list[str] = field(default_factory=list)
    json_keys: tuple[str, ...] | None = keys_field()

    def distribution(self) -> distribution.Distribution | None:
        """The cell's latency distribution, or None (a cell from before distributions, or none measured)."""
        return None if self.latency_dist is None else distribution.from_dict(self.latency_dist)


FIELDS: tuple[str, ...] = tuple(Cell.json_fields())
# What the runner supplies; everything else comes from the parsed output.
META_FIELDS: tuple[str, ...] = (
    "experiment",
    "stack",
    "target",
    "loadgen",
    "mode",
    "command",
    "url",
    "requests",
    "duration_s",
    "repetition",
    "started_at",
    "elapsed_s",
    "threshold_ms",
    "raw_output",
    "system",
    "rate",
    "window",
    "cell_id",
    "interference",
    "disturbed",
)
# Fields a v1 cell may lack (added to v1 later, backward compatible).
OPTIONAL_FIELDS: tuple[str, ...] = (
    "system", "rate", "merged", "latency_dist", "window", "cell_id", "interference", "disturbed",
)  # fmt: skip
# Metadata a stored run's cell must carry (a cell printed by `bench-stack parse` may leave them null).
RUN_REQUIRED: tuple[str, ...] = (
    "experiment",
    "stack",
    "target",
    "loadgen",
    "mode",
    "command",
    "url",
    "repetition",
    "started_at",
    "raw_output",
)


# What the runner measured besides the tool's output, as JSON (vmstat's means, /proc/stat's CPU seconds, the
# loadgen's clock): read into the cell's records by make_cell.
_MEASURED_PARTS: dict[str, type[JsonObject]] = {
    "system": SystemStats,
    "window": Window,
    "interference": Interference,
}


def make_cell(parsed: Parsed, **meta: Any) -> Cell:
    """A cell from parsed tool output plus run metadata (any of :data:`META_FIELDS`; ``system``, ``window``
    and ``interference`` as their records or their JSON).

    ``concurrency``/``tool`` may also be passed; they must agree with what the tool printed. ``elapsed_s``
    defaults to the test time the tool measured; ``url`` to the one the tool printed.
    """
    for key, expected in (("tool", parsed.tool), ("concurrency", parsed.concurrency)):
        if key in meta:
            given = meta.pop(key)
            if given is not None and given != expected:
                raise ValueError(f"{key} given as {given!r} but the {parsed.tool} output says {expected!r}")
    unknown = sorted(set(meta) - set(META_FIELDS))
    if unknown:
        raise TypeError(f"make_cell() got unknown metadata: {', '.join(unknown)}")
    values: dict[str, Any] = dict.fromkeys(META_FIELDS)
    values.update(meta)
    if values["url"] is None:
        values["url"] = parsed.url
    if values["elapsed_s"] is None:
        values["elapsed_s"] = parsed.duration_s
    values["disturbed"] = list(values["disturbed"] or [])
    for key, kind in _MEASURED_PARTS.items():
        if isinstance(values[key], Mapping):
            values[key] = kind.from_dict(values[key])
    return Cell(
        schema=SCHEMA,
        tool=parsed.tool,
        tool_version=parsed.tool_version,
        concurrency=parsed.concurrency,
        keepalive=parsed.keepalive,
        requests_completed=parsed.requests_completed,
        rps=parsed.rps,
        transfer_bytes=parsed.transfer_bytes,
        latency_ms=Latency.from_dict(parsed.latency_ms),
        errors=dict(parsed.errors),
        error_count=parsed.error_count,
        error_rate=parsed.error_rate,
        keepalive_requests=parsed.keepalive_requests,
        notes=list(parsed.notes),
        latency_dist=parsed.latency_dist.to_dict() if parsed.latency_dist else None,
        **values,
    )


def cell_to_dict(cell: Cell) -> dict[str, Any]:
    """The cell's JSON (:meth:`Cell.to_dict`), copied: a change to it leaves the cell as it was."""
    return cell.to_dict()


def _safe(part: object) -> str:
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", str(part)).strip(".-")
    return text or "unknown"


def cell_id(
    stack: str, tool: str, level: int, repetition: int, keepalive: bool = False, open_loop: bool = False
) -> str:
    """``<stack>__<tool>__c<concurrency>__r<repetition>``, filename-safe; ab with keep-alive is ``ab-k``;
    an open-loop tool's level is its offered rate: ``<stack>__httperf__rate<req/s>__r<repetition>``.

    (wrk always keeps connections alive, so only ab has two variants.)
    """
    adapter = find(tool)
    tool_part = adapter.cell_part(keepalive) if adapter is not None else _safe(tool)
    level_part = f"rate{int(level)}" if open_loop else f"c{int(level)}"
    return f"{_safe(stack)}__{tool_part}__{level_part}__r{int(repetition)}"


def qualified_cell_id(target: str, cell_id: str) -> str:
    """``<target>__<cell_id>``: a cell's id in a run with several targets (:mod:`benchstack.plan.targets`)."""
    return f"{_safe(target)}__{cell_id}"


def load_level(cell: Cell) -> int:
    """A cell's load level: the offered rate when it has one (an open-loop tool; its concurrency is then only
    observed), else its concurrency."""
    return int(cell.rate if cell.rate is not None else cell.concurrency)


def _derived_id(d: Mapping[str, Any]) -> str:
    """:func:`derived_cell_id` of a cell's JSON, for its checks (before it is read into a :class:`Cell`)."""
    rate = d.get("rate")
    level = int(rate if rate is not None else d["concurrency"])
    return cell_id(d["stack"], d["tool"], level, d["repetition"], bool(d.get("keepalive")), rate is not None)


def derived_cell_id(cell: Cell) -> str:
    """The id a cell's own fields give (:func:`cell_id`): every cell's in a run with one target."""
    open_loop = cell.rate is not None
    return cell_id(
        str(cell.stack),
        cell.tool,
        load_level(cell),
        int(cell.repetition or 0),
        bool(cell.keepalive),
        open_loop,
    )


def planned_cell_id(plan: CellPlan) -> str:
    """The id a cell plan's own fields give (:func:`derived_cell_id`): the plan's ``cell_id`` without the
    target a run with several targets puts first."""
    level = plan.rate if plan.rate is not None else plan.concurrency
    if level is None:
        raise ValueError(f"{plan.cell_id}: the cell plan has neither a concurrency nor a rate")
    return cell_id(plan.stack, plan.tool, level, plan.repetition, plan.keepalive, plan.rate is not None)


def cell_id_of(cell: Cell) -> str:
    """A cell's id, its file name in ``cells/``: the ``cell_id`` it records (a run with several targets,
    where the id starts with the target: :mod:`benchstack.plan.targets`), else :func:`derived_cell_id`."""
    return cell.cell_id or derived_cell_id(cell)


def json_cell_id(d: Mapping[str, Any]) -> str:
    """:func:`cell_id_of` a cell's JSON, before it is read into a :class:`Cell` (its checks, its file)."""
    return str(d.get("cell_id") or _derived_id(d))


GroupKey = tuple[str, str, bool, int]


def group_key(cell: Cell) -> GroupKey:
    """(stack, tool, keep-alive, level): the load point whose repetitions are summarized together
    (:func:`load_level`)."""
    return (cell.stack or "-", cell.tool, bool(cell.keepalive), load_level(cell))


def planned_key(plan: CellPlan) -> GroupKey:
    """:func:`group_key` of the cell a plan measures; ValueError for a plan with no load level."""
    level = plan.rate if plan.rate is not None else plan.concurrency
    if level is None:
        raise ValueError(f"{plan.cell_id}: the cell plan has neither a concurrency nor a rate")
    return (plan.stack or "-", plan.tool, plan.keepalive, int(level))


def planned_point(plan: Mapping[str, Any]) -> GroupKey:
    """:func:`group_key` of a cell plan as run.json holds it (``experiment.cells``: older runs' plans may lack
    fields a :class:`CellPlan` has); KeyError, TypeError or ValueError when it names no load point."""
    rate = plan.get("rate")
    level = int(rate if rate is not None else plan["concurrency"])
    return (str(plan.get("stack") or "-"), str(plan["tool"]), bool(plan.get("keepalive")), level)


def level_label(tool: str, level: int) -> str:
    """``c100`` for 100 concurrent clients, ``500/s`` for an offered rate of 500 requests per second."""
    adapter = find(tool)
    return adapter.level_label(level) if adapter is not None else f"c{level}"


# ---------------------------------------------------------------- validation


def validate_cell(d: dict[str, Any], *, require_meta: bool = False) -> list[str]:
    """Problems with a cell dict; empty when valid. ``require_meta``: also demand run metadata.

    The published schema (``benchstack/schemas/cell.schema.json``, :mod:`benchstack.results.formats`) first,
    then what a schema cannot say: rules across fields, checked only on fields the schema accepted.
    """
    if not isinstance(d, dict):
        return [f"a cell must be a JSON object, not {type(d).__name__}"]
    found = formats.check(formats.CELL_SCHEMA_FILE, d, "a cell")
    problems = [p.message for p in found]
    bad = {p.field for p in found}

    def fine(*keys: str) -> bool:
        return all(k in d and k not in bad for k in keys)

    for key in ("started_at", "window"):
        if fine(key) and d[key] is not None:
            problems += _check_times(key, d[key])
    if fine("latency_dist") and d["latency_dist"] is not None:
        # Sorted, bucketed values whose counts add up: beyond a schema.
        source = find(d["latency_dist"].get("source"))
        problems += distribution.validate(d["latency_dist"], source.resolution if source else None)
    if fine("tool", "errors", "error_count"):
        problems += _check_error_count(d["errors"], d["error_count"])
    if fine("cell_id", "target", "stack", "tool", "repetition") and d["cell_id"] is not None:
        problems += _check_cell_id(d)
    if fine("error_count", "error_rate") and (d["error_count"] == 0) != (d["error_rate"] == 0):
        problems.append(
            f"error_rate must be 0 exactly when error_count is 0, not {d['error_rate']!r} "
            f"with error_count {d['error_count']}"
        )

    adapter = find(d.get("tool"))
    if adapter is not None and adapter.open_loop and require_meta:
        if d.get("rate") is None:
            problems.append(f"{d['tool']} is open loop: a stored cell needs its offered rate")
    if require_meta:
        for key in RUN_REQUIRED:
            if key in d and d[key] is None:
                problems.append(f"{key} must be set in a stored cell")
        if d.get("requests") is None and d.get("duration_s") is None:
            problems.append("a stored cell needs requests or duration_s (the configured load)")
    return problems


def _check_cell_id(d: dict[str, Any]) -> list[str]:
    """A recorded ``cell_id`` is the derived id after the cell's target, nothing else: a cell cannot be
    stored under another load point's name."""
    if d["target"] is None or d["repetition"] is None or d["stack"] is None:
        return ["cell_id needs the cell's target, stack and repetition"]
    try:
        derived = _derived_id(d)
    except (KeyError, TypeError, ValueError):
        return []  # the fields it is made of are wrong: reported on their own
    expected = qualified_cell_id(d["target"], derived)
    if d["cell_id"] != expected:
        given = d["cell_id"]
        return [f"cell_id must be {expected!r} (the target, then the id of the cell's fields), not {given!r}"]
    return []


def _check_times(key: str, value: Any) -> list[str]:
    """``started_at`` or ``window`` (already in the schema's UTC form): real dates, a window that does not
    end before it starts."""
    times = {key: value} if isinstance(value, str) else {f"{key}.{k}": v for k, v in value.items()}
    parsed = {}
    for name, text in times.items():
        try:
            parsed[name] = datetime.fromisoformat(text)
        except ValueError:
            return [f"{name} is not a real date and time: {text!r}"]
    if key == "window" and parsed["window.end"] < parsed["window.start"]:
        return ["window.end must not be before window.start"]
    return []


def _check_error_count(errors: dict[str, int | None], count: int) -> list[str]:
    """``error_count`` counts distinct failed requests: at least as many as any one counter (each counts
    distinct requests) and at most all of them together (some requests are in several,
    benchstack.records.model)."""
    counters = [v or 0 for v in errors.values()]
    low, high = max(counters, default=0), sum(counters)
    if low <= count <= high:
        return []
    return [
        f"error_count must be from {low} (the largest counter in errors) to {high} (their sum), not {count}"
    ]


# ---------------------------------------------------------------- storage


PAIRS_PER_LINE = 10


def dumps_cell(d: dict[str, Any]) -> str:
    """A cell as indented JSON, except the distribution's pairs: ten ``[value_us, count]`` to a line
    (indenting them element by element would make a cell four times larger)."""
    dist = d.get("latency_dist")
    if not isinstance(dist, dict) or not isinstance(dist.get("counts"), list):
        return json.dumps(d, indent=2) + "\n"
    marker = "__bench_stack_counts__"
    text = json.dumps({**d, "latency_dist": {**dist, "counts": marker}}, indent=2)
    counts = dist["counts"]
    indent = " " * 6
    # One encoding of the whole list, split between pairs ("[v,c],[v,c]" -> "v,c", "v,c").
    pairs = json.dumps(counts, separators=(",", ":"))[2:-2].split("],[")
    lines = [
        ",".join(f"[{pair}]" for pair in pairs[i : i + PAIRS_PER_LINE])
        for i in range(0, len(pairs), PAIRS_PER_LINE)
    ]
    body = f"[\n{indent}" + f",\n{indent}".join(lines) + "\n    ]" if counts else "[]"
    return text.replace(json.dumps(marker), body, 1) + "\n"


def write_cell(run_dir: str | os.PathLike[str], cell: Cell | Mapping[str, Any]) -> Path:
    """Store a cell (or a cell's JSON) as ``<run_dir>/cells/<cell_id>.json`` atomically; never overwrite
    (CellExistsError)."""
    d = cell.to_dict() if isinstance(cell, Cell) else dict(cell)
    problems = validate_cell(d)
    for key in ("stack", "repetition"):
        if d.get(key) is None:
            problems.append(f"{key} must be set to store a cell")
    if problems:
        raise ValueError("invalid cell: " + "; ".join(problems))
    directory = Path(run_dir) / CELLS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / f"{json_cell_id(d)}.json"
    if final.exists():
        raise CellExistsError(f"cell already stored, not overwriting: {final}")
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{final.stem}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(dumps_cell(d))
            fh.flush()
            os.fsync(fh.fileno())
        try:
            # link() publishes the complete file atomically and, unlike replace(), fails if the name exists.
            os.link(tmp, final)
        except FileExistsError:
            raise CellExistsError(f"cell already stored, not overwriting: {final}") from None
        except OSError:  # a filesystem without hard links: fall back to replace() after the check above
            if final.exists():
                raise CellExistsError(f"cell already stored, not overwriting: {final}") from None
            os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    return final


def cell_paths(run_dir: str | os.PathLike[str]) -> list[Path]:
    """Stored cell files of a run, sorted by name (temporary files of unfinished writes are skipped)."""
    directory = Path(run_dir) / CELLS_DIR
    if not directory.is_dir():
        return []
    return [p for p in sorted(directory.glob("*.json")) if not p.name.startswith(".")]


def stored_cell_problems(data: object, path: Path) -> list[str]:
    """Problems with the cell ``data`` read from the file ``path`` (:func:`read_json`, which bounds and
    names the file), the one check of a stored cell for every command (validate, report, compare, hist and
    the run's own readers): a valid cell with its run metadata (``require_meta``), stored under its own id.
    A cell under another name would be counted twice, or as another load point."""
    if not isinstance(data, dict):
        return validate_cell(data)  # type: ignore[arg-type]
    problems = validate_cell(data, require_meta=True)
    if not problems and json_cell_id(data) != path.stem:
        problems.append(f"file name should be {json_cell_id(data)}.json for this cell")
    return problems


# The stored cells read_cell found valid: (file name, sha256 of its bytes). A run's readers (the analysis,
# the report, history, the next round's repetitions) read each cell file several times in one process; a
# cell's validity depends only on its bytes and its name. Emptied when it reaches _VALID_STORED_MAX.
_valid_stored: set[tuple[str, bytes]] = set()
_VALID_STORED_MAX = 100_000


def read_cell(path: Path) -> Cell:
    """One stored cell, the one place a stored cell is read (:meth:`Cell.from_dict` after the schema). A
    file that cannot be read, is not JSON or is not a valid stored cell (:func:`stored_cell_problems`, what
    ``bench-stack validate`` refuses) raises ValueError: one line that names the file. The same bytes
    under the same name, found valid before in this process, are not checked again."""
    data, digest = read_json_and_digest(path, "a cell")
    key = (path.name, digest)
    if key not in _valid_stored:
        problems = stored_cell_problems(data, path)
        if problems:
            more = f" (and {len(problems) - 1} more; see bench-stack validate)" if len(problems) > 1 else ""
            raise ValueError(f"{path}: not a valid cell: {problems[0]}{more}")
        if len(_valid_stored) >= _VALID_STORED_MAX:
            _valid_stored.clear()
        _valid_stored.add(key)
    assert isinstance(data, dict)  # the schema checked it is an object
    return Cell.from_dict(data)


def load_cells(run_dir: str | os.PathLike[str]) -> list[Cell]:
    """All stored cells of a run, sorted by file name (:func:`read_cell`: a bad one raises ValueError)."""
    return [read_cell(path) for path in cell_paths(run_dir)]


def is_disturbed(cell: Cell) -> bool:
    """Whether a stored cell was disturbed (``disturbed`` lists why: foreign CPU, steal, an overrun, a restart
    or a unit's failure): it is kept as evidence and measured again, and no statistic, comparison or verdict
    limit counts it."""
    return bool(cell.disturbed)


# A cell whose req/s is below this share of the median of its load point's undisturbed cells collapsed (a
# stalled, restarting or failing stack; docs/how-it-works.md): left out and measured again like a disturbed
# cell. The median of at least COLLAPSE_MIN_CELLS cells (itself among them), so one bad cell cannot move it.
COLLAPSE_SHARE = 0.25
COLLAPSE_MIN_CELLS = 3
COLLAPSE_REASON = "collapse:"


def collapsed(cells: Sequence[Cell]) -> dict[int, str]:
    """Why each collapsed cell of ``cells`` collapsed, by ``id(cell)``: its req/s below
    :data:`COLLAPSE_SHARE` of the median req/s of the undisturbed cells of its target's load point.

    Judged whenever cells are read, not stored in the cell (cells are never edited): a cell measured later
    can show that an earlier one collapsed."""
    groups: dict[tuple[str, GroupKey], list[Cell]] = {}
    for c in cells:
        if not is_disturbed(c):
            groups.setdefault((c.target or "-", group_key(c)), []).append(c)
    found = {}
    for group in groups.values():
        if len(group) < COLLAPSE_MIN_CELLS:
            continue
        median = statistics.median(float(c.rps) for c in group)
        for c in group:
            if float(c.rps) < COLLAPSE_SHARE * median:
                found[id(c)] = (
                    f"{COLLAPSE_REASON} {float(c.rps):.1f} req/s, below {100 * COLLAPSE_SHARE:g} % of the "
                    f"median {median:.1f} req/s of the load point's {len(group)} counted cells"
                )
    return found


def left_out(cells: Sequence[Cell]) -> list[tuple[Cell, list[str]]]:
    """The cells no statistic counts, each with why: disturbed (stored reasons) or collapsed
    (:func:`collapsed`), in the order of ``cells``."""
    fallen = collapsed(cells)
    out = []
    for c in cells:
        if is_disturbed(c):
            out.append((c, [str(r) for r in c.disturbed]))
        elif id(c) in fallen:
            out.append((c, [fallen[id(c)]]))
    return out


def counted(cells: Sequence[Cell]) -> list[Cell]:
    """The cells every statistic counts: neither disturbed (:func:`is_disturbed`) nor collapsed against
    their load point's others (:func:`collapsed`)."""
    fallen = collapsed(cells)
    return [c for c in cells if not is_disturbed(c) and id(c) not in fallen]


def window_span(cell: Cell) -> tuple[float, float] | None:
    """The cell's ``window`` as (start, end) epoch seconds, or None without one."""
    return None if cell.window is None else cell.window.span()


def window_start(cell: Cell) -> float | None:
    """When the cell's measured window began (``window.start``, to the millisecond; else ``started_at``, to
    the second), as a POSIX time; None when the cell records neither."""
    when = cell.window.start if cell.window is not None else cell.started_at
    if when is None:
        return None
    try:
        return datetime.fromisoformat(when.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
