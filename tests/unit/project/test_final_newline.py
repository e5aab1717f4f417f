"""A value that is valid but for one final newline is refused by every pattern check (``$`` alone matches
before a final newline: each check uses ``fullmatch``). A newline reaches unit files and configs as a line
break, so a value that passes must be exactly what was checked."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from test_plugins import load_plugin

from benchstack.kinds.stackfields import StackError
from benchstack.plan import rolevars
from benchstack.plan.stacks import resolve_stack
from benchstack.provision import dns

git_mod = load_plugin("modules", "bench_app_git")

STACK: dict[str, Any] = {
    "name": "hello",
    "port": 8080,
    "path": "/hello",
    "app": {"kind": "sinatra"},
    "server": {"kind": "thin", "instances": 1},
    "front": {"kind": "nginx"},
}


def _with(path: tuple[str, ...], value: object) -> dict[str, Any]:
    stack = copy.deepcopy(STACK)
    node = stack
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return stack


# (where in the stack, a valid value)
STACK_FIELDS: list[tuple[tuple[str, ...], str]] = [
    (("name",), "hello"),
    (("path",), "/hello"),
    (("runtime", "version"), "3.2.2"),
    (("app", "env", "GREETING"), "hi"),  # the value is free text; the name is checked
]


@pytest.mark.parametrize(("path", "value"), STACK_FIELDS, ids=[".".join(p) for p, _ in STACK_FIELDS])
def test_a_stack_field_with_a_final_newline_is_refused(path: tuple[str, ...], value: str) -> None:
    resolve_stack(_with(path, value))
    if path[:2] == ("app", "env"):
        stack = _with(("app", "env"), {"GREETING\n": value})
    else:
        stack = _with(path, value + "\n")
    with pytest.raises(StackError):
        resolve_stack(stack)


ROLE_VARIABLES = [
    ("app_server_cpu_affinity", "0"),
    ("host_user", "bench"),
    ("nginx_worker_processes", "auto"),
]


@pytest.mark.parametrize(("name", "value"), ROLE_VARIABLES)
def test_a_role_variable_with_a_final_newline_is_refused(name: str, value: str) -> None:
    check = rolevars.CHECKS[name]
    assert check is not None
    assert check(value) is None
    assert check(value + "\n") is not None


CHECKS: list[tuple[str, Callable[[str], bool]]] = [
    ("a DNS label", lambda label: _raises(lambda: dns.probe_name(label, "direct", "bench.test"))),
    ("a commit sha", lambda sha: git_mod.resolve({}, sha, False)[0] != "commit"),
]


def _raises(call: Callable[[], object]) -> bool:
    try:
        call()
    except ValueError:
        return True
    return False


@pytest.mark.parametrize(("what", "refused"), CHECKS, ids=[c[0] for c in CHECKS])
def test_other_checks_refuse_a_final_newline(what: str, refused: Callable[[str], bool]) -> None:
    good = "ruby" if what == "a DNS label" else "0123456789abcdef"
    assert not refused(good)
    assert refused(good + "\n")
