"""The app kinds' adapters (benchstack.kinds.apps): the registry is complete, each adapter agrees with its
bundled files, with what the roles install and with the servers and fronts that can serve it."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import ROLES, read_yaml

from benchstack.kinds.apps import BUNDLED_KINDS, KINDS, REGISTRY, AppKind, EmbeddedApp, by_name
from benchstack.kinds.fronts import REGISTRY as FRONTS
from benchstack.kinds.fronts.apache import HANDLER_MODULES
from benchstack.kinds.servers import REGISTRY as SERVERS
from benchstack.kinds.stackfields import StackError
from benchstack.plan.readers import needs
from benchstack.plan.stacks import resolve, resolve_stack


def role_yaml(path: str) -> Any:
    return read_yaml(ROLES / path)


def test_the_registry_holds_each_adapter_under_its_own_name() -> None:
    assert set(REGISTRY) == set(KINDS)
    assert all(name == kind.name and isinstance(kind, AppKind) for name, kind in REGISTRY.items())


def test_an_unknown_kind_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown app kind 'rails'; known: sinatra, "):
        by_name("rails")


def test_the_bundled_apps_are_the_app_roles_folders_and_choices() -> None:
    assert set(BUNDLED_KINDS) == {p.name for p in (ROLES / "webapp" / "files").iterdir()}
    spec = role_yaml("webapp/meta/argument_specs.yml")["argument_specs"]["main"]["options"]["webapp_kinds"]
    assert spec["choices"] == list(BUNDLED_KINDS)


@pytest.mark.parametrize("name", KINDS)
def test_each_kinds_default_answers_are_what_its_bundled_code_says(name: str) -> None:
    kind = by_name(name)
    if kind.entry:
        folder = ROLES / "webapp" / "files" / name
        assert (folder / kind.entry).is_file()
        code = "".join(p.read_text(encoding="utf-8") for p in folder.iterdir())
    else:
        # Its code is in the Apache config.
        code = (ROLES / "apache" / "templates" / "vhost.conf.j2").read_text(encoding="utf-8")
    checks = kind.checks()
    assert 1 <= len(checks) and all(set(c) == {"path", "body"} for c in checks)
    assert f"Hello World! I am {name}" in code
    assert any(c["body"].startswith(f"Hello World! I am {name}") for c in checks)


@pytest.mark.parametrize("name", KINDS)
def test_someone_serves_each_kind(name: str) -> None:
    kind = by_name(name)
    servers = [s.name for s in SERVERS.values() if s.interface == kind.interface]
    assert servers or kind.front_only, name
    assert not (servers and kind.front_only), name
    # The fronts that serve it are fronts, never none, and an Apache front knows its handler.
    assert set(kind.fronts) <= set(FRONTS) - {"none"}
    assert ("apache" in kind.fronts) == (kind.apache_handler in HANDLER_MODULES)
    assert kind.runtime == "none" or (ROLES / kind.runtime).is_dir()
    assert kind.runtime != "none" or kind.front_only


@pytest.mark.parametrize("name", [k for k in KINDS if isinstance(by_name(k), EmbeddedApp)])
def test_an_app_inside_apache_is_its_own_handler_in_its_module(name: str) -> None:
    kind = by_name(name)
    assert kind.apache_handler == name and kind.fronts == ("apache",)
    assert HANDLER_MODULES[name] == [kind.module.removeprefix("mod_")]


def test_the_runtime_roles_install_every_kinds_gems_modules_and_packages() -> None:
    debian = role_yaml("ruby/vars/Debian.yml")["__ruby_gem_packages"]
    native = role_yaml("ruby/vars/main.yml")["__ruby_native_gems"]
    perl = role_yaml("perl/vars/Debian.yml")["__perl_module_packages"]
    pinned = {line.split("==")[0] for line in role_yaml("python/defaults/main.yml")["python_constraints"]}
    for kind in REGISTRY.values():
        for gem in (*kind.gems, *kind.user_gems):
            assert gem in debian or gem in native, (kind.name, gem)
        assert set(kind.perl) <= set(perl), kind.name
        assert set(kind.pip) <= pinned, kind.name
        # Bundler is Ruby's.
        assert not kind.bundler or kind.runtime == "ruby", kind.name


def stack(app: dict[str, Any], **rest: Any) -> dict[str, Any]:
    return {"name": "a", "port": 8400, "app": app, **rest}


def test_a_user_sinatra_app_needs_bundler_and_the_bundled_one_its_gems() -> None:
    git = {"repo": "/srv/app.git", "version": "v1"}
    user = resolve(stack({"kind": "sinatra", "git": git}, server={"kind": "puma"}))
    assert user.to_dict()["app"]["bundle"] == {
        "path": "/opt/bench-stack/apps/user/.bundle/a",
        "gemfile": "/opt/bench-stack/apps/user/a/Gemfile",
        "app_config": "/opt/bench-stack/apps/user/.bundle/a",
    }
    assert needs([user]).ruby_gems == ("rack", "sinatra", "puma", "bundler")
    wsgi = resolve(stack({"kind": "wsgi", "git": git}, server={"kind": "gunicorn"}))
    assert wsgi.app.bundle is None
    assert needs([wsgi]).ruby_gems == ()


@pytest.mark.parametrize(
    ("app", "rest", "message"),
    [
        ({"kind": "lua-file"}, {"front": {"kind": "nginx"}}, r"runs inside Apache \(mod_lua\): it needs"),
        ({"kind": "mruby-inline"}, {}, r"front.kind: app mruby-inline needs a front \(apache\)"),
        ({"kind": "static"}, {}, r"front.kind: app static needs a front \(nginx\)"),
        (
            {"kind": "php"},
            {"front": {"kind": "nginx"}},
            r"\(or front.kind apache, which runs it with mod_php\)",
        ),
        ({"kind": "static"}, {"front": {"kind": "nginx"}, "server": {"kind": "thin"}}, "served by its front"),
    ],
)
def test_who_serves_an_app_is_its_kinds_to_say(
    app: dict[str, Any], rest: dict[str, Any], message: str
) -> None:
    with pytest.raises(StackError, match=message):
        resolve_stack(stack(app, **rest))


def test_php_without_a_server_runs_in_apache_and_with_one_behind_it() -> None:
    prefork = {"kind": "apache", "mpm": "prefork"}
    inside = resolve_stack(stack({"kind": "php"}, front=prefork))
    assert inside["server"] is None and inside["front"]["handler"] == "mod_php"
    behind = resolve_stack(stack({"kind": "php"}, front={"kind": "nginx"}, server={"kind": "php-fpm"}))
    assert behind["server"]["protocol"] == "fastcgi" and "handler" not in behind["front"]
