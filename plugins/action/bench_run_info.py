"""Action: write run.json (the experiment as run, every host's fingerprint) on the controller."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from benchstack.runner import write_run_info

DOCUMENTATION = """
module: bench_run_info
short_description: Write a bench-stack run's run.json
options:
  run_dir: {description: Run folder on the controller., type: path, required: true}
  info: {description: The experiment, hosts and their fingerprints., type: dict, required: true}
"""


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("run_dir", "info"))

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        args = self._task.args
        if not args.get("run_dir") or not isinstance(args.get("info"), dict):
            raise AnsibleActionFail("bench_run_info: run_dir and info (a dict) are required")
        if self._task.check_mode:
            result.update(changed=False, skipped=True)
            return result
        try:
            path = write_run_info(Path(args["run_dir"]), dict(args["info"]))
        except ValueError as exc:  # a record that does not fit the published schema, named by the message
            raise AnsibleActionFail(f"bench_run_info: {exc}") from None
        result.update(changed=True, path=str(path))
        return result
