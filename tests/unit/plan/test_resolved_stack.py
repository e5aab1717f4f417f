"""The typed resolved stack (benchstack.plan.stacks.Stack, Endpoint): what the derivation builds, frozen, and
what its to_dict() hands the plan (the same dict as before the type: test_stacks_golden.py holds every
case)."""

import copy
import dataclasses
from typing import Any

import pytest

from benchstack.plan.stacks import Endpoint, Stack, resolve, resolve_stack


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
    assert stack.front["handler"] == "static"
