"""Action: resolve the names a run depends on, on the host that needs them; fail clearly when one does not.

The module of the same name does the lookups on the host; this plugin turns its raw answer into the
fingerprint's ``dns`` record (benchstack.provision.dns) and fails the task, naming each name, when any did not
resolve.
"""

from __future__ import annotations

from typing import Any

from benchstack.actionargs import BenchAction, action_args
from benchstack.provision.dns import resolution_failures, resolution_record

# What a task may pass: the options documented in plugins/modules/bench_dns_resolve.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    ARGS = ARGS

    def check_args(self, args: dict[str, Any]) -> None:
        if not all(args["names"]):
            raise self.failure("names must be a list of non-empty strings")

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        names = args["names"]
        raw = self._execute_module(
            module_name="bench_dns_resolve",
            module_args={"names": names, "timeout_s": args["timeout_s"]},
            task_vars=task_vars,
        )
        if raw.get("failed"):
            raise self.failure(f"the lookup on the host failed: {raw.get('msg')}")
        record = resolution_record(raw)
        host = task_vars.get("inventory_hostname", "this host")
        result.update(changed=False, record=record)
        problem = resolution_failures(record, host)
        if problem:
            result.update(failed=True, msg=problem)
        return result
