"""The app server kinds' adapters (benchstack.kinds.servers): the registry is complete, each adapter is
consistent with itself and with what the roles install, and every start command names only host values the
app_server role gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import ROLES, read_yaml, resolved_stack

from benchstack.kinds.apps import REGISTRY as APPS
from benchstack.kinds.servers import BINDS, HOST_VALUES, KINDS, REGISTRY, by_name, host_command
from benchstack.kinds.servers.base import PLACEHOLDER_RE, ServerKind
from benchstack.kinds.stackfields import StackError
from benchstack.plan.readers import needs
from benchstack.plan.stacks import resolve, resolve_stack


def role_yaml(path: str) -> Any:
    return read_yaml(ROLES / path)


def test_the_registry_holds_each_adapter_under_its_own_name() -> None:
    assert set(REGISTRY) == set(KINDS)
    assert all(name == kind.name and isinstance(kind, ServerKind) for name, kind in REGISTRY.items())


def test_an_unknown_kind_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown server kind 'mongrel'; known: thin, webrick"):
        by_name("mongrel")


@pytest.mark.parametrize("name", KINDS)
def test_each_adapter_says_how_every_bind_it_takes_listens(name: str) -> None:
    kind = by_name(name)
    assert {app.runtime for app in APPS.values() if app.interface == kind.interface} == {kind.runtime}
    assert set(kind.binds) <= set(BINDS)
    assert kind.protocol in ("http", "fastcgi")
    # Command-line arguments or a config file, never both: the unit appends $BENCH_LISTEN_%i or the config
    # file says where it listens.
    assert bool(kind.listen) != bool(kind.config)
    assert set(kind.listen or kind.config_listen) == set(kind.binds)
    if kind.config:
        assert (ROLES / "app_server" / "templates" / f"{kind.config}.j2").is_file()


def app_of(name: str) -> str:
    return next(app for app, kind in APPS.items() if kind.interface == by_name(name).interface)


@pytest.mark.parametrize("name", KINDS)
@pytest.mark.parametrize("front", ["nginx", "none"])
def test_every_start_command_is_one_line_naming_only_the_roles_host_values(name: str, front: str) -> None:
    kind = by_name(name)
    if kind.protocol != "http" and front == "none":
        return
    for bind in kind.binds if front == "nginx" else ["tcp"]:
        stack = resolved_stack("s", 8100, app_of(name), name, front, bind=bind)
        command = stack["server"]["exec"]
        assert set(PLACEHOLDER_RE.findall(command)) <= set(HOST_VALUES)
        assert "\n" not in command and "  " not in command and command == command.strip()
        # A kind that takes listen arguments reads its instance's from the env file; one with a config file
        # names that file.
        if kind.listen:
            assert "$BENCH_LISTEN_%i" in command
        else:
            assert stack["server"]["unit_config_file"] in command
        assert stack["server"]["reload_signal"] == kind.reload_signal


@pytest.mark.parametrize("name", KINDS)
def test_each_helper_file_is_a_file_of_the_role_going_under_a_folder_the_role_names(name: str) -> None:
    folders = role_yaml("app_server/vars/main.yml")["__app_server_lib_dirs"]
    for src, dest in by_name(name).helper_files.items():
        assert (ROLES / "app_server" / "files" / src).is_file()
        assert PLACEHOLDER_RE.match(dest) and set(PLACEHOLDER_RE.findall(dest)) <= set(folders)


def test_host_values_fill_every_placeholder_and_an_unknown_one_is_named() -> None:
    assert host_command("{ruby_bin}/x --y {ruby_bin}", {"ruby_bin": "/usr/bin"}) == "/usr/bin/x --y /usr/bin"
    assert host_command("{keepalive_timeout}", {"keepalive_timeout": 30}) == "30"
    with pytest.raises(ValueError, match="no host value for perl_bin, ruby_lib"):
        host_command("{ruby_lib} {perl_bin}", {})


def test_the_ruby_role_installs_every_kinds_gems_and_the_fingerprint_names_its_package() -> None:
    debian = role_yaml("ruby/vars/Debian.yml")["__ruby_gem_packages"]
    native = role_yaml("ruby/vars/main.yml")["__ruby_native_gems"]
    fingerprint = role_yaml("host/defaults/main.yml")["host_fingerprint_packages"]
    for kind in REGISTRY.values():
        for gem in kind.gems:
            # A gem Debian packages comes from apt; the others from `gem install`, which compiles them.
            assert gem in debian or gem in native, (kind.name, gem)
            if gem in debian and isinstance(debian[gem], str):
                assert debian[gem] in fingerprint, (kind.name, debian[gem])


def test_the_perl_and_python_roles_install_every_kinds_modules_and_packages() -> None:
    perl = role_yaml("perl/vars/Debian.yml")["__perl_module_packages"]
    constraints = role_yaml("python/defaults/main.yml")["python_constraints"]
    pinned = {line.split("==")[0] for line in constraints}
    for kind in REGISTRY.values():
        assert set(kind.perl) <= set(perl), kind.name
        assert set(kind.pip) <= pinned, kind.name


@pytest.mark.parametrize("name", KINDS)
def test_each_kind_says_where_its_gems_modules_and_python_packages_come_from(name: str) -> None:
    kind = by_name(name)
    # scripts/kind_files.py writes the runtime roles' package maps from these: a package for something the
    # kind does not install would be dropped there.
    for family, packages in kind.packages.items():
        assert set(packages) <= {*kind.gems, *kind.perl}, (name, family)
    assert set(kind.gems) - set(kind.native_gems) <= set(kind.packages.get("Debian", {})), name
    assert set(kind.pip) <= {pin.split("==")[0] for pin in kind.pins}, name
    assert set(kind.option_notes) <= set(kind.options), name


def passenger(**server: Any) -> dict[str, Any]:
    return {
        "name": "p",
        "port": 8300,
        "app": {"kind": "sinatra"},
        "server": {"kind": "passenger", **server},
        "front": {"kind": "nginx"},
    }


def test_passenger_needs_its_gem_which_the_ruby_role_maps_to_debians_package() -> None:
    found = needs([resolve(passenger())])
    assert found.ruby_gems == ("rack", "sinatra", "passenger")
    assert found.servers == ("passenger",)
    assert role_yaml("ruby/vars/Debian.yml")["__ruby_gem_packages"]["passenger"] == "passenger"


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ({"workers": 0}, "server.workers: must be an integer from 1 to 64, not 0"),
        ({"threads": 4}, "server.threads: unknown option of passenger"),
        ({"bind": "udp"}, "server.bind: must be one of unix, tcp"),
    ],
)
def test_passengers_options_are_checked(server: dict[str, Any], message: str) -> None:
    with pytest.raises(StackError, match=message):
        resolve_stack(passenger(**server))


def test_passenger_serves_only_ruby_apps() -> None:
    stack = passenger()
    stack["app"] = {"kind": "wsgi"}
    with pytest.raises(StackError, match="server.kind: passenger cannot serve app wsgi"):
        resolve_stack(stack)


def test_a_starlet_limit_range_is_checked_by_its_adapter() -> None:
    assert by_name("starlet").option_problems({"min_request_per_child": 9, "max_request_per_child": 5}) == [
        ("server.min_request_per_child", "must be at most server.max_request_per_child (5)")
    ]
    assert by_name("thin").option_problems({"min_request_per_child": 9, "max_request_per_child": 5}) == []


def test_docs_name_every_kind() -> None:
    root = Path(__file__).resolve().parents[3]
    experiment = (root / "docs" / "experiment.md").read_text(encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    for name in KINDS:
        assert f"`{name}`" in experiment, name
        assert name.lower() in readme.lower(), name
