"""What a role reads of a stack, and nothing more: the plan hands each role that serves stacks exactly the
fields its ``meta/argument_specs.yml`` declares as sub-options of its stack list (``elements: dict`` with
``options:``).

The spec is the one statement of the contract between the plan and the role's templates. Ansible refuses a
key that a spec with ``options`` does not declare, so the plan cannot hand over the whole resolved stack
(dozens of fields no template reads); it hands over this projection instead. A field a template reads but
the spec omits is then missing from the role's input and the template fails in the unit tests that render
it; a field the plan stops producing fails the spec's ``required``; the role's README, generated from the
same spec, lists the fields.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from benchstack.common.inputs import PROJECT_YAML_LOADER
from benchstack.kinds.fronts import ROLES as FRONT_ROLES
from benchstack.plan.stacks import Stack

ROLES_DIR = Path(__file__).resolve().parents[2] / "roles"


def _has_server(stack: Stack) -> bool:
    return stack.server is not None


def _front(kind: str) -> Callable[[Stack], bool]:
    return lambda stack: stack.front.kind == kind


# Role -> its stack list variable and the stacks of the plan it serves: the app servers', and each front's
# role (benchstack.kinds.fronts).
STACK_ROLES: dict[str, tuple[str, Callable[[Stack], bool]]] = {
    "app_server": ("app_server_stacks", _has_server),
    **{role: (f"{role}_stacks", _front(front.name)) for role, front in FRONT_ROLES.items()},
}


@cache
def entry_points(role: str, roles_dir: Path = ROLES_DIR) -> dict[str, dict[str, Any]]:
    """The role's argument_specs entry points (main, packages, ...); read once per process."""
    text = (roles_dir / role / "meta" / "argument_specs.yml").read_text(encoding="utf-8")
    specs: dict[str, dict[str, Any]] = yaml.load(text, Loader=PROJECT_YAML_LOADER)["argument_specs"]
    return specs


def stack_fields(role: str, roles_dir: Path = ROLES_DIR) -> dict[str, Any]:
    """The sub-options the role's main entry point declares for its stack list."""
    variable = STACK_ROLES[role][0]
    options: dict[str, Any] = entry_points(role, roles_dir)["main"]["options"][variable]["options"]
    return options


def project(value: Any, options: dict[str, Any]) -> Any:
    """``value`` with only the keys ``options`` declares, recursively through dicts and lists of dicts that
    declare their own; absent keys stay absent (a template tests ``is defined``), None stays None."""
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, spec in options.items():
        if key not in value:
            continue
        item, sub = value[key], (spec or {}).get("options")
        if sub and isinstance(item, list):
            item = [project(element, sub) for element in item]
        elif sub:
            item = project(item, sub)
        out[key] = item
    return out


def served(role: str, stacks: Sequence[Stack]) -> list[Stack]:
    """The resolved ``stacks`` that ``role`` serves (:data:`STACK_ROLES`)."""
    serves = STACK_ROLES[role][1]
    return [stack for stack in stacks if serves(stack)]


def role_stacks(stacks: Sequence[Stack], roles_dir: Path = ROLES_DIR) -> dict[str, list[dict[str, Any]]]:
    """Role -> the stacks it serves, each as the plan's fact holds it (:meth:`Stack.to_dict`) reduced to the
    fields the role declares."""
    return {
        role: [project(stack.to_dict(), stack_fields(role, roles_dir)) for stack in served(role, stacks)]
        for role in STACK_ROLES
    }
