"""Action: resolve the names a run depends on, on the host that needs them; fail clearly when one does not.

The module of the same name does the lookups on the host; this plugin turns its raw answer into the
fingerprint's ``dns`` record (benchstack.provision.dns) and fails the task, naming each name, when any did not
resolve.
"""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from benchstack.actionargs import action_args
from benchstack.provision.dns import resolution_failures, resolution_record

# What a task may pass: the options documented in plugins/modules/bench_dns_resolve.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        args = ARGS.check(self)
        names = args["names"]
        if not all(names):
            raise AnsibleActionFail("bench_dns_resolve: names must be a list of non-empty strings")
        raw = self._execute_module(
            module_name="bench_dns_resolve",
            module_args={"names": names, "timeout_s": args["timeout_s"]},
            task_vars=task_vars,
        )
        if raw.get("failed"):
            raise AnsibleActionFail(f"bench_dns_resolve: the lookup on the host failed: {raw.get('msg')}")
        record = resolution_record(raw)
        host = (task_vars or {}).get("inventory_hostname", "this host")
        result.update(changed=False, record=record)
        problem = resolution_failures(record, host)
        if problem:
            result.update(failed=True, msg=problem)
        return result
