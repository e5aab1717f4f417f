"""PNG plots of a run (matplotlib, Agg backend, imported here only): throughput vs concurrency (or
offered rate), latency percentiles and error rate, per stack, and per load point the percentile spectrum
of each stack's latency distribution pooled over its repetitions. Each function returns the files it wrote
under ``<run>/plots/``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from benchstack.analysis.loadpoints import groups_of, tool_label
from benchstack.analysis.stats import summarize
from benchstack.common.numbers import median
from benchstack.kinds.loadtools import find
from benchstack.results import distribution
from benchstack.results.cell import level_label

PLOTS_DIR = "plots"
PERCENTILE_KEYS = ("p50", "p75", "p90", "p99")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


ByTool = dict[tuple[str, str], dict[tuple[str, int], list[dict[str, Any]]]]


def _by_tool(cells: list[dict[str, Any]]) -> ByTool:
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
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def throughput_plots(cells: list[dict[str, Any]], run_dir: Path) -> list[Path]:
    """Median req/s vs concurrency, one line per stack (min-max as error bars), one plot per tool."""
    plt = _pyplot()
    paths = []
    for (label, tool), groups in _by_tool(cells).items():
        adapter = find(tool)
        axis = "offered req/s" if adapter is not None and adapter.open_loop else "concurrency"
        fig, ax = plt.subplots(figsize=(7, 4))
        stacks = sorted({s for s, _ in groups})
        levels = sorted({c for _, c in groups})
        if len(levels) == 1:
            # One load point: a line over a single x value says nothing; compare stacks side by side.
            summaries = [summarize([x.get("rps") for x in groups[(s, levels[0])]]) for s in stacks]
            kept = [(s, m) for s, m in zip(stacks, summaries, strict=True) if m]
            ax.bar(
                range(len(kept)),
                [m.median for _, m in kept],
                yerr=[[m.median - m.min for _, m in kept], [m.max - m.median for _, m in kept]],
                capsize=3,
                color="tab:blue",
            )
            ax.set_xticks(range(len(kept)), [s for s, _ in kept], rotation=20, ha="right", fontsize="small")
            ax.set(title=f"Throughput ({label}, {axis} {levels[0]})", ylabel="req/s (median, min-max)")
            ax.set_ylim(bottom=0)
            ax.grid(True, axis="y", alpha=0.3)
            paths.append(_save(plt, fig, run_dir / PLOTS_DIR / f"throughput-{_slug(label)}.png"))
            continue
        for stack in stacks:
            points = sorted(
                (c, summarize([x.get("rps") for x in g])) for (s, c), g in groups.items() if s == stack
            )
            xs = [c for c, s in points if s]
            med = [s.median for _, s in points if s]
            low = [s.median - s.min for _, s in points if s]
            high = [s.max - s.median for _, s in points if s]
            ax.errorbar(xs, med, yerr=[low, high], marker="o", capsize=3, label=stack)
        ax.set(title=f"Throughput ({label})", xlabel=axis, ylabel="req/s (median, min-max)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
        paths.append(_save(plt, fig, run_dir / PLOTS_DIR / f"throughput-{_slug(label)}.png"))
    return paths


def latency_plots(cells: list[dict[str, Any]], run_dir: Path) -> list[Path]:
    """Median p50/p75/p90/p99 latency per stack and concurrency, grouped bars, one plot per tool."""
    plt = _pyplot()
    paths = []
    for (label, tool), groups in _by_tool(cells).items():
        keys = sorted(groups)
        fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(keys) + 2), 4))
        width = 0.8 / len(PERCENTILE_KEYS)
        for i, pk in enumerate(PERCENTILE_KEYS):
            values = [median([(c.get("latency_ms") or {}).get(pk) for c in groups[k]]) for k in keys]
            xs = [j + i * width for j in range(len(keys))]
            ax.bar(xs, [v or 0 for v in values], width=width, label=pk)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(keys))])
        ax.set_xticklabels([f"{s}\n{level_label(tool, c)}" for s, c in keys], fontsize="small")
        ax.set(title=f"Latency percentiles ({label})", ylabel="ms (median over repetitions)")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize="small")
        paths.append(_save(plt, fig, run_dir / PLOTS_DIR / f"latency-{_slug(label)}.png"))
    return paths


def error_plot(cells: list[dict[str, Any]], run_dir: Path) -> list[Path]:
    """Mean error rate per load point, one bar each."""
    plt = _pyplot()
    groups = groups_of(cells)
    keys = list(groups)
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(keys) + 2), 4))
    rates = [100 * sum(float(c.get("error_rate") or 0) for c in g) / len(g) for g in groups.values()]
    ax.bar(range(len(keys)), rates, color="tab:red")
    ax.set_xticks(range(len(keys)))
    labels = [f"{s}\n{tool_label(t, k)} {level_label(t, c)}" for s, t, k, c in keys]
    ax.set_xticklabels(labels, fontsize="small")
    ax.set(title="Error rate (incl. requests over the threshold)", ylabel="% of requests (mean)")
    ax.set_ylim(0, max(1.0, max(rates, default=0) * 1.2))
    ax.grid(True, axis="y", alpha=0.3)
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


def spectrum_plots(cells: list[dict[str, Any]], run_dir: Path) -> list[Path]:
    """Latency by percentile on a log "nines" axis, one line per stack (its repetitions pooled), one plot
    per load point; load points without distributions get none."""
    plt = _pyplot()
    paths = []
    for (label, tool), groups in _by_tool(cells).items():
        for level in sorted({lv for _, lv in groups}):
            at_level = {stack: group for (stack, lv), group in sorted(groups.items()) if lv == level}
            lines = []
            for stack, group in at_level.items():
                pool = distribution.pooled(group)
                points = spectrum_points(pool) if pool else []
                if points:
                    lines.append((stack, points))
            if not lines:
                continue
            fig, ax = plt.subplots(figsize=(7, 4))
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
            where = "; ".join(distribution.SOURCE_LABELS[s].split(":")[1].strip() for s in sources)
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


def pool_source(group: list[dict[str, Any]]) -> str | None:
    dist = next((c.get("latency_dist") for c in group if c.get("latency_dist")), None)
    return None if dist is None else str(dist["source"])


def write_plots(cells: list[dict[str, Any]], run_dir: Path) -> list[Path]:
    """Every plot of the run; needs matplotlib."""
    if not cells:
        return []
    return (
        throughput_plots(cells, run_dir)
        + latency_plots(cells, run_dir)
        + spectrum_plots(cells, run_dir)
        + error_plot(cells, run_dir)
    )
