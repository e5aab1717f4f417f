"""bench-stack command line: parse, report, compare, validate, experiment, hist, drop; and the history of
runs: history, import, trend, regress, publish (benchstack.history.commands).

Exit codes (one scheme with ./run bench: benchstack.common.exitcodes, docs/verdict.md): 0 success; 1 error,
nothing judged: the input is bad (unparsable output, invalid cells or experiment, no cells); 2 wrong usage
(argparse); 3 the verdict is invalid (validate --strict), or compare --strict: the runs' hosts or setup
differ; 4 a regression: compare --fail-on-regression (a load point of B slower than A by more than the margin)
or regress (slower than the previous comparable runs by more than the margin); 5 the
object store failed (publish, import s3://); 6 the verdict is noisy (validate --strict, unless --fail-on
invalid); 7 a threshold failed (validate --strict: load.thresholds; --fail-on-slow: slow responses above
load.max_error_rate).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchstack import __version__
from benchstack.analysis.compare import (
    DEFAULT_MARGIN,
    compare_table,
    differences_text,
    regression_text,
    regressions,
)
from benchstack.analysis.comparison import baseline_of, comparisons_text, run_comparisons
from benchstack.analysis.hostdiff import run_differences, target_differences
from benchstack.analysis.thresholds import check_thresholds, failed, thresholds_of, thresholds_text
from benchstack.analysis.verdict import run_verdict, slow_above_limit
from benchstack.common.exitcodes import (
    DEFAULT_FAIL_ON,
    FAIL_ON,
    INVALID,
    NOISY,
    REGRESSION,
    THRESHOLD_FAILED,
    gate_code,
)
from benchstack.common.inputs import (
    MAX_EXPERIMENT_BYTES,
    MAX_OUTPUT_BYTES,
    InputError,
    load_yaml,
    read_bounded,
    read_bounded_stream,
)
from benchstack.history import commands as history_commands
from benchstack.kinds.loadtools import TOOLS, parse
from benchstack.kinds.stackfields import DEFAULT_ROOTS, Roots
from benchstack.measure.drop import DropError, drop_cells
from benchstack.plan.checked import PlanRefused, PlanRequest, checked_plan
from benchstack.plan.settings import setting_problems
from benchstack.plan.targets import by_target, run_targets
from benchstack.records.model import ParseError
from benchstack.report.build import end_of_run_text, write_run_report
from benchstack.report.hdrlog import hlog_name
from benchstack.report.hist import HistError, csv_name, csv_text, hist, hlog_text
from benchstack.report.render import verdict_text
from benchstack.results.cell import (
    Cell,
    cell_paths,
    cell_to_dict,
    dumps_cell,
    load_cells,
    make_cell,
    stored_cell_problems,
    validate_cell,
)
from benchstack.results.files import read_json
from benchstack.results.formats import validate_run_info
from benchstack.results.layout import RUN_INFO
from benchstack.results.runfolder import read_run_info

STRICT_FAILED = INVALID
# The project's experiments/ folder, where a bare experiment name is looked up (as the playbook does).
PROJECT_DIR = Path(__file__).resolve().parent.parent


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench-stack", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"bench-stack {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_add_parse, _add_report_and_compare, _add_validate, _add_experiment, _add_hist_and_drop):
        add(sub)
    history_commands.add_parsers(sub)
    return parser


def _add_parse(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``parse``: one output file into a cell."""
    p = sub.add_parser("parse", help="parse one load-tool output file and print the cell JSON")
    p.add_argument("--tool", required=True, choices=sorted(TOOLS))
    p.add_argument("file", type=Path, help="captured output ('-' for stdin)")
    p.add_argument("--experiment")
    p.add_argument("--stack")
    p.add_argument("--target")
    p.add_argument("--loadgen")
    p.add_argument("--mode", choices=("loopback", "network"))
    p.add_argument("--url")
    p.add_argument("--command", dest="cmd", help="the command that produced the output")
    p.add_argument("--requests", type=int)
    p.add_argument("--duration-s", type=int)
    p.add_argument("--repetition", type=int)
    p.add_argument("--started-at", help="ISO 8601 UTC time the cell started")
    p.add_argument("--elapsed-s", type=float)
    p.add_argument("--threshold-ms", type=float)
    p.add_argument("--raw-output", help="path of the raw output relative to the run folder")


