"""PNG plots of a run (matplotlib, Agg backend, imported here only), each kind for its place in the report:
the comparisons with the baseline (the run's answer), throughput per load point with the 95 % interval of
its median, latency percentiles, the error rate (only where there are errors), and per load point the
percentile spectrum of each stack's latency distribution pooled over its repetitions. Each function returns
the files it wrote under ``<run>/plots/``; :func:`write_plots` returns them by kind (:data:`KINDS`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchstack.analysis.comparison import EQUIVALENT, FASTER, SLOWER, Comparison, grouped
from benchstack.analysis.loadpoints import groups_of, point_figures, tool_label
from benchstack.common.numbers import median, rounded, step_for
from benchstack.kinds.loadtools import by_name, find
from benchstack.records import distribution
from benchstack.results.cell import Cell, level_label
from benchstack.results.layout import PLOTS_DIR

PERCENTILE_KEYS = ("p50", "p75", "p90", "p99")
# The kinds of plot, in the report's order: each goes to its section (benchstack.report.build).
KINDS = ("comparisons", "throughput", "errors", "latency", "spectrum")
Plots = dict[str, list[Path]]
# Pixels per inch of the PNG files: still sharp on a phone, where a figure is shown at half its width.
DPI = 130
# One value more than this many times another: a linear axis would flatten the others, so the axis is log.
DWARFS = 3.0
STATE_COLOURS = {FASTER: "tab:green", SLOWER: "tab:red", EQUIVALENT: "tab:gray"}
UNRESOLVED_COLOUR = "tab:orange"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


ByTool = dict[tuple[str, str], dict[tuple[str, int], list[Cell]]]


def _by_tool(cells: list[Cell]) -> ByTool:
    """(tool label, tool) -> (stack, level) -> cells; a level is a concurrency or an offered rate."""
    out: ByTool = {}
    for (stack, tool, keepalive, level), group in groups_of(cells).items():
        out.setdefault((tool_label(tool, keepalive), tool), {})[(stack, level)] = group
    return out


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-")


def _save(plt: Any, fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def dwarfed(values: Sequence[float]) -> bool:
    """Whether the largest value is more than :data:`DWARFS` times the smallest (a log axis then)."""
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) > DWARFS * min(positive)


# Ticks of a log ratio axis, most telling first: a tick is kept when it is not too near one kept before.
RATIO_TICKS = (1.0, 2.0, 0.5, 10.0, 0.1, 5.0, 0.2, 1.5, 0.8, 3.0, 1.2, 0.9, 1.1, 20.0, 50.0, 100.0, 0.05)


def ratio_ticks(low: float, high: float, most: int = 8) -> list[float]:
    """Ticks between ``low`` and ``high`` on a log axis, at least 1/``most`` of its span apart."""
    span = math.log10(high / low)
    kept: list[float] = []
    for tick in RATIO_TICKS:
        if low <= tick <= high and all(abs(math.log10(tick / k)) >= span / most for k in kept):
            kept.append(tick)
    return sorted(kept)


def log_ticks(low: float, high: float) -> list[float]:
    """Ticks of a log axis of req/s between ``low`` and ``high``: 1, 2 and 5 times a power of ten, and 1.5
    and 3 times one where those are too few."""
    ticks: list[float] = []
    for mantissas in ((1.0, 2.0, 5.0), (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)):
        ticks = [
            m * 10.0**k
            for k in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
            for m in mantissas
            if low <= m * 10.0**k <= high
        ]
        if len(ticks) >= 3:
            break
    return ticks


def _room_for_labels(low: float, high: float, share: float, log: bool) -> float:
    """The axis' new upper end, so that the labels written right of the data get ``share`` of its width."""
    if log:
        return float(high * (high / low) ** (share / (1 - share)))
    return high + (high - low) * share / (1 - share)


