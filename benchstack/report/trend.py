"""The report's "Over time" part (issue 42): this run's comparisons beside those of the earlier runs of the
same experiment (same name and sha256) in the history database (docs/history.md), as a table, and in
report.html as one plot. The report is written before the run is recorded (plugins/action/bench_report.py),
so this run's figures come from the run itself and the database is only read. No database, or no earlier
run of the experiment: no section. A database that cannot be read is said in one line, never a failed
report."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from benchstack.analysis.comparison import Comparison, shown_ratio
from benchstack.analysis.loadpoints import tool_label
from benchstack.history.defaults import recorded_url
from benchstack.report.model import Figure, Paragraph, Section, Table, text
from benchstack.results.cell import Cell, window_start
from benchstack.results.location import shown

# Earlier runs shown beside this one: enough to see a drift, few enough for a table's width.
EARLIER_RUNS = 9

# (target, stack, tool, keepalive, level): one comparison's identity across runs.
Key = tuple[str, str, str, bool, int]


@dataclass(frozen=True)
class Reading:
    """One run's figure for one comparison."""

    state: str
    ratio: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class RunColumn:
    """One run: its folder's name, when its first cell started, its verdict and its comparisons."""

    name: str
    started: datetime | None
    verdict: str
    figures: dict[Key, Reading]


class _Compared(Protocol):
    """A comparison as this run computed it (Comparison) or as the history keeps it (ComparisonRow)."""

    @property
    def target(self) -> str | None: ...

    @property
    def stack(self) -> str: ...

    @property
    def tool(self) -> str: ...

    @property
    def keepalive(self) -> bool: ...

    @property
    def level(self) -> int: ...

    @property
    def state(self) -> str: ...

    @property
    def ratio(self) -> float | None: ...

    @property
    def low(self) -> float | None: ...

    @property
    def high(self) -> float | None: ...


def _figures(comparisons: Iterable[_Compared]) -> dict[Key, Reading]:
    return {
        (c.target or "-", c.stack, c.tool, bool(c.keepalive), int(c.level)): Reading(
            c.state, c.ratio, c.low, c.high
        )
        for c in comparisons
    }


def this_run(
    run_dir: Path, cells: Sequence[Cell], info: dict[str, Any], comparisons: Sequence[Comparison]
) -> RunColumn:
    starts = [t for c in cells if (t := window_start(c)) is not None]
    verdict = v.get("status") if isinstance(v := info.get("verdict"), dict) else None
    return RunColumn(
        run_dir.name,
        datetime.fromtimestamp(min(starts), UTC) if starts else None,
        str(verdict or "-"),
        _figures(comparisons),
    )


def earlier_runs(url: str, experiment: str, sha256: str | None, current: RunColumn) -> list[RunColumn]:
    """The runs of ``experiment`` with the same sha256 recorded before ``current`` started (all of them when
    its start is unknown), not ``current`` itself, oldest first, at most :data:`EARLIER_RUNS`."""
    from benchstack.history.database import open_database
    from benchstack.history.queries import runs, utc

    engine = open_database(url)
    try:
        found = []
        for run in runs(engine, experiment=experiment):
            started = utc(run.started_at)
            if run.name == current.name or run.experiment_sha256 != sha256:
                continue
            if current.started is not None and (started is None or started >= current.started):
                continue
            found.append(RunColumn(run.name, started, run.verdict, _figures(run.comparisons)))
    finally:
        engine.dispose()
    return found[-EARLIER_RUNS:]


def _cell(f: Reading | None) -> str:
    """State, ratio and interval as the comparisons print them
    (:func:`benchstack.analysis.comparison.shown_ratio`; a stored reading keeps no margin)."""
    if f is None:
        return "-"
    if f.ratio is None:
        return f.state
    if f.low is None or f.high is None:
        return f"{f.state} {f.ratio:.2f}x"
    ratio, low, high = shown_ratio(f.state, f.ratio, f.low, f.high)
    return f"{f.state} {ratio}x ({low}-{high})"


def _label(key: Key, several_targets: bool) -> str:
    target, stack, tool, keepalive, level = key
    point = f"{stack} {tool_label(tool, keepalive)} c{level}"
    return f"{point} @ {target}" if several_targets else point


