"""The run folder's layout: every file and folder name bench-stack writes under ``results/<run>/``, in one
place (docs/results.md describes them for users).

::

    run.json            the run's record (plan, hosts, verdict, stops)
    cells/<id>.json     one measured cell each
    raw/<id>.*          the tool's output and the loadgen's vmstat, as captured
    loadgens/<host>/    each loadgen's own cells/ and raw/ when several loadgens' cells are merged
    hdr/<id>.hlog       each counted cell's latency as an HdrHistogram interval log
    plots/              the report's PNG plots
    dropped/, superseded/   cells set aside by ``bench-stack drop`` and by a resumed run's re-measuring
    report.md, report.html, cells.csv, loadpoints.csv   the report and its tables
    .bench-stack.lock, .bench-stack.workers/, .bench-stack.restarts.json   the running run's bookkeeping
"""

from __future__ import annotations

from pathlib import Path

RUN_INFO = "run.json"
CELLS_DIR = "cells"
RAW_DIR = "raw"
LOADGENS_DIR = "loadgens"
HDR_DIR = "hdr"
PLOTS_DIR = "plots"
DROPPED_DIR = "dropped"
SUPERSEDED_DIR = "superseded"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
CELLS_CSV = "cells.csv"
LOADPOINTS_CSV = "loadpoints.csv"
LOCK_FILE = ".bench-stack.lock"
WORKERS_DIR = ".bench-stack.workers"
RESTARTS_FILE = ".bench-stack.restarts.json"


def loadgen_dir(run_dir: Path, loadgen: str) -> Path:
    """Where one loadgen's own cells and raw files live when several loadgens are merged."""
    return run_dir / LOADGENS_DIR / loadgen
