"""Action: give up this host's lock once this playbook run's measuring is over (benchstack.measure.runlock).

One run at a time provisions and measures a host, whichever run folder or controller it comes from. The lock
lives on the host (benchstack.provision.hoststate) and names the holder's controller, pid and run folder; the
holder is this ``ansible-playbook`` process, which took it in the one command that read the host
(bench_provision_state with ``run_dir``). Giving it up changes nothing a role made, so the task never
reports a change; in check mode nothing is written. With ``delegate_to`` it gives up the delegated host's
lock (playbooks/benchmark.yml: a loadgen whose run stopped gives up its target too), through that host's
connection and Python.
"""

from __future__ import annotations

import os
from typing import Any

from benchstack.actionargs import BenchAction, action_args
from benchstack.measure.runlock import release_host
from benchstack.provision import hostcommand

# What a task may pass: the options documented in plugins/modules/bench_host_lock.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    # state's one choice is released: bench_provision_state with run_dir holds the host.
    ARGS = ARGS
    CHECK_MODE = ""

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        delegated = self._task.delegate_to if isinstance(self._task.delegate_to, str) else None
        if delegated:
            variables = (task_vars.get("ansible_delegated_vars") or {}).get(delegated) or {}
            host = str(delegated)
        else:
            variables = task_vars
            host = str(task_vars.get("inventory_hostname", "this host"))
        python = hostcommand.host_python(variables)

        def ask(request: dict[str, Any]) -> dict[str, Any]:
            res = self._low_level_execute_command(hostcommand.lock_command(python, request))
            answer = hostcommand.parse_lock(str(res.get("stdout") or ""))
            if res.get("rc") != 0 or answer is None:
                raise self.failure(f"cannot read the lock on {host}: {res}")
            return answer

        # The workers' parent is ansible-playbook: the lock is this playbook run's.
        released = release_host(os.getppid(), ask)
        result.update(changed=False, msg=args["state"] if released else "not held by this run")
        return result
