"""Per-OS variables of every role: the Debian family and the RedHat family (Amazon Linux 2023 has its own
file) define the same variables with the same shape, so a role never reads a name one family lacks.

Ubuntu and Amazon Linux cannot be pulled here, so this is their coverage in CI, with ansible-lint."""

from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ("Debian", "RedHat", "Amazon")
ROLES_WITH_OS_VARS = sorted(
    {p.parent.parent.name for p in ROOT.glob("roles/*/vars/*.yml") if p.stem in FAMILIES}
)


def load(role: str, family: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / "roles" / role / "vars" / f"{family}.yml").read_text(encoding="utf-8"))


def test_every_role_that_installs_packages_has_per_os_vars() -> None:
    installs = {
        p.parent.parent.name
        for p in ROOT.glob("roles/*/tasks/*.yml")
        if "ansible.builtin.apt:" in p.read_text(encoding="utf-8")
        or "ansible.builtin.package:" in p.read_text(encoding="utf-8")
    }
    assert installs and installs <= set(ROLES_WITH_OS_VARS)


@pytest.mark.parametrize("role", ROLES_WITH_OS_VARS)
@pytest.mark.parametrize("family", FAMILIES[1:])
def test_each_family_defines_the_same_variables_as_debian(role: str, family: str) -> None:
    debian, other = load(role, "Debian"), load(role, family)
    assert sorted(other) == sorted(debian)
    for key, value in debian.items():
        assert type(other[key]) is type(value), f"{role} {family}: {key}"
        # Maps from what the role is asked for (a tool) to packages must answer for every key on every
        # family; maps to distro packages (gems, Perl modules) may be partial: the role checks and says so.
        if isinstance(value, dict) and all(isinstance(v, list) for v in value.values()):
            assert sorted(other[key]) == sorted(value), f"{role} {family}: {key}"


@pytest.mark.parametrize("role", ROLES_WITH_OS_VARS)
def test_per_os_variables_are_internal_and_prefixed_with_the_role(role: str) -> None:
    for family in FAMILIES:
        assert all(k.startswith(f"__{role}_") for k in load(role, family)), f"{role} {family}"


@pytest.mark.parametrize("role", ROLES_WITH_OS_VARS)
def test_every_per_os_variable_is_used_by_the_role(role: str) -> None:
    text = "\n".join(
        p.read_text(encoding="utf-8")
        for p in (ROOT / "roles" / role).rglob("*")
        if p.is_file() and "vars" not in p.parts
    )
    unused = [k for k in load(role, "Debian") if k not in text]
    assert unused == []


def test_amazon_linux_has_no_epel_so_wrk_is_built_from_source() -> None:
    assert load("loadgen", "Amazon")["__loadgen_wrk_method"] == "source"
    assert load("loadgen", "Amazon")["__loadgen_packages"]["wrk"] == []


def test_redhat_family_service_and_user_names_differ_from_debian_where_the_distros_do() -> None:
    assert load("nginx", "Debian")["__nginx_user"] == "www-data"
    assert load("nginx", "RedHat")["__nginx_user"] == load("nginx", "Amazon")["__nginx_user"] == "nginx"
    assert load("loadgen", "Amazon")["__loadgen_packages"]["ab"] == ["httpd-tools"]
