"""An action plugin's arguments, checked against the options its documentation declares, and the base class
every action plugin of the project shares (:class:`BenchAction`).

Each action plugin ``plugins/action/NAME.py`` is documented by ``plugins/modules/NAME.py`` (DOCUMENTATION,
EXAMPLES, RETURN), where ``ansible-doc -t module NAME`` reads it, as community.general documents its
action-backed modules. The stub's options are also the plugin's argument spec, handed to Ansible's own
``validate_argument_spec``: one text says what a task may pass, so the documentation cannot drift from what
is accepted. Checks a spec cannot state (a number's range, one option needing another) stay in the plugin
(:meth:`BenchAction.check_args`).
"""

from __future__ import annotations

import ast
import functools
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import yaml
from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from benchstack.common.inputs import PROJECT_YAML_LOADER
from benchstack.measure.remote import without_tty


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
            doc = yaml.load(ast.literal_eval(node.value), Loader=PROJECT_YAML_LOADER)
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


class BenchAction(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """What bench-stack's action plugins share: the task's arguments checked against the plugin's documented
    options (then :meth:`check_args`), the skipped result of check mode, one shape for failures and
    warnings (each starting with the plugin's name), and commands through the host's connection. A plugin
    sets ``ARGS`` and ``CHECK_MODE`` and writes :meth:`act`."""

    TRANSFERS_FILES = False
    # What a task may pass: the plugin's ``action_args(__file__)``.
    ARGS: ClassVar[ActionArgs]
    # In check mode: None runs :meth:`act` (the plugin decides what check mode means for it); a text skips
    # the task unchanged, with that text as its ``msg`` (none when empty).
    CHECK_MODE: ClassVar[str | None] = None

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        args = self.ARGS.check(self)
        self.check_args(args)
        if self._task.check_mode and self.CHECK_MODE is not None:
            result.update(changed=False, skipped=True)
            if self.CHECK_MODE:
                result["msg"] = self.CHECK_MODE
            return result
        return self.act(result, args, task_vars or {})

    def check_args(self, args: dict[str, Any]) -> None:
        """What the documented options cannot state (a range, a list that must not be empty): raise
        :meth:`failure` when ``args`` break it; may complete ``args`` (a default the spec cannot give)."""

    @abstractmethod
    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """The task's result: ``result`` (ActionBase's) completed, for the checked ``args``."""

    def failure(self, message: str) -> AnsibleActionFail:
        """The task's failure, its message starting with the plugin's name (raise it ``from None`` where the
        cause says nothing more)."""
        return AnsibleActionFail(f"{self.ARGS.name}: {message}")

    def warn(self, result: dict[str, Any], message: str) -> None:
        """A warning in the task's result, starting with the plugin's name."""
        result.setdefault("warnings", []).append(f"{self.ARGS.name}: {message}")

    def executor(self) -> Callable[[str], tuple[int, str, str]]:
        """Runs a shell command through this host's connection, without a tty (so stderr stays apart):
        (rc, stdout, stderr)."""
        without_tty(self._connection)

        def execute(command: str) -> tuple[int, str, str]:
            res = self._low_level_execute_command(command)
            return res.get("rc", 1), res.get("stdout", ""), res.get("stderr", "")

        return execute
