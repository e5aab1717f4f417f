"""Action: write run.json (the experiment as run, every host's fingerprint) on the controller.

Its content is the plan's (benchstack.plan.resolved.run_record), with what the run learnt of each host of the
play, read here from the facts ``benchstack.plan.resolved.RUN_FACTS`` names, and what verify.yml noted on
localhost (``bench_verified``). It first takes the run folder's lock for this playbook run
(``benchstack.measure.runlock``; a resumed run took it already when its plan was compiled), so no other run
measures into the folder meanwhile. A run folder that cannot be written fails here, in one line, before any
cell, and the lock is given up (the run ends). Once run.json is written, the stops earlier playbook runs of
this folder kept aside when run.json could not be written are recorded in it and their files removed
(``benchstack.results.runfolder.settle_stops_aside``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ansible.errors import AnsibleActionFail

from benchstack.actionargs import BenchAction, action_args
from benchstack.measure.runlock import RunLockError, acquire, release
from benchstack.measure.runner import write_run_info
from benchstack.plan.resolved import RUN_FACTS, run_record
from benchstack.results.files import storage_problem
from benchstack.results.runfolder import settle_stops_aside

# What a task may pass: the options documented in plugins/modules/bench_run_info.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    ARGS = ARGS
    CHECK_MODE = ""

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        run_dir = Path(args["run_dir"])
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
            # The workers' parent is ansible-playbook: the lock is this playbook run's.
            taken = acquire(run_dir, os.getppid())
        except RunLockError as exc:
            raise self.failure(str(exc)) from None
        except OSError as exc:  # before any cell, in one line
            release(run_dir, os.getppid())  # a resume's, taken with its plan: the run ends here
            raise AnsibleActionFail(_not_writable(run_dir, exc)) from None
        if taken:
            result["warnings"] = taken
        info = run_record(
            args["plan"],
            inventory=task_vars.get("inventory_dir"),
            targets=(task_vars.get("groups") or {}).get("targets") or [],
            loadgens=(task_vars.get("groups") or {}).get("loadgens") or [],
            facts=host_facts(task_vars),
            verify=fact_of(task_vars, "localhost", "bench_verified"),
        )
        try:
            path = write_run_info(run_dir, info)
        except ValueError as exc:  # a record that does not fit the published schema, named by the message
            release(run_dir, os.getppid())  # the run ends here
            raise self.failure(str(exc)) from None
        except OSError as exc:
            release(run_dir, os.getppid())
            raise AnsibleActionFail(_not_writable(run_dir, exc)) from None
        # A resume that could write run.json records the stops earlier playbook runs of this folder kept
        # aside when it could not (benchstack.results.runfolder.settle_stops_aside).
        settled = settle_stops_aside(run_dir)
        if settled:
            result["warnings"] = [*result.get("warnings", []), *settled]
        result.update(changed=True, path=str(path))
        return result


def _not_writable(run_dir: Path, exc: OSError) -> str:
    return (
        f"bench_run_info: the run folder {run_dir} cannot be written ({storage_problem(exc)}): no cell is "
        "measured; make it writable (or free space) and run again"
    )


def fact_of(task_vars: dict[str, Any], host: str, name: str) -> Any:
    """``host``'s variable ``name`` (None when it has none)."""
    hostvars = task_vars.get("hostvars") or {}
    if host not in hostvars or name not in hostvars[host]:
        return None
    return hostvars[host][name]


def host_facts(task_vars: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per host of the play, the facts of RUN_FACTS it has."""
    hostvars = task_vars.get("hostvars") or {}
    return {
        str(host): {name: hostvars[host][name] for name in RUN_FACTS if name in hostvars[host]}
        for host in task_vars.get("ansible_play_hosts_all") or []
        if host in hostvars
    }
