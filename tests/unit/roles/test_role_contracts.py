"""The contract between the plan and the roles that serve stacks (benchstack.plan.rolecontract): each role's
argument_specs declare the fields of its stack list, the plan hands the role exactly those, every experiment's
plan passes Ansible's own validation of them, and the role's templates render from them alone."""

import functools
from pathlib import Path
from typing import Any

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from conftest import ROLES
from conftest import render_template as render

from benchstack.kinds.fronts.apache import HANDLER_MODULES as APACHE_HANDLER_MODULES
from benchstack.kinds.fronts.apache import MPMS as APACHE_MPMS
from benchstack.kinds.fronts.nginx import PROFILES as FRONT_PROFILES
from benchstack.kinds.servers import REGISTRY as SERVERS
from benchstack.plan.resolved import compile_plan
from benchstack.plan.rolecontract import STACK_ROLES, entry_points, project, stack_fields

ROOT = Path(__file__).resolve().parents[3]
EXPERIMENTS = sorted(
    str(p.relative_to(ROOT))
    for p in [*ROOT.glob("experiments/*.yml"), *ROOT.glob("molecule/*/experiment.yml")]
)


@functools.cache
def plan_of(experiment: str) -> dict[str, Any]:
    """The plan's fact, compiled once per session (inside a test: the env key fixture keeps the key out of the
    home)."""
    return compile_plan(ROOT / experiment, allow_large=True).to_dict()


def stack_specs(role: str) -> list[tuple[str, dict[str, Any]]]:
    """(entry point, spec) of every entry point of the role that takes its stack list."""
    variable = STACK_ROLES[role][0]
    return [
        (entry, spec["options"][variable])
        for entry, spec in entry_points(role).items()
        if variable in (spec.get("options") or {})
    ]


def refusals(role: str, stacks: list[dict[str, Any]]) -> list[str]:
    """What the role's argument validation says about ``stacks`` (as Ansible runs it at the role's start)."""
    variable = STACK_ROLES[role][0]
    found: list[str] = []
    for entry, spec in stack_specs(role):
        result = ArgumentSpecValidator({variable: spec}).validate({variable: stacks})
        found += [f"{entry}: {error}" for error in result.error_messages]
    return found


@pytest.mark.parametrize("role", sorted(STACK_ROLES))
def test_every_entry_point_declares_the_same_fields(role: str) -> None:
    specs = [spec for _, spec in stack_specs(role)]
    assert specs and all(spec == specs[0] for spec in specs)
    assert specs[0]["type"] == "list" and specs[0]["elements"] == "dict" and specs[0]["options"]


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_experiments_plan_passes_the_roles_argument_specs(experiment: str) -> None:
    plan = plan_of(experiment)
    for role in STACK_ROLES:
        assert refusals(role, plan["role_stacks"][role]) == [], role


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_each_role_gets_the_stacks_it_serves(experiment: str) -> None:
    plan = plan_of(experiment)
    names = {role: [s["name"] for s in stacks] for role, stacks in plan["role_stacks"].items()}
    assert names["nginx"] == [s["name"] for s in plan["stacks"] if s["front"]["kind"] == "nginx"]
    assert names["apache"] == [s["name"] for s in plan["stacks"] if s["front"]["kind"] == "apache"]
    assert names["app_server"] == [s["name"] for s in plan["stacks"] if s["server"]]


def test_a_whole_resolved_stack_is_refused_so_the_plan_hands_over_the_projection() -> None:
    """Ansible refuses keys a spec with options does not declare: a role that took any key could not tell a
    mistyped field from an extra one, so the plan sends each role its fields and no more."""
    plan = plan_of("experiments/sinatra-thin-nginx.yml")
    whole = [s for s in plan["stacks"] if s["front"]["kind"] == "nginx"]
    assert any("listen_args" in error or "Unsupported" in error for error in refusals("nginx", whole))
    assert refusals("nginx", plan["role_stacks"]["nginx"]) == []


def test_a_missing_required_field_is_refused() -> None:
    stacks = plan_of("experiments/sinatra-thin-nginx.yml")["role_stacks"]["app_server"]
    broken = [{**stacks[0], "server": {k: v for k, v in stacks[0]["server"].items() if k != "env_file"}}]
    assert any("env_file" in error for error in refusals("app_server", broken))


