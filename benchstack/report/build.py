"""Reports of a run folder: report.md, report.html (with plots), plots/*.png, and
cells.csv, loadpoints.csv and hdr/*.hlog (:mod:`benchstack.report.csvfiles`).

The report is built once from the :class:`RunData` (:func:`build_report`) as a model of ordered sections
(:mod:`benchstack.report.model`), which :mod:`benchstack.report.render` writes as report.md and as
report.html. Under the run's summary (hosts with their CPU, kernel and mode) it leads with the run's verdict
(:mod:`benchstack.analysis.verdict`: whether to trust the figures) and the comparisons of each stack against
the baseline (:mod:`benchstack.analysis.comparison`, as a chart and in words), since they are what a run is
for; both are computed once per run and stored in run.json too. Then the results, the latency and the noise
(the probe before the cells, the host's speed through the run). Each plot sits in the section it belongs to
(:mod:`benchstack.report.plots`). A row of the results table is one load point (stack, tool, keep-alive,
concurrency or offered rate) over its counted repetitions (:func:`benchstack.results.cell.counted`: a
disturbed cell is listed in n and cells.csv, never counted): the median req/s with min-max, the
distribution-free 95 % interval of the median and its half-width over the median (the precision,
:mod:`benchstack.analysis.stats`; marked noisy above the experiment's ``load.target_precision`` from
run.json, default 0.05), outliers (MAD), median mean/p50/p99 latency, errors and the mean error rate.
Plots need matplotlib, imported only when report.html is written (:mod:`benchstack.report.plots`); report.md
links them. The hosts' lines come from :mod:`benchstack.report.hosts`, the latency figures and the
distributions table from :mod:`benchstack.report.latency`.

A run with several targets (:mod:`benchstack.plan.targets`) gets one results table and one distribution table
per target, each under a heading that names the target's host type (CPU model and count, distribution, from
run.json), a "Targets side by side" section that compares each target with the first (as ``bench-stack
compare`` compares two runs), and plots whose lines are ``<stack> @ <target>``. A run with one target's
report is what it always was.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from pathlib import Path
from typing import Any

from benchstack.analysis.checks.base import recorded_load
from benchstack.analysis.comparison import (
    Settings,
    baseline_of,
    comparisons_text,
    grouped,
    intro,
    missing_baseline,
)
from benchstack.analysis.drift import MEANING, drift_text
from benchstack.analysis.loadpoints import (
    error_total,
    groups_of,
    mean_error_rate,
    n_text,
    point_columns,
    point_figures,
)
from benchstack.analysis.summary import (
    RunData,
    analysed_run,
    comparisons_of,
    drift_of,
    threshold_checks_of,
    verdict_of,
)
from benchstack.analysis.thresholds import (
    failed,
    thresholds_text,
)
from benchstack.analysis.verdict import Verdict
from benchstack.common.markdown import markdown_table
from benchstack.common.numbers import as_number, rounded, step_for
from benchstack.measure.probe import floor_text
from benchstack.plan.loadplan import DEFAULT_TARGET_PRECISION, Load
from benchstack.plan.targets import by_target, host_type, run_targets, target_of
from benchstack.provision.dns import PROBE_COLUMNS, probe_table_rows
from benchstack.records.model import ERROR_KINDS
from benchstack.report import render, shipping, trend
from benchstack.report.csvfiles import write_cell_files, write_loadpoints_csv
from benchstack.report.hosts import distinct, host_lines
from benchstack.report.latency import DIST_COLUMNS, distribution_legend, distribution_rows, latency_cell
from benchstack.report.model import (
    CODE,
    STRONG,
    Block,
    Bullets,
    Figure,
    Paragraph,
    Report,
    Section,
    Span,
    Subheading,
    Table,
    Text,
    text,
)
from benchstack.report.render import SLOW_TITLE, cells_text, counts_text, verdict_text
from benchstack.results.cell import Cell, counted, left_out
from benchstack.results.layout import LOADPOINTS_CSV, REPORT_HTML, REPORT_MD

COLUMNS = (
    "stack", "tool", "load", "n", "req/s", "min–max", "95% CI", "±",
    "mean ms", "p50 ms", "p99 ms", "errors", "error rate",
)  # fmt: skip
NOISY = "noisy"
# The report's plots by kind (benchstack.report.plots.KINDS), as write_plots returns them.
Plots = dict[str, list[Path]]


def targets_of(run: RunData) -> dict[str, list[Cell]]:
    """The run's cells by target, in run.json's order of the targets."""
    return by_target(run.cells, run_targets(run.run_info))


def several_targets(run: RunData) -> bool:
    return len(targets_of(run)) > 1


def target_heading(run: RunData, target: str) -> str:
    """A target and its host type, as a heading names it: ``bench-a: AMD EPYC, 2 CPUs, Debian 12.11``."""
    hosts = (run.run_info or {}).get("hosts")
    fingerprint = hosts.get(target) if isinstance(hosts, dict) else None
    return f"{target}: {host_type(fingerprint)}"


def _errors_cell(cells: list[Cell]) -> str:
    total = error_total(cells)
    kinds: dict[str, int] = {}
    for c in cells:
        for kind in ERROR_KINDS:
            n = c.errors.get(kind)
            if n:
                kinds[kind] = kinds.get(kind, 0) + n
    if not kinds:
        return str(total)
    return f"{total} ({', '.join(f'{k} {n}' for k, n in kinds.items())})"


def precision_text(half: float | None, target_precision: float) -> str:
    """The ± column: the median's interval's half-width over the median, marked noisy above the target."""
    if half is None:
        return "-"
    return f"{100 * half:.1f}%" + (f" {NOISY}" if half > target_precision else "")


def compared_points(cells: list[Cell], baseline: str | None) -> set[tuple[str, str, bool, int]]:
    """The load points of ``cells`` that take part in a comparison: the baseline's where another stack was
    measured at the same tool and level, and those other stacks'."""
    keys = set(groups_of(cells))
    points = {k[1:] for k in keys if k[0] == baseline}
    shared = {k[1:] for k in keys if k[0] != baseline} & points
    return {k for k in keys if k[1:] in shared}


