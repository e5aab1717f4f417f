"""The front kinds' adapters (benchstack.kinds.fronts): the registry is complete, each front with a role hands
that role exactly the front fields its argument_specs declare, and each front's own rules (keys, protocols, a
direct server's) are its adapter's."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import ROLES

from benchstack.kinds.fronts import KINDS, REGISTRY, FrontKind, by_name
from benchstack.kinds.stackfields import StackError
from benchstack.plan.readers import front_checks, needs
from benchstack.plan.rolecontract import STACK_ROLES, stack_fields
from benchstack.plan.stacks import resolve, resolve_stack


def test_the_registry_holds_each_adapter_under_its_own_name() -> None:
    assert set(REGISTRY) == set(KINDS)
    assert all(name == kind.name and isinstance(kind, FrontKind) for name, kind in REGISTRY.items())
    with pytest.raises(ValueError, match="unknown front kind 'caddy'; known: none, nginx, apache"):
        by_name("caddy")


def test_only_no_front_leaves_the_server_on_the_stacks_port() -> None:
    assert [k.name for k in REGISTRY.values() if k.direct] == ["none"]


@pytest.mark.parametrize("name", [k for k in KINDS if by_name(k).role])
def test_each_fronts_role_takes_its_stacks_and_declares_the_fields_the_front_derives(name: str) -> None:
    kind = by_name(name)
    assert (ROLES / kind.role / "tasks" / "main.yml").is_file()
    variable, serves = STACK_ROLES[kind.role]
    assert variable == f"{kind.role}_stacks"
    declared = set(stack_fields(kind.role)["front"]["options"])
    assert declared == set(kind.role_fields)
    # Every declared field is there once the front is resolved (the role's spec requires them).
    app = {"kind": "static"} if name != "apache" else {"kind": "lua-file"}
    resolved = resolve({"name": "f", "port": 8500, "app": app, "front": {"kind": name}})
    assert serves(resolved) and declared <= set(resolved.to_dict()["front"])


@pytest.mark.parametrize("name", KINDS)
def test_each_front_checks_the_keys_it_declares_with_their_defaults_and_bounds(name: str) -> None:
    # The schema's front branches and the docs table are written from these declarations.
    kind = by_name(name)
    for value in kind.choices[kind.variant].values if kind.variant else ("",):
        written = {"kind": name, **({kind.variant: value} if kind.variant else {})}
        integers = kind.integers.get(value, {})
        defaults = {key: choice.default for key, choice in kind.choices.items()}
        assert kind.check(written, "s").fields() == {
            "kind": name,
            **defaults,
            **written,
            **{key: bounded.default for key, bounded in integers.items()},
        }
        for key, choice in kind.choices.items():
            with pytest.raises(StackError, match=f"front.{key}: must be one of {', '.join(choice.values)}"):
                kind.check({**written, key: "other"}, "s")
        for key, bounded in integers.items():
            for wrong in (bounded.low - 1, bounded.high + 1):
                with pytest.raises(StackError, match=f"front.{key}: must be an integer from {bounded.low}"):
                    kind.check({**written, key: wrong}, "s")
        with pytest.raises(StackError, match=f"front.other: unknown {kind.key_of(value)}"):
            kind.check({**written, "other": 1}, "s")


def stack(front: dict[str, Any], **server: Any) -> dict[str, Any]:
    return {
        "name": "f",
        "port": 8500,
        "app": {"kind": "php"},
        "server": {"kind": "php-fpm", **server},
        "front": front,
    }


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ({"kind": "none"}, "front.kind: php-fpm speaks fastcgi, not HTTP: it needs a front"),
        ({"kind": "apache"}, "front.kind: php-fpm speaks fastcgi; the apache front proxies HTTP only"),
        (
            {"kind": "nginx", "mpm": "event"},
            r"front.mpm: unknown key of an nginx front \(allowed: kind, profile\)",
        ),
        (
            {"kind": "apache", "profile": "tuned"},
            "front.profile: unknown key of an apache front with mpm event",
        ),
    ],
)
def test_each_front_refuses_what_it_cannot_do(front: dict[str, Any], message: str) -> None:
    with pytest.raises(StackError, match=message):
        resolve_stack(stack(front))


def test_nginx_passes_fastcgi_and_health_checks_name_each_front() -> None:
    php = resolve(stack({"kind": "nginx"}))
    assert php.upstream == "bench_f" and php.front.as_dict() == {"kind": "nginx", "profile": "tuned"}
    mod_php = resolve(
        {"name": "m", "port": 8501, "app": {"kind": "php"}, "front": {"kind": "apache", "mpm": "prefork"}}
    )
    direct = resolve({"name": "d", "port": 8502, "app": {"kind": "wsgi"}, "server": {"kind": "gunicorn"}})
    assert direct.upstream is None and direct.endpoints[0].port == 8502
    assert [c.via for c in front_checks([php, mod_php, direct], "h")] == [
        "port 8500 (nginx)",
        "port 8500 (nginx)",
        "port 8501 (apache prefork)",
        "port 8501 (apache prefork)",
        "port 8502 (none)",
        "port 8502 (none)",
    ]
    found = needs([php, mod_php, direct])
    assert found.fronts == ("apache", "nginx") and found.front_roles == {"apache_handlers": ("mod_php",)}


def test_without_a_front_the_server_is_one_tcp_instance_on_a_user_port() -> None:
    wsgi = {"name": "d", "port": 8502, "app": {"kind": "wsgi"}, "front": {"kind": "none"}}
    with pytest.raises(StackError, match="server: without a front, the server is one instance bound to TCP"):
        resolve_stack({**wsgi, "server": {"kind": "gunicorn", "instances": 2}})
    with pytest.raises(StackError, match="port: 80 is below 1024: without a front"):
        resolve_stack({**wsgi, "port": 80, "server": {"kind": "gunicorn"}})
