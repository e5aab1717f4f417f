"""Action: write a run's report (report.md, report.html, plots, cells.csv) and return its summary table
followed by the comparisons against the baseline, the run's verdict and its thresholds (all also stored in
run.json), which the run prints at the end. A run that shipped its access logs (an experiment's ``logs``)
first has the objects holding them listed and counted into run.json (``benchstack.report.shipping``, best
effort: a store that does not answer is a warning). With
``results_dir``, ``<results_dir>/latest`` then points at the run (only ever inside the results folder).
Then the run folder's lock is released (``benchstack.measure.runlock``), and, with ``history`` (the default),
the run is recorded in the history database (``benchstack.history.finished``: ``$BENCH_STACK_DB``, else
``<results_dir>/history.sqlite``), best effort: a database that cannot be written is a warning, never a
failed run. With ``publish`` (``s3://bucket/prefix``), the run folder is then published to that store
(``benchstack.history.finished.publish_finished``), best effort too.

It also returns the run's gate (``exit_code``, ``gate``: :mod:`benchstack.common.exitcodes`, judged with
``fail_on``), which the report play's last task fails on; where the environment names a file in
``BENCH_STACK_OUTCOME`` (``./run bench`` does), the code and the run folder are written there first, so that
``./run bench`` exits with the gate's own code rather than ansible-playbook's 2."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ansible.errors import AnsibleActionFail

from benchstack.actionargs import BenchAction, action_args
from benchstack.analysis.summary import comparisons_of, threshold_checks_of, verdict_of
from benchstack.analysis.thresholds import failed
from benchstack.common.exitcodes import OUTCOME_ENV, gate_code, gate_message
from benchstack.history.finished import publish_finished, record_finished
from benchstack.measure.runlock import release
from benchstack.report import shipping
from benchstack.report.build import end_of_run_text, write_run_report
from benchstack.results.cell import load_cells
from benchstack.results.layout import REPORT_HTML
from benchstack.results.runfolder import point_latest

# What a task may pass: the options documented in plugins/modules/bench_report.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    ARGS = ARGS
    # bench_cell measures nothing in check mode, so there are no cells to report on.
    CHECK_MODE = "check mode: no report is written"

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        run_dir = Path(args["run_dir"])
        try:
            cells = load_cells(run_dir) if run_dir.is_dir() else []
            if not cells:
                raise self.failure(f"no cells in {run_dir}")
            # A run that shipped its access logs: the objects holding them, counted into run.json first
            # (best effort, benchstack.report.shipping), so the report says what reached the store.
            shipped = shipping.collect(run_dir, cells)
            if shipped and shipped.get("problem"):
                self.warn(result, f"access logs: {shipped['problem']}")
            report, run = write_run_report(run_dir)
            verdict = verdict_of(run)
            table = end_of_run_text(run)
            comparisons = [c.to_dict() for c in comparisons_of(run)]
            checks = threshold_checks_of(run)
            results_dir = args["results_dir"]
            latest = point_latest(run_dir, results_dir) if results_dir else None
        except ValueError as exc:  # a bad cell or run.json, named by the message
            raise self.failure(str(exc)) from None
        fail_on = args["fail_on"]
        bad = len(failed(checks))
        code = gate_code(verdict.status, bad, fail_on)
        outcome = os.environ.get(OUTCOME_ENV)
        if outcome:
            write_outcome(Path(outcome), code, run_dir)
        # The run is over: another may resume the folder (benchstack.measure.runlock).
        release(run_dir, os.getppid())
        # Then the history, which never fails the run (benchstack.history.finished).
        recorded = record_finished(run_dir, results_dir, run) if args["history"] else None
        if recorded is not None and recorded.warning:
            self.warn(result, recorded.warning)
        # Then the object store, last: the folder it copies is complete (benchstack.history.finished).
        published = publish_finished(run_dir, args["publish"], args["publish_endpoint"])
        if published.warning:
            self.warn(result, published.warning)
        result.update(
            changed=True,
            report=str(report),
            report_html=str(report.with_name(REPORT_HTML)),
            table=table,
            table_lines=table.splitlines(),
            verdict=verdict.to_dict(),
            comparisons=comparisons,
            thresholds=[c.to_dict() for c in checks],
            exit_code=code,
            gate=gate_message(code, verdict.status, bad, fail_on),
            latest=str(latest) if latest else None,
            history=recorded.to_dict() if recorded is not None else {"outcome": "off"},
            published=published.to_dict(),
        )
        return result


def write_outcome(path: Path, code: int, run_dir: Path) -> None:
    """The gate for ./run bench: the exit code on the first line, the run folder on the second."""
    try:
        path.write_text(f"{code}\n{run_dir}\n", encoding="utf-8")
    except OSError as exc:
        raise AnsibleActionFail(
            f"bench_report: cannot write {OUTCOME_ENV} ({path}): {exc.strerror}"
        ) from None