def summary_rows(
    cells: list[Cell],
    target_precision: float = DEFAULT_TARGET_PRECISION,
    baseline: str | None = None,
) -> list[dict[str, str]]:
    """One row per load point: req/s statistics over the counted repetitions, median latencies, errors. A
    load point short of ``target_precision`` is marked noisy only where its precision decides: in no
    comparison with ``baseline``."""
    rows = []
    compared = compared_points(cells, baseline)
    for key, group in groups_of(cells).items():
        kept = counted(group)
        figures = point_figures(kept)
        values, interval, middle = figures.rps, figures.interval, figures.median
        rate = mean_error_rate(kept)
        # Each figure to what its interval (else its range) supports: req/s known to +-5 % has no decimals.
        step = step_for(middle or 0.0, figures.spread)
        rows.append(
            {
                **point_columns(key, group),
                "n": n_text(len(kept), len(group) - len(kept), figures.outliers),
                "req/s": rounded(middle, step),
                "min–max": "-"
                if len(values) < 2
                else f"{rounded(min(values), step)}–{rounded(max(values), step)}",
                "95% CI": "-"
                if interval is None
                else f"{rounded(interval.low, step)}–{rounded(interval.high, step)}",
                "±": precision_text(figures.precision, 1.0 if key in compared else target_precision),
                "mean ms": latency_cell(kept, "mean"),
                "p50 ms": latency_cell(kept, "p50"),
                "p99 ms": latency_cell(kept, "p99"),
                "errors": _errors_cell(kept),
                "error rate": "-" if rate is None else f"{100 * rate:.2f}%",
            }
        )
    return rows


