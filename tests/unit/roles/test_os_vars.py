"""Per-OS variables of every role: the Debian family and the RedHat family define the same variables with the
same shape, so a role never reads a name one family lacks. A distribution reads its own file where it differs
from its family (Amazon Linux 2023 for dns_check and loadgen), else its os_family's, through first_found.

Ubuntu and Amazon Linux cannot be pulled here, so this is their coverage in CI, with ansible-lint."""

from pathlib import Path
from typing import Any

import pytest
from conftest import read_yaml

ROOT = Path(__file__).resolve().parents[3]
FAMILIES = ("Debian", "RedHat")
# Ansible's distribution -> os_family for the systems the support matrix names.
DISTRIBUTIONS = {"Debian": "Debian", "Ubuntu": "Debian", "RedHat": "RedHat", "Amazon": "RedHat"}
ROLES_WITH_OS_VARS = sorted(
    {p.parent.parent.name for p in ROOT.glob("roles/*/vars/*.yml") if p.stem in DISTRIBUTIONS}
)
OS_VAR_FILES = sorted(
    str(p.relative_to(ROOT)) for p in ROOT.glob("roles/*/vars/*.yml") if p.stem in DISTRIBUTIONS
)
# How every role loads them: the distribution's file first, its family's when there is none.
FIRST_FOUND = [
    "{{ ansible_facts['distribution'] }}.yml",
    "{{ ansible_facts['os_family'] }}.yml",
]


def vars_file(role: str, distribution: str) -> Path:
    """The file first_found picks on that distribution."""
    own = ROOT / "roles" / role / "vars" / f"{distribution}.yml"
    return own if own.is_file() else ROOT / "roles" / role / "vars" / f"{DISTRIBUTIONS[distribution]}.yml"


def load(role: str, distribution: str) -> dict[str, Any]:
    return read_yaml(vars_file(role, distribution))


def include_vars_tasks(role: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "ansible.builtin.include_vars" in node:
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in sorted((ROOT / "roles" / role / "tasks").glob("*.yml")):
        walk(read_yaml(path))
    return found


def test_every_role_that_installs_packages_has_per_os_vars() -> None:
    installs = {
        p.parent.parent.name
        for p in ROOT.glob("roles/*/tasks/*.yml")
        if "ansible.builtin.apt:" in p.read_text(encoding="utf-8")
        or "ansible.builtin.package:" in p.read_text(encoding="utf-8")
    }
    assert installs and installs <= set(ROLES_WITH_OS_VARS)


@pytest.mark.parametrize("role", ROLES_WITH_OS_VARS)
def test_each_family_has_its_own_file(role: str) -> None:
    assert all((ROOT / "roles" / role / "vars" / f"{family}.yml").is_file() for family in FAMILIES)


@pytest.mark.parametrize("role", ROLES_WITH_OS_VARS)
def test_per_os_vars_are_loaded_from_the_distribution_then_the_family(role: str) -> None:
    tasks = include_vars_tasks(role)
    assert tasks, f"{role} never loads its per-OS vars"
    for task in tasks:
        assert "first_found" in task["ansible.builtin.include_vars"], role
        lookups = [v for v in task.get("vars", {}).values() if isinstance(v, dict) and "files" in v]
        assert [lookup["files"] for lookup in lookups] == [FIRST_FOUND], role
        assert lookups[0]["paths"] == ["{{ role_path }}/vars"], role


@pytest.mark.parametrize("path", OS_VAR_FILES)
def test_a_distribution_file_differs_from_its_family_file(path: str) -> None:
    """A copy of the family's values would drift from it; first_found reads the family's file instead."""
    own = ROOT / path
    family = DISTRIBUTIONS[own.stem]
    if family == own.stem:
        return
    family_values = read_yaml(own.parent / f"{family}.yml")
    assert read_yaml(own) != family_values, f"{path} repeats vars/{family}.yml: delete it"


@pytest.mark.parametrize("role", ROLES_WITH_OS_VARS)
@pytest.mark.parametrize("distribution", [d for d in DISTRIBUTIONS if d != "Debian"])
def test_each_system_reads_the_same_variables_as_debian(role: str, distribution: str) -> None:
    debian, other = load(role, "Debian"), load(role, distribution)
    assert sorted(other) == sorted(debian)
    for key, value in debian.items():
        assert type(other[key]) is type(value), f"{role} {distribution}: {key}"
        # Maps from what the role is asked for (a tool) to packages must answer for every key on every
        # family; maps to distro packages (gems, Perl modules) may be partial: the role checks and says so.
        if isinstance(value, dict) and all(isinstance(v, list) for v in value.values()):
            assert sorted(other[key]) == sorted(value), f"{role} {distribution}: {key}"


@pytest.mark.parametrize("path", OS_VAR_FILES)
def test_per_os_variables_are_internal_and_prefixed_with_the_role(path: str) -> None:
    role = Path(path).parts[1]
    values = read_yaml(ROOT / path)
    assert all(k.startswith(f"__{role}_") for k in values), path


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
    assert load("loadgen", "Amazon")["__loadgen_methods"]["wrk"] == "source"
    assert load("loadgen", "Amazon")["__loadgen_packages"]["wrk"] == []


def test_amazon_linux_reads_the_redhat_family_file_where_it_has_none() -> None:
    assert vars_file("nginx", "Amazon") == ROOT / "roles" / "nginx" / "vars" / "RedHat.yml"
    assert vars_file("nginx", "Ubuntu") == ROOT / "roles" / "nginx" / "vars" / "Debian.yml"
    assert vars_file("loadgen", "Amazon") == ROOT / "roles" / "loadgen" / "vars" / "Amazon.yml"


def test_redhat_family_service_and_user_names_differ_from_debian_where_the_distros_do() -> None:
    assert load("nginx", "Debian")["__nginx_user"] == "www-data"
    assert load("nginx", "RedHat")["__nginx_user"] == load("nginx", "Amazon")["__nginx_user"] == "nginx"
    assert load("loadgen", "Amazon")["__loadgen_packages"]["ab"] == ["httpd-tools"]
