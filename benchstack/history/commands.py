"""The history's command line: ``bench-stack history``, ``import``, ``trend``, ``regress`` and ``publish``
(docs/history.md). :mod:`benchstack.cli` adds these parsers; SQLAlchemy and Alembic, and boto3, are imported
only when one of these commands runs (boto3: ``publish`` and ``import s3://...``), never by the others.

Exit codes: 0 success (regress: no load point slower than the margin), 1 bad input (no such run, a folder
that is no run, a database that cannot be opened, no destination), 4 (:data:`REGRESSED`) regress found a
load point slower than the previous comparable runs by more than the margin, 5 (:data:`STORE_FAILED`) the
object store failed: unreachable, refused the credentials, no such bucket, a published run not complete or
not as its manifest says."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from benchstack.common.markdown import markdown_table
from benchstack.common.numbers import rounded, step_for
from benchstack.history.defaults import DEFAULT_MARGIN, DEFAULT_PREVIOUS
from benchstack.results.location import ENV_VAR as PUBLISH_ENV_VAR
from benchstack.results.location import (
    LocationError,
    StoreError,
    endpoint_problem,
    parse_store_url,
    run_location,
)

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from benchstack.history.queries import PointCheck
    from benchstack.history.schema import RunRow

REGRESSED = 4
STORE_FAILED = 5
DEFAULT_LIMIT = 20
# Where a run's results are by default: the project's results/ (as the playbooks write them).
RESULTS_DIR = Path(__file__).resolve().parents[2] / "results"


def _err(message: str) -> None:
    print(f"bench-stack: {message}", file=sys.stderr)


def _db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        metavar="URL",
        help="the history database: an SQLAlchemy URL (postgresql+psycopg://user@host/db) or an SQLite file; "
        "default $BENCH_STACK_DB, else results/history.sqlite",
    )


def _endpoint_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--endpoint-url",
        metavar="URL",
        help="the S3-compatible store's endpoint (default $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else "
        "AWS); "
        "credentials and region from the AWS variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
        "AWS_DEFAULT_REGION) or AWS_PROFILE",
    )


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the history's subcommands to ``sub`` (:data:`COMMANDS` runs each)."""
    _add_reading(sub)
    _add_regress_and_publish(sub)


