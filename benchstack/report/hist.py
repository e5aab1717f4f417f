"""``bench-stack hist``: a stored cell's latency distribution, printed and exported as CSV or as an
HdrHistogram interval log (:mod:`benchstack.report.hdrlog`).

A cell is named by its id (``cells/<id>.json``: a single loadgen's cell or a merged one, which read the
same), by its path in the run folder (``loadgens/<loadgen>/cells/<id>.json``: one loadgen's own cell) or by a
path to its file as given (``RUN/cells/<id>.json``, absolute or from the current folder). Pooled cells leave
out the disturbed and collapsed ones, as the report does (:func:`benchstack.results.cell.left_out`), unless
asked to keep them.
The CSV has one row per stored value: ``value_us,count,percentile``, the percentile being the share of
samples at or below the value, so a plot of percentile against value is the distribution's CDF. The
interval log has one interval per cell, so pooled cells stay one interval each (their sum is the pool).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import NamedTuple

from benchstack.kinds.loadtools import by_name
from benchstack.records import distribution
from benchstack.records.distribution import Distribution, DistributionError
from benchstack.report.hdrlog import log_text
from benchstack.results.cell import Cell, cell_paths, left_out, read_cell
from benchstack.results.layout import CELLS_DIR

LADDER = (0, 10, 20, 30, 40, 50, 60, 70, 75, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100)


class HistError(ValueError):
    """A cell that cannot be found, read or has no distribution."""


class Shown(NamedTuple):
    """What ``hist`` shows for a cell argument, or for the pooled cells: its distribution, the summary,
    and the cells it is made of, each with its own distribution."""

    name: str
    dist: Distribution
    text: str
    cells: list[tuple[Cell, Distribution]]


def cell_file(run_dir: Path, name: str) -> Path:
    """The cell file ``name`` stands for: an id under cells/, a path inside the run folder, or a path to a
    ``.json`` file as given (absolute, or from the current folder)."""
    path = run_dir / CELLS_DIR / f"{name}.json"
    if path.is_file():
        return path
    if name.endswith(".json"):
        inside = (run_dir / name).resolve()
        if inside.is_file() and inside.is_relative_to(run_dir.resolve()):
            return inside
        given = Path(name)
        if given.is_file():
            return given
        raise HistError(f"no cell file {name!r} (looked for it as given and inside {run_dir})")
    raise HistError(f"{run_dir}: no cell {name!r} (looked for {path})")


def read_distribution(run_dir: Path, name: str) -> tuple[Cell, Distribution]:
    path = cell_file(run_dir, name)
    try:
        # The check every command makes of a stored cell (validate, report, compare).
        cell = read_cell(path)
    except ValueError as exc:
        raise HistError(str(exc)) from None
    try:
        dist = cell.distribution()
    except DistributionError as exc:
        raise HistError(f"{path}: bad latency_dist: {exc}") from None
    if dist is None:
        raise HistError(
            f"{path}: no latency distribution in this cell (measured before bench-stack kept them, or the "
            "tool's per-request data was missing: see its notes)"
        )
    return cell, dist


def csv_name(name: str) -> str:
    """The CSV file for a cell argument: ``<cell_id>.csv``, or its path with ``-`` for ``/``."""
    return name.removesuffix(".json").strip("/").replace("/", "-") + ".csv"


def hlog_text(shown: Shown) -> str:
    """The HdrHistogram interval log of what ``hist`` shows: one interval per cell it is made of."""
    title = f"bench-stack hist: {shown.text.splitlines()[0]}"
    return log_text([(c, d, list(c.disturbed)) for c, d in shown.cells], title)


def csv_text(dist: Distribution) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["value_us", "count", "percentile"])
    for value, count, pct in dist.rows():
        writer.writerow([value, count, f"{pct:.6f}"])
    return out.getvalue()


def describe(title: str, dist: Distribution, cells: list[Cell]) -> str:
    """A human-readable summary: what the samples are, the tail rule, and a percentile ladder."""
    lines = [f"{title}", f"  {by_name(dist.source).resolution.label}"]
    samples = f"{dist.samples:,} samples"
    if dist.samples != dist.requests:
        samples += f" ({dist.requests:,} requests; wrk's correction added the rest)"
    lines.append(f"  {samples}, {len(dist.counts):,} distinct values")
    for m in [c.merged for c in cells if c.merged]:
        how = {"requests": "every request", "histograms": "summed histograms"}.get(m.latency, "-")
        cut = m.cut
        cut_text = f", {cut.kept:,} of {cut.requests:,} requests in the common window" if cut else ""
        lines.append(f"  merged from {', '.join(m.loadgens)}: {how}{cut_text}")
    lines.append(f"  {'percentile':>10}  {'ms':>12}  {'samples at or below':>20}")
    total = dist.samples
    for p in LADDER:
        reason = dist.unsupported(p)
        if reason:
            lines.append(f"  {p:>9g}%  {'-':>12}  ({reason})")
            continue
        value = dist.counts[0][0] if p == 0 else dist.percentile_us(p)
        if value is None:
            continue
        at_or_below = sum(c for v, c in dist.counts if v <= value)
        lines.append(f"  {p:>9g}%  {value / 1000:>12.3f}  {at_or_below:>20,}  of {total:,}")
    return "\n".join(lines) + "\n"


def left_out_of(run_dir: Path, files: list[tuple[Path, Cell]]) -> list[list[str]]:
    """Why each cell (its file, its data) is left out of the report's statistics (empty: counted). A cell
    of the run's cells/ is judged with the run's other cells, as the report judges it (a collapse shows
    against its load point's others); any other cell file (one loadgen's own) by its own ``disturbed``."""
    paths = [p.resolve() for p in cell_paths(run_dir)]
    run_cells = [read_cell(p) for p in paths]
    why = {id(c): reasons for c, reasons in left_out(run_cells)}
    by_path = {p: why.get(id(c), []) for p, c in zip(paths, run_cells, strict=True)}
    return [by_path.get(path.resolve(), list(cell.disturbed)) for path, cell in files]


def hist(
    run_dir: Path, names: list[str], pool: bool = False, keep_disturbed: bool = False
) -> tuple[list[Shown], list[str]]:
    """What to show of each named cell, or of all of them pooled (named ``pooled``); and the names of the
    cells left out of the pool (disturbed or collapsed, unless ``keep_disturbed``)."""
    read = [(name, *read_distribution(run_dir, name)) for name in names]
    skipped: list[str] = []
    if pool and not keep_disturbed:
        reasons = left_out_of(run_dir, [(cell_file(run_dir, name), c) for name, c, _ in read])
        skipped = [name for (name, _, _), why in zip(read, reasons, strict=True) if why]
        read = [r for r, why in zip(read, reasons, strict=True) if not why]
        if not read:
            raise HistError(
                f"every cell named is disturbed or collapsed ({len(skipped)}); --all pools them anyway"
            )
        names = [name for name, _, _ in read]
    if pool:
        try:
            pooled = distribution.merge([d for _, _, d in read])
        except DistributionError as exc:
            raise HistError(f"cannot pool these cells: {exc}") from None
        title = f"pooled: {', '.join(names)}"
        cells = [(c, d) for _, c, d in read]
        return [Shown("pooled", pooled, describe(title, pooled, [c for c, _ in cells]), cells)], skipped
    return [
        Shown(name, dist, describe(name, dist, [cell]), [(cell, dist)]) for name, cell, dist in read
    ], skipped
