"""Every action plugin is documented where ansible-doc reads it (plugins/modules/NAME.py), and accepts exactly
the options documented there, checked by Ansible's own validator (benchstack.actionargs)."""

import ast
import functools
import os
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from ansible.errors import AnsibleActionFail
from conftest import printed_json
from test_plugins import load_plugin, make_action

from benchstack.actionargs import stub_documentation, stub_path

ROOT = Path(__file__).resolve().parents[3]
ACTIONS = sorted(p.stem for p in (ROOT / "plugins" / "action").glob("bench_*.py"))
# Being rewritten on another branch: their documentation still lives in the plugin, as before.
NOT_YET = frozenset({"bench_host_lock", "bench_provision_state"})
DOCUMENTED = [name for name in ACTIONS if name not in NOT_YET]
# A value each type refuses (Ansible converts most others: "a,b" to a list, 1 to "1").
# A value of each type, for the required options a test does not leave out.
VALID: dict[str, Any] = {"str": "x", "path": "/nowhere", "dict": {"k": "v"}, "int": 1}
UNCONVERTIBLE: dict[str, Any] = {
    "dict": "not a mapping",
    "list": {"a": 1},
    "int": "many",
    "float": "soon",
    "bool": "perhaps",
}


@functools.cache
def plugin(name: str) -> ModuleType:
    return load_plugin("action", name)


def options(name: str) -> dict[str, Any]:
    return dict(stub_documentation(stub_path(ROOT / "plugins" / "action" / f"{name}.py"))["options"])


def required_given(name: str) -> dict[str, Any]:
    """Each required option given a value of its type: only what a test adds can be refused."""
    return {
        k: [VALID[o["elements"]]] if o["type"] == "list" else VALID[o["type"]]
        for k, o in options(name).items()
        if o.get("required")
    }


def refusal(name: str, args: dict[str, Any]) -> str:
    """The message the action fails with for ``args``, before it does anything."""
    action = make_action(plugin(name), args)
    with pytest.raises(AnsibleActionFail) as caught:
        action.run(task_vars={"inventory_hostname": "web"})
    return caught.value.message


def ansible_doc(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """``ansible-doc --json`` on every stub, once: what a user reads (started with the session: conftest's
    early_commands)."""
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
        "ANSIBLE_LOCAL_TEMP": str(folder / "tmp"),
    }
    return {"doc": (["ansible-doc", "-t", "module", "--json", *DOCUMENTED], env, ROOT)}


def test_the_two_left_out_still_exist_and_document_themselves_in_the_plugin() -> None:
    # Once they get stubs this fails, and NOT_YET shrinks.
    for name in sorted(NOT_YET):
        assert yaml.safe_load(plugin(name).DOCUMENTATION)["module"] == name
        assert not stub_path(ROOT / "plugins" / "action" / f"{name}.py").exists(), name


@pytest.mark.early.with_args(ansible_doc)
@pytest.mark.parametrize("name", DOCUMENTED)
def test_ansible_doc_reads_each_stub_with_its_options_examples_and_return(
    name: str, early_results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    doc = printed_json(early_results["doc"])[name]
    assert doc["doc"]["module"] == name
    assert set(doc["doc"]["options"]) == set(options(name))
    assert doc["examples"].strip() and f"{name}:" in doc["examples"]
    assert doc["return"], name


@pytest.mark.parametrize("name", DOCUMENTED)
def test_the_documentation_lives_in_the_stub_only_and_is_the_plugins_argument_spec(name: str) -> None:
    module = plugin(name)
    assert not hasattr(module, "DOCUMENTATION") and not hasattr(module, "RETURN")
    # No list of its own beside the documented one (ActionBase's empty _VALID_ARGS checks nothing).
    assert not {"_VALID_ARGS", "_REQUIRED"} & set(vars(module.ActionModule))
    assert module.ARGS.name == name and module.ARGS.options == options(name)


@pytest.mark.parametrize("name", DOCUMENTED)
def test_an_unknown_argument_is_refused_naming_it_and_the_documented_ones(name: str) -> None:
    message = refusal(name, {**required_given(name), "bogus": 1})
    assert message.startswith(f"{name}: Unsupported parameters for ")
    assert "bogus" in message
    assert f"Supported parameters include: {', '.join(sorted(options(name)))}" in message


@pytest.mark.parametrize("name", [n for n in DOCUMENTED if required_given(n)])
def test_missing_required_arguments_are_refused_naming_each(name: str) -> None:
    required = sorted(required_given(name))
    # The other options' documented types are respected: only the required ones are missing.
    assert refusal(name, {}) == f"{name}: missing required arguments: {', '.join(required)}"


@pytest.mark.parametrize(
    ("name", "option"),
    [(n, k) for n in DOCUMENTED for k, o in options(n).items() if o.get("type") in UNCONVERTIBLE],
)
def test_a_wrong_typed_argument_is_refused_naming_it_and_its_type(name: str, option: str) -> None:
    wanted = options(name)[option]["type"]
    message = refusal(name, {**required_given(name), option: UNCONVERTIBLE[wanted]})
    assert message.startswith(f"{name}: argument '{option}' is of type "), message
    assert f"unable to convert to {wanted}" in message


def test_a_required_argument_given_empty_is_refused() -> None:
    message = refusal("bench_report", {"run_dir": ""})
    assert message == "bench_report: empty required arguments: run_dir"
    message = refusal("bench_merge", {"run_dir": "/r", "cell_id": None, "loadgens": ["a", "b"]})
    assert message == "bench_merge: empty required arguments: cell_id"


def test_defaults_come_from_the_documentation() -> None:
    action = make_action(plugin("bench_cell"), required_given("bench_cell"))
    args = plugin("bench_cell").ARGS.check(action)
    assert (args["target_stats"], args["keep_going"], args["peers"]) == (True, False, None)


def options_read(name: str) -> set[str]:
    """The options the plugin's code reads: ``args["k"]``/``args.get("k")`` on the checked arguments (named
    ``args`` or ``a``, or kept as ``self._args``) or on ``self._task.args``."""
    tree = ast.parse((ROOT / "plugins" / "action" / f"{name}.py").read_text(encoding="utf-8"))

    def is_args(node: ast.expr) -> bool:
        return (isinstance(node, ast.Name) and node.id in ("args", "a")) or (
            isinstance(node, ast.Attribute) and node.attr in ("_args", "args")
        )

    read = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and is_args(node.value):
            key = node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and is_args(node.func.value)
            and node.args
        ):
            key = node.args[0]
        else:
            continue
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            read.add(key.value)
    return read


@pytest.mark.parametrize("name", DOCUMENTED)
def test_the_plugin_reads_exactly_the_documented_options(name: str) -> None:
    # Read but not documented: refused by the check, so the plugin can never get it. Documented but not
    # read: accepted and ignored.
    assert options_read(name) == set(options(name))
