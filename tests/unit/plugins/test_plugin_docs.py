"""Every module, action plugin and filter has a page ``ansible-doc`` shows (issue 41): a module's is its
DOCUMENTATION, an action plugin's is its plugins/modules/NAME.py stub's (as community.general documents its
action-backed modules), a filter's is plugins/filter/NAME.yml beside its plugin file (ansible-core's own
form).
Every action plugin accepts exactly the options documented in its stub, checked by Ansible's own validator
(benchstack.actionargs)."""

import ast
import functools
import os
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from ansible.errors import AnsibleActionFail
from conftest import printed_json
from test_plugins import load_plugin, make_action

from benchstack.actionargs import stub_documentation, stub_path

ROOT = Path(__file__).resolve().parents[3]
ACTIONS = sorted(p.stem for p in (ROOT / "plugins" / "action").glob("bench_*.py"))
DOCUMENTED = ACTIONS
# What ansible-doc -t module lists: the modules, and the action plugins through their stubs.
MODULES = sorted({p.stem for p in (ROOT / "plugins" / "modules").glob("*.py")} | set(ACTIONS))
# Every name a filter plugin file defines (its FilterModule's filters), by plugin file.
FILTER_FILES = {
    p.stem: sorted(load_plugin("filter", p.stem).FilterModule().filters())
    for p in sorted((ROOT / "plugins" / "filter").glob("*.py"))
}
FILTERS = sorted(name for names in FILTER_FILES.values() for name in names)
# The console (ansible.cfg's stdout_callback).
CALLBACKS = sorted(p.stem for p in (ROOT / "plugins" / "callback").glob("*.py"))
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
    """``ansible-doc --json`` on every module (action stubs included) and on every filter, one process per
    plugin type, from the project root as a user runs it (its ansible.cfg names the plugin folders): started
    with the session (conftest's early_commands), ~1 s of CPU each."""
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
        "ANSIBLE_LOCAL_TEMP": str(folder / "tmp"),
        "ANSIBLE_NOCOLOR": "1",
    }
    return {
        "module": (["ansible-doc", "-t", "module", "--json", *MODULES], env, ROOT),
        "filter": (["ansible-doc", "-t", "filter", "--json", *FILTERS], env, ROOT),
        "callback": (["ansible-doc", "-t", "callback", "--json", *CALLBACKS], env, ROOT),
    }


def test_the_plugin_files_define_the_names_the_doc_test_asks_for() -> None:
    # The listing itself, so an empty glob cannot make the test below pass on nothing.
    assert {"bench_http_check", "bench_files", "bench_cell", "bench_host_lock"} <= set(MODULES)
    assert {"bench_cpu_split", "bench_rolevar_problems"} <= set(FILTERS)
    assert len(FILTERS) == len(set(FILTERS)), "a filter name defined twice"


def test_each_filter_has_its_documentation_file_and_no_file_is_left_over() -> None:
    # ansible-core reads a filter's page from NAME.yml beside the plugin file: one per name, none for a name
    # no plugin defines any more.
    assert sorted(p.stem for p in (ROOT / "plugins" / "filter").glob("*.yml")) == FILTERS


@pytest.mark.ansible
@pytest.mark.early.with_args(ansible_doc)
@pytest.mark.parametrize("kind", ["module", "filter", "callback"])
def test_ansible_doc_ends_without_an_error_or_warning(
    kind: str, early_results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    # ansible-doc exits 0 when a page cannot be read or a name is not found: it says so on stderr only.
    done = early_results[kind]
    assert done.returncode == 0, done.stderr[-3000:]
    assert "[ERROR]" not in done.stderr and "[WARNING]" not in done.stderr, done.stderr[-3000:]


@pytest.mark.ansible
@pytest.mark.early.with_args(ansible_doc)
@pytest.mark.parametrize(
    ("kind", "name"), [("module", n) for n in MODULES] + [("filter", n) for n in FILTERS]
)
def test_ansible_doc_shows_a_page_for_every_module_action_and_filter(
    kind: str, name: str, early_results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    pages = printed_json(early_results[kind])
    assert name in pages, f"ansible-doc -t {kind} {name}: no page ({early_results[kind].stderr[-2000:]})"
    doc = pages[name]["doc"]
    assert doc[kind if kind == "module" else "name"] == name
    description = doc.get("description")
    lines = [description] if isinstance(description, str) else list(description or [])
    assert any(str(line).strip() for line in lines), f"{name}: an empty description"
    assert str(doc.get("short_description") or "").strip(), name
    assert pages[name].get("examples"), f"{name}: no examples"
    options = option_specs(doc.get("options") or {})
    undescribed = [path for path, spec in options if not spec.get("description")]
    assert not undescribed, f"{name}: options without a description: {undescribed}"


@pytest.mark.ansible
@pytest.mark.early.with_args(ansible_doc)
def test_ansible_doc_shows_the_console_callback_with_the_default_callbacks_options(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    assert CALLBACKS == ["bench_stack"]
    doc = printed_json(early_results["callback"])["bench_stack"]["doc"]
    assert doc["name"] == "bench_stack" and doc["type"] == "stdout"
    assert str(doc.get("short_description") or "").strip() and doc.get("description")
    # The default callback's options (display_skipped_hosts ...) and result_format (ansible.cfg sets yaml).
    assert {"display_skipped_hosts", "display_failed_stderr", "result_format"} <= set(doc["options"])


def option_specs(options: dict[str, Any], prefix: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every option and suboption of a page, by its dotted path."""
    found = []
    for key, spec in options.items():
        found.append((prefix + key, spec))
        found += option_specs(spec.get("suboptions") or spec.get("options") or {}, f"{prefix}{key}.")
    return found


@pytest.mark.ansible
@pytest.mark.early.with_args(ansible_doc)
@pytest.mark.parametrize("name", DOCUMENTED)
def test_ansible_doc_reads_each_stub_with_its_options_examples_and_return(
    name: str, early_results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    doc = printed_json(early_results["module"])[name]
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
