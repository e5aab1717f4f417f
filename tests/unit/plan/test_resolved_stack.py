"""The typed stack: as written and checked (benchstack.plan.stacks.StackSpec, with typed app, runtime, front
and server sections), and resolved (Stack, Endpoint): what the derivation builds, frozen, and what its
to_dict() hands the plan (the same dict as before the type: test_stacks_golden.py holds every
case)."""

import copy
import dataclasses
from typing import Any

import pytest

from benchstack.kinds.apps.section import App, Runtime
from benchstack.kinds.fronts.apache import ApacheFront, ApacheSpec
from benchstack.kinds.fronts.nginx import NginxSpec
from benchstack.kinds.servers.section import ServerSpec
from benchstack.kinds.stackfields import DEFAULT_ROOTS
from benchstack.plan.stacks import Endpoint, Stack, StackSpec, check, derive, resolve, resolve_stack


def pool(**front: Any) -> dict[str, Any]:
    return {
        "port": 8600,
        "name": "pool",
        "app": {"kind": "sinatra"},
        "server": {"kind": "puma", "instances": 2, "bind": "unix"},
        "front": {"kind": "nginx", **front},
    }


def test_the_derivation_builds_a_frozen_stack_with_typed_endpoints() -> None:
    stack = resolve(pool())
    assert isinstance(stack, Stack) and stack.name == "pool" and stack.port == 8600
    assert stack.upstream == "bench_pool" and stack.path is None
    assert stack.endpoints == (
        Endpoint(
            instance=1,
            unit="bench-pool@1.service",
            socket="/run/bench-stack/pool-1/server.sock",
            host=None,
            port=None,
            address="unix:/run/bench-stack/pool-1/server.sock",
            balancer_member="unix:/run/bench-stack/pool-1/server.sock|http://pool-1",
            runtime_directory="bench-stack/pool-1",
            config_file="/etc/bench-stack/units/pool-1.puma.rb",
            listen_args="",
            config_listen="unix:///run/bench-stack/pool-1/server.sock",
        ),
        stack.endpoints[1],
    )
    assert stack.endpoints[1].instance == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        stack.port = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        stack.endpoints[0].port = 1  # type: ignore[misc]


def test_to_dict_is_the_plans_stack_in_the_experiments_key_order() -> None:
    written = pool()
    as_written = copy.deepcopy(written)
    stack = resolve(written)
    plan = stack.to_dict()
    assert written == as_written  # the stack as written is left alone
    assert plan == resolve_stack(written)
    # The experiment's keys first, in its order, then the derived ones.
    assert list(plan) == ["port", "name", "app", "server", "front", "runtime", "upstream", "endpoints"]
    assert plan["endpoints"] == [ep.to_dict() for ep in stack.endpoints]
    assert list(plan["endpoints"][0]) == [f.name for f in dataclasses.fields(Endpoint)]


def test_to_dict_hands_out_copies() -> None:
    stack = resolve(pool())
    plan = stack.to_dict()
    plan["server"]["instances"] = 9
    plan["endpoints"].clear()
    assert stack.to_dict() == resolve_stack(pool())


def test_a_stack_its_front_serves_has_no_server_and_no_endpoints() -> None:
    stack = resolve(
        {
            "name": "s",
            "port": 8601,
            "path": "/1k.html",
            "app": {"kind": "static"},
            "front": {"kind": "apache"},
        }
    )
    assert stack.server is None and stack.endpoints == () and stack.upstream is None
    assert stack.path == "/1k.html" and stack.to_dict()["path"] == "/1k.html"
    assert isinstance(stack.front, ApacheFront) and stack.front.handler == "static"
    assert stack.front.modules_off == ("mpm_prefork", "mpm_worker", "php")


def test_check_types_each_section_as_written_and_changes_nothing() -> None:
    written = pool(profile="stock")
    as_written = copy.deepcopy(written)
    spec = check(written)
    assert written == as_written
    assert isinstance(spec, StackSpec) and spec.written == ("port", "name", "app", "server", "front")
    assert spec.server == ServerSpec(
        kind="puma",
        instances=2,
        bind="unix",
        options={"workers": 0, "threads": 5, "preload": False},
        written=("kind", "instances", "bind"),
    )
    assert spec.front == NginxSpec(kind="nginx", written=("kind", "profile"), profile="stock")
    assert isinstance(spec.app, App) and spec.app.dir == "/opt/bench-stack/apps/sinatra"
    assert spec.runtime == Runtime(kind="ruby")
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.server.bind = "tcp"  # type: ignore[misc, union-attr]


def test_derive_is_a_pure_step_from_the_checked_stack() -> None:
    spec = check(pool())
    first, second = derive(spec), derive(spec)
    assert first == second == resolve(pool())
    assert first.server is not None and first.server.spec is spec.server
    assert first.server.units.unit == "bench-pool@.service"
    assert first.server.as_dict()["exec"] == first.server.command
    # The derived fields follow the written ones, in the order they were derived before the types.
    assert list(first.server.as_dict())[:6] == ["kind", "instances", "bind", "workers", "threads", "preload"]


def test_the_apache_front_derives_its_instance_handler_and_modules() -> None:
    stack = resolve(pool(kind="apache", mpm="worker", threads_per_child=10, max_request_workers=40))
    front = stack.front
    assert isinstance(front, ApacheFront) and isinstance(front.spec, ApacheSpec)
    assert (front.instance, front.handler) == ("bench-pool", "proxy")
    assert front.mpm_directives[:2] == (("ServerLimit", 16), ("ThreadLimit", 64))
    assert front.as_dict()["mpm_directives"][:2] == [["ServerLimit", 16], ["ThreadLimit", 64]]
    assert list(front.as_dict())[:3] == ["kind", "mpm", "threads_per_child"]


def test_checking_a_section_leaves_what_was_written_alone() -> None:
    """The adapters read a section and return what they found: no default is written into it (the stack
    resolver used to deep-copy the stack for them)."""
    from benchstack.kinds import apps, fronts
    from benchstack.kinds.stackfields import typed_keys

    app: dict[str, Any] = {"kind": "sinatra", "git": {"repo": "/r.git", "version": "v1"}}
    stack = {"name": "g", "app": app, "runtime": {}}
    checked, problems = apps.by_name("sinatra").check_app(app, "stack 'g'", DEFAULT_ROOTS, None, "g")
    assert problems == [] and checked is not None and checked.git is not None
    assert checked.git.moving_ref is False and checked.dir == "/opt/bench-stack/apps/user/g"
    assert apps.by_name("sinatra").check_runtime(stack, "stack 'g'").kind == "ruby"
    front: dict[str, Any] = {"kind": "apache", "mpm": "prefork"}
    fronts.by_name("apache").check(front, "stack 'g'")
    options = typed_keys(
        "w", "server", {"kind": "puma"}, "x", keys={"kind"}, options={"threads": (int, 1, 9, 5)}
    )
    assert options == {"threads": 5}
    assert app == {"kind": "sinatra", "git": {"repo": "/r.git", "version": "v1"}}
    assert stack == {"name": "g", "app": app, "runtime": {}}
    assert front == {"kind": "apache", "mpm": "prefork"}
