"""A run's analysis, computed once and shared: the verdict, the comparisons with the baseline, the host's
drift and the thresholds of a run folder's cells (:class:`RunData`, each computed on first use), and the one
summary per load point that loadpoints.csv, the history and the report read (:func:`loadpoint_rows`).
:func:`analysed_run` stores the run's answer in run.json (the report step calls it, then renders)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchstack.analysis.comparison import Comparison, baseline_of, run_comparisons
from benchstack.analysis.drift import Drift, host_drift
from benchstack.analysis.loadpoints import error_total, latency_median, mean_error_rate
from benchstack.analysis.thresholds import ThresholdCheck, check_thresholds, thresholds_of
from benchstack.analysis.verdict import Verdict, run_verdict
from benchstack.plan.targets import by_target_point
from benchstack.results.cell import Cell, counted, load_cells
from benchstack.results.runfolder import read_run_info, store_analysis


@dataclass
class RunData:
    run_dir: Path
    cells: list[Cell]
    run_info: dict[str, Any] | None
    verdict: Verdict | None = None  # computed on first use (verdict_of)
    comparisons: list[Comparison] | None = None  # computed on first use (comparisons_of)
    drift: list[Drift] | None = None  # computed on first use (drift_of)
    thresholds: list[ThresholdCheck] | None = None  # computed on first use (threshold_checks_of)


def verdict_of(run: RunData) -> Verdict:
    """The run's verdict (:mod:`benchstack.analysis.verdict`), computed once."""
    if run.verdict is None:
        run.verdict = run_verdict(run.run_dir, run.cells, run.run_info, comparisons_of(run))
    return run.verdict


def drift_of(run: RunData) -> list[Drift]:
    """The host's speed through the run, from the baseline's cells (:mod:`benchstack.analysis.drift`),
    computed once."""
    if run.drift is None:
        run.drift = host_drift(run.cells, baseline_of(run.run_info, run.cells))
    return run.drift


def comparisons_of(run: RunData) -> list[Comparison]:
    """Each stack against the baseline (:mod:`benchstack.analysis.comparison`), computed once."""
    if run.comparisons is None:
        run.comparisons = run_comparisons(run.cells, run.run_info)
    return run.comparisons


def threshold_checks_of(run: RunData) -> list[ThresholdCheck]:
    """The experiment's thresholds on the run's counted cells (:mod:`benchstack.analysis.thresholds`),
    computed once."""
    if run.thresholds is None:
        run.thresholds = check_thresholds(run.cells, thresholds_of(run.run_info), comparisons_of(run))
    return run.thresholds


def loadpoint_rows(
    cells: list[Cell], verdict: Verdict, comparisons: list[Comparison]
) -> list[dict[str, Any]]:
    """The rows of loadpoints.csv, as values (:func:`csv_value` writes them): the run's ``verdict`` and
    ``comparisons`` as the report computed them once (:func:`verdict_of`,
    :func:`comparisons_of`)."""
    groups = by_target_point(cells)
    # As run.json holds them (figures rounded as there).
    compared = {
        (c["target"], c["stack"], c["tool"], c["keepalive"], c["level"]): c
        for c in (found.to_dict() for found in comparisons)
    }
    rows = []
    for p in verdict.load_points:
        key = (p.stack, p.tool, p.keepalive, p.level)
        kept = counted(groups.get((p.target or "-", key), []))
        comparison = compared.get((p.target, *key))
        rows.append(
            {
                "target": p.target,
                "stack": p.stack,
                "tool": p.tool,
                "keepalive": p.keepalive,
                "level": p.level,
                "status": p.status,
                "counted": p.counted,
                "disturbed": p.disturbed,
                "median_rps": p.median_rps,
                "ci_low": p.ci_low,
                "ci_high": p.ci_high,
                "precision": p.precision,
                **{f"latency_{k}_ms": latency_median(kept, k) for k in ("mean", "p50", "p99")},
                "error_count": error_total(kept),
                "error_rate": mean_error_rate(kept),
                "baseline": comparison["baseline"] if comparison else None,
                "state": comparison["state"] if comparison else None,
                "ratio": comparison["ratio"] if comparison else None,
                "low": comparison["low"] if comparison else None,
                "high": comparison["high"] if comparison else None,
                "pairs": comparison["pairs"] if comparison else None,
            }
        )
    return rows


def analysed_run(run_dir: Path) -> RunData:
    """The run folder read, and what the analysis decided stored in its run.json once: the verdict, the
    comparisons, the host's drift and the thresholds' checks (when the experiment has thresholds)."""
    run = RunData(run_dir, load_cells(run_dir), read_run_info(run_dir))
    checks = [c.to_dict() for c in threshold_checks_of(run)] if thresholds_of(run.run_info) else None
    store_analysis(
        run_dir,
        verdict_of(run),
        [c.to_dict() for c in comparisons_of(run)],
        [d.to_dict() for d in drift_of(run)],
        checks,
    )
    return run
