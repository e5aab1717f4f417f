"""The variables the project's playbooks and roles set themselves, which ``-e`` may not replace.

Extra vars (``-e``) win over every other source, a role's ``vars/``, ``set_fact``, ``register`` and a loop's
variable included. So ``-e bench_user="bench\\nGroup=root"`` replaced the user that
``playbooks/vars/roles.yml`` derives from the checked ``host_user`` and reached the app server units'
``User=``; ``-e __nginx_user=...`` replaced nginx.conf's ``user`` from ``vars/Debian.yml``; ``-e stack=...``
replaced each stack of the app server role's loop; ``-e bench_plan=...`` skipped the plan and every check in
it. What these names hold is computed from checked inputs, so the plan refuses them from ``-e`` (whatever
else sets them loses to the project's own values), naming where the project sets each. Role variables (a
role's argument_specs) are the exception: the user may set them, and :mod:`benchstack.plan.rolevars` checks
them for the place they land in.

The names are read from the project's YAML (not listed by hand), so a new ``register:`` or vars file is
covered the day it is written.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from benchstack.common.inputs import PROJECT_YAML_LOADER

_SET_FACT = {"set_fact", "ansible.builtin.set_fact", "ansible.legacy.set_fact"}
# Keys under which a play or a block holds more tasks.
_TASK_LISTS = ("tasks", "pre_tasks", "post_tasks", "handlers", "block", "rescue", "always")
# The fact the plan play sets (playbooks/plan.yml, plugins/action/bench_plan.py).
PLAN_FACT = "bench_plan"


def _names_in_tasks(tasks: Any) -> Iterator[str]:
    """Names a list of plays, tasks or blocks sets: registers, set_fact keys, loop variables, vars keys."""
    if not isinstance(tasks, list):
        return
    for task in tasks:
        if not isinstance(task, dict):
            continue
        for key in ("register",):
            if isinstance(task.get(key), str):
                yield task[key]
        loop_control = task.get("loop_control")
        if isinstance(loop_control, dict) and isinstance(loop_control.get("loop_var"), str):
            yield loop_control["loop_var"]
        elif any(k == "loop" or k.startswith("with_") for k in task):
            yield "item"
        for module in _SET_FACT & set(task):
            if isinstance(task[module], dict):
                yield from (k for k in task[module] if k != "cacheable")
        if isinstance(task.get("vars"), dict):
            yield from task["vars"]
        for key in _TASK_LISTS:
            yield from _names_in_tasks(task.get(key))


def _keys(path: Path) -> list[str]:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=PROJECT_YAML_LOADER)
    return [str(k) for k in data] if isinstance(data, dict) else []


@functools.cache
def inner_names(project: Path) -> dict[str, str]:
    """Every variable ``project``'s playbooks and roles set, with the file that sets it (the first found).
    Read once per process: the project's own files, which a run does not change."""
    found: dict[str, str] = {PLAN_FACT: "playbooks/plan.yml"}
    var_files = [*sorted(project.glob("playbooks/vars/*.yml")), *sorted(project.glob("roles/*/vars/*.yml"))]
    for path in var_files:
        for name in _keys(path):
            found.setdefault(name, str(path.relative_to(project)))
    task_files = [
        *sorted(project.glob("*.yml")),
        *sorted(project.glob("playbooks/*.yml")),
        *sorted(project.glob("playbooks/tasks/*.yml")),
        *sorted(project.glob("roles/*/tasks/*.yml")),
        *sorted(project.glob("roles/*/handlers/*.yml")),
    ]
    for path in task_files:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=PROJECT_YAML_LOADER)
        for name in _names_in_tasks(data):
            found.setdefault(name, str(path.relative_to(project)))
    return found


def inner_variable_problems(given: list[str], project: Path, role_variables: set[str]) -> list[str]:
    """One line per name in ``given`` (set by the inventory or ``-e``) that ``project`` sets itself and that
    is not one of the ``role_variables`` a user may set."""
    if not given:
        return []
    inner = inner_names(project)
    return [
        f"{name}: set by bench-stack itself ({inner[name]}) from checked inputs; given here it would replace "
        "them (extra vars win over every other variable): set the experiment or a role variable instead"
        for name in given
        if name in inner and name not in role_variables
    ]
