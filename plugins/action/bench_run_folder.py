"""Action: the run folder before and after this playbook run measures (playbooks/benchmark.yml).

``state: writable`` (before any load: before the stacks' restart and the noise probe) asks the file system
whether the run folder, its ``cells/`` and ``raw/`` can be written
(``benchstack.measure.runner.run_folder_problem``: a probe write, nothing left behind, no folder made) and
fails in one line naming the path and the errno when not. The run ends there, so this playbook run's hold
on the run folder (``benchstack.measure.runlock``: a resume holds it from its plan) is given up first.

``state: released`` (the run stopped: every loadgen's measuring failed) gives up that hold, as the report
does at the end of a run that measured, and records in run.json the stop this playbook run kept aside in
the controller's temporary folder when run.json could not be written
(``benchstack.results.runfolder.settle_stops_aside``; it stays aside while run.json still cannot take it,
and the resume records it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from benchstack.actionargs import BenchAction, action_args
from benchstack.measure.barrier import playbook_run_id
from benchstack.measure.runlock import release
from benchstack.measure.runner import run_folder_problem
from benchstack.results.runfolder import settle_stops_aside

# What a task may pass: the options documented in plugins/modules/bench_run_folder.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    ARGS = ARGS
    CHECK_MODE = "check mode: the run folder is not written"

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        run_dir = Path(args["run_dir"])
        # The workers' parent is ansible-playbook: the run folder's lock is this playbook run's.
        controller = os.getppid()
        if args["state"] == "writable":
            problem = run_folder_problem(run_dir)
            if problem is not None:
                release(run_dir, controller)  # the run ends here
                raise self.failure(problem)
            result.update(changed=False, msg="writable")
            return result
        settled = settle_stops_aside(run_dir, run=playbook_run_id(controller))
        released = release(run_dir, controller)
        result.update(changed=False, msg="released" if released else "not held by this run")
        if settled:
            result["warnings"] = settled
        return result