def _add_report_and_compare(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``report`` and ``compare``: a run's report, two runs (or targets) side by side."""
    p = sub.add_parser(
        "report",
        help="write report.md, report.html (with plots/*.png), cells.csv, loadpoints.csv and hdr/<cell>.hlog "
        "of a run; print the table",
    )
    p.add_argument("run_dir", type=Path)

    p = sub.add_parser(
        "compare",
        help="compare two runs: the host and setup differences, then median req/s and p99 per load point, "
        "with significance; one run: its stacks against its baseline",
    )
    p.add_argument("run_a", type=Path)
    p.add_argument(
        "run_b",
        type=Path,
        nargs="?",
        help="the other run (not with --targets); without it, RUN_A's comparisons against its baseline",
    )
    p.add_argument(
        "--targets",
        nargs=2,
        metavar=("A", "B"),
        help="compare two targets of one run (RUN_A): target A's load points against target B's",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help=f"refuse to compare (exit {STRICT_FAILED}) when the hosts or setup differ in anything listed",
    )
    p.add_argument(
        "--fail-on-regression",
        action="store_true",
        help=f"two runs: exit {REGRESSION} when a load point of B is slower than A by more than the margin: "
        "the 95 %% interval of B's req/s over A's (Hodges-Lehmann, Mann-Whitney) lies wholly below "
        "1 - margin",
    )
    p.add_argument(
        "--margin",
        type=_share,
        default=DEFAULT_MARGIN,
        help="with --fail-on-regression: the slowdown tolerated, a share of A's req/s "
        "(default %(default)s = 5 %%)",
    )


def _add_validate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``validate``: a run folder against the published formats (and its verdict)."""
    p = sub.add_parser(
        "validate", help="validate the cells of a run folder and its run.json (and its verdict with --strict)"
    )
    p.add_argument("run_dir", type=Path)
    p.add_argument(
        "--strict",
        action="store_true",
        help=f"also judge the run as its playbook's gate does: the verdict and load.thresholds; exit "
        f"{INVALID} when the verdict is invalid, {THRESHOLD_FAILED} when a threshold failed, {NOISY} when it "
        "is noisy (see --fail-on)",
    )
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default=None,
        help=f"with --strict (implied): what fails, as the playbook's bench_fail_on (default "
        f"{DEFAULT_FAIL_ON}): noisy, anything but valid; invalid, only an invalid verdict; never, nothing "
        "(exit 0 whatever the verdict); a failed threshold fails unless never",
    )
    p.add_argument(
        "--fail-on-noisy",
        action="store_true",
        help="the same as --fail-on noisy (the default of --strict since run.json v6)",
    )
    p.add_argument(
        "--fail-on-slow",
        action="store_true",
        help=f"with --strict (implied), exit {THRESHOLD_FAILED} when a cell's share of responses slower than "
        "load.threshold_ms is above load.max_error_rate (slow responses never make the verdict invalid)",
    )


def _add_experiment(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``experiment``: an experiment's plan, checked as the plan play checks it."""
    p = sub.add_parser(
        "experiment",
        help="compile an experiment's plan as the playbook does (same checks) and print its cells as JSON",
    )
    p.add_argument("file", help="experiments/NAME.yml by NAME, or a path")
    p.add_argument("--plan", action="store_true", help="print the whole resolved plan")
    p.add_argument(
        "--yes",
        action="store_true",
        help="accept a plan over the limits a user may lift (hours of cells, hundreds of app server "
        "processes): the playbook's -e bench_yes=true",
    )
    p.add_argument(
        "--vars",
        type=Path,
        metavar="FILE",
        help="a YAML file of variables as the playbook's -e @FILE takes them (role variables, bench_* "
        "settings, the roots, bench_results_dir, bench_run_dir), checked as the plan play checks them",
    )
    p.add_argument("--run-root", default=DEFAULT_ROOTS.run, help="bench_run_root (default %(default)s)")
    p.add_argument("--app-root", default=DEFAULT_ROOTS.apps, help="bench_app_root (default %(default)s)")
    p.add_argument(
        "--unit-config-dir", default=DEFAULT_ROOTS.units, help="bench_unit_config_dir (default %(default)s)"
    )


def _add_hist_and_drop(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``hist`` and ``drop``: cells' latency distributions, and cells to measure again."""
    p = sub.add_parser(
        "hist", help="print cells' latency distributions (merged cells too) and export them as CSV"
    )
    p.add_argument("run_dir", type=Path)
    p.add_argument(
        "cell_ids",
        nargs="+",
        metavar="CELL",
        help="a cell id, a cell file's path in the run folder, or a cell file's path as given "
        "(RUN/cells/ID.json, absolute)",
    )
    p.add_argument(
        "--csv",
        metavar="DIR",
        help="write DIR/<cell_id>.csv (value_us,count,percentile) for each cell; '-': CSV of one cell "
        "(or of the pooled cells) on stdout instead of the summary",
    )
    p.add_argument(
        "--hlog",
        metavar="DIR",
        help="write DIR/<cell_id>.hlog, an HdrHistogram interval log, for each cell (with --pool: "
        "DIR/pooled.hlog, one interval per pooled cell); '-': one log on stdout instead of the summary",
    )
    p.add_argument(
        "--pool",
        action="store_true",
        help="pool the cells into one distribution (repetitions), leaving out disturbed and collapsed cells "
        "as the report does",
    )
    p.add_argument(
        "--all", action="store_true", help="with --pool: pool the disturbed and collapsed cells too"
    )

    p = sub.add_parser(
        "drop",
        help="move stored cells of a run (and their raw files) into RUN/dropped/, so that resuming the run "
        "(-e bench_run_dir=RUN) measures them again",
    )
    p.add_argument("run_dir", type=Path)
    p.add_argument(
        "cell_ids", nargs="+", metavar="CELL_ID", help="a cell id, or a cell file's path in the run folder"
    )


SHARE_TEXT = "must be a share from 0 to below 1 (0.05 = 5 %), not {!r}"


def _share(text: str) -> float:
    """--margin: a share from 0 to below 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(SHARE_TEXT.format(text)) from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(SHARE_TEXT.format(text))
    return value


def _err(message: str) -> None:
    print(f"bench-stack: {message}", file=sys.stderr)


def _cmd_parse(args: argparse.Namespace) -> int:
    # Within bounds, and only a regular file: /dev/zero grew to gigabytes, a FIFO waited forever.
    try:
        data = (
            read_bounded_stream(sys.stdin.buffer, MAX_OUTPUT_BYTES)
            if str(args.file) == "-"
            else read_bounded(args.file, MAX_OUTPUT_BYTES)
        )
    except InputError as exc:
        _err(f"{args.file}: {exc}")
        return 1
    except OSError as exc:  # standard input closed or unreadable
        _err(f"cannot read {args.file}: {exc.strerror}")
        return 1
    text = data.decode("utf-8", errors="replace")
    try:
        parsed = parse(args.tool, text)
    except ParseError as exc:
        _err(f"{args.file}: {exc}")
        return 1
    meta = {
        "experiment": args.experiment,
        "stack": args.stack,
        "target": args.target,
        "loadgen": args.loadgen,
        "mode": args.mode,
        "url": args.url,
        "command": args.cmd,
        "requests": args.requests,
        "duration_s": args.duration_s,
        "repetition": args.repetition,
        "started_at": args.started_at,
        "elapsed_s": args.elapsed_s,
        "threshold_ms": args.threshold_ms,
        "raw_output": args.raw_output,
    }
    cell = cell_to_dict(make_cell(parsed, **meta))
    problems = validate_cell(cell)
    if problems:
        _err("the resulting cell is invalid: " + "; ".join(problems))
        return 1
    print(dumps_cell(cell), end="")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    if not args.run_dir.is_dir():
        _err(f"{args.run_dir}: not a directory")
        return 1
    try:
        stored = load_cells(args.run_dir)
        if not stored:
            _err(f"{args.run_dir}: no cells (expected cells/*.json)")
            return 1
        path, run = write_run_report(args.run_dir)
    except ValueError as exc:
        _err(str(exc))
        return 1
    print(end_of_run_text(run), end="")
    print(
        f"\nwrote {path}, {path.with_name('report.html')}, {path.with_name('cells.csv')}, "
        f"{path.with_name('loadpoints.csv')}, {path.with_name('hdr')}/ and plots/"
    )
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    if args.run_b is not None and args.targets is not None:
        _err("compare: give two runs (RUN_A RUN_B), one run and --targets A B, or one run")
        return 2
    if args.fail_on_regression and (args.run_b is None or args.targets is not None):
        _err("compare: --fail-on-regression compares two runs: give RUN_A RUN_B")
        return 2
    if args.targets:
        return _compare_targets(args)
    if args.run_b is None:
        return _compare_to_baseline(args.run_a)
    runs, infos = [], []
    for run_dir in (args.run_a, args.run_b):
        read = _read_run(run_dir)
        if read is None:
            return 1
        runs.append(read[0])
        infos.append(read[1])
    differences = run_differences(infos[0], infos[1])
    if args.strict and differences:
        print(f"A: {args.run_a}\nB: {args.run_b}\n\n" + "\n".join(differences_text(differences)))
        _err("--strict: not comparing: the hosts or setup differ (listed above)")
        return STRICT_FAILED
    orders = [run_targets(info) for info in infos]
    bases = {baseline_of(info, cells) for info, cells in zip(infos, runs, strict=True)}
    baseline = bases.pop() if len(bases) == 1 else None
    print(
        compare_table(
            runs[0], runs[1], str(args.run_a), str(args.run_b), differences, orders[0], orders[1], baseline
        ),
        end="",
    )
    if not args.fail_on_regression:
        return 0
    checks = regressions(runs[0], runs[1], args.margin, *orders)
    print(regression_text(checks, args.margin), end="")
    slower = [c.label for c in checks if c.regressed]
    if slower:
        _err(
            f"--fail-on-regression: {len(slower)} load point(s) of B slower than A by more than "
            f"{100 * args.margin:g} %: {', '.join(slower)}"
        )
        return REGRESSION
    return 0


def _compare_to_baseline(run_dir: Path) -> int:
    """``compare RUN``: the run's stacks against its baseline, as the end of the run prints them."""
    read = _read_run(run_dir)
    if read is None:
        return 1
    print(comparisons_text(*read) or "One stack: nothing to compare.\n", end="")
    return 0


def _read_run(run_dir: Path) -> tuple[list[Cell], dict[str, Any] | None] | None:
    """A run folder's cells and run.json for compare; None (the problem printed) when it has none."""
    if not run_dir.is_dir():
        _err(f"{run_dir}: not a directory")
        return None
    try:
        cells = load_cells(run_dir)
        info = read_run_info(run_dir)
    except ValueError as exc:
        _err(str(exc))
        return None
    if not cells:
        _err(f"{run_dir}: no cells (expected cells/*.json)")
        return None
    return cells, info


def _compare_targets(args: argparse.Namespace) -> int:
    """``compare RUN --targets A B``: two targets of one run, as two runs are compared."""
    run_dir = args.run_a
    if not run_dir.is_dir():
        _err(f"{run_dir}: not a directory")
        return 1
    try:
        groups = by_target(load_cells(run_dir))
        info = read_run_info(run_dir)
    except ValueError as exc:
        _err(str(exc))
        return 1
    target_a, target_b = args.targets
    for name in (target_a, target_b):
        if name not in groups:
            _err(f"{run_dir}: no cells of target {name} (its targets: {', '.join(groups) or 'none'})")
            return 1
    a, b = groups[target_a], groups[target_b]
    differences = target_differences(info, target_a, target_b, a, b)
    name_a, name_b = f"{run_dir} target {target_a}", f"{run_dir} target {target_b}"
    if args.strict and differences:
        print(f"A: {name_a}\nB: {name_b}\n\n" + "\n".join(differences_text(differences)))
        _err("--strict: not comparing: the targets or their loadgens differ (listed above)")
        return STRICT_FAILED
    print(compare_table(a, b, name_a, name_b, differences), end="")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    paths = cell_paths(args.run_dir)
    if not paths:
        _err(f"{args.run_dir}: no cells (expected cells/*.json)")
        return 1
    bad_cells = 0
    for path in paths:
        # The reading and check report and compare make too (benchstack.results.cell.read_cell).
        try:
            problems = stored_cell_problems(read_json(path, "a cell"), path)
        except ValueError as exc:
            problems = [str(exc).removeprefix(f"{path}: ")]
        for problem in problems:
            print(f"{path}: {problem}")
        bad_cells += bool(problems)
    info = args.run_dir / RUN_INFO
    info_problems = _run_info_problems(info) if info.exists() else []
    for problem in info_problems:
        print(f"{info}: {problem}")
    print(f"{len(paths) - bad_cells} of {len(paths)} cells valid")
    if info.exists():
        print(f"{RUN_INFO}: {'valid' if not info_problems else 'not valid'}")
    if bad_cells or info_problems:
        return 1
    if not (args.strict or args.fail_on or args.fail_on_noisy or args.fail_on_slow):
        return 0
    if args.fail_on_noisy and args.fail_on not in (None, "noisy"):
        _err(f"validate: --fail-on-noisy and --fail-on {args.fail_on} contradict each other")
        return 2
    fail_on = args.fail_on or DEFAULT_FAIL_ON
    try:
        cells, info = load_cells(args.run_dir), read_run_info(args.run_dir)
        comparisons = run_comparisons(cells, info)
        verdict = run_verdict(args.run_dir, cells, info, comparisons)
    except ValueError as exc:
        _err(str(exc))
        return 1
    print(verdict_text(verdict), end="")
    checks = check_thresholds(cells, thresholds_of(info), comparisons)
    print(thresholds_text(checks), end="")
    bad = failed(checks)
    code = gate_code(verdict.status, len(bad), fail_on)
    if code == INVALID or (code and verdict.status == "noisy" and not bad):
        _err(f"--strict: the run's verdict is {verdict.status}")
    if code == THRESHOLD_FAILED:
        _err(
            f"--strict: {len(bad)} threshold check(s) failed: "
            + "; ".join(f"{c.text} {c.load_point}" for c in bad)
        )
    slow = slow_above_limit(verdict) if args.fail_on_slow else []
    if slow:
        names = ", ".join(s.label for s in slow)
        _err(
            f"--fail-on-slow: responses slower than load.threshold_ms above load.max_error_rate "
            f"{100 * verdict.limits.max_error_rate:.1f} % in {len(slow)} load points: {names}"
        )
        code = code if code == INVALID else THRESHOLD_FAILED
    return code


def _run_info_problems(path: Path) -> list[str]:
    try:
        data = read_json(path)
    except ValueError as exc:
        return [str(exc).removeprefix(f"{path}: ")]
    return validate_run_info(data)


def _read_vars(path: Path) -> dict[str, Any]:
    """The variables of ``--vars FILE``: a YAML mapping, read within the bounds of an experiment."""
    # Numbers as Ansible reads -e @FILE (YAML 1.1: 0755 is 493), so both see the same values.
    data = load_yaml(read_bounded(path, MAX_EXPERIMENT_BYTES).decode("utf-8"), numbers_as_written=False)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"must be a mapping of variables, not {type(data).__name__}")
    return {str(k): v for k, v in data.items()}


def _cmd_experiment(args: argparse.Namespace) -> int:
    given: dict[str, Any] = {}
    if args.vars is not None:
        try:
            given = _read_vars(args.vars)
        except (InputError, UnicodeDecodeError) as exc:
            _err(f"{args.vars}: {exc}")
            return 1
    roots = Roots(
        run=str(given.get("bench_run_root", args.run_root)),
        apps=str(given.get("bench_app_root", args.app_root)),
        units=str(given.get("bench_unit_config_dir", args.unit_config_dir)),
    )
    # As the plan play: the file's variables are given with -e (bench_plan.py, benchstack.plan.settings).
    problems = setting_problems(given, given)
    yes = args.yes or str(given.get("bench_yes", "")).lower() in ("true", "yes", "1")
    request = PlanRequest(
        experiment=args.file,
        project_dir=PROJECT_DIR,
        results_dir=str(given.get("bench_results_dir", PROJECT_DIR / "results")),
        roots=roots,
        run_dir=str(given["bench_run_dir"]) if "bench_run_dir" in given else None,
        allow_outside=str(given.get("bench_run_dir_outside", "")).lower() in ("true", "yes", "1"),
        allow_large=yes,
        # A check: the fingerprint key is read where it exists, never made (a run makes it).
        make_key=False,
    )
    try:
        plan, _ = checked_plan(request, problems)
    except PlanRefused as exc:
        _err(str(exc))
        return 1
    for warning in plan.warnings:
        _err(f"warning: {warning}")
    # app.env values may be secrets: the printed plan names them only (the stacks carry fingerprints).
    plan = replace(
        plan,
        app_env_lines={
            name: tuple(line.split("=", 1)[0] + "=(not shown)" for line in lines)
            for name, lines in plan.app_env_lines.items()
        },
        git_repos=dict.fromkeys(plan.git_repos, "(not shown)"),
    )
    fact = plan.to_dict()
    if not args.plan:
        fact = {
            "name": plan.name,
            "description": plan.experiment.description,
            "stacks": [s.name for s in plan.stacks],
            "cells": fact["cells"],
        }
    print(json.dumps(fact, indent=2))
    return 0


def _cmd_hist(args: argparse.Namespace) -> int:
    if not args.run_dir.is_dir():
        _err(f"{args.run_dir}: not a directory")
        return 1
    if args.csv == "-" and args.hlog == "-":
        _err("stdout takes one of --csv - and --hlog -")
        return 1
    try:
        found, skipped = hist(args.run_dir, args.cell_ids, pool=args.pool, keep_disturbed=args.all)
    except HistError as exc:
        _err(str(exc))
        return 1
    to_stdout = [flag for flag, value in (("--csv", args.csv), ("--hlog", args.hlog)) if value == "-"]
    if skipped:
        note = (
            f"left out {len(skipped)} disturbed or collapsed cell(s), as the report does (--all pools them): "
            + ", ".join(skipped)
        )
        # On stdout with the summary; on stderr when stdout is the CSV or the log.
        print(note, file=sys.stderr if to_stdout else sys.stdout)
    if to_stdout and len(found) != 1:
        _err(f"{to_stdout[0]} - writes one distribution: give one cell, or --pool")
        return 1
    try:
        if args.csv == "-":
            print(csv_text(found[0].dist), end="")
            return 0
        if args.hlog == "-":
            print(hlog_text(found[0]), end="")
            return 0
        written = []
        for folder, name_of, text_of in (
            (args.csv, csv_name, lambda shown: csv_text(shown.dist)),
            (args.hlog, hlog_name, hlog_text),
        ):
            if folder:
                out = Path(folder)
                out.mkdir(parents=True, exist_ok=True)
                for shown in found:
                    path = out / name_of(shown.name)
                    path.write_text(text_of(shown), encoding="utf-8")
                    written.append(path)
    except (ValueError, ImportError) as exc:  # HdrHistogram refused a value, or the package is missing
        _err(f"hist: {exc}")
        return 1
    print("\n".join(shown.text for shown in found), end="")
    for path in written:
        print(f"wrote {path}")
    return 0


def _cmd_drop(args: argparse.Namespace) -> int:
    try:
        dest, ids = drop_cells(args.run_dir, args.cell_ids)
    except (DropError, OSError) as exc:
        _err(str(exc))
        return 1
    for cell_id in ids:
        print(f"dropped {cell_id}")
    print(f"moved to {dest}; resume the run (-e bench_run_dir={args.run_dir}) to measure them again")
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "parse": _cmd_parse,
    "report": _cmd_report,
    "compare": _cmd_compare,
    "validate": _cmd_validate,
    "experiment": _cmd_experiment,
    "hist": _cmd_hist,
    "drop": _cmd_drop,
    **history_commands.COMMANDS,
}


def main(argv: list[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except BrokenPipeError:  # output piped into head & co.
        sys.stderr.close()
        return 1


if __name__ == "__main__":
    sys.exit(main())
