"""Action: merge the cells several loadgens measured of one load point at the same time (bench_cell with
``peers``) into the run's cell. Thin: ``benchstack.measure.merge.merge_stored`` does the work.

A merged cell that cannot be written stops the run as bench_cell's storage failure does: a ``storage`` stop
of this playbook run (``benchstack.results.runfolder.record_stop``), so no later cell is measured; the
loadgens' own cells are kept, and the resume merges them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ansible.errors import AnsibleActionFail

from benchstack.actionargs import BenchAction, action_args
from benchstack.measure.barrier import playbook_run_id
from benchstack.measure.merge import MergeError, merge_stored
from benchstack.results.cell import CellExistsError
from benchstack.results.files import storage_problem
from benchstack.results.runfolder import record_stop

# What a task may pass: the options documented in plugins/modules/bench_merge.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    ARGS = ARGS
    CHECK_MODE = "check mode: nothing was measured"

    def check_args(self, args: dict[str, Any]) -> None:
        if not args["loadgens"]:
            raise self.failure("loadgens names no loadgen")

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        try:
            cell, written = merge_stored(Path(args["run_dir"]), args["cell_id"], list(args["loadgens"]))
        except MergeError as exc:
            raise AnsibleActionFail(str(exc)) from exc
        except CellExistsError:
            raise
        except OSError as exc:
            message = f"{args['cell_id']}: cannot store the merged cell: {storage_problem(exc)}"
            # The workers' parent is ansible-playbook: the stop is this playbook run's.
            unrecorded = record_stop(
                args["run_dir"], args["cell_id"], "storage", message, run=playbook_run_id(os.getppid())
            )
            raise AnsibleActionFail(
                f"{message}{'; ' + unrecorded if unrecorded else ''}: the run stops here, no further cell is "
                "measured"
            ) from None
        result.update(changed=written, cell=cell.to_dict())
        return result