def comparison_plot(
    comparisons: Sequence[Comparison], run_dir: Path, several_targets: bool = False
) -> list[Path]:
    """The run's answer: each stack's ratio of req/s to the baseline with its interval, one row each (the
    fastest on top, a group per tool and level), a line at 1 and the band of equivalence (1 +- the margin), on
    a log axis where 0.5x and 2x lie as far from 1. A comparison without an interval is a hollow point."""
    shown = [c for c in comparisons if c.ratio is not None]
    if not shown:
        return []
    plt = _pyplot()
    groups = grouped(shown, several_targets)
    rows: list[tuple[str, Comparison]] = []
    for heading, group in reversed(groups.items()):  # the first group on top
        for c in sorted(group, key=lambda c: c.ratio or 0.0):
            rows.append((c.stack if len(groups) == 1 else f"{c.stack}, {heading}", c))
    margins = sorted({c.margin for c in shown})
    values = [v for _, c in rows for v in (c.ratio, c.low, c.high) if v is not None]
    low = min(values + [1 - margins[0]]) / 1.08
    high = max(values + [1 + margins[-1]]) * 1.08
    fig, ax = plt.subplots(figsize=(7.5, 1.4 + 0.5 * len(rows)))
    for margin in margins:
        ax.axvspan(1 - margin, 1 + margin, color="tab:gray", alpha=0.18, lw=0)
    ax.axvline(1.0, color="black", lw=1)
    for y, (_, c) in enumerate(rows):
        assert c.ratio is not None
        colour = STATE_COLOURS.get(c.state, UNRESOLVED_COLOUR)
        if c.low is not None and c.high is not None:
            error = [[c.ratio - c.low], [c.high - c.ratio]]
            ax.errorbar(c.ratio, y, xerr=error, fmt="o", color=colour, capsize=4, elinewidth=2, ms=7)
        else:
            ax.plot(c.ratio, y, "o", mfc="white", color=colour, ms=7)
        ax.annotate(
            f"{c.state} {c.ratio:.2f}x",
            xy=(max(v for v in (c.ratio, c.high) if v is not None), y),
            xytext=(8, 0),
            textcoords="offset points",
            va="center",
            color=colour,
            fontsize="small",
        )
    ax.set_xscale("log")
    ax.set_xlim(low, _room_for_labels(low, high, 0.22, log=True))
    ticks = ratio_ticks(low, high)
    ax.set_xticks(ticks, [f"{t:g}x" for t in ticks])
    ax.minorticks_off()
    ax.set_yticks(range(len(rows)), [label for label, _ in rows])
    ax.set_ylim(-0.6, len(rows) - 0.4)
    band = " or ".join(f"+-{100 * m:g} %" for m in margins)
    ax.set(
        title=f"Each stack against {shown[0].baseline}",
        xlabel=f"req/s ratio to {shown[0].baseline}, log scale (grey: equivalent, within {band})",
    )
    ax.grid(True, axis="x", alpha=0.3)
    return [_save(plt, fig, run_dir / PLOTS_DIR / "comparisons.png")]


Interval = tuple[float, float, float, str]


def _interval(group: list[Cell]) -> Interval | None:
    """(median, low, high, label) of a load point's req/s as the analysis computed them
    (:func:`point_figures`): the 95 % interval of the median (low = high = median without one), and the
    median with it as a label, rounded as the results table rounds them."""
    figures = point_figures(group)
    mid, ci = figures.median, figures.interval
    if mid is None:
        return None
    step = step_for(mid, figures.spread)
    if ci is None:
        return mid, mid, mid, rounded(mid, step)
    return mid, ci.low, ci.high, f"{rounded(mid, step)} ({rounded(ci.low, step)}-{rounded(ci.high, step)})"


def throughput_plots(cells: list[Cell], run_dir: Path, baseline: str | None = None) -> list[Path]:
    """Median req/s with the 95 % interval of the median (none below 6 repetitions), one plot per tool: at
    one load level a row per stack, the fastest on top, each labelled with its figures; over several levels
    a line per stack (legend in the order of the highest level). A log axis when one stack dwarfs another."""
    plt = _pyplot()
    paths = []
    for (label, tool), groups in _by_tool(cells).items():
        levels = sorted({c for _, c in groups})
        summaries = {key: _interval(group) for key, group in groups.items()}
        log = dwarfed([s[0] for s in summaries.values() if s])
        name = run_dir / PLOTS_DIR / f"throughput-{_slug(label)}.png"
        if len(levels) == 1:
            rows = sorted(((s, m) for (s, _), m in summaries.items() if m), key=lambda row: row[1][0])
            if rows:
                title = f"Throughput ({label} {level_label(tool, levels[0])})"
                paths.append(_save(plt, _one_level_plot(plt, rows, baseline, log, title), name))
            continue
        adapter = find(tool)
        axis = "offered req/s" if adapter is not None and adapter.open_loop else "concurrency"
        fig = _levels_plot(plt, summaries, levels, log, f"Throughput ({label})", axis)
        paths.append(_save(plt, fig, name))
    return paths