def trend_table(columns: Sequence[RunColumn]) -> Table:
    """A row per run (oldest first, this run last), a column per comparison of this run."""
    keys = sorted(columns[-1].figures)
    several = len({k[0] for k in keys}) > 1
    header = ("run", "started (UTC)", "verdict", *(_label(k, several) for k in keys))
    rows = tuple(
        (
            col.name,
            col.started.strftime("%Y-%m-%d %H:%M") if col.started else "-",
            col.verdict,
            *(_cell(col.figures.get(k)) for k in keys),
        )
        for col in columns
    )
    return Table(header, rows)


def trend_section(columns: list[RunColumn] | str, plot: Path | None = None) -> Section | None:
    """The section from :func:`trend_columns`' answer, or None when it has nothing to show; ``plot``:
    :func:`trend_plot`'s file."""
    if isinstance(columns, str):
        return Section("Over time", (Paragraph(text(columns)),))
    if not columns:
        return None
    lead = Paragraph(
        text(
            f"This run's comparisons beside the {len(columns) - 1} earlier run(s) of the same experiment "
            "(same sha256) in the history database, oldest first: each the state and the ratio to the "
            "baseline with its interval. bench-stack trend and regress query the same records "
            "(docs/history.md)."
        )
    )
    caption = (
        "Each comparison's ratio to the baseline with its interval, run by run (log scale, a line at 1)."
    )
    figures = (Figure(plot, caption, "trend"),) if plot else ()
    return Section("Over time", (lead, trend_table(columns), *figures))


def trend_plot(columns: list[RunColumn] | str, run_dir: Path) -> Path | None:
    """plots/trend.png: a line per comparison of this run, its ratio with its interval in each run; None
    with nothing to show. Needs matplotlib."""
    from benchstack.results.layout import PLOTS_DIR

    path = run_dir / PLOTS_DIR / "trend.png"
    if isinstance(columns, str) or not columns:
        path.unlink(missing_ok=True)  # an earlier report's, which plots/ would otherwise show as this one's
        return None
    from benchstack.report.plots import _pyplot, _save, ratio_ticks

    plt = _pyplot()
    keys = sorted(columns[-1].figures)
    several = len({k[0] for k in keys}) > 1
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    ax.axhline(1.0, color="black", lw=1)
    for n, key in enumerate(keys):
        xs, ys, below, above = [], [], [], []
        for x, col in enumerate(columns):
            f = col.figures.get(key)
            if f is None or f.ratio is None:
                continue
            xs.append(x + (n - (len(keys) - 1) / 2) * 0.06)  # side by side, not on top of each other
            ys.append(f.ratio)
            below.append(f.ratio - f.low if f.low is not None else 0.0)
            above.append(f.high - f.ratio if f.high is not None else 0.0)
        if xs:
            ax.errorbar(xs, ys, yerr=[below, above], fmt="o-", capsize=3, ms=5, label=_label(key, several))
    ax.set_yscale("log")
    values = [v for col in columns for f in col.figures.values() for v in (f.ratio, f.low, f.high) if v]
    ticks = ratio_ticks(min(values + [1.0]) / 1.05, max(values + [1.0]) * 1.05)
    ax.set_yticks(ticks, [f"{tick:g}x" for tick in ticks])
    ax.minorticks_off()
    ax.set_xticks(
        range(len(columns)),
        [col.started.strftime("%m-%d %H:%M") if col.started else col.name[:15] for col in columns],
        rotation=30,
        ha="right",
    )
    ax.set(title="Comparisons over time", ylabel="req/s ratio to the baseline (log scale)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    return _save(plt, fig, path)


def trend_columns(
    run_dir: Path,
    cells: Sequence[Cell],
    info: dict[str, Any] | None,
    comparisons: Sequence[Comparison],
) -> list[RunColumn] | str:
    """The earlier runs then this one, [] when there is nothing to show, or one line saying why the
    database could not be read."""
    url = recorded_url(run_dir.parent, existing=True)
    experiment = v if info and isinstance(v := info.get("experiment"), dict) else {}
    if info is None or url is None or not comparisons or not experiment.get("name"):
        return []
    current = this_run(run_dir, cells, info, comparisons)
    try:
        earlier = earlier_runs(url, str(experiment["name"]), info.get("experiment_sha256"), current)
    except Exception as exc:  # noqa: BLE001 - the history is an addition: the report stands without it
        name = type(exc).__name__
        return f"The history database {shown(url)} could not be read ({name}): no earlier runs shown."
    return [*earlier, current] if earlier else []
