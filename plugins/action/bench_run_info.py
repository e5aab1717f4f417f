"""Action: write run.json (the experiment as run, every host's fingerprint) on the controller.

It first takes the run folder's lock for this playbook run (``benchstack.runlock``; a resumed run took it
already when its plan was compiled), so no other run measures into the folder meanwhile.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from benchstack.actionargs import action_args
from benchstack.runlock import RunLockError, acquire
from benchstack.runner import write_run_info

# What a task may pass: the options documented in plugins/modules/bench_run_info.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        args = ARGS.check(self)
        if self._task.check_mode:
            result.update(changed=False, skipped=True)
            return result
        run_dir = Path(args["run_dir"])
        run_dir.mkdir(parents=True, exist_ok=True)
        try:
            # The workers' parent is ansible-playbook: the lock is this playbook run's.
            taken = acquire(run_dir, os.getppid())
        except RunLockError as exc:
            raise AnsibleActionFail(f"bench_run_info: {exc}") from None
        if taken:
            result["warnings"] = taken
        try:
            path = write_run_info(run_dir, dict(args["info"]))
        except ValueError as exc:  # a record that does not fit the published schema, named by the message
            raise AnsibleActionFail(f"bench_run_info: {exc}") from None
        result.update(changed=True, path=str(path))
        return result