def _one_level_plot(
    plt: Any, rows: list[tuple[str, Interval]], baseline: str | None, log: bool, title: str
) -> Any:
    """One load level's figure: a row per stack (``rows``, slowest first), each labelled with its figures."""
    fig, ax = plt.subplots(figsize=(7.5, 1.4 + 0.5 * len(rows)))
    for y, (stack, (mid, low, high, figures)) in enumerate(rows):
        colour = "black" if stack == baseline else "tab:blue"
        error = [[mid - low], [high - mid]]
        ax.errorbar(mid, y, xerr=error, fmt="o", color=colour, capsize=4, elinewidth=2)
        ax.annotate(
            figures, xy=(high, y), xytext=(8, 0), textcoords="offset points", va="center", fontsize="small"
        )
    ends = [v for _, m in rows for v in m[:3]]
    bottom = min(v for v in ends if v > 0) / 1.15 if log else 0.0
    top = _room_for_labels(bottom, max(max(ends) * 1.05, 1.0), 0.25, log)
    if log:
        ax.set_xscale("log")
        ticks = log_ticks(bottom, top)
        ax.set_xticks(ticks, [f"{t:,.0f}" if t >= 1 else f"{t:g}" for t in ticks])
        ax.minorticks_off()
    ax.set_xlim(bottom, top)
    ax.set_yticks(range(len(rows)), [s + (" (baseline)" if s == baseline else "") for s, _ in rows])
    ax.set_ylim(-0.6, len(rows) - 0.4)
    scale = ", log scale" if log else ""
    ax.set(title=title, xlabel=f"req/s: median and 95 % interval of the median{scale}")
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def _levels_plot(
    plt: Any,
    summaries: dict[tuple[str, int], Interval | None],
    levels: list[int],
    log: bool,
    title: str,
    axis: str,
) -> Any:
    """Several load levels' figure: a line per stack, the legend in the order of the highest level."""
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    stacks = {s for s, _ in summaries}
    at_top = {s: (summaries.get((s, levels[-1])) or (0.0,))[0] for s in stacks}
    for stack in sorted(stacks, key=lambda s: -at_top[s]):
        points = [(lv, m) for (s, lv), m in sorted(summaries.items()) if s == stack and m]
        xs = [lv for lv, _ in points]
        mids = [m[0] for _, m in points]
        lows = [m[0] - m[1] for _, m in points]
        highs = [m[2] - m[0] for _, m in points]
        ax.errorbar(xs, mids, yerr=[lows, highs], marker="o", capsize=3, label=stack)
    if log:
        ax.set_yscale("log")
        low, high = ax.get_ylim()
        ticks = log_ticks(low, high)
        ax.set_yticks(ticks, [f"{t:,.0f}" if t >= 1 else f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.set_ylim(low, high)
    else:
        ax.set_ylim(bottom=0)
    scale = ", log scale" if log else ""
    ax.set(title=title, xlabel=axis, ylabel=f"req/s (median, 95 % interval){scale}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def latency_plots(cells: list[Cell], run_dir: Path) -> list[Path]:
    """Median p50/p75/p90/p99 latency per load point, a group of bars each (the lowest p99 on top), one plot
    per tool. Rows, not columns: a long stack name never overlaps the next."""
    plt = _pyplot()
    paths = []
    for (label, tool), groups in _by_tool(cells).items():
        figures = {
            key: [median([c.latency_ms.value(pk) for c in group]) for pk in PERCENTILE_KEYS]
            for key, group in groups.items()
        }
        keys = sorted(figures, key=lambda k: -(figures[k][-1] or 0.0))
        height = 0.8 / len(PERCENTILE_KEYS)
        fig, ax = plt.subplots(figsize=(7.5, 1.6 + 0.6 * len(keys)))
        for i, pk in enumerate(PERCENTILE_KEYS):
            ys = [j + (len(PERCENTILE_KEYS) - 1 - i) * height for j in range(len(keys))]
            ax.barh(ys, [figures[k][i] or 0 for k in keys], height=height, label=pk)
        ax.set_yticks(
            [j + 0.4 - height / 2 for j in range(len(keys))], [f"{s} {level_label(tool, c)}" for s, c in keys]
        )
        ax.set(title=f"Latency percentiles ({label})", xlabel="ms (median over repetitions)")
        ax.grid(True, axis="x", alpha=0.3)
        # Beside the axes: the longest bars would run under it anywhere inside.
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
        paths.append(_save(plt, fig, run_dir / PLOTS_DIR / f"latency-{_slug(label)}.png"))
    return paths


def error_rates(cells: list[Cell]) -> dict[tuple[str, str, bool, int], float]:
    """Mean error rate per load point, as a share."""
    return {
        key: sum(float(c.error_rate) for c in group) / len(group) for key, group in groups_of(cells).items()
    }


def error_plot(cells: list[Cell], run_dir: Path) -> list[Path]:
    """Mean error rate per load point, a row each (the highest on top); no plot when no cell had an
    error: the report says so in words."""
    rates = error_rates(cells)
    if not any(rates.values()):
        return []
    plt = _pyplot()
    keys = sorted(rates, key=lambda k: rates[k])
    fig, ax = plt.subplots(figsize=(7.5, 1.4 + 0.45 * len(keys)))
    ax.barh(range(len(keys)), [100 * rates[k] for k in keys], color="tab:red")
    labels = [f"{s} {tool_label(t, k)} {level_label(t, c)}" for s, t, k, c in keys]
    ax.set_yticks(range(len(keys)), labels)
    ax.set(title="Error rate (incl. requests over the threshold)", xlabel="% of requests (mean)")
    ax.set_xlim(0, max(1.0, 100 * max(rates.values()) * 1.2))
    ax.grid(True, axis="x", alpha=0.3)
    return [_save(plt, fig, run_dir / PLOTS_DIR / "error-rate.png")]


# The "nines" axis: percentile p at x = -log10(1 - p/100), so 90, 99, 99.9 and 99.99 are evenly spaced.
NINES_TICKS = (50.0, 90.0, 99.0, 99.9, 99.99)
NINES_STEP = 0.05


def nines(p: float) -> float:
    return -math.log10(1 - p / 100)


def spectrum_points(dist: distribution.Distribution) -> list[tuple[float, float]]:
    """(nines, ms) from the median to the highest percentile the distribution supports: as many nines as
    its requests allow (log10 of them: 3 for 1,000, p99.9), at most 4 (p99.99)."""
    if dist.requests < 2 or dist.samples == 0:
        return []
    top = min(4.0, math.log10(dist.requests))
    xs = [nines(50.0) + i * NINES_STEP for i in range(int((top - nines(50.0)) / NINES_STEP) + 1)] + [top]
    points = []
    for x in xs:
        value = dist.percentile_ms(100 * (1 - 10**-x))
        if value is not None:
            points.append((x, value))
    return points


def log_scale(lines: list[list[tuple[float, float]]]) -> bool:
    """Whether the spectrum needs a log latency axis: a tail more than 50 times the lowest median, which
    on a linear axis leaves everything below it a flat line at 0."""
    medians = [points[0][1] for points in lines if points and points[0][1] > 0]
    top = max((y for points in lines for _, y in points), default=0.0)
    return bool(medians) and top > 50 * min(medians)


def spectrum_plots(cells: list[Cell], run_dir: Path) -> list[Path]:
    """Latency by percentile on a log "nines" axis, one line per stack (its repetitions pooled), one plot
    per load point; load points without distributions get none."""
    plt = _pyplot()
    paths = []
    for (label, tool), groups in _by_tool(cells).items():
        for level in sorted({lv for _, lv in groups}):
            at_level = {stack: group for (stack, lv), group in sorted(groups.items()) if lv == level}
            lines = []
            for stack, group in at_level.items():
                pool = distribution.pooled([c.distribution() for c in group])
                points = spectrum_points(pool) if pool else []
                if points:
                    lines.append((stack, points))
            if not lines:
                continue
            fig, ax = plt.subplots(figsize=(7.5, 4.5))
            for stack, points in lines:
                ax.plot([x for x, _ in points], [y for _, y in points], marker=".", markersize=3, label=stack)
            ax.set_xticks([nines(p) for p in NINES_TICKS], [f"{p:g}%" for p in NINES_TICKS])
            ax.set_xlim(nines(50.0) - 0.05, nines(99.99) + 0.05)
            log = log_scale([points for _, points in lines])
            if log:
                ax.set_yscale("log")
            else:
                ax.set_ylim(bottom=0)
            sources = sorted({str(pool_source(g)) for g in at_level.values() if pool_source(g)})
            where = "; ".join(by_name(s).resolution.label.split(":")[1].strip() for s in sources)
            ax.set(
                title=f"Latency by percentile ({label}, {level_label(tool, level)})",
                xlabel=f"percentile ({where})" if where else "percentile",
                ylabel="ms, log scale (repetitions pooled)" if log else "ms (repetitions pooled)",
            )
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="small")
            name = f"spectrum-{_slug(label)}-{_slug(level_label(tool, level))}.png"
            paths.append(_save(plt, fig, run_dir / PLOTS_DIR / name))
    return paths


def pool_source(group: list[Cell]) -> str | None:
    dist = next((c.latency_dist for c in group if c.latency_dist), None)
    return None if dist is None else str(dist["source"])


def write_plots(
    cells: list[Cell],
    run_dir: Path,
    comparisons: Sequence[Comparison] = (),
    baseline: str | None = None,
    several_targets: bool = False,
) -> Plots:
    """Every plot of the run by kind (:data:`KINDS`; a kind with nothing to show has no file); needs
    matplotlib."""
    if not cells:
        return {}
    return {
        "comparisons": comparison_plot(comparisons, run_dir, several_targets),
        "throughput": throughput_plots(cells, run_dir, baseline),
        "errors": error_plot(cells, run_dir),
        "latency": latency_plots(cells, run_dir),
        "spectrum": spectrum_plots(cells, run_dir),
    }
