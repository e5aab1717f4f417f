"""``bench-stack hist``: a stored cell's latency distribution, printed and exported as CSV.

A cell is named by its id (``cells/<id>.json``: a single loadgen's cell or a merged one, which read the
same) or by its path in the run folder (``loadgens/<loadgen>/cells/<id>.json``: one loadgen's own cell).
The CSV has one row per stored value: ``value_us,count,percentile``, the percentile being the share of
samples at or below the value, so a plot of percentile against value is the distribution's CDF.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from benchstack.results import distribution
from benchstack.results.cell import CELLS_DIR, read_cell
from benchstack.results.distribution import Distribution, DistributionError

LADDER = (0, 10, 20, 30, 40, 50, 60, 70, 75, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100)


class HistError(ValueError):
    """A cell that cannot be found, read or has no distribution."""


def cell_file(run_dir: Path, name: str) -> Path:
    """The cell file ``name`` stands for: an id under cells/, or a path inside the run folder."""
    path = run_dir / CELLS_DIR / f"{name}.json"
    if path.is_file():
        return path
    inside = (run_dir / name).resolve()
    if inside.suffix == ".json" and inside.is_file() and inside.is_relative_to(run_dir.resolve()):
        return inside
    raise HistError(f"{run_dir}: no cell {name!r} (looked for {path})")


def read_distribution(run_dir: Path, name: str) -> tuple[dict[str, Any], Distribution]:
    path = cell_file(run_dir, name)
    try:
        # The check every command makes of a stored cell (validate, report, compare).
        cell = read_cell(path)
    except ValueError as exc:
        raise HistError(str(exc)) from None
    try:
        dist = distribution.of_cell(cell)
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


def csv_text(dist: Distribution) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["value_us", "count", "percentile"])
    for value, count, pct in dist.rows():
        writer.writerow([value, count, f"{pct:.6f}"])
    return out.getvalue()


def describe(title: str, dist: Distribution, cells: list[dict[str, Any]]) -> str:
    """A human-readable summary: what the samples are, the tail rule, and a percentile ladder."""
    lines = [f"{title}", f"  {distribution.SOURCE_LABELS[dist.source]}"]
    samples = f"{dist.samples:,} samples"
    if dist.samples != dist.requests:
        samples += f" ({dist.requests:,} requests; wrk's correction added the rest)"
    lines.append(f"  {samples}, {len(dist.counts):,} distinct values")
    merged = [c for c in cells if c.get("merged")]
    for c in merged:
        m = c["merged"]
        how = {"requests": "every request", "histograms": "summed histograms"}.get(m.get("latency"), "-")
        cut = m.get("cut")
        cut_text = f", {cut['kept']:,} of {cut['requests']:,} requests in the common window" if cut else ""
        lines.append(f"  merged from {', '.join(m['loadgens'])}: {how}{cut_text}")
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


def hist(run_dir: Path, names: list[str], pool: bool = False) -> list[tuple[str, Distribution, str]]:
    """(name, distribution, description) for each named cell, or one for all of them pooled."""
    read = [(name, *read_distribution(run_dir, name)) for name in names]
    if pool:
        try:
            pooled = distribution.merge([d for _, _, d in read])
        except DistributionError as exc:
            raise HistError(f"cannot pool these cells: {exc}") from None
        title = f"pooled: {', '.join(names)}"
        return [("pooled", pooled, describe(title, pooled, [c for _, c, _ in read]))]
    return [(name, dist, describe(name, dist, [cell])) for name, cell, dist in read]
