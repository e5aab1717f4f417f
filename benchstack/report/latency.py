"""Latency as the report's tables print it: a load point's median over its repetitions, rounded to what
they support, and the latency distributions table (issue 15): per load point the percentiles of its
repetitions pooled (their distributions summed, nothing averaged) beside the median of each repetition's.
:mod:`benchstack.report.build` places them in the report."""

from __future__ import annotations

from benchstack.analysis.loadpoints import groups_of, n_text, per_loadgen, point_columns, spread_of
from benchstack.common.numbers import median, rounded, step_for
from benchstack.kinds.loadtools import by_name
from benchstack.records import distribution
from benchstack.results.cell import Cell, counted


def latency_text(values: list[float | None]) -> str:
    """A latency's median over repetitions to what they support: three significant digits, fewer where the
    repetitions spread wider (:func:`benchstack.common.numbers.step_for`)."""
    present = [float(v) for v in values if v is not None]
    middle = median(present)
    if middle is None:
        return "-"
    return rounded(middle, max(step_for(middle, spread_of(present)), step_for(middle, None)))


def latency_cell(group: list[Cell], key: str) -> str:
    """Median over repetitions (:func:`latency_text`); for merged cells without merged percentiles, each
    loadgen's, labelled."""
    if not per_loadgen(group):
        return latency_text([c.latency_ms.value(key) for c in group])
    by_loadgen: dict[str, list[float | None]] = {}
    for c in group:
        for one in c.merged.per_loadgen if c.merged is not None else []:
            figure = one.latency_ms.value(key) if one.latency_ms is not None else None
            by_loadgen.setdefault(str(one.loadgen), []).append(figure)
    return " / ".join(latency_text(v) for v in by_loadgen.values()) + " per loadgen"


DIST_COLUMNS = (
    "stack", "tool", "load", "n", "over repetitions", "requests",
    "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "p99.99 ms",
)  # fmt: skip
DIST_KEYS = ("p50", "p90", "p99", "p99.9", "p99.99")
DIST_LEGEND = (
    "pooled: the percentiles of every request of the n repetitions together (their distributions summed, "
    "nothing averaged); median: the median over the repetitions of each one's percentile (as in Results), "
    "with the median requests per repetition. p99.9 needs 1,000 requests and p99.99 10,000 ('-': fewer, or "
    "no distribution). Each to three significant digits (a median fewer, where the repetitions spread "
    "wider). "
)


def distribution_rows(cells: list[Cell]) -> list[dict[str, str]]:
    """Two rows per load point: its pooled distribution's percentiles and the median of repetitions."""
    rows = []
    for key, group in groups_of(cells).items():
        kept = counted(group)
        head = {**point_columns(key, group), "n": n_text(len(kept), len(group) - len(kept))}
        pool = distribution.pooled([c.distribution() for c in kept])
        figures = pool.latency_ms() if pool else {}
        rows.append(
            {
                **head,
                "over repetitions": "pooled" if pool else "pooled: no distribution",
                "requests": f"{pool.requests:,}" if pool else "-",
                **{f"{k} ms": latency_text([figures.get(k)]) for k in DIST_KEYS},
            }
        )
        requests = median([float(c.requests_completed) for c in kept])
        rows.append(
            {
                **head,
                "over repetitions": "median",
                "requests": "-" if requests is None else f"{round(requests):,}",
                **{f"{k} ms": latency_cell(kept, k) for k in DIST_KEYS},
            }
        )
    return rows


def distribution_legend(cells: list[Cell]) -> str:
    sources = sorted({str(c.latency_dist["source"]) for c in cells if c.latency_dist})
    return DIST_LEGEND + " ".join(by_name(s).resolution.label + "." for s in sources)
