"""Several loadgens driving one target at the same time: one merged cell from each loadgen's cell.

Each loadgen measures the same load point at the same moment (benchmark.yml runs the cell on all of them
together and the bench_cell action starts the measured runs at a shared barrier, after each one's warm-up).
Each loadgen's cell is stored as it was measured, under ``loadgens/<loadgen>/`` in the run folder, with its
raw output; the merged cell goes where a single loadgen's cell would (``cells/<cell_id>.json``), so reports,
repetitions and compare read it like any cell. What the merge does, field by field:

* throughput: ``rps``, ``requests_completed``, ``transfer_bytes``, ``requests``, errors and
  ``keepalive_requests`` are sums; ``error_rate`` is recomputed from the summed counters (same rule as one
  cell, :mod:`benchstack.records.model`). ``concurrency`` stays the load point's per-loadgen value (so
  repetitions and compare match it); the target saw ``merged.total_concurrency`` connections. An open-loop
  cell's load point is its offered ``rate`` (per loadgen; ``merged.total_rate`` is what the target was
  offered) and its ``concurrency`` the most connections any loadgen saw open;
* latency, always from the loadgens' whole distributions, never from their percentiles (percentiles of
  several distributions cannot be combined honestly):

  - when every loadgen has per-request data (ab's ``-g`` file, which the runner always asks for), the
    merged distribution holds the requests of all of them that started in the window in which every
    loadgen ran (``merged.window``: the latest start to the earliest end, from each cell's ``window``, on
    the loadgens' clocks), cut at ab's whole-second start times: a request is kept when the second it
    started in overlaps the window. ``merged.cut`` says how many requests were kept of how many, and every
    latency figure comes from the kept requests (``merged.latency = "requests"``);
  - else, when every cell has a distribution (wrk's histogram, httperf's), the merged one is their sum
    (``merged.latency = "histograms"``); these tools keep no time per request, so it cannot be cut to the
    window, and a note says how much of a loadgen's run fell outside it when that is over 5 %; min and
    max are the exact ones of the cells, mean and stdev come from the sum;
  - else (cells stored before distributions) only what merges exactly is kept (min of the minimums, max of
    the maximums); mean, stdev and percentiles are null and each loadgen's are listed in
    ``merged.per_loadgen`` (``merged.latency = "per-loadgen"``);
* timing: ``started_at`` is the earliest start, ``elapsed_s`` the longest run, each loadgen's ``window`` is
  kept in ``merged.per_loadgen``, and ``merged.start_skew_s`` is how far apart the loadgens started (from
  their windows, to the millisecond; from the cells' whole-second start times when a window is missing, so
  1 may be a few milliseconds); a skew surely above a tenth of the shortest run gets a note, because summed
  throughput then overstates what the target served at once.
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchstack.kinds.loadtools import by_name
from benchstack.kinds.loadtools.perrequest import ab_requests, nearest_rank
from benchstack.measure.interference import INTERFERENCE_REASON, disturbed_reasons
from benchstack.measure.interference import summarize as summarize_interference
from benchstack.records import distribution
from benchstack.records.cellparts import (
    CpuUsage,
    Interference,
    Latency,
    LoadgenFigures,
    MergeCut,
    Merged,
    SystemStats,
    Window,
)
from benchstack.records.model import ERROR_KINDS, LATENCY_KEYS, TAIL_KEYS, ParseError, error_count, error_rate
from benchstack.results.cell import FIELDS, SCHEMA, Cell, read_cell, validate_cell, window_span, write_cell
from benchstack.results.files import write_atomic
from benchstack.results.layout import CELLS_DIR, LOADGENS_DIR, RAW_DIR, loadgen_dir

SAME = (
    "experiment", "stack", "target", "mode", "tool", "concurrency", "keepalive", "repetition", "url",
    "cell_id",
)  # fmt: skip
# An open-loop cell's load point is its offered rate; its concurrency is only what the tool saw open.
SAME_OPEN_LOOP = tuple("rate" if key == "concurrency" else key for key in SAME)
SKEW_NOTE_SHARE = 0.1
# Share of a loadgen's run outside the common window above which an uncut histogram merge gets a note
# (loadgens started together at the barrier still differ by ~0.1 s in how long the tool took to exit).
OUTSIDE_NOTE_SHARE = 0.05
# (start second on the loadgen's clock, total ms) of one request: ab's -g data.
Request = tuple[int, int]


class MergeError(ValueError):
    """The cells cannot be merged (different load points, or fewer than two)."""


def _sum_optional(values: Sequence[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def latency_from_times(times_ms: Sequence[float]) -> dict[str, float | None]:
    """Every latency figure of a cell from per-request times (nearest-rank percentiles, population stdev)."""
    if not times_ms:
        return dict.fromkeys(LATENCY_KEYS)
    ordered = sorted(float(t) for t in times_ms)
    result: dict[str, float | None] = {
        "mean": round(statistics.fmean(ordered), 3),
        "stdev": round(statistics.pstdev(ordered), 3),
        "min": ordered[0],
        "max": ordered[-1],
    }
    for p in (50, 75, 90, 99):
        result[f"p{p}"] = float(nearest_rank(ordered, p))
    return result


def _moments_ms(by_ms: Counter[int]) -> dict[str, float | None]:
    """mean, population stdev, min and max of requests counted by their time in ms (as
    :func:`latency_from_times` gives them)."""
    total = sum(by_ms.values())
    if not total:
        return dict.fromkeys(("mean", "stdev", "min", "max"))
    mean = sum(ms * n for ms, n in by_ms.items()) / total
    var = sum(n * (ms - mean) ** 2 for ms, n in by_ms.items()) / total
    return {
        "mean": round(mean, 3),
        "stdev": round(math.sqrt(var), 3),
        "min": float(min(by_ms)),
        "max": float(max(by_ms)),
    }


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def common_window(cells: Sequence[Cell]) -> tuple[float, float] | None:
    """(latest start, earliest end) in Unix seconds when every cell has a window and they overlap."""
    windows = [window_span(c) for c in cells]
    if any(w is None for w in windows):
        return None
    start = max(w[0] for w in windows if w)
    end = min(w[1] for w in windows if w)
    return (start, end) if end > start else None


def cut_to_window(requests: Sequence[Request], window: tuple[float, float]) -> list[Request]:
    """The requests whose start second overlaps ``window`` (ab's start times are whole seconds)."""
    first, last = math.floor(window[0]), math.floor(window[1])
    return [r for r in requests if first <= r[0] <= last]


def _outside_notes(cells: Sequence[Cell], window: tuple[float, float] | None) -> list[str]:
    if window is None:
        return []
    notes = []
    for c in cells:
        own = window_span(c)
        assert own is not None
        share = 1 - (window[1] - window[0]) / (own[1] - own[0]) if own[1] > own[0] else 0.0
        if share > OUTSIDE_NOTE_SHARE:
            notes.append(
                f"{100 * share:.1f} % of {c.loadgen}'s run fell outside the window in which all "
                f"loadgens ran; {c.tool} keeps no time per request, so its latency distribution "
                "could not be cut to that window"
            )
    return notes


def _started(cell: Cell) -> datetime | None:
    return None if cell.started_at is None else datetime.fromisoformat(cell.started_at)


@dataclass(frozen=True)
class _Latency:
    """The merged cell's latency: its figures, its distribution, how they were merged and the cut."""

    figures: dict[str, Any]
    dist: distribution.Distribution | None
    how: str
    cut: MergeCut | None


@dataclass(frozen=True)
class _Timing:
    """When the merged cell ran: the earliest start, the longest run, how far apart the loadgens started."""

    started_at: str | None
    elapsed_s: float | None
    skew_s: float | None


def merge_cells(
    cells: Sequence[Cell],
    requests: Mapping[str, Sequence[Request]] | None = None,
    *,
    cell_files: Mapping[str, str] | None = None,
    raw_output: str | None = None,
) -> Cell:
    """One merged cell from the cells several loadgens measured of one load point at the same time.

    ``requests``: per-request data by loadgen, (start second, total ms) each (all or nothing: without it
    for every loadgen the cells' distributions are summed instead). ``cell_files``/``raw_output``: paths,
    relative to the run folder, to record.
    """
    open_loop = any(c.rate is not None for c in cells)
    loadgens = _one_load_point(cells, open_loop)
    notes: list[str] = []
    window = common_window(cells)
    windows = [window_span(c) for c in cells]
    if all(windows) and window is None:
        notes.append("the loadgens' runs did not overlap at all: nothing was measured under their joint load")
    latency = _merged_latency(cells, loadgens, requests, window, notes)
    timing = _timing(cells, windows, notes)
    for c in cells:
        notes += [f"{c.loadgen}: {n}" for n in c.notes]
    interference, disturbed = _merged_interference(cells)
    merged = _merged_cell(cells, loadgens, open_loop, latency, timing, notes, raw_output)
    # A run with several targets: the id starts with the target (benchstack.plan.targets).
    own_id = cells[0].cell_id
    return dataclasses.replace(
        merged,
        window=Window(start=_iso(window[0]), end=_iso(window[1])) if window else None,
        interference=interference,
        disturbed=disturbed,
        merged=_merge_record(cells, loadgens, open_loop, latency, timing, cell_files),
        cell_id=own_id or None,
        json_keys=_merged_keys(open_loop, bool(own_id)),
    )


def _merged_keys(open_loop: bool, own_id: bool) -> tuple[str, ...]:
    """The keys of a merged cell in the order merged cells have always been written: ``rate`` (open loop)
    after ``keepalive``, then ``window``, ``interference``, ``disturbed``, ``merged`` and ``cell_id`` last
    (a run with several targets); a merged cell has no ``rate`` or ``cell_id`` otherwise."""
    later = ("rate", "merged", "cell_id", "window", "interference", "disturbed")
    keys = [k for k in FIELDS if k not in later]
    if open_loop:
        keys.insert(keys.index("requests"), "rate")
    return (*keys, "window", "interference", "disturbed", "merged", *(["cell_id"] if own_id else []))


def _one_load_point(cells: Sequence[Cell], open_loop: bool) -> list[str]:
    """The loadgens of ``cells``; MergeError unless they are two or more, each once, of one load point."""
    if len(cells) < 2:
        raise MergeError("merging needs the cells of at least two loadgens")
    for key in SAME_OPEN_LOOP if open_loop else SAME:
        values = {json.dumps(getattr(c, key)) for c in cells}
        if len(values) > 1:
            raise MergeError(f"cells differ in {key}: {', '.join(sorted(values))}; not one load point")
    loadgens = [str(c.loadgen) for c in cells]
    if len(set(loadgens)) != len(loadgens):
        raise MergeError(f"a loadgen appears twice: {', '.join(loadgens)}")
    return loadgens


def _merged_latency(
    cells: Sequence[Cell],
    loadgens: list[str],
    requests: Mapping[str, Sequence[Request]] | None,
    window: tuple[float, float] | None,
    notes: list[str],
) -> _Latency:
    """The latency of the merged cell, from the loadgens' requests when every one has them (and they are
    the data its cell was made from), else from their histograms, else the exact min and max only."""
    tool = cells[0].tool
    dists = [c.distribution() for c in cells]
    mins = [c.latency_ms.min for c in cells]
    maxes = [c.latency_ms.max for c in cells]
    latency = dict.fromkeys(LATENCY_KEYS + TAIL_KEYS)
    latency["min"] = None if None in mins else min(float(m) for m in mins if m is not None)
    latency["max"] = None if None in maxes else max(float(m) for m in maxes if m is not None)
    # Per-request data counts only when it is the data the cell was made from (the runner refuses an ab -g
    # file that holds another number of requests than ab completed).
    complete = requests is not None and all(
        requests.get(lg) and len(requests[lg]) == c.requests_completed
        for lg, c in zip(loadgens, cells, strict=True)
    )
    cut = None
    if requests is not None and complete:
        merged_dist, cut = _from_requests(tool, [requests[lg] for lg in loadgens], window, latency, notes)
        how = "requests"
    elif all(d is not None for d in dists):
        merged_dist = distribution.merge([d for d in dists if d is not None])
        moments = merged_dist.moments_ms()
        latency.update(mean=moments["mean"], stdev=moments["stdev"])
        for key in ("min", "max"):
            if latency[key] is None:
                latency[key] = moments[key]
        how = "histograms"
        notes += _outside_notes(cells, window)
    else:
        merged_dist, how = None, "per-loadgen"
        notes.append(
            "latency mean, stdev and percentiles are per loadgen (merged.per_loadgen): no distribution "
            "from every loadgen to merge them"
        )
    if merged_dist is not None:
        latency.update(merged_dist.latency_ms())
    return _Latency(latency, merged_dist, how, cut)


def _from_requests(
    tool: str,
    requests: Sequence[Sequence[Request]],
    window: tuple[float, float] | None,
    latency: dict[str, Any],
    notes: list[str],
) -> tuple[distribution.Distribution, MergeCut]:
    """The distribution of every loadgen's requests that started in ``window`` (its moments into
    ``latency``) and the cut: how many were kept of how many."""
    every = [r for own in requests for r in own]
    kept = every
    if window is not None:
        kept = [r for own in requests for r in cut_to_window(own, window)]
    # Counted once by value: 8 loadgens x 1,000,000 requests are a few hundred distinct milliseconds.
    by_ms = Counter(ms for _, ms in kept)
    latency.update(_moments_ms(by_ms))
    if window is None:
        notes.append("latency from every request: without every loadgen's window it was not cut to one")
    elif len(kept) < len(every):
        notes.append(
            f"latency from the {len(kept)} of {len(every)} requests that started in the "
            f"{window[1] - window[0]:.3f} s in which all loadgens ran (cut at ab's whole-second "
            "start times)"
        )
    merged = distribution.from_counts(by_name(tool).resolution, {ms * 1000: n for ms, n in by_ms.items()})
    return merged, MergeCut(requests=len(every), kept=len(kept))


def _timing(
    cells: Sequence[Cell], windows: Sequence[tuple[float, float] | None], notes: list[str]
) -> _Timing:
    """When the loadgens ran, and a note when they started too far apart for their sum to hold."""
    starts = [_started(c) for c in cells]
    known = [s for s in starts if s is not None]
    skew = (max(known) - min(known)).total_seconds() if len(known) == len(starts) else None
    precise = all(windows)
    if precise:
        skew = round(max(w[0] for w in windows if w) - min(w[0] for w in windows if w), 3)
    elapsed = [float(c.elapsed_s) for c in cells if c.elapsed_s is not None]
    # Start times are whole seconds: 1 s apart may be a few milliseconds across a second's boundary.
    if skew is not None and elapsed and skew - (0 if precise else 1) > SKEW_NOTE_SHARE * min(elapsed):
        notes.append(
            f"the loadgens started {skew:g} s apart in runs of {min(elapsed):g} s or more: the summed req/s "
            "overstates what the target served at once"
        )
    return _Timing(
        started_at=min(known).isoformat().replace("+00:00", "Z") if len(known) == len(starts) else None,
        elapsed_s=max(elapsed) if elapsed else None,
        skew_s=skew,
    )


def _merged_cell(
    cells: Sequence[Cell],
    loadgens: list[str],
    open_loop: bool,
    latency: _Latency,
    timing: _Timing,
    notes: list[str],
    raw_output: str | None,
) -> Cell:
    """The merged cell's fields up to its latency distribution (:func:`merge_cells` adds the rest)."""
    first = cells[0]
    adapter = by_name(first.tool)
    errors: dict[str, int | None] = {k: _sum_optional([c.errors.get(k) for c in cells]) for k in ERROR_KINDS}
    completed = sum(c.requests_completed for c in cells)
    versions = {c.tool_version for c in cells}
    targets = [c.system.target if c.system is not None else None for c in cells]
    return Cell(
        schema=SCHEMA,
        experiment=first.experiment,
        stack=first.stack,
        target=first.target,
        loadgen="+".join(loadgens),
        mode=first.mode,
        tool=first.tool,
        tool_version=versions.pop() if len(versions) == 1 else None,
        command=list(first.command) if isinstance(first.command, list) else first.command,
        url=first.url,
        # Per loadgen, as repetitions and compare match it; open loop: the most any loadgen saw open.
        concurrency=max(c.concurrency for c in cells) if open_loop else first.concurrency,
        keepalive=first.keepalive,
        rate=first.rate if open_loop else None,
        requests=_sum_optional([c.requests for c in cells]),
        duration_s=first.duration_s,
        repetition=first.repetition,
        started_at=timing.started_at,
        elapsed_s=timing.elapsed_s,
        requests_completed=completed,
        rps=round(sum(float(c.rps) for c in cells), 2),
        transfer_bytes=sum(c.transfer_bytes for c in cells),
        latency_ms=Latency.from_dict(latency.figures),
        errors=errors,
        error_count=error_count(adapter.counting, errors),
        error_rate=error_rate(adapter.counting, completed, errors),
        keepalive_requests=_sum_optional([c.keepalive_requests for c in cells]),
        threshold_ms=first.threshold_ms,
        raw_output=raw_output,
        status="ok",
        notes=notes,
        system=SystemStats(loadgen=None, target=next((t for t in targets if t), None)),
        latency_dist=latency.dist.to_dict() if latency.dist else None,
    )


# A closed-loop tool's ``merged`` has no total_rate.
_CLOSED_LOOP_MERGED = tuple(k for k in Merged.json_fields() if k != "total_rate")


def _merge_record(
    cells: Sequence[Cell],
    loadgens: list[str],
    open_loop: bool,
    latency: _Latency,
    timing: _Timing,
    cell_files: Mapping[str, str] | None,
) -> Merged:
    """The cell's ``merged``: how it was merged, and each loadgen's own figures."""
    return Merged(
        loadgens=loadgens,
        total_concurrency=sum(c.concurrency for c in cells),
        total_rate=sum(int(c.rate or 0) for c in cells) if open_loop else None,
        latency=latency.how,
        cut=latency.cut,
        start_skew_s=timing.skew_s,
        cells=[cell_files[lg] for lg in loadgens] if cell_files else None,
        per_loadgen=[
            LoadgenFigures(
                loadgen=c.loadgen,
                rps=c.rps,
                requests_completed=c.requests_completed,
                error_count=c.error_count,
                started_at=c.started_at,
                elapsed_s=c.elapsed_s,
                window=c.window,
                latency_ms=c.latency_ms,
                system=c.system.loadgen if c.system is not None else None,
            )
            for c in cells
        ],
        json_keys=None if open_loop else _CLOSED_LOOP_MERGED,
    )


def _merged_interference(cells: Sequence[Cell]) -> tuple[Interference | None, list[str]]:
    """The merged cell's interference from every host any loadgen's cell read (a loadgen alone counts the
    others' CPU on its machine as foreign; together they are ours), and why it is disturbed: that, or what
    disturbed a loadgen's own run (an overrun)."""
    hosts: dict[str, CpuUsage | None] = {}
    limits = []
    for c in cells:
        own = c.interference
        if own is not None:
            # A host one loadgen read beats the same host another could not read (only the first loadgen
            # takes the target's snapshots).
            for name, usage in own.hosts.items():
                if usage is not None or name not in hosts:
                    hosts[name] = usage
            if own.limit is not None:
                limits.append(float(own.limit))
    disturbed = [
        f"{c.loadgen}: {reason}"
        for c in cells
        for reason in c.disturbed
        if not reason.startswith(INTERFERENCE_REASON)
    ]
    if not hosts:
        return None, disturbed
    interference = summarize_interference(hosts, min(limits) if limits else None)
    if limits:
        disturbed = disturbed_reasons(interference, min(limits)) + disturbed
    return interference, disturbed


def merge_stored(run_dir: Path, cell_id: str, loadgens: Sequence[str]) -> tuple[Cell, bool]:
    """Merge the stored cells of ``cell_id`` from each loadgen's folder into ``cells/<cell_id>.json``.

    Returns (merged cell, written now); a merged cell already stored is returned as it is. Per-request data
    comes from each loadgen's ``raw/<cell_id>.requests.tsv`` (ab -g) when present. The merged raw output is
    each loadgen's raw output in turn, under a header naming it. Each loadgen's cell, as it came back from
    its host, is read as every stored cell is (:func:`benchstack.results.cell.read_cell`).
    """
    final = run_dir / CELLS_DIR / f"{cell_id}.json"
    if final.exists():
        return read_cell(final), False
    cells, files, per_request, raws = [], {}, {}, []
    for lg in loadgens:
        base = loadgen_dir(run_dir, lg)
        path = base / CELLS_DIR / f"{cell_id}.json"
        if not path.exists():
            raise MergeError(f"{cell_id}: loadgen {lg} stored no cell ({path})")
        try:
            cell = read_cell(path)
        except ValueError as exc:  # not a valid cell: named by the message
            raise MergeError(f"{cell_id}: loadgen {lg}'s cell: {exc}") from None
        cells.append(cell)
        files[lg] = str(path.relative_to(run_dir))
        tsv = base / RAW_DIR / f"{cell_id}.requests.tsv"
        if tsv.exists():
            try:
                per_request[lg] = ab_requests(tsv.read_text(encoding="utf-8"))
            except ParseError:
                pass
        raw = base / str(cell.raw_output or "")
        text = raw.read_text(encoding="utf-8") if raw.is_file() else "(no raw output stored)\n"
        raws.append(f"==> {LOADGENS_DIR}/{lg}/{cell.raw_output} <==\n{text}")
    raw_rel = f"{RAW_DIR}/{cell_id}.txt"
    merged = merge_cells(cells, per_request, cell_files=files, raw_output=raw_rel)
    problems = validate_cell(merged.to_dict(), require_meta=True)
    if problems:
        raise MergeError(f"{cell_id}: invalid merged cell: {'; '.join(problems)}")
    write_atomic(run_dir / raw_rel, "\n".join(raws))
    write_cell(run_dir, merged)
    return merged, True
