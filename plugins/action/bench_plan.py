"""Action: compile the run's plan once, on the controller, before any host is touched.

Reads, validates and resolves the experiment (``benchstack.plan.resolved``), checks the run folder the user
named, and checks every variable the inventory or the command line sets (``benchstack.plan.settings``: role
variables against their role's ``meta/argument_specs.yml`` and where they land, names bench-stack sets
itself): every bad input fails here, in the first seconds, with one line per problem.
The plan is returned as the fact ``bench_plan`` (with ``run_once`` it reaches every host of the play).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.utils.vars import load_extra_vars

from benchstack.actionargs import BenchAction, action_args
from benchstack.common.renamed import renamed_problems
from benchstack.kinds.stackfields import Roots
from benchstack.measure.runlock import RunLockError, acquire
from benchstack.plan.checked import PlanRefused, PlanRequest, checked_plan
from benchstack.plan.resolved import DEFAULT_EXPERIMENT, ResolvedPlan, reseeded, seed_for, with_hosts
from benchstack.plan.roles import role_default
from benchstack.plan.rolevars import plan_sets
from benchstack.plan.settings import (
    PROJECT_SETTINGS,
    project_problems,
    renamed_names,
    role_problems,
    role_variable_names,
    setting_problems,
    untemplated_problem,
)
from benchstack.plan.topology import TopologyError, loadgen_targets, measured_targets
from benchstack.results.runfolder import RunDirError, resumed_experiment

PROJECT_DIR = Path(__file__).resolve().parents[2]


def given_settings(task_vars: dict[str, Any], templar: Any) -> tuple[dict[str, Any], list[str]]:
    """The role variables and project settings set outside the roles (inventory, play, command line), as
    plain values, and a line for each whose value cannot be templated yet (it needs facts, which the plan play
    does not gather, or anything else it does not have): refused, never left unchecked."""
    given: dict[str, Any] = {}
    problems = []
    for name in sorted((role_variable_names() | set(PROJECT_SETTINGS)) & set(task_vars)):
        if plan_sets(name):  # refused by its name alone, whatever it holds: value untouched
            given[name] = task_vars[name]
            continue
        try:
            given[name] = templar.template(task_vars[name])
        except AnsibleError as exc:
            problems.append(untemplated_problem(name, exc.message))
    # A renamed role's old variable is refused by its name alone (benchstack.common.renamed): value untouched.
    given.update((name, task_vars[name]) for name in renamed_names(task_vars))
    return given, problems


def other_hosts_problems(task_vars: dict[str, Any], problems: list[str]) -> list[str]:
    """The problems of the role variables and settings the inventory gives the play's other hosts (this
    task's variables are the first host's only: a loadgens group's or a host's own variables are not among
    them), each line once, naming the hosts, unless ``problems`` (this host's) already has it. A value that
    cannot be templated yet is refused, as on this host (:func:`given_settings`)."""
    hostvars = task_vars.get("hostvars") or {}
    names = role_variable_names() | set(PROJECT_SETTINGS)
    found: dict[str, list[str]] = {}
    for host in task_vars.get("ansible_play_hosts_all") or []:
        if host == task_vars.get("inventory_hostname") or host not in hostvars:
            continue
        mine = hostvars[host]  # its variables, computed once: each lookup templates one of them
        given: dict[str, Any] = {}
        untemplated = []
        keys = set(mine)
        for name in sorted(names & keys):
            if plan_sets(name):  # refused by its name alone: not templated
                given[name] = None
                continue
            try:
                given[name] = mine[name]
            except AnsibleError as exc:
                untemplated.append(untemplated_problem(name, exc.message))
        old = renamed_problems(renamed_names(keys), role_variable_names())
        for line in old + untemplated + role_problems(given) + project_problems(given):
            if line not in problems:
                found.setdefault(line, []).append(str(host))
    return [f"{line} (on {', '.join(hosts)})" for line, hosts in found.items()]


def python_settings(given: dict[str, Any]) -> dict[str, Any]:
    """What the stacks' venv will hold, for the check of Python user apps' requirements
    (benchstack.plan.pyreqs), from the settings given (:func:`given_settings`, templated): the inventory's
    python_constraints (else the role's), and with python_method pyenv the one Python the venv is made from
    (else the supported distributions' python3)."""
    constraints = given.get("python_constraints")
    out: dict[str, Any] = {
        "python_constraints": [str(c) for c in constraints] if isinstance(constraints, list) else None
    }
    if given.get("python_method") == "pyenv":
        versions = given.get("python_pyenv_versions") or role_default("python", "python_pyenv_versions") or []
        chosen = given.get("python_pyenv_global") or (
            versions[0] if isinstance(versions, list) and versions else None
        )
        out["python_versions"] = [str(chosen)] if chosen else None
    return out


# What a task may pass: the options documented in plugins/modules/bench_plan.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    ARGS = ARGS
    ROOT_VARS = {"run": "bench_run_root", "apps": "bench_app_root", "units": "bench_unit_config_dir"}

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        roots = Roots(
            **{
                key: str(self._templar.template(task_vars[var]))
                for key, var in self.ROOT_VARS.items()
                if var in task_vars
            }
        )
        # -e's names apart: only extra vars win over what bench-stack sets itself (benchstack.plan.innervars).
        given, untemplated = given_settings(task_vars, self._templar)
        problems = setting_problems(given, load_extra_vars(self._loader)) + untemplated
        problems += other_hosts_problems(task_vars, problems)
        inventory = Inventory.of(task_vars)
        try:
            targets = inventory.measured()
        except TopologyError as exc:
            raise AnsibleActionFail(str(exc)) from None
        checking = boolean(task_vars.get("ansible_check_mode", False))
        try:
            plan, run_dir = checked_plan(plan_request(args, roots, given, targets, checking), problems)
        except PlanRefused as exc:
            raise AnsibleActionFail(str(exc)) from None
        plan = run_plan(plan, run_dir, args["results_dir"], checking)
        plan = with_unloaded(inventory.placed(plan), targets, task_vars)
        on = f" on {len(targets)} targets ({plan.target_order})" if len(targets) > 1 else ""
        result.update(
            changed=False,
            ansible_facts={"bench_plan": plan.to_dict()},
            msg=f"{plan.name}: {len(plan.stacks)} stacks, {len(plan.cells)} cells{on}",
            warnings=list(plan.warnings),
        )
        if carries_env_values(plan):
            # The fact holds the env file lines of app.env or a repository's token, and -v prints a task's
            # result (it printed each value three times). Only a result that succeeds is hidden, so a
            # refused input is still said; the warnings stay.
            result["_ansible_no_log"] = True
        return result


def plan_request(
    args: dict[str, Any], roots: Roots, given: dict[str, Any], targets: list[str], checking: bool
) -> PlanRequest:
    """What this run asks of the plan. A resume needs only its folder: without -e experiment, the
    experiment is the one its run.json names."""
    experiment = args.get("experiment")
    from_folder = False
    if not experiment and args.get("run_dir"):
        try:
            experiment = resumed_experiment(args["run_dir"])
        except RunDirError as exc:
            raise AnsibleActionFail(f"bench_run_dir: {exc}") from None
        from_folder = experiment is not None
    python = python_settings(given)
    return PlanRequest(
        experiment=experiment or DEFAULT_EXPERIMENT,
        project_dir=PROJECT_DIR,
        results_dir=args["results_dir"],
        roots=roots,
        run_dir=args.get("run_dir"),
        allow_outside=args["allow_outside"],
        from_folder=from_folder,
        targets=tuple(targets),
        parallel=args["parallel"],
        allow_large=args["allow_large"],
        python_constraints=python.get("python_constraints"),
        python_versions=python.get("python_versions"),
        # --check measures nothing: the fingerprint key is made by a run that does.
        make_key=not checking,
    )


def run_plan(plan: ResolvedPlan, run_dir: str, results_dir: str, checking: bool) -> ResolvedPlan:
    """``plan`` in its run folder, seeded by it; a resume's folder is locked for this playbook run first."""
    warnings = list(plan.warnings)
    if Path(run_dir).is_dir() and not checking:
        # A resume: before any host is touched, no other run may still work on this folder
        # (benchstack.measure.runlock; a new run's folder is locked when run.json is first written).
        try:
            warnings += acquire(run_dir, os.getppid())
        except RunLockError as exc:
            raise AnsibleActionFail(f"bench_run_dir: {exc}") from None
    plan = replace(
        plan,
        results_dir=str(Path(results_dir).expanduser().resolve()),
        run_dir=run_dir,
        warnings=tuple(warnings),
    )
    return reseeded(plan, seed_for(run_dir))


def with_unloaded(plan: ResolvedPlan, targets: list[str], task_vars: dict[str, Any]) -> ResolvedPlan:
    """``plan`` warning of the play's targets no loadgen loads (provisioned, not measured)."""
    in_play = set(task_vars.get("ansible_play_hosts_all") or [])
    every = (task_vars.get("groups") or {}).get("targets") or []
    unloaded = [t for t in every if t in in_play and t not in targets]
    if not targets or not unloaded:
        return plan
    return replace(
        plan,
        warnings=(
            *plan.warnings,
            f"no loadgen loads {', '.join(unloaded)}: provisioned, not measured (give a loadgen its "
            "bench_target)",
        ),
    )


class Inventory:
    """The inventory's shape as the plan takes it: the targets and loadgens groups, the loadgens in the play
    (--limit), each loadgen's bench_target and each loaded target's address (benchstack.plan.topology)."""

    def __init__(self, groups: dict[str, Any], in_play: list[str], hostvars: Any) -> None:
        self.targets = [str(t) for t in groups.get("targets") or []]
        self.loadgens = [str(lg) for lg in groups.get("loadgens") or []]
        self.in_play = in_play
        self.hostvars = hostvars

    @classmethod
    def of(cls, task_vars: dict[str, Any]) -> Inventory:
        in_play = [str(h) for h in task_vars.get("ansible_play_hosts_all") or []]
        return cls(task_vars.get("groups") or {}, in_play, task_vars.get("hostvars") or {})

    def _var(self, host: str, name: str) -> Any:
        """``name`` of ``host`` as the inventory sets it, templated (None when it does not)."""
        if host not in self.hostvars or name not in self.hostvars[host]:
            return None
        try:
            return self.hostvars[host][name]
        except AnsibleError as exc:
            # The plan comes before any fact is gathered: an address must not need one.
            raise AnsibleActionFail(f"{name} of {host}: {exc.message}") from None

    def chosen(self) -> dict[str, str | None]:
        """Each loadgen's bench_target, where set."""
        return {lg: self._var(lg, "bench_target") for lg in self.loadgens}

    def address(self, target: str) -> str:
        """Where a loadgen reaches ``target``: its bench_address, else its ansible_host, else its name."""
        for name in ("bench_address", "ansible_host"):
            value = self._var(target, name)
            if value is not None:
                return str(value)
        return target

    def measured(self) -> list[str]:
        """The targets the loadgens of the play load, in the targets group's order (none without loadgens
        in the play: a play of targets alone measures nothing)."""
        playing = [lg for lg in self.loadgens if lg in self.in_play]
        if not playing:
            return []
        return measured_targets(loadgen_targets(playing, self.targets, self.chosen()), self.targets)

    def placed(self, plan: ResolvedPlan) -> ResolvedPlan:
        """``plan`` with its hosts (benchstack.plan.resolved.with_hosts)."""
        try:
            return with_hosts(plan, self.targets, self.loadgens, self.chosen(), self.address)
        except TopologyError as exc:
            raise AnsibleActionFail(str(exc)) from None


def carries_env_values(plan: ResolvedPlan) -> bool:
    """Whether the plan holds ``app.env`` values (which may be secrets), or a repository URL's
    credentials (``git_repos``)."""
    return bool(plan.app_env_lines) or bool(plan.git_repos)