def _rows(columns: tuple[str, ...], rows: list[dict[str, str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(row[c] for c in columns) for row in rows)


def results_table(
    cells: list[Cell],
    target_precision: float = DEFAULT_TARGET_PRECISION,
    baseline: str | None = None,
) -> Table:
    """The load points (:func:`summary_rows`), those short of the target precision marked."""
    rows = summary_rows(cells, target_precision, baseline)
    return Table(COLUMNS, _rows(COLUMNS, rows), tuple(row["±"].endswith(NOISY) for row in rows))


def summary_table(
    cells: list[Cell],
    target_precision: float = DEFAULT_TARGET_PRECISION,
    baseline: str | None = None,
) -> str:
    """A Markdown table of the load points, sorted by stack, tool and concurrency (:func:`summary_rows`)."""
    table = results_table(cells, target_precision, baseline)
    return markdown_table(table.columns, table.rows) + "\n"


def summary_tables(cells: list[Cell], run_info: dict[str, Any] | None = None) -> str:
    """The table a run prints at its end (:func:`summary_table`); with several targets one per target, each
    under a heading naming the target's host type."""
    precision = target_precision_of(run_info)
    baseline = baseline_of(run_info, cells)
    return "\n".join(
        (f"### {heading}\n\n" if heading else "") + summary_table(group, precision, baseline)
        for heading, group in _per_target(RunData(Path("."), cells, run_info))
    )


def end_of_run_text(run: RunData) -> str:
    """What a run prints at its end (``bench-stack report`` too): the results table(s), the comparisons
    against the baseline, the verdict."""
    found = comparisons_of(run)
    parts = [
        summary_tables(run.cells, run.run_info),
        comparisons_text(run.cells, run.run_info, found),
        drift_text(drift_of(run)),
        verdict_text(verdict_of(run)),
        thresholds_text(threshold_checks_of(run)),
    ]
    return "\n".join(part for part in parts if part)


def resume_hint(run_dir: str | None) -> str:
    """How to resume the run: both commands, ./run's (no venv to activate) and ansible-playbook's."""
    where = shlex.quote(run_dir) if run_dir else "<this run>"
    return f"./run bench -e bench_run_dir={where} (ansible-playbook bench-stack.yml in the venv, likewise)"


def first_table_text(
    cells: list[Cell],
    run_info: dict[str, Any] | None,
    due: int,
    load: Load,
    run_dir: str | None = None,
) -> str:
    """What a run prints once its regular rounds are stored and extra rounds follow (``due``: the load
    points of the next round): what is still measured and until when, then the table and the comparisons so
    far. A user reads a first answer within minutes and may stop there (a resume measures the rest)."""
    budget = load.max_seconds
    until = f"or {budget} s of measuring have passed (load.max_seconds)" if budget else "or the rounds' bound"
    head = (
        f"First table, after {load.repetitions} rounds. More rounds follow for {due} load point(s), until "
        f"every comparison with the baseline is resolved (faster, slower, or equivalent within "
        f"+-{100 * load.equivalence:g} %) {until}. Ctrl-C keeps every cell; "
        f"{resume_hint(run_dir)} resumes."
    )
    parts = [head, summary_tables(cells, run_info), comparisons_text(cells, run_info)]
    return "\n".join(part for part in parts if part)


def target_precision_of(run_info: dict[str, Any] | None) -> float:
    """The experiment's load.target_precision as recorded in run.json, or the default."""
    value = as_number(recorded_load(run_info).get("target_precision"))
    return DEFAULT_TARGET_PRECISION if value is None else value


def summary_section(run: RunData) -> tuple[str, Section]:
    """The report's title and the run's summary under it: run folder, hosts, mode, cells, the rounds' seed
    and bench-stack's version."""
    info = run.run_info or {}
    exp = info.get("experiment")
    name = exp.get("name") if isinstance(exp, dict) else exp
    lines: list[Text] = [
        text("run: ", Span(run.run_dir.name, CODE)),
        *(text(line) for line in host_lines(run.run_info, run.cells)),
        text(f"mode: {info.get('mode') or distinct(c.mode for c in run.cells)}"),
        text(f"cells: {_cells_count(run.cells)}"),
    ]
    if several_targets(run):
        order = info.get("target_order") or "sequential"
        measured = "one after the other" if order == "sequential" else "at the same time"
        lines.append(text(f"targets: {len(targets_of(run))}, measured {measured}"))
    if info.get("seed") is not None:
        lines.append(text(f"seed of the rounds' random order: {info['seed']}"))
    if info.get("bench_stack_version"):
        lines.append(text(f"bench-stack: {info['bench_stack_version']}"))
    title = f"bench-stack report: {name or distinct(c.experiment for c in run.cells)}"
    return title, Section(None, (Bullets(tuple(lines)),))


def _cells_count(cells: list[Cell]) -> str:
    disturbed = len(left_out(cells))
    if not disturbed:
        return str(len(cells))
    return f"{len(cells)} ({disturbed} disturbed or collapsed: kept, not counted)"


TABLE_LEGEND = (
    "Every figure counts the n counted repetitions only; a disturbed cell (foreign CPU, steal, an overrun) "
    "is kept, listed as '+k disturbed' and measured again. n also says how many req/s figures are outliers "
    "(modified z-score above 3.5, by the median absolute deviation; kept and counted). "
    "req/s: median, with min-max and the 95 % interval of the median (distribution-free, from the order "
    "statistics; '-' below 6 counted repetitions), each rounded to the decade below the interval's "
    "half-width (three significant digits without one); ±: half that interval's width over the median, the "
    "precision ('{noisy}' above load.target_precision, {precision:.1f} %, where it decides: a load point in "
    "no comparison). These absolute figures hold for this sitting on this host (the host speed through "
    "the run is shown under Noise and drift); "
    "mean/p50/p99 latency: median over repetitions, to three significant digits, fewer where the "
    "repetitions spread wider; errors: sum, with the tool's own counters in brackets "
    "(ab counts one bad request under several of them; over_threshold = slower than the threshold); "
    "error rate: mean over repetitions."
)


def legend(run: RunData) -> str:
    return TABLE_LEGEND.format(noisy=NOISY, precision=100 * target_precision_of(run.run_info))


CAPTIONS = {
    "comparisons": "Each stack's req/s against the baseline's: the ratio with its interval (as in the "
    "sentences below), a line at 1 and the grey band of equivalence.",
    "throughput": "Median req/s with the 95 % interval of the median (a point alone below 6 counted "
    "repetitions), fastest on top.",
    "errors": "Mean error rate per load point, requests over load.threshold_ms included.",
    "latency": "Latency percentiles per load point, each the median over the repetitions.",
    "spectrum": "Latency by percentile, each stack's repetitions pooled.",
}


def plot_figures(plots: Plots | None, kind: str) -> list[Block]:
    """The plots of one kind (:data:`benchstack.report.plots.KINDS`) as the report's figures."""
    return [Figure(path, CAPTIONS.get(kind, ""), kind) for path in (plots or {}).get(kind, [])]


def errors_blocks(run: RunData, plots: Plots | None) -> list[Block]:
    """The error-rate plot, or where no counted cell had an error, those words instead of an empty plot."""
    kept = counted(run.cells)
    if kept and not error_total(kept) and not any(c.error_rate for c in kept):
        return [Paragraph(text(f"No errors: every request of the {len(kept)} counted cells succeeded."))]
    return plot_figures(plots, "errors")


def results_section(run: RunData, plots: Plots | None = None) -> Section:
    """The throughput plot(s), the results table(s) with their legend, then the errors."""
    precision = target_precision_of(run.run_info)
    blocks: list[Block] = plot_figures(plots, "throughput")
    for heading, cells in _per_target(run):
        blocks += _headed(heading, results_table(cells, precision, baseline_of(run.run_info, run.cells)))
    return Section("Results", (*blocks, Paragraph(text(legend(run))), *errors_blocks(run, plots)))


def comparisons_section(run: RunData, plots: Plots | None = None) -> Section | None:
    """The run's answer: each stack against the baseline as a chart, then a sentence each under a heading per
    tool and level (and target), then how they are computed."""
    found = comparisons_of(run)
    if not found:
        why = missing_baseline(run.cells, run.run_info)
        return Section("Comparisons", (Paragraph(text(why)),)) if why else None
    blocks: list[Block] = plot_figures(plots, "comparisons")
    for heading, group in grouped(found, several_targets(run)).items():
        blocks += [Subheading(heading), Bullets(tuple(text(c.sentence) for c in group))]
    blocks.append(Paragraph(text(intro(found, Settings.of(run.run_info)))))
    return Section("Comparisons", tuple(blocks))


PROBE_MEANING = (
    "A short load on one stack before the cells: the spread of its req/s, and the share of CPU that went to "
    "other work or to the hypervisor meanwhile."
)


def noise_section(run: RunData) -> Section | None:
    """The noise probe before the cells and the host's speed through the run; None without either."""
    probe = floor_text((run.run_info or {}).get("noise_floor"))
    drift = [d for d in drift_of(run) if d.ratio is not None]
    if not probe and not drift:
        return None
    blocks: list[Block] = []
    if probe:
        blocks += [
            Subheading("Noise probe before the cells"),
            Paragraph(text(PROBE_MEANING)),
            Bullets(tuple(text(line) for line in probe)),
        ]
    if drift:
        blocks += [
            Subheading("Host speed through the run"),
            Bullets(tuple(text(d.sentence) for d in drift)),
            Paragraph(text(MEANING)),
        ]
    return Section("Noise and drift", tuple(blocks))


# Markdown shows the command as code, report.html in <code>.
SIDE_BY_SIDE_COMMAND = "bench-stack compare RUN --targets A B"


def side_by_side(run: RunData) -> list[tuple[str, str, list[str], list[dict[str, str]]]]:
    """(first target, other target, host differences, compare rows) for every target after the first."""
    from benchstack.analysis.compare import compare_rows
    from benchstack.analysis.hostdiff import target_differences

    groups = targets_of(run)
    names = list(groups)
    return [
        (
            names[0],
            other,
            target_differences(run.run_info, names[0], other, groups[names[0]], groups[other]),
            compare_rows(groups[names[0]], groups[other]),
        )
        for other in names[1:]
    ]


def side_by_side_section(run: RunData) -> Section | None:
    """Several targets: each compared with the first (the host differences, then the compare table)."""
    if not several_targets(run):
        return None
    from benchstack.analysis.compare import COLUMNS as COMPARE_COLUMNS
    from benchstack.analysis.compare import differences_heading

    pairs = side_by_side(run)
    intro_text = text(
        "Each target against the first, load point by load point, as ",
        Span(SIDE_BY_SIDE_COMMAND, CODE),
        f" prints it: A is {pairs[0][0]}.",
    )
    blocks: list[Block] = [Paragraph(intro_text)]
    for first, other, differences, rows in pairs:
        blocks += [Subheading(f"{first} -> {other}"), Paragraph(text(differences_heading(differences)))]
        if differences:
            blocks.append(Bullets(tuple(text(d) for d in differences)))
        blocks.append(Table(COMPARE_COLUMNS, _rows(COMPARE_COLUMNS, rows)))
    return Section("Targets side by side", tuple(blocks))


def notes_section(run: RunData) -> Section | None:
    """The parsers' notes, each with the cells (stacks) it came from."""
    notes: dict[str, list[str]] = {}
    several = several_targets(run)
    for cell in run.cells:
        name = cell.stack or "-"
        if several:
            name += f" @ {target_of(cell)}"
        for note in cell.notes:
            notes.setdefault(note, []).append(name)
    if not notes:
        return None
    items = tuple(
        text(f"{note} ({len(stacks)} cells: {', '.join(sorted(set(stacks)))})")
        for note, stacks in notes.items()
    )
    return Section("Notes from the parsers", (Bullets(items),))


def dns_section(run: RunData) -> Section | None:
    """The DNS-caching probe's table per host, when the run includes one (run.json ``dns_probe``)."""
    probes = (run.run_info or {}).get("dns_probe")
    if not isinstance(probes, dict):
        return None
    blocks: list[Block] = []
    for host, probe in sorted(probes.items()):
        if isinstance(probe, dict) and probe.get("rows"):
            head = f"{host}, {probe.get('requests')} requests per runtime and resolver:"
            blocks += [Paragraph(text(head)), Table(PROBE_COLUMNS, tuple(probe_table_rows(probe["rows"])))]
    return Section("DNS lookups per runtime", tuple(blocks)) if blocks else None


def verdict_section(v: Verdict) -> Section:
    """The verdict: each reason with its cells, the load points' statuses, slow responses, what was not
    checked."""
    reasons = tuple(
        text(Span(r.status, STRONG), " ", Span(r.code, CODE), f": {r.message} ({cells_text(r.cells)})")
        for r in v.reasons
    )
    blocks: list[Block] = [
        Bullets(reasons) if reasons else Paragraph(text("No reason to doubt these numbers was found.")),
        Paragraph(
            text(
                f"Load points: {counts_text(v)}. What each reason means and what to do: docs/verdict.md; "
                "run.json names every cell of each reason."
            )
        ),
    ]
    if v.slow:
        slow = tuple(text(f"{s.message} ({cells_text(s.cells)})") for s in v.slow)
        blocks += [Paragraph(text(f"{SLOW_TITLE}:")), Bullets(slow)]
    if v.not_checked:
        blocks += [Paragraph(text("Not checked:")), Bullets(tuple(text(n) for n in v.not_checked))]
    return Section(f"Verdict: {v.status}", tuple(blocks), status=v.status)


THRESHOLD_COLUMNS = ("threshold", "load point", "value", "result", "measured from")
THRESHOLDS_LEGEND = (
    "Each threshold of load.thresholds on each load point it matches, judged on the counted cells: req/s "
    "their median, error rate their mean, latency the pooled requests' (else the median of the cells'), "
    "ratio the comparison's estimate. A threshold without a value fails. Any failed threshold fails the run "
    "with exit code 7 (docs/verdict.md, Exit codes)."
)


def thresholds_section(run: RunData) -> Section | None:
    """Each threshold with its load point, measured value and passed or failed; None without thresholds."""
    checks = threshold_checks_of(run)
    if not checks:
        return None
    bad = failed(checks)
    rows = tuple(
        (c.text, c.load_point, c.value_text, "passed" if c.passed else "FAILED", c.basis) for c in checks
    )
    head = f"{len(checks) - len(bad)} of {len(checks)} passed" + (f"; {len(bad)} failed." if bad else ".")
    return Section(
        "Thresholds",
        (
            Paragraph(text(head)),
            Table(THRESHOLD_COLUMNS, rows, tuple(not c.passed for c in checks)),
            Paragraph(text(THRESHOLDS_LEGEND)),
        ),
    )


def _per_target(run: RunData) -> list[tuple[str | None, list[Cell]]]:
    """(heading, cells) of each table: one per target under a heading naming its host type, or one
    without a heading for a run with one target."""
    if not several_targets(run):
        return [(None, run.cells)]
    return [(target_heading(run, t), cells) for t, cells in targets_of(run).items()]


def _headed(heading: str | None, table: Table) -> list[Block]:
    """A table under its target's heading (none for a run with one target)."""
    return [Subheading(heading), table] if heading else [table]


def distributions_section(run: RunData, plots: Plots | None = None) -> Section | None:
    """The latency percentiles plot, then the pooled and median-of-repetitions percentiles per load point,
    each labelled, and the spectrum of each load point's distributions."""
    blocks: list[Block] = plot_figures(plots, "latency")
    if any(c.latency_dist for c in run.cells):
        for heading, cells in _per_target(run):
            blocks += _headed(heading, Table(DIST_COLUMNS, _rows(DIST_COLUMNS, distribution_rows(cells))))
        blocks += [Paragraph(text(distribution_legend(run.cells))), *plot_figures(plots, "spectrum")]
        return Section("Latency distributions", tuple(blocks))
    return Section("Latency", tuple(blocks)) if blocks else None


def plots_section(problem: str | None) -> Section | None:
    """Why report.html has no plots (report.html only); None when it has them."""
    return Section("Plots", (Paragraph(text(problem)),), in_markdown=False) if problem else None


def build_report(
    run: RunData,
    plots: Plots | None = None,
    plot_problem: str | None = None,
    over_time: Section | None = None,
) -> Report:
    """The report of the run, in its order, with the verdict and the comparisons the run computed once
    (:func:`verdict_of`, :func:`comparisons_of`); ``plots``: the PNG files by kind
    (:func:`benchstack.report.plots.write_plots`), each shown in its section."""
    title, summary = summary_section(run)
    sections = [
        summary,
        verdict_section(verdict_of(run)),
        comparisons_section(run, plots),
        over_time,
        thresholds_section(run),
        results_section(run, plots),
        side_by_side_section(run),
        distributions_section(run, plots),
        noise_section(run),
        plots_section(plot_problem),
        notes_section(run),
        dns_section(run),
        shipping.section(run.run_info, run.cells),
    ]
    return Report(title, tuple(s for s in sections if s is not None))


def plot_cells(run: RunData) -> list[Cell]:
    """The cells as the plots take them: the counted ones; with several targets each line is
    ``<stack> @ <target>``, so one plot shows the targets side by side."""
    kept = counted(run.cells)
    if not several_targets(run):
        return kept
    return [dataclasses.replace(c, stack=f"{c.stack} @ {target_of(c)}") for c in kept]


def write_report(run_dir: str | os.PathLike[str], html_report: bool = True) -> Path:
    """Write ``report.md``, ``cells.csv``, ``loadpoints.csv``, ``hdr/<cell id>.hlog`` and (with
    ``html_report``) ``plots/*.png`` and a self-contained ``report.html`` into the run folder, and the
    verdict and comparisons into run.json; returns the path of report.md. Without matplotlib, report.html
    says so instead of showing plots."""
    return write_run_report(run_dir, html_report)[0]


def write_run_report(run_dir: str | os.PathLike[str], html_report: bool = True) -> tuple[Path, RunData]:
    """:func:`write_report`, also returning the run as read, with the verdict and comparisons it wrote
    (:func:`verdict_of`, :func:`comparisons_of`): what the end of a run prints, without computing them
    again."""
    directory = Path(run_dir)
    run = analysed_run(directory)
    write_cell_files(directory, run.cells)
    write_loadpoints_csv(directory / LOADPOINTS_CSV, run.cells, verdict_of(run), comparisons_of(run))
    plots: Plots = {}
    problem = None
    if html_report:
        try:
            from benchstack.report.plots import write_plots
        except ImportError as exc:  # matplotlib missing
            problem = (
                f"No plots: {exc}. Install matplotlib (requirements.txt) and run bench-stack report again."
            )
        else:
            baseline = baseline_of(run.run_info, run.cells)
            plots = write_plots(
                plot_cells(run), directory, comparisons_of(run), baseline, several_targets(run)
            )
    columns = trend.trend_columns(directory, run.cells, run.run_info, comparisons_of(run))
    trend_png = trend.trend_plot(columns, directory) if html_report and not problem else None
    report = build_report(run, plots, problem, trend.trend_section(columns, trend_png))
    path = directory / REPORT_MD
    path.write_text(render.markdown(report), encoding="utf-8")
    if html_report:
        (directory / REPORT_HTML).write_text(render.html(report), encoding="utf-8")
    return path, run
