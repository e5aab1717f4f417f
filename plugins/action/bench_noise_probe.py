"""Action: the noise floor of this loadgen's host, just before the cells (``benchstack.measure.probe``).

Thin: it picks the probe stack and tool from the plan and runs the probe through the host's connection;
the result goes into run.json (``noise_floor``) through bench_run_info.
"""

from __future__ import annotations

from typing import Any

from ansible.plugins.action import ActionBase

from benchstack.actionargs import action_args
from benchstack.measure.probe import busy_warning, floor_text, noise_floor, probe_stack, probe_tool
from benchstack.measure.remote import without_tty
from benchstack.plan.loadplan import Load

# What a task may pass: the options documented in plugins/modules/bench_noise_probe.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        args = ARGS.check(self)
        if self._task.check_mode:
            result.update(changed=False, skipped=True, msg="check mode: no load is sent")
            return result
        plan = args["plan"]
        # The plan fact holds the load section as a mapping (it crossed YAML); typed again here.
        load = Load.from_dict(plan["experiment"]["load"])
        stack = probe_stack(list(plan.get("stacks") or []))
        tool = probe_tool([p.tool for p in load.plans])
        if stack is None or tool is None:
            result.update(changed=False, floor=None, msg="no stack or no closed-loop tool to probe with")
            return result

        without_tty(self._connection)

        def execute(command: str) -> tuple[int, str, str]:
            res = self._low_level_execute_command(command)
            return res.get("rc", 1), res.get("stdout", ""), res.get("stderr", "")

        floor = noise_floor(execute, str(args["host"]), stack, load.path, tool)
        loadgen = str((task_vars or {}).get("inventory_hostname", "loadgen"))
        warning = busy_warning(loadgen, floor, load.max_interference)
        # Printed before the cells: a busy host is the user's to fix, and the cells take minutes.
        result.update(
            changed=False, floor=floor, summary=floor_text({loadgen: floor}) + ([warning] if warning else [])
        )
        if warning:
            result["warnings"] = [warning]
        return result
