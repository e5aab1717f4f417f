"""Action: record on the host the inputs each role just ran to the end with (benchstack.provision).

Writes nothing when no role ran, in check mode, or when the run was limited by tags (a partial run proves
nothing about the whole role).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from benchstack import provision

DOCUMENTATION = """
module: bench_provision_record
short_description: Record the roles that ran to the end on this host
options: {}
notes:
  - Reads the fact bench_provision set by bench_provision_state earlier in the run.
"""


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS: frozenset[str] = frozenset()

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        state = task_vars.get("bench_provision")
        if not isinstance(state, dict):
            raise AnsibleActionFail("bench_provision_record: no bench_provision fact (bench_provision_state)")
        tags = task_vars.get("ansible_run_tags") or ["all"]
        if not state["run"] or self._task.check_mode or list(tags) != ["all"]:
            result.update(changed=False, skipped=True, msg="nothing to record")
            return result
        decision = provision.Decision(hashes=state["hashes"], run=state["run"], skip=state["skip"])
        variables = {
            name: self._templar.template(task_vars[name])
            for role in decision.run
            for name in provision.EXPORTS.get(role, ())
            if name in task_vars
        }
        record = provision.record_after(
            state["record"], decision, variables, datetime.now(UTC).isoformat(timespec="seconds")
        )
        if provision.same_state(state["record"], record):
            # Every role that ran was given what it had last time (every role runs when told to).
            result.update(changed=False, msg="the host's record already says this")
            return result
        res = self._low_level_execute_command(provision.write_command(record))
        if res.get("rc") != 0:
            raise AnsibleActionFail(f"bench_provision_record: cannot write {provision.MARKER}: {res}")
        result.update(changed=True, msg=f"recorded: {', '.join(decision.run)}")
        return result
