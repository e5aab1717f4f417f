"""Action: the noise floor of this loadgen's host, just before the cells (``benchstack.measure.probe``).

Thin: it picks the probe stack and tool from the plan and runs the probe through the host's connection;
the result goes into run.json (``noise_floor``) through bench_run_info.
"""

from __future__ import annotations

from typing import Any

from benchstack.actionargs import BenchAction, action_args
from benchstack.measure.probe import busy_warning, floor_text, noise_floor, probe_stack, probe_tool
from benchstack.plan.loadplan import Load

# What a task may pass: the options documented in plugins/modules/bench_noise_probe.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    ARGS = ARGS
    CHECK_MODE = "check mode: no load is sent"

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        plan = args["plan"]
        # The plan fact holds the load section as a mapping (it crossed YAML); typed again here.
        load = Load.from_dict(plan["experiment"]["load"])
        stack = probe_stack(list(plan.get("stacks") or []))
        tool = probe_tool([p.tool for p in load.plans])
        if stack is None or tool is None:
            result.update(changed=False, floor=None, msg="no stack or no closed-loop tool to probe with")
            return result

        floor = noise_floor(self.executor(), str(args["host"]), stack, load.path, tool)
        loadgen = str(task_vars.get("inventory_hostname", "loadgen"))
        warning = busy_warning(loadgen, floor, load.max_interference)
        # Printed before the cells: a busy host is the user's to fix, and the cells take minutes.
        result.update(
            changed=False, floor=floor, summary=floor_text({loadgen: floor}) + ([warning] if warning else [])
        )
        if warning:
            result["warnings"] = [warning]
        return result
