"""HdrHistogram interval logs of cells: ``hdr/<cell id>.hlog`` beside the report (docs/results-format.md).

A cell's whole distribution (:mod:`benchstack.records.distribution`) in the log format HdrHistogram's own
tools read (Java's HistogramLogReader and HistogramLogProcessor, the ``hdrhistogram`` package's
``hdrh.log.HistogramLogReader``), written with that package: the format version, comments naming the
cell, ``#[StartTime: ...]``, the legend, then one interval line per cell: its window relative to StartTime,
its length, its largest value in ms, and the histogram, compressed and in base64. One cell's log has one
line; ``bench-stack hist --pool --hlog`` writes one line per pooled cell, so a log processor's sum is the
pool.

Values are nanoseconds (a stored µs x 1000), the unit HdrHistogram's tools assume (HistogramLogProcessor
prints ms by default), in a histogram of 3 significant digits from 1 ns to an hour (further when a cell
holds a longer value): each stored value lands in a bucket at most 1/1024 of itself wide, so percentiles
read back are the cell's within 0.1 %. The cells keep sparse pairs (why:
:mod:`benchstack.records.distribution`); these logs are views of them, written again with each report
like cells.csv. The ``hdrh`` import is inside the functions:
only the report and ``hist --hlog`` pay for it, not the other commands.

There is no ``#[BaseTime: ...]`` line: the interval timestamps are relative to StartTime, which every reader
infers when the first one is more than a year before it.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from benchstack import __version__
from benchstack.kinds.loadtools import by_name
from benchstack.records.distribution import Distribution
from benchstack.results.cell import Cell, cell_id_of, left_out, level_label, load_level, window_start
from benchstack.results.files import write_atomic
from benchstack.results.layout import HDR_DIR

if TYPE_CHECKING:
    from hdrh.histogram import HdrHistogram

SUFFIX = ".hlog"
SIGNIFICANT_DIGITS = 3
NS_PER_US = 1000
HOUR_NS = 3600 * 10**9
MS_NS = 1_000_000  # the Interval_Max column's unit, as HistogramLogWriter's default ratio


class HdrLogError(ValueError):
    """A distribution that HdrHistogram cannot hold."""


def histogram_of(dist: Distribution) -> HdrHistogram:
    """``dist`` as an HdrHistogram of nanoseconds (3 significant digits, 1 ns to at least an hour)."""
    from hdrh.histogram import HdrHistogram

    top = dist.counts[-1][0] * NS_PER_US if dist.counts else 0
    histogram = HdrHistogram(1, max(HOUR_NS, 2 * top), SIGNIFICANT_DIGITS)
    for value_us, count in dist.counts:
        # record_value says False, and drops the value, when it is out of range: never silently here.
        if not histogram.record_value(value_us * NS_PER_US, count):
            raise HdrLogError(f"HdrHistogram refused {value_us} µs x {count}")
    return histogram


def _window(cell: Cell) -> tuple[float, float]:
    """(start as POSIX seconds, length in s) of the measured run: ``window`` on the loadgen's clock to the
    ms, else ``started_at`` (whole seconds) and ``elapsed_s``; 0 where a cell records neither."""
    start = window_start(cell) or 0.0
    if cell.window is not None:
        end = datetime.fromisoformat(cell.window.end.replace("Z", "+00:00")).timestamp()
        return start, max(0.0, end - start)
    return start, float(cell.elapsed_s or 0.0)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _describe(cell: Cell, dist: Distribution, why: Sequence[str]) -> list[str]:
    name = cell_id_of(cell)
    level = level_label(cell.tool, load_level(cell)) + (", keep-alive" if cell.keepalive else "")
    lines = [
        f"cell {name}: stack {cell.stack}, {cell.tool} {level}, "
        f"repetition {cell.repetition}, target {cell.target}, loadgen {cell.loadgen}",
        f"{name}: {by_name(dist.source).resolution.label}; {dist.samples:,} samples, "
        f"{dist.requests:,} requests",
    ]
    if why:
        lines.append(f"{name}: left out of the report's statistics: " + "; ".join(map(str, why)))
    return lines


Part = tuple[Cell, Distribution, Sequence[str]]


def log_text(parts: Sequence[Part], title: str = "") -> str:
    """The interval log of ``parts`` (a cell, its distribution, why the report leaves it out: empty when
    counted): one interval line per cell, in the order of their windows."""
    from hdrh.log import HistogramLogWriter

    timed = sorted(((_window(cell), cell, dist, why) for cell, dist, why in parts), key=lambda t: t[0][0])
    start_time = timed[0][0][0] if timed else 0.0
    out = io.StringIO()
    writer = HistogramLogWriter(out)
    writer.output_log_format_version()
    writer.output_comment(f"[Logged with bench-stack {__version__}]")
    if title:
        writer.output_comment(f"[{_one_line(title)}]")
    for _, cell, dist, why in timed:
        for line in _describe(cell, dist, why):
            writer.output_comment(f"[{_one_line(line)}]")
    writer.output_comment("[Values in nanoseconds; Interval_Max in ms, rounded down]")
    # As Java's HistogramLogWriter writes it; readers take the number (the package's own output_start_time
    # fails on its date).
    when = datetime.fromtimestamp(start_time, UTC).isoformat(timespec="milliseconds")
    writer.output_comment(f"[StartTime: {start_time:.3f} (seconds since epoch), {when}]")
    writer.output_legend()
    writer.base_time = round(start_time * 1000)
    for (start, length), _, dist, _ in timed:
        histogram = histogram_of(dist)
        histogram.set_start_time_stamp(round(start * 1000))
        histogram.set_end_time_stamp(round((start + length) * 1000))
        writer.output_interval_histogram(histogram, max_value_unit_ratio=MS_NS)
    return out.getvalue()


def hlog_name(name: str) -> str:
    """The log file for a cell argument of ``hist``: ``<cell_id>.hlog``, or its path with ``-`` for ``/``."""
    return name.removesuffix(".json").strip("/").replace("/", "-") + SUFFIX


def write_hdr_logs(run_dir: Path, cells: Sequence[Cell]) -> list[Path]:
    """``hdr/<cell id>.hlog`` for every cell of ``cells`` that has a distribution, disturbed and collapsed
    ones too (a comment says why the report leaves them out); the logs of cells no longer in the run
    (dropped) are removed. Returns the paths written."""
    folder = run_dir / HDR_DIR
    why = {id(c): reasons for c, reasons in left_out(list(cells))}
    written = []
    for cell in cells:
        dist = cell.distribution()
        if dist is None:
            continue
        path = folder / f"{cell_id_of(cell)}{SUFFIX}"
        write_atomic(path, log_text([(cell, dist, why.get(id(cell), []))]))
        written.append(path)
    if folder.is_dir():
        for stale in set(folder.glob(f"*{SUFFIX}")) - set(written):
            stale.unlink()
    return written
