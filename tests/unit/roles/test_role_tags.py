"""Every task of every role carries its role's tag and a stage tag (bench_<role>_install, _config, ...),
also through include_tasks and include_role (whose tags reach the included tasks only with `apply`), so
`--tags bench_<role>_<stage>` runs that stage's tasks and `--tags bench_<role>` the whole role."""

from pathlib import Path
from typing import Any

import pytest
from conftest import read_yaml

ROLES = Path(__file__).resolve().parents[3] / "roles"
TASK_INCLUDES = ("ansible.builtin.include_tasks", "ansible.builtin.import_tasks")
ROLE_INCLUDES = ("ansible.builtin.include_role", "ansible.builtin.import_role")
# Internal roles: included by other roles, whose tags they take (build_archive: by ruby and python).
INTERNAL = {"build_archive"}

Leaf = tuple[str, str, set[str]]


def tags_of(task: dict[str, Any]) -> set[str]:
    tags = task.get("tags") or []
    return {tags} if isinstance(tags, str) else set(tags)


def leaf_tasks(role: Path, file: str, inherited: set[str], seen: tuple[str, ...] = ()) -> list[Leaf]:
    """(file, task name, effective tags) of every task that does work, following includes."""
    out = []
    for task in read_yaml(role / "tasks" / file) or []:
        out += _walk(role, file, task, inherited, (*seen, f"{role.name}/{file}"))
    return out


def _walk(
    role: Path, file: str, task: dict[str, Any], inherited: set[str], seen: tuple[str, ...]
) -> list[Leaf]:
    tags = inherited | tags_of(task)
    if "block" in task:
        children = task["block"] + task.get("rescue", []) + task.get("always", [])
        return [leaf for t in children for leaf in _walk(role, file, t, tags, seen)]
    action = next((k for k in TASK_INCLUDES + ROLE_INCLUDES if k in task), None)
    if action is None:
        return [(file, task.get("name", "?"), tags)]
    spec = task[action] if isinstance(task[action], dict) else {"file": task[action]}
    dynamic = action.endswith(("include_tasks", "include_role"))
    applied = set(tags_of(spec.get("apply") or {}))
    out: list[Leaf] = []
    if dynamic and not applied <= tags:
        # The include itself must be selected by every tag its children get.
        out.append((file, f"{task.get('name')}: its own tags lack its apply tags", set()))
    carried = (inherited | applied) if dynamic else tags
    if action in ROLE_INCLUDES:
        target_role = ROLES / spec["name"]
        return out + leaf_tasks(target_role, f"{spec.get('tasks_from', 'main')}.yml", carried, seen)
    target = str(spec["file"])
    if "{{" in target:
        # include_tasks: "{{ ruby_method }}.yml" and the like: every file the pattern can name.
        prefix = target.split("{{")[0]
        files = sorted(p.name for p in (role / "tasks").glob(f"{prefix}*.yml") if p.name != file)
    else:
        files = [target]
    return out + [
        leaf for f in files if f"{role.name}/{f}" not in seen for leaf in leaf_tasks(role, f, carried, seen)
    ]


ROLE_DIRS = sorted(
    p for p in ROLES.iterdir() if (p / "tasks" / "main.yml").exists() and p.name not in INTERNAL
)


@pytest.mark.parametrize("role", ROLE_DIRS, ids=[p.name for p in ROLE_DIRS])
def test_every_task_of_a_role_carries_its_role_and_stage_tags(role: Path) -> None:
    base = f"bench_{role.name}"
    missing = [
        f"{file}: {name} ({sorted(tags) or 'no tags'})"
        for file, name, tags in leaf_tasks(role, "main.yml", set())
        if base not in tags or not any(t.startswith(base + "_") for t in tags)
    ]
    assert missing == [], f"{role.name}: tasks --tags {base}_<stage> would not run:\n" + "\n".join(missing)
