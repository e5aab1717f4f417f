"""Action: the extra cells (next repetitions of noisy load points) a run still needs, for benchmark.yml
(one target's, with ``target``).

Thin: it takes the run's plan and asks ``benchstack.measure.repetitions.extra_cells``; the playbook measures
what it returns with bench_cell and asks again until the answer is empty (bounded:
benchstack.measure.repetitions).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ansible.errors import AnsibleActionFail

from benchstack.actionargs import BenchAction, action_args
from benchstack.measure.repetitions import extra_round, first_extra_round
from benchstack.plan.resolved import experiment_of
from benchstack.report.build import first_table_text
from benchstack.results.cell import load_cells
from benchstack.results.runfolder import read_run_info

# What a task may pass: the options documented in plugins/modules/bench_extra_cells.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    ARGS = ARGS

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        if self._task.check_mode:
            # Nothing was measured in check mode, so nothing can be noisy.
            result.update(changed=False, cells=[], labels={}, to_measure=False, round=None, serves=[])
            return result
        exp = experiment_of(args["plan"])
        targets = list(args["plan"].get("targets") or [])
        target = args.get("target") or None
        try:
            run_dir = Path(args["run_dir"])
            planned = extra_round(run_dir, exp, target, targets, seed=args["plan"].get("seed"))
            found = planned.cells
            cells = [c.to_dict() for c in found]
            labels = planned.labels(exp.load.max_seconds)
            serves = planned.serves()
            first_table = ""
            if first_extra_round(found, exp):
                first_table = first_table_text(
                    load_cells(run_dir), read_run_info(run_dir), len(found), exp.load, str(run_dir)
                )
        except ValueError as exc:  # a stored cell or run.json that is not valid, named by the message
            raise AnsibleActionFail(str(exc)) from None
        # Whether the run measures anything more here: a planned cell not stored, or an extra round due
        # (benchmark.yml restarts the stacks only for a run that measures: a resumed run whose cells are
        # all stored changes nothing on the hosts).
        missing = [
            c["cell_id"]
            for c in args["plan"].get("cells") or []
            if (target is None or c.get("target") == target)
            and not (run_dir / "cells" / f"{c['cell_id']}.json").exists()
        ]
        result.update(
            changed=False,
            cells=cells,
            first_table=first_table,
            labels=labels,
            to_measure=bool(missing or cells),
            # For the console's progress line (plugins/callback/bench_stack.py): the round's number, what it
            # is for, the budget (load.max_seconds) and what was left of it when the round was planned.
            round=planned.number,
            serves=serves,
            budget_s=exp.load.max_seconds,
            left_s=None if planned.left_s is None else round(max(0.0, planned.left_s), 1),
        )
        return result
