"""Action: merge the cells several loadgens measured of one load point at the same time (bench_cell with
``peers``) into the run's cell. Thin: ``benchstack.merge.merge_stored`` does the work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from benchstack.merge import MergeError, merge_stored

DOCUMENTATION = """
module: bench_merge
short_description: Merge the loadgens' cells of one bench-stack load point
options:
  run_dir: {description: Run folder on the controller., type: path, required: true}
  cell_id: {description: The cell to merge., type: str, required: true}
  loadgens:
    description: The loadgens whose cells to merge (two or more).
    type: list
    elements: str
    required: true
"""


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("run_dir", "cell_id", "loadgens"))

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        args = self._task.args
        missing = [k for k in sorted(self._VALID_ARGS) if not args.get(k)]
        if missing:
            raise AnsibleActionFail(f"bench_merge: missing arguments: {', '.join(missing)}")
        if self._task.check_mode:
            result.update(changed=False, skipped=True, msg="check mode: nothing was measured")
            return result
        try:
            cell, written = merge_stored(Path(args["run_dir"]), args["cell_id"], list(args["loadgens"]))
        except MergeError as exc:
            raise AnsibleActionFail(str(exc)) from exc
        result.update(changed=written, cell=cell)
        return result
