"""Action: the extra cells (next repetitions of noisy load points) a run still needs, for benchmark.yml
(one target's, with ``target``).

Thin: it takes the run's plan and asks ``benchstack.repetitions.extra_cells``; the playbook measures what it
returns with bench_cell and asks again until the answer is empty (bounded: benchstack.repetitions).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from benchstack.cell import load_cells
from benchstack.plan import experiment_of
from benchstack.repetitions import extra_cells, first_extra_round
from benchstack.report import first_table_text, read_run_info

DOCUMENTATION = """
module: bench_extra_cells
short_description: List the extra repetitions a bench-stack run needs
options:
  run_dir: {description: Run folder on the controller., type: path, required: true}
  plan:
    description: The run's plan (the fact bench_plan, benchstack.plan).
    type: dict
    required: true
  target:
    description: >-
      Only this target's load points (a run with several targets: each target's loadgens ask for their own).
    type: str
"""


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _REQUIRED = frozenset(("run_dir", "plan"))
    _VALID_ARGS = _REQUIRED | {"target"}

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        args = self._task.args
        missing = [k for k in sorted(self._REQUIRED) if not args.get(k)]
        if missing:
            raise AnsibleActionFail(f"bench_extra_cells: missing arguments: {', '.join(missing)}")
        if self._task.check_mode:
            # Nothing was measured in check mode, so nothing can be noisy.
            result.update(changed=False, cells=[])
            return result
        exp = experiment_of(args["plan"])
        targets = list(args["plan"].get("targets") or [])
        target = args.get("target") or None
        try:
            run_dir = Path(args["run_dir"])
            found = extra_cells(run_dir, exp, target, targets, seed=args["plan"].get("seed"))
            cells = [asdict(c) for c in found]
            first_table = ""
            if first_extra_round(found, exp):
                first_table = first_table_text(
                    load_cells(run_dir), read_run_info(run_dir), len(found), exp.load
                )
        except ValueError as exc:  # a stored cell or run.json that is not valid, named by the message
            raise AnsibleActionFail(str(exc)) from None
        result.update(changed=False, cells=cells, first_table=first_table)
        return result
