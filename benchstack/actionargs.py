"""An action plugin's arguments, checked against the options its documentation declares.

Each action plugin ``plugins/action/NAME.py`` is documented by ``plugins/modules/NAME.py`` (DOCUMENTATION,
EXAMPLES, RETURN), where ``ansible-doc -t module NAME`` reads it, as community.general documents its
action-backed modules. The stub's options are also the plugin's argument spec, handed to Ansible's own
``validate_argument_spec``: one text says what a task may pass, so the documentation cannot drift from what
is accepted. Checks a spec cannot state (a number's range, one option needing another) stay in the plugin.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from ansible.errors import AnsibleActionFail

# libyaml's loader when PyYAML has it (as Ansible's own): every worker reads its plugin's stub once.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def stub_path(action_file: str | Path) -> Path:
    """``plugins/modules/NAME.py`` for the action plugin ``plugins/action/NAME.py``."""
    path = Path(action_file).resolve()
    return path.parents[1] / "modules" / path.name


@functools.cache
def stub_documentation(stub: Path) -> dict[str, Any]:
    """The stub's DOCUMENTATION, read as ansible-doc reads it: a string literal in the file, not run."""
    tree = ast.parse(stub.read_text(encoding="utf-8"), str(stub))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "DOCUMENTATION" for t in node.targets
        ):
            doc = yaml.load(ast.literal_eval(node.value), Loader=_LOADER)
            if not isinstance(doc, dict):
                break
            return doc
    raise ValueError(f"{stub}: no DOCUMENTATION mapping")


@dataclass(frozen=True)
class ActionArgs:
    """The documented options of one action plugin, and the check of a task's arguments against them."""

    name: str
    options: dict[str, Any]

    def check(self, action: Any) -> dict[str, Any]:
        """The task's arguments, validated by Ansible against the options (unknown, missing, wrong type are
        refused) and given their defaults; a required option given as null or "" is refused too (Ansible
        counts it as given, and every plugin would fail later on it, less clearly)."""
        try:
            _, args = action.validate_argument_spec(argument_spec=self.options)
        except AnsibleActionFail as exc:
            raise AnsibleActionFail(f"{self.name}: {exc.message}") from None
        empty = [k for k, o in self.options.items() if o.get("required") and args.get(k) in (None, "")]
        if empty:
            raise AnsibleActionFail(f"{self.name}: empty required arguments: {', '.join(empty)}")
        return dict(args)


def action_args(action_file: str | Path) -> ActionArgs:
    """The documented options of the action plugin at ``action_file`` (its ``__file__``)."""
    stub = stub_path(action_file)
    return ActionArgs(stub.stem, dict(stub_documentation(stub).get("options") or {}))
