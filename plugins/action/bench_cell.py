"""Action: measure one cell on this loadgen and store it in the run folder on the controller.

Thin by design: it gathers arguments, runs commands through the host's connection and hands everything
else to ``benchstack.runner``. A cell already stored is not measured again, so a rerun resumes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from benchstack.runner import CellFailed, Target, cell_path, measure_cell

DOCUMENTATION = """
module: bench_cell
short_description: Measure one bench-stack cell
options:
  cell:
    description: One entry of the experiment's cells (from the bench_experiment lookup).
    type: dict
    required: true
  host: {description: Address of the target as this loadgen reaches it., type: str, required: true}
  target: {description: Inventory name of the target., type: str, required: true}
  run_dir: {description: Run folder on the controller., type: path, required: true}
  experiment: {description: Experiment name., type: str, required: true}
"""


# Tools that print no version in their report: how to ask them. `wrk -v` exits non-zero;
# `httperf --version` prints "httperf: httperf-0.9.0 compiled ..." then a test run against localhost.
VERSION_PROBES = {
    "wrk": "wrk -v 2>&1 | head -n 1",
    "httperf": "dpkg-query -W -f '${Version}' httperf 2>/dev/null || rpm -q --qf '%{VERSION}' httperf",
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("cell", "host", "target", "run_dir", "experiment"))

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        args = self._task.args
        missing = [k for k in self._VALID_ARGS if not args.get(k)]
        if missing:
            raise AnsibleActionFail(f"bench_cell: missing arguments: {', '.join(sorted(missing))}")
        if self._task.check_mode:
            result.update(changed=False, skipped=True, msg="check mode: no load is sent")
            return result
        plan = dict(args["cell"])
        loadgen = (task_vars or {}).get("inventory_hostname", "")

        def execute(command: str) -> tuple[int, str, str]:
            res = self._low_level_execute_command(command)
            return res.get("rc", 1), res.get("stdout", ""), res.get("stderr", "")

        version = None
        probe = VERSION_PROBES.get(plan["tool"])
        if probe and not cell_path(Path(args["run_dir"]), plan["cell_id"]).exists():
            _, out, err = execute(probe)
            version = (out or err).strip() or None
        try:
            cell, measured = measure_cell(
                plan,
                Target(host=args["host"], target=args["target"], loadgen=loadgen),
                Path(args["run_dir"]),
                execute,
                experiment=args["experiment"],
                tool_version=version,
            )
        except CellFailed as exc:
            raise AnsibleActionFail(str(exc)) from exc
        result.update(changed=measured, cell=cell)
        return result
