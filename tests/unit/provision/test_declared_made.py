"""What the webapp, ruby, python and loadgen roles say they made (``<role>_made``, set at each role's end and
recorded by bench_provision_record): rendered by Ansible's own templating from the role's task, as a play
renders it, so a path the record should watch cannot silently drop out of it."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import ROLES, read_yaml, role_vars, templated, trusted

from benchstack.plan import roles as provision
from benchstack.provision import markers


def declared(role: str, variables: dict[str, Any]) -> dict[str, Any]:
    """The role's ``<role>_made`` as its last task sets it, over its defaults and ``variables``."""
    tasks = read_yaml(ROLES / role / "tasks" / "main.yml")
    (task,) = [t for t in tasks if f"{role}_made" in (t.get("ansible.builtin.set_fact") or {})]
    assert task is tasks[-1], f"{role}: {role}_made must be set by the role's last task"
    values = {**role_vars(role), **variables}
    made = trusted(task["ansible.builtin.set_fact"][f"{role}_made"])
    return {key: templated(text, values) for key, text in made.items()}


def test_every_role_that_declares_what_it_made_sets_it_and_keeps_it_out_of_its_hash() -> None:
    for role in provision.DECLARES_MADE:
        assert (ROLES / role / "tasks" / "main.yml").is_file()
        assert f"{role}_made" in markers.RUN_FACTS[role]
        hashed = markers.role_variables(role, {f"{role}_made": {"files": ["/x"]}, f"{role}_x": 1})
        assert hashed == {f"{role}_x": 1}


def test_the_app_role_names_every_bundled_file_it_keeps_and_each_user_apps_record() -> None:
    deployed = {"results": [{"paths": ["/apps/sinatra/app.rb", "/apps/sinatra/config.ru"]}, {"paths": []}]}
    made = declared(
        "webapp",
        {
            "__webapp_deployed": deployed,
            "webapp_user_apps": [{"name": "mine", "record": "/apps/user/.records/mine.json"}],
        },
    )
    assert made == {
        "files": ["/apps/sinatra/app.rb", "/apps/sinatra/config.ru", "/apps/user/.records/mine.json"]
    }


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("rbenv", ["/opt/rbenv/versions/3.3.6/bin/ruby", "/opt/rbenv/versions/3.1.2/bin/ruby"]),
        ("system", []),
    ],
)
def test_the_ruby_role_names_the_executable_of_each_rbenv_ruby(method: str, expected: list[str]) -> None:
    variables: dict[str, Any] = {"ruby_method": method}
    if method == "rbenv":
        variables["__ruby_versions"] = ["3.3.6", "3.1.2"]
    assert declared("ruby", variables) == {"binaries": expected}


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("pyenv", ["/opt/bench-stack/venv/bin/python", "/opt/pyenv/versions/3.12.8/bin/python3"]),
        ("system", ["/opt/bench-stack/venv/bin/python"]),
    ],
)
def test_the_python_role_names_the_venvs_python_and_each_pyenv_pythons(
    method: str, expected: list[str]
) -> None:
    variables = {"python_method": method, "python_pyenv_versions": ["3.12.8"]}
    assert declared("python", variables) == {"binaries": expected}


@pytest.mark.parametrize(
    ("built", "expected"),
    [(["wrk"], ["/usr/local/bin/wrk"]), ([], [])],
)
def test_the_loadgen_role_names_a_tool_only_when_it_built_it(built: list[str], expected: list[str]) -> None:
    # Which tools are built (packages.yml) is tests/unit/kinds/test_loadtools.py's.
    variables = {"__loadgen_built": built, "__loadgen_bin_dir": "/usr/local/bin"}
    assert declared("loadgen", variables) == {"files": expected}


def test_what_a_role_declared_adds_to_the_plans_manifest_each_path_once() -> None:
    manifest = {"files": ["/a"], "units": ["u.service"]}
    assert provision.with_declared(manifest, {"files": ["/a", "/b"], "binaries": ["/c"]}) == {
        "files": ["/a", "/b"],
        "units": ["u.service"],
        "binaries": ["/c"],
    }
    assert provision.with_declared(manifest, None) == manifest
