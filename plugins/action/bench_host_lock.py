"""Action: take (or give up) this host's lock for this playbook run (benchstack.runlock.take_host).

One run at a time provisions and measures a host, whichever run folder or controller it comes from. The lock
lives on the host (benchstack.hostlock, one command per request) and names the holder's controller, pid and
run folder; the holder is this ``ansible-playbook`` process. Taking it changes nothing a role made, so the
task never reports a change. In check mode the holder is judged and nothing is written.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from benchstack import provision
from benchstack.runlock import RunLockError, host_lock_command, release_host, take_host

DOCUMENTATION = """
module: bench_host_lock
short_description: Hold this host for one bench-stack run at a time
options:
  run_dir: {description: The run folder on the controller (named in the lock)., type: path, required: true}
  state:
    description: held (take it, or refuse naming the run that holds it) or released.
    type: str
    choices: [held, released]
    default: held
"""


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _REQUIRED = frozenset(("run_dir",))
    _VALID_ARGS = frozenset(("run_dir", "state"))

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self._task.args
        state = args.get("state", "held")
        if set(args) - self._VALID_ARGS or state not in ("held", "released") or not args.get("run_dir"):
            raise AnsibleActionFail("bench_host_lock: run_dir is required; state is held or released")
        python = provision.host_python(task_vars)
        host = str(task_vars.get("inventory_hostname", "this host"))

        def ask(request: dict[str, Any]) -> dict[str, Any]:
            res = self._low_level_execute_command(host_lock_command(python, request))
            try:
                answer = json.loads(res.get("stdout") or "")
            except ValueError:
                answer = None
            if res.get("rc") != 0 or not isinstance(answer, dict):
                raise AnsibleActionFail(f"bench_host_lock: cannot read the lock on {host}: {res}")
            return answer

        # The workers' parent is ansible-playbook: the lock is this playbook run's (as the run folder's).
        pid = os.getppid()
        if state == "released":
            if self._task.check_mode:
                result.update(changed=False, skipped=True)
                return result
            released = release_host(pid, ask)
            result.update(changed=False, msg="released" if released else "not held by this run")
            return result
        try:
            messages = take_host(host, args["run_dir"], pid, ask, check_only=bool(self._task.check_mode))
        except RunLockError as exc:
            raise AnsibleActionFail(f"bench_host_lock: {exc}") from None
        # An ended run's lock is the usual case after provision.yml alone (it holds the host until it ends):
        # said, not warned.
        result.update(changed=False, msg="; ".join(messages) or "held by this run")
        return result