def _add_reading(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``history``, ``import`` and ``trend``: what the database holds, and what goes into it."""
    p = sub.add_parser("history", help="list the runs recorded in the history database, oldest first")
    p.add_argument("--experiment", help="only the runs of this experiment")
    p.add_argument("--stack", help="only the runs that measured this stack")
    p.add_argument("--host", help="only the runs with this host (target or loadgen)")
    p.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, help=f"the newest N runs (default {DEFAULT_LIMIT})"
    )
    _db_option(p)

    p = sub.add_parser(
        "import",
        help="record run folders in the history database (a run already there and unchanged: nothing; a "
        "changed one, e.g. resumed with more cells: updated); s3://bucket/prefix/RUN: a published run, "
        "downloaded and checked against its manifest first",
    )
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    _endpoint_option(p)
    _db_option(p)

    p = sub.add_parser(
        "trend",
        help="a stack's load points over the recorded runs of an experiment: median req/s with its 95%% "
        "interval, and its comparison's ratio to the baseline",
    )
    p.add_argument("experiment")
    p.add_argument("--stack", required=True)
    p.add_argument("--tool", help="only this load tool's load points")
    p.add_argument("--level", type=int, help="only this concurrency (or offered rate)")
    p.add_argument("--host", help="only the runs on this target")
    _db_option(p)


def _add_regress_and_publish(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``regress`` and ``publish``: a run against its predecessors, and a run folder to a store."""
    p = sub.add_parser(
        "regress",
        help="check a run against the previous runs of its experiment on a comparable host; exit "
        f"{REGRESSED} when a load point is slower by more than the margin",
    )
    p.add_argument(
        "run", help="a run folder (imported first) or a recorded run's folder name or uid (6+ characters)"
    )
    p.add_argument(
        "--margin",
        type=float,
        default=DEFAULT_MARGIN,
        help=f"slower only when the ratio's whole interval is below 1 - MARGIN (default {DEFAULT_MARGIN})",
    )
    p.add_argument(
        "--previous",
        type=int,
        default=DEFAULT_PREVIOUS,
        help=f"how many previous comparable runs to hold it against (default {DEFAULT_PREVIOUS})",
    )
    _db_option(p)

    p = sub.add_parser(
        "publish",
        help="upload a run folder to an S3-compatible store under PREFIX/RUN/, then its manifest (sha256 of "
        "every file): only what the store lacks, so again uploads nothing and a cut-short publish resumes",
    )
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    p.add_argument("--to", metavar="s3://BUCKET/PREFIX", help=f"where (default ${PUBLISH_ENV_VAR})")
    _endpoint_option(p)


def _open(args: argparse.Namespace) -> Engine | None:
    from sqlalchemy.exc import SQLAlchemyError

    from benchstack.history.database import open_database, shown_url
    from benchstack.history.defaults import database_url

    url = database_url(args.db, RESULTS_DIR)
    try:
        return open_database(url)
    except (SQLAlchemyError, OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        _err(f"cannot open the history database {shown_url(url)}: {first}")
        return None


def _when(run: RunRow) -> str:
    from benchstack.history.queries import utc

    started = utc(run.started_at)
    return started.strftime("%Y-%m-%d %H:%M") if started else "-"


def _hosts(run: RunRow) -> str:
    return ", ".join(f"{h.name} ({h.cpu_count or '?'}x {h.cpu_model or '?'})" for h in run.hosts) or "-"


def cmd_history(args: argparse.Namespace) -> int:
    from benchstack.history.queries import runs

    engine = _open(args)
    if engine is None:
        return 1
    found = runs(engine, args.experiment, args.stack, args.host, args.limit)
    if not found:
        print("no runs recorded" + (" that match" if args.experiment or args.stack or args.host else ""))
        return 0
    columns = (
        "started (UTC)",
        "run",
        "experiment",
        "verdict",
        "mode",
        "hosts",
        "cells",
        "load points",
        "uid",
    )
    rows = tuple(
        (
            _when(r),
            r.name,
            r.experiment,
            r.verdict,
            r.mode or "-",
            _hosts(r),
            str(r.cells),
            str(len(r.load_points)),
            r.uid[:12],
        )
        for r in found
    )
    print(markdown_table(columns, rows))
    return 0


def _endpoint_given(args: argparse.Namespace) -> bool:
    """False (the problem printed) when --endpoint-url is no http(s) URL."""
    problem = endpoint_problem(args.endpoint_url) if args.endpoint_url else None
    if problem:
        _err(f"--endpoint-url: {problem}")
    return problem is None


def cmd_import(args: argparse.Namespace) -> int:
    from benchstack.history.database import HistoryError
    from benchstack.history.record import import_run

    published = [r for r in args.run_dirs if r.startswith("s3://")]
    for url in published:
        try:
            run_location(url)
        except LocationError as exc:
            _err(str(exc))
            return 1
    if published and not _endpoint_given(args):
        return 1
    engine = _open(args)
    if engine is None:
        return 1
    failed, store_failed = 0, False
    for run_dir in args.run_dirs:
        try:
            if run_dir.startswith("s3://"):
                print(_import_published(engine, run_dir, args.endpoint_url))
            else:
                print(import_run(engine, run_dir).line())
        except HistoryError as exc:
            _err(str(exc))
            failed += 1
        except StoreError as exc:
            _err(str(exc))
            store_failed = True
    return STORE_FAILED if store_failed else 1 if failed else 0


def _import_published(engine: Engine, url: str, endpoint_url: str | None) -> str:
    """``import s3://bucket/prefix/RUN``: the published run downloaded into a temporary folder named RUN,
    every file checked against the manifest, then imported as a run folder; recorded at its URL."""
    from benchstack.history.publish import fetch_run, open_store
    from benchstack.history.record import import_run

    dest, name = run_location(url)
    store = open_store(endpoint_url)
    with tempfile.TemporaryDirectory(prefix="bench-stack-import-") as tmp:
        run_dir = fetch_run(store, dest, name, Path(tmp))
        done = import_run(engine, run_dir, recorded_path=dest.url(name))
    return f"{done.outcome}: {dest.url(name)} ({done.uid[:12]})"


def cmd_publish(args: argparse.Namespace) -> int:
    from benchstack.history.publish import open_store, publish_run

    to = args.to or os.environ.get(PUBLISH_ENV_VAR)
    if not to:
        _err(f"publish: where to? give --to s3://bucket/prefix or set {PUBLISH_ENV_VAR}")
        return 1
    try:
        dest = parse_store_url(to)
    except LocationError as exc:
        _err(f"--to: {exc}")
        return 1
    if not _endpoint_given(args):
        return 1
    if not args.run_dir.is_dir():
        _err(f"{args.run_dir}: not a directory")
        return 1
    try:
        print(publish_run(open_store(args.endpoint_url), args.run_dir, dest).line())
    except ValueError as exc:
        _err(str(exc))
        return 1
    except StoreError as exc:
        _err(str(exc))
        return STORE_FAILED
    return 0


def _rps(value: float | None, low: float | None, high: float | None) -> tuple[str, str]:
    spread = (high - low) / 2 if low is not None and high is not None else None
    step = step_for(value or 0.0, spread)
    interval = "-" if low is None or high is None else f"{rounded(low, step)}–{rounded(high, step)}"
    return rounded(value, step), interval


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _interval(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"{low:.3f}–{high:.3f}"


def cmd_trend(args: argparse.Namespace) -> int:
    from benchstack.analysis.loadpoints import load_label
    from benchstack.history.queries import trend
    from benchstack.results.cell import level_label

    engine = _open(args)
    if engine is None:
        return 1
    found = trend(engine, args.experiment, args.stack, args.tool, args.level, args.host)
    if not found:
        _err(f"no recorded run of {args.experiment} measured {args.stack} at that load point")
        return 1
    columns = (
        "started (UTC)", "run", "verdict", "target", "tool", "load", "n", "req/s", "95% CI",
        "vs baseline", "ratio", "interval", "pairs",
    )  # fmt: skip
    rows = []
    for t in found:
        p = t.point
        rps, interval = _rps(p.median_rps, p.ci_low, p.ci_high)
        rows.append(
            (
                _when(t.run),
                t.run.name,
                t.run.verdict,
                p.target,
                load_label(p.tool, p.keepalive),
                level_label(p.tool, p.level),
                str(p.counted),
                rps,
                interval,
                f"{t.comparison_state} ({t.baseline})" if t.comparison_state else "-",
                _ratio(t.ratio),
                _interval(t.low, t.high),
                "-" if t.pairs is None else str(t.pairs),
            )
        )
    print(markdown_table(columns, tuple(rows)))
    return 0


def _check_row(c: PointCheck) -> tuple[str, ...]:
    from benchstack.analysis.loadpoints import load_label
    from benchstack.results.cell import level_label

    target, stack, tool, keepalive, level = c.key
    return (
        stack,
        target,
        load_label(tool, keepalive),
        level_label(tool, level),
        _rps(c.median, None, None)[0],
        _rps(c.reference, None, None)[0],
        str(c.previous),
        _ratio(c.ratio),
        _interval(c.low, c.high),
        c.state,
    )


def _run_of(engine: Engine, key: str) -> RunRow:
    """A run folder is imported first (so CI checks the run it just made); else a recorded run."""
    from benchstack.history.queries import find_run
    from benchstack.history.record import import_run

    path = Path(key)
    if path.is_dir():
        return find_run(engine, import_run(engine, path).uid)
    return find_run(engine, key)


def cmd_regress(args: argparse.Namespace) -> int:
    from benchstack.history.database import HistoryError
    from benchstack.history.queries import regression

    if not 0 <= args.margin < 1:
        _err(f"--margin: must be at least 0 and below 1, not {args.margin}")
        return 1
    engine = _open(args)
    if engine is None:
        return 1
    try:
        run = _run_of(engine, args.run)
    except HistoryError as exc:
        _err(str(exc))
        return 1
    found = regression(engine, run, args.margin, args.previous)
    print(f"run {run.name} ({run.experiment}, {_when(run)} UTC, verdict {run.verdict})")
    if not found.previous:
        print("no previous run of this experiment on a comparable host (docs/history.md): nothing to check")
        return 0
    print(
        f"against {len(found.previous)} previous comparable run(s): "
        + ", ".join(r.name for r in found.previous)
    )
    columns = ("stack", "target", "tool", "load", "req/s", "before", "runs", "ratio", "interval", "state")
    print(markdown_table(columns, tuple(_check_row(c) for c in found.checks)))
    slower = found.slower
    if slower:
        print(
            f"REGRESSION: {len(slower)} load point(s) slower than before by more than "
            f"{100 * args.margin:g} %: " + ", ".join(c.key[1] for c in slower)
        )
        return REGRESSED
    print(f"no load point slower than before by more than {100 * args.margin:g} %")
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "history": cmd_history,
    "import": cmd_import,
    "trend": cmd_trend,
    "regress": cmd_regress,
    "publish": cmd_publish,
}
