"""One CPU-pinning pattern across the roles (docs/how-it-works.md, "Loopback hosts and CPUs"): each role's
`<role>_cpu_affinity` becomes systemd's CPUAffinity= in one task, and the role's handlers reread the units
before the restart that applies it. Units of the distribution get a drop-in, bench-stack's own units the
line itself."""

from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import read_yaml

from benchstack.kinds.fronts import ROLES as FRONT_ROLES

ROLES = Path(__file__).resolve().parents[3] / "roles"
PINNING_ROLES = sorted(
    p.parent.parent.name
    for p in ROLES.glob("*/meta/argument_specs.yml")
    if f"{p.parent.parent.name}_cpu_affinity:" in p.read_text(encoding="utf-8")
)
# The fronts' roles: their units are the distribution's.
DROP_IN_ROLES = sorted(FRONT_ROLES)
DROP_IN = "bench-stack-cpus.conf"


def tasks_of(role: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for task in node:
                walk(task)
        elif isinstance(node, dict):
            if "block" in node:
                walk(node["block"])
            else:
                out.append(node)

    for path in sorted((ROLES / role / "tasks").glob("*.yml")):
        walk(read_yaml(path))
    return out


def handlers_of(role: str) -> list[dict[str, Any]]:
    path = ROLES / role / "handlers" / "main.yml"
    return read_yaml(path) if path.is_file() else []


def topics(handler: dict[str, Any]) -> list[str]:
    listen = handler.get("listen", [])
    return [listen] if isinstance(listen, str) else list(listen)


def test_the_roles_that_pin_cpus_are_the_fronts_and_the_app_servers() -> None:
    assert PINNING_ROLES == sorted([*FRONT_ROLES, "app_server"])


@pytest.mark.parametrize("role", PINNING_ROLES)
def test_the_affinity_variable_is_a_cpu_list_string_defaulting_to_any(role: str) -> None:
    specs = read_yaml(ROLES / role / "meta" / "argument_specs.yml")
    spec = specs["argument_specs"]["main"]["options"][f"{role}_cpu_affinity"]
    assert (spec["type"], spec["default"]) == ("str", "")
    assert "CPUAffinity=" in " ".join(spec["description"])


@pytest.mark.parametrize("role", DROP_IN_ROLES)
def test_a_front_pins_in_one_task_writing_or_removing_its_drop_in(role: str) -> None:
    pinning = [t for t in tasks_of(role) if f"{role}_cpu_affinity" in yaml.safe_dump(t)]
    assert len(pinning) == 1, [t.get("name") for t in pinning]
    task = pinning[0]
    assert "benchstack.bench.bench_files" in task
    (dropin,) = [v for k, v in task["vars"].items() if k == f"__{role}_cpu_dropin"]
    assert dropin.startswith("/etc/systemd/system/") and dropin.endswith(f".service.d/{DROP_IN}")
    assert task["benchstack.bench.bench_files"]["files"][0]["path"] == f"{{{{ __{role}_cpu_dropin }}}}"
    assert task["notify"] == [f"bench {role} daemon-reload", f"bench {role} restart"]
    template = (ROLES / role / "templates" / "cpu-affinity.conf.j2").read_text(encoding="utf-8")
    assert f"[Service]\nCPUAffinity={{{{ {role}_cpu_affinity }}}}\n" in template


@pytest.mark.parametrize("role", DROP_IN_ROLES)
def test_systemd_rereads_the_drop_in_before_the_restart_applies_it(role: str) -> None:
    handlers = handlers_of(role)
    reload_at = next(i for i, h in enumerate(handlers) if f"bench {role} daemon-reload" in topics(h))
    restart_at = [
        i
        for i, h in enumerate(handlers)
        if f"bench {role} restart" in topics(h) and h.get("ansible.builtin.systemd_service", {}).get("state")
    ]
    assert handlers[reload_at]["ansible.builtin.systemd_service"] == {"daemon_reload": True}
    assert restart_at and all(reload_at < i for i in restart_at)


def test_app_server_units_carry_the_line_themselves() -> None:
    """bench-stack writes these units, so a drop-in would be a second file to keep in step with the first."""
    unit = (ROLES / "app_server" / "templates" / "server@.service.j2").read_text(encoding="utf-8")
    assert "CPUAffinity={{ app_server_cpu_affinity }}" in unit
    others = [t for t in tasks_of("app_server") if "app_server_cpu_affinity" in yaml.safe_dump(t)]
    assert others == []