def test_the_projection_keeps_absent_keys_absent_and_nulls_null() -> None:
    options = {"a": {}, "b": {}, "c": {"options": {"x": {}}}, "d": {"options": {"y": {}}}}
    value = {"a": None, "z": 1, "c": [{"x": 1, "w": 2}], "d": {"y": 3, "v": 4}}
    assert project(value, options) == {"a": None, "c": [{"x": 1}], "d": {"y": 3}}


def _keys(options: dict[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for key, spec in options.items():
        out.append(prefix + key)
        out += _keys((spec or {}).get("options") or {}, f"{prefix}{key}.")
    return out


@pytest.mark.parametrize("role", sorted(STACK_ROLES))
def test_every_declared_field_is_read_by_the_role(role: str) -> None:
    text = "\n".join(
        p.read_text(encoding="utf-8")
        for p in (ROLES / role).rglob("*")
        if p.is_file() and p.parent.name not in ("meta", "files") and p.name != "README.md"
    )
    unread = [key for key in _keys(stack_fields(role)) if key.rsplit(".", 1)[-1] not in text]
    assert unread == []


def test_the_declared_choices_are_the_packages_own() -> None:
    app_server, nginx, apache = (stack_fields(role) for role in ("app_server", "nginx", "apache"))
    assert sorted(app_server["server"]["options"]["kind"]["choices"]) == sorted(SERVERS)
    assert sorted(nginx["front"]["options"]["profile"]["choices"]) == sorted(FRONT_PROFILES)
    assert sorted(nginx["server"]["options"]["protocol"]["choices"]) == sorted(
        {kind.protocol for kind in SERVERS.values()}
    )
    assert sorted(apache["front"]["options"]["mpm"]["choices"]) == sorted(APACHE_MPMS)
    assert sorted(apache["front"]["options"]["handler"]["choices"]) == sorted(APACHE_HANDLER_MODULES)


# Rendering: each template that prints stacks, from the projected stacks alone. A field a template reads but
# the spec leaves out is missing here, and Ansible's templating fails on it.


def all_stacks(role: str) -> list[dict[str, Any]]:
    return [s for experiment in EXPERIMENTS for s in plan_of(experiment)["role_stacks"][role]]


@pytest.mark.parametrize("role", sorted(STACK_ROLES))
def test_the_experiments_give_every_role_stacks_to_render(role: str) -> None:
    assert all_stacks(role)


def test_the_app_server_templates_render_from_the_declared_fields() -> None:
    kinds = set()
    for stack in all_stacks("app_server"):
        kinds.add(stack["server"]["kind"])
        handlers = {stack["name"]: "/gems/prefork_engine/example/starlet.rb"}
        common = {
            "__app_server_starlet_handlers": handlers,
            "app_server_stacks": [stack],
            "app_server_ruby_bin_dirs": {
                v: f"/rbenv/versions/{v}/bin" for v in [stack["runtime"].get("version")]
            },
        }
        for template in ("server@.service.j2", "stack.env.j2"):
            assert stack["name"] in render("app_server", template, stack=stack, **common)
        if stack["server"]["unit_config_file"]:
            template = stack["server"]["config_template"]
            for ep in stack["endpoints"]:
                text = render("app_server", template, stack=stack, endpoint=ep, **common)
                assert ep["config_listen"] in text
    # Every kind the role runs, with and without a config file.
    assert kinds == set(SERVERS)


def test_the_nginx_server_blocks_render_from_the_declared_fields() -> None:
    for experiment in EXPERIMENTS:
        stacks = plan_of(experiment)["role_stacks"]["nginx"]
        if stacks:
            text = render("nginx", "bench-stack.conf.j2", "Debian", nginx_stacks=stacks)
            assert all(f"listen {s['port']};" in text for s in stacks)


@pytest.mark.parametrize("family", ["Debian", "RedHat"])
def test_the_apache_configs_render_from_the_declared_fields(family: str) -> None:
    templates = ["vhost.conf.j2", "server.conf.j2"] + (
        ["ports.conf.j2"] if family == "Debian" else ["httpd-instance.conf.j2"]
    )
    for experiment in EXPERIMENTS:
        for stack in plan_of(experiment)["role_stacks"]["apache"]:
            for template in templates:
                assert stack["name"] in render("apache", template, family, stack=stack)
