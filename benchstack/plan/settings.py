"""Every variable a user sets for a run, checked once before any host is touched: by the plan play
(``bench_plan``, for the inventory and ``-e``) and by ``bench-stack experiment --vars FILE``, so both refuse
the same values with the same lines.

- a name a renamed role's variable had before (:mod:`benchstack.common.renamed`);
- a name bench-stack sets itself, given with ``-e`` (:mod:`benchstack.plan.innervars`);
- a role variable: its role's ``meta/argument_specs.yml`` (types, choices; Ansible's own validator), then the
  place it lands in (:mod:`benchstack.plan.rolevars`);
- the project's switches (``bench_cpu_split``, ``bench_lock_wait``, ``bench_fail_on``, ``bench_yes`` ...).

The roots, ``bench_results_dir`` and ``bench_run_dir`` are checked with the plan
(:mod:`benchstack.plan.resolved`), which needs them. Values arrive plain: the plan play templates them first.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from benchstack.common.exitcodes import FAIL_ON
from benchstack.common.inputs import PROJECT_YAML_LOADER
from benchstack.common.renamed import renamed_problems, renamed_to
from benchstack.plan.cpusplit import SETTINGS as CPU_SPLIT_SETTINGS
from benchstack.plan.innervars import inner_variable_problems
from benchstack.plan.rolevars import plan_only, plan_set_problem, plan_sets, variable_problems
from benchstack.results.location import publish_problems

PROJECT_DIR = Path(__file__).resolve().parents[2]
ROLES_DIR = PROJECT_DIR / "roles"
SWITCHES = (
    "bench_provision_skip_unchanged",
    "bench_targets_parallel",
    "bench_yes",
    "bench_keep_going",
    "bench_history",
)
# The project's settings outside any role that :func:`project_problems` checks.
PROJECT_SETTINGS = (
    "bench_cpu_split",
    "bench_lock_wait",
    "bench_fail_on",
    *SWITCHES,
    "bench_publish",
    "bench_publish_endpoint",
)


@functools.cache
def _specs(roles_dir: Path) -> tuple[tuple[str, dict[str, Any]], ...]:
    found = []
    for spec_file in sorted(roles_dir.glob("*/meta/argument_specs.yml")):
        specs = yaml.load(spec_file.read_text(encoding="utf-8"), Loader=PROJECT_YAML_LOADER) or {}
        found.append((spec_file.parent.parent.name, specs.get("argument_specs") or {}))
    return tuple(found)


@functools.cache
def role_options(roles_dir: Path = ROLES_DIR) -> tuple[tuple[str, dict[str, Any]], ...]:
    """(role, the options of all its entry points, main's first) for every role, read once per process: the
    project's own files, which a run does not change (a process that plans many times, like the tests,
    read them ~1,500 times)."""
    found = []
    for role, specs in _specs(roles_dir):
        options: dict[str, Any] = {}
        for _, entry in sorted(specs.items(), key=lambda item: item[0] != "main"):
            for name, spec in ((entry or {}).get("options") or {}).items():
                options.setdefault(name, spec)
        found.append((role, options))
    return tuple(found)


@functools.cache
def role_variable_names(roles_dir: Path = ROLES_DIR) -> frozenset[str]:
    """Every variable any entry point of any role declares: what a user may set (and the plan checks)."""
    return frozenset(name for _, options in role_options(roles_dir) for name in options)


def renamed_names(names: Iterable[str], roles_dir: Path = ROLES_DIR) -> list[str]:
    """The names among ``names`` that a renamed role's variable had (:mod:`benchstack.common.renamed`)."""
    variables = role_variable_names(roles_dir)
    return [name for name in names if renamed_to(name, variables) is not None]


def role_problems(given: dict[str, Any], roles_dir: Path = ROLES_DIR, outside: bool = True) -> list[str]:
    """Every role variable in ``given`` (name -> plain value) that its role's argument_specs refuse, or that
    does not fit where it lands, one line each (``role R: ...``). ``outside``: the values are given outside
    the plan (inventory, command line), where what the plan sets is refused; on the host (a role's own
    check) a variable the plan sets from the experiment is checked as any other."""
    problems: list[str] = []
    if not given:
        return problems
    for role, options in role_options(roles_dir):
        mine = {name: value for name, value in given.items() if name in options}
        # What the plan sets is refused whatever its shape; the shape's errors would only hide why.
        from_plan = [name for name in mine if (plan_sets(name) if outside else plan_only(name))]
        problems += [f"role {role}: {plan_set_problem(name)}" for name in from_plan]
        mine = {name: value for name, value in mine.items() if name not in from_plan}
        if not mine:
            continue
        # Ansible's own validator, so the plan refuses what the role would: imported here, as only these
        # checks need it (ansible is in requirements.txt, not a dependency of the package).
        from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

        # Set outside the role, so never missing: without "required" (a copy: the options are shared).
        spec = {name: {k: v for k, v in options[name].items() if k != "required"} for name in mine}
        result = ArgumentSpecValidator(spec).validate(mine)
        problems += [f"role {role}: {error}" for error in result.error_messages]
        # Then each value for the place it lands in (a unit file, a config): types are not enough.
        typed = {
            name: result.validated_parameters[name]
            for name in mine
            if name in result.validated_parameters and not any(name in e for e in result.error_messages)
        }
        problems += [f"role {role}: {problem}" for problem in variable_problems(typed)]
    return problems


