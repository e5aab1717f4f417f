"""Action: merge the cells several loadgens measured of one load point at the same time (bench_cell with
``peers``) into the run's cell. Thin: ``benchstack.measure.merge.merge_stored`` does the work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from benchstack.actionargs import action_args
from benchstack.measure.merge import MergeError, merge_stored

# What a task may pass: the options documented in plugins/modules/bench_merge.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        args = ARGS.check(self)
        if not args["loadgens"]:
            raise AnsibleActionFail("bench_merge: loadgens names no loadgen")
        if self._task.check_mode:
            result.update(changed=False, skipped=True, msg="check mode: nothing was measured")
            return result
        try:
            cell, written = merge_stored(Path(args["run_dir"]), args["cell_id"], list(args["loadgens"]))
        except MergeError as exc:
            raise AnsibleActionFail(str(exc)) from exc
        result.update(changed=written, cell=cell)
        return result
