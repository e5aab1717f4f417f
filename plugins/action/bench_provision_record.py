"""Action: record on the host the inputs each role just ran to the end with (benchstack.provision.hostrecord).

Writes nothing when no role ran, in check mode, or when the run was limited by tags (a partial run proves
nothing about the whole role).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from benchstack.actionargs import BenchAction, action_args
from benchstack.plan import roles as provision
from benchstack.provision import hostcommand, hostrecord, markers

# What a task may pass: the options documented in plugins/modules/bench_provision_record.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    ARGS = ARGS

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        state = task_vars.get("bench_provision")
        if not isinstance(state, dict):
            raise self.failure("no bench_provision fact (bench_provision_state)")
        tags = task_vars.get("ansible_run_tags") or ["all"]
        if not state["run"] or self._task.check_mode or list(tags) != ["all"]:
            result.update(changed=False, skipped=True, msg="nothing to record")
            return result
        decision = markers.Decision(hashes=state["hashes"], run=state["run"], skip=state["skip"])
        variables = {
            name: self._templar.template(task_vars[name])
            for role in decision.run
            for name in markers.EXPORTS.get(role, ())
            if name in task_vars
        }
        made = self._made(task_vars, decision)
        record = hostrecord.record_after(
            state["record"], decision, variables, datetime.now(UTC).isoformat(timespec="seconds"), made
        )
        if hostrecord.same_state(state["record"], record):
            # Every role that ran was given what it had last time (every role runs when told to).
            result.update(changed=False, msg="the host's record already says this")
            return result
        res = self._low_level_execute_command(hostrecord.write_command(record))
        if res.get("rc") != 0:
            raise self.failure(f"cannot write {hostrecord.MARKER}: {res}")
        result.update(changed=True, msg=f"recorded: {', '.join(decision.run)}")
        return result

    def _sysctls(self, task_vars: dict[str, Any]) -> list[str]:
        """The sysctls the host role set with this host's profile (its own default where the inventory
        sets none: include_role keeps a role's defaults to the role)."""

        def given(name: str) -> Any:
            if name in task_vars:
                return self._templar.template(task_vars[name])
            return provision.role_default("host", name)

        return provision.host_sysctls(str(given("host_profile")), given("host_tuned_sysctls"))

    def _made(self, task_vars: dict[str, Any], decision: markers.Decision) -> dict[str, Any]:
        """What each role that ran made, and its state now, from the host in one command."""
        given = self._templar.template(self._task.args.get("made") or {})
        if not isinstance(given, dict):
            raise self.failure("made must be a dict (role -> manifest)")
        manifests = {}
        for role in decision.run:
            declared = task_vars.get(f"{role}_made")
            declared = self._templar.template(declared) if declared else None
            if declared is not None and not isinstance(declared, dict):
                raise self.failure(f"{role}_made must be a dict (files, binaries)")
            manifest = provision.with_declared(given.get(role) or {}, declared)
            packages = task_vars.get(f"{role}_os_packages")
            manifest["packages"] = list(self._templar.template(packages) or []) if packages else []
            if role == "host":
                manifest["sysctls"] = self._sysctls(task_vars)
            manifests[role] = manifest
        command = hostcommand.hoststate_command(hostcommand.host_python(task_vars), {"manifests": manifests})
        res = self._low_level_execute_command(command)
        try:
            made = json.loads(res.get("stdout") or "")
        except ValueError:
            made = None
        if res.get("rc") != 0 or not isinstance(made, dict):
            raise self.failure(f"cannot read what the roles made: {res}")
        return made