def role_of(name: str, roles_dir: Path = ROLES_DIR) -> str | None:
    """The first role (by name) that declares the variable ``name``, or None."""
    return next((role for role, options in role_options(roles_dir) if name in options), None)


def untemplated_problem(name: str, reason: str, roles_dir: Path = ROLES_DIR) -> str:
    """The line for a role variable or project setting given outside the roles whose value the plan could not
    template (``reason``: Ansible's words, first line): the plan cannot check what it cannot see, and such a
    value was let through (issue 44: ``{{ ansible_facts[...][:0] }}0\\nExecStartPre=...`` passed the plan and
    put a root command into a unit), so it is refused like a value that does not fit."""
    role = role_of(name, roles_dir)
    why = " ".join(str(reason).strip().splitlines()[:1])[:160] or "an error"
    return (
        f"{f'role {role}: ' if role else ''}{name}: must be a plain value: the plan could not template it "
        f"({why}), and facts are not gathered when the plan checks"
    )


def role_value_problems(values: dict[str, Any], roles_dir: Path = ROLES_DIR) -> list[str]:
    """What a role asserts right before it writes a unit, a config or a sysctl (the filter
    ``bench_rolevar_problems``): its variables in ``values``, templated on the host, against the same checks
    as the plan's (:func:`role_problems`: argument_specs, then :mod:`benchstack.plan.rolevars`): the values as
    they land, whatever the plan saw (a template over facts can render otherwise on the host, and a user's own
    playbook may run the role without the plan). What the plan sets (the stacks, env lines) was checked when
    it was compiled and is left out; a name no role declares is a problem (a typo would check nothing)."""
    names = role_variable_names(roles_dir)
    unknown = [f"{name}: no role declares it, so nothing checks it" for name in values if name not in names]
    mine = {name: value for name, value in values.items() if name in names and not plan_only(name)}
    return unknown + role_problems(mine, roles_dir, outside=False)


def project_problems(given: dict[str, Any]) -> list[str]:
    """The project-wide settings in ``given`` outside any role, checked as the roles' variables are."""
    problems = []
    if "bench_cpu_split" in given:
        value = str(given["bench_cpu_split"])
        if value not in CPU_SPLIT_SETTINGS:
            problems.append(f"bench_cpu_split: must be one of {', '.join(CPU_SPLIT_SETTINGS)}, not {value!r}")
    if "bench_lock_wait" in given and lock_wait_seconds(given["bench_lock_wait"]) is None:
        value = given["bench_lock_wait"]
        problems.append(f"bench_lock_wait: must be a number of seconds, 0 or more, not {value!r}")
    if "bench_fail_on" in given and given["bench_fail_on"] not in FAIL_ON:
        value = given["bench_fail_on"]
        problems.append(
            f"bench_fail_on: must be one of {', '.join(FAIL_ON)} (what fails the run's exit code: "
            f"docs/verdict.md), not {value!r}"
        )
    for name in SWITCHES:
        if name in given and str(given[name]).lower() not in ("true", "false", "yes", "no", "1", "0"):
            problems.append(f"{name}: must be true or false, not {given[name]!r}")
    return problems + publish_problems(given)


def setting_problems(
    given: dict[str, Any], extra: Iterable[str], project: Path = PROJECT_DIR, roles_dir: Path = ROLES_DIR
) -> list[str]:
    """One line per problem of the variables a user set: ``given`` (name -> plain value: the inventory's and
    ``-e``'s), ``extra`` (the names ``-e`` gave, which alone can replace what bench-stack sets itself)."""
    return (
        renamed_problems(given, role_variable_names(roles_dir))
        + inner_variable_problems(list(extra), project, set(role_variable_names(roles_dir)))
        + role_problems(given, roles_dir)
        + project_problems(given)
    )


def lock_wait_seconds(value: Any) -> float | None:
    """``bench_lock_wait`` (how long :func:`take_host` waits for a live holder) as seconds: a whole or decimal
    number, 0 or more; None when it is not one."""
    if isinstance(value, bool):
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None
