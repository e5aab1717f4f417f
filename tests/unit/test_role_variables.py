"""Role variables and project settings checked for the place they land in (issue 29, item 3): the plan
refuses each case of tests/bad-inputs/variables before any host is touched, every role variable that is
not a bool or a choice has a check (benchstack.rolevars: a pattern, a range), and the project's own values
pass it."""

import functools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible.errors import AnsibleActionFail
from test_bad_inputs import expected, nowhere
from test_plugins import run_plan

from benchstack.rolevars import CHECKS, variable_problems

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests" / "bad-inputs" / "variables").glob("*.yml"))
SPECS = sorted((ROOT / "roles").glob("*/meta/argument_specs.yml"))
# Project settings the plan action takes as its arguments, not as variables.
AS_ARGUMENTS = {"bench_results_dir": "results_dir", "bench_run_dir": "run_dir"}
HOSTILE = "1\nExecStartPre=/bin/touch /tmp/pwn"


@functools.cache
def options() -> dict[str, dict[str, Any]]:
    """Every role variable, by name, with its argument spec (the first entry point that declares it).
    Read once: each of the ~120 cases below re-reading every argument_specs.yml cost 60 ms."""
    out: dict[str, dict[str, Any]] = {}
    for path in SPECS:
        specs = yaml.safe_load(path.read_text(encoding="utf-8"))["argument_specs"]
        for entry in specs.values():
            for name, spec in (entry.get("options") or {}).items():
                out.setdefault(name, spec)
    return out


def needs_a_check(spec: dict[str, Any]) -> bool:
    """Whether argument_specs alone leave the value open: not a bool, not a choice. A number is open too:
    specs have no ranges, and ``keepalive 0;`` or ``LimitNOFILE=0`` reach a config as they are."""
    return spec.get("type", "str") != "bool" and not spec.get("choices")


def numeric(spec: dict[str, Any]) -> bool:
    return spec.get("type") in ("int", "float")


def test_every_open_role_variable_has_a_check_and_every_check_a_variable() -> None:
    every = options()
    open_ = {name for name, spec in every.items() if needs_a_check(spec)}
    assert sorted(open_ - set(CHECKS)) == []
    assert sorted(set(CHECKS) - set(every)) == []


def test_every_free_variable_is_one_on_purpose() -> None:
    # Apache configuration lines on purpose, checked by apachectl configtest before any reload.
    assert sorted(name for name, check in CHECKS.items() if check is None) == ["apache_extra_config"]


def test_the_projects_own_values_pass_their_checks() -> None:
    values: dict[str, Any] = {}
    for path in sorted((ROOT / "roles").glob("*/defaults/main.yml")):
        values |= yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for path in [ROOT / "molecule" / s / "molecule.yml" for s in ("ruby-rbenv", "dns-check", "user-apps")]:
        groups = yaml.safe_load(path.read_text(encoding="utf-8"))["provisioner"]["inventory"]
        for section in ("group_vars", "host_vars"):
            for each in (groups.get(section) or {}).values():
                values |= each
    plain = {k: v for k, v in values.items() if k in CHECKS and "{{" not in str(v) and "${" not in str(v)}
    plan_set = {k for k, v in plain.items() if CHECKS[k] and "plan" in (CHECKS[k](v) or "")}
    assert len(plain) > 60
    assert variable_problems({k: v for k, v in plain.items() if k not in plan_set}) == []


@pytest.mark.parametrize("name", sorted(n for n, c in CHECKS.items() if c), ids=str)
def test_a_newline_and_a_directive_are_refused_in_every_checked_variable(name: str) -> None:
    spec = options()[name]
    kind = spec.get("type", "str")
    value: Any = {"a": HOSTILE} if kind == "dict" else [HOSTILE] if kind == "list" else HOSTILE
    if kind == "dict" and spec.get("elements") == "dict":  # pragma: no cover - none today
        value = {"a": {"x": HOSTILE}}
    problems = variable_problems({name: value})
    assert len(problems) == 1 and problems[0].startswith(f"{name}: ")
    assert "\n" not in problems[0]  # quoted escaped, on one line


@pytest.mark.parametrize("name", sorted(n for n, spec in options().items() if numeric(spec)), ids=str)
def test_a_number_outside_its_range_is_refused_and_its_default_is_not(name: str) -> None:
    low, high = variable_problems({name: -1}), variable_problems({name: 10**9})
    assert len(low) == 1 and low[0].startswith(f"{name}: must be ") and low[0].endswith("not -1"), low
    assert len(high) == 1 and high[0].endswith("not 1000000000"), high
    assert variable_problems({name: options()[name]["default"]}) == []
    assert variable_problems({name: True}) != []  # a bool is an int to Python, never a number here


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_the_plan_refuses_each_bad_variable_before_anything(path: Path, tmp_path: Path) -> None:
    given = yaml.safe_load(path.read_text(encoding="utf-8"))
    args = {AS_ARGUMENTS[k]: v for k, v in given.items() if k in AS_ARGUMENTS}
    variables = {k: v for k, v in given.items() if k not in AS_ARGUMENTS}
    args.setdefault("results_dir", str(tmp_path / "results"))
    with pytest.raises(AnsibleActionFail) as err:
        run_plan("sinatra-thin-nginx", variables, **args)
    message = str(err.value)
    for problem in expected(path):
        assert problem in message, (problem, message)
    assert not (tmp_path / "results").exists()


def issue_29(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """`-e '{"app_server_cpu_affinity": "0\\nExecStartPre=..."}'` as issue 29 ran it, via ansible-playbook
    (started with the session: conftest's early_commands)."""
    inventory, env = nowhere(folder)
    argv = [
        str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(inventory), "bench-stack.yml",
        "-e", '{"app_server_cpu_affinity": "0\\nExecStartPre=/bin/touch /tmp/relpwn-aff"}',
        "-e", f"bench_results_dir={folder / 'results'}",
    ]  # fmt: skip
    return {"affinity": (argv, {**env, "ANSIBLE_LOCAL_TEMP": str(folder / "tmp")}, ROOT)}


@pytest.mark.early.with_args(issue_29)
def test_the_issues_command_line_is_refused_in_the_plan_play(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    result = early_results["affinity"]
    out = result.stdout + result.stderr
    assert result.returncode != 0, out[-2000:]
    assert "TASK [Compile the plan" in out and "UNREACHABLE" not in out
    assert "app_server_cpu_affinity: must be a CPU list such as 1 or 2-3 or 0,2" in out
    assert not os.path.exists("/tmp/relpwn-aff")
