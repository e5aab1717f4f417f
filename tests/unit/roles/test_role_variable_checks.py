"""The roles' own check of their variables (issue 44, item 2): before the app_server, nginx and host roles
change anything, an assert runs the plan's checks (benchstack.plan.rolevars, through the filter
bench_rolevar_problems) on the values as the host templates them, so a value the plan could not see (one that
needs facts), or a play without the plan, never writes a second directive into a unit, nginx.conf or a
sysctl.d file. Rendered with Ansible's own templating from the roles' files."""

from typing import Any

import pytest
from ansible.errors import AnsibleFilterError
from conftest import ROLES, read_yaml, role_vars, templated, trusted
from test_plugins import load_plugin

from benchstack.plan.rolevars import CHECKS, plan_only

rolevars = load_plugin("filter", "bench_rolevars")

CHECKED = ["app_server", "nginx", "host"]
FACT = '{{ ansible_facts["os_family"][:0] }}'
# The issue's values (a fact-free prefix on a host: facts are gathered there), by role.
ISSUE_44 = {
    "app_server": ("app_server_cpu_affinity", FACT + "0\nExecStartPre=+/bin/touch /tmp/x"),
    "nginx": ("nginx_worker_processes", FACT + "auto; user root"),
    "host": ("host_user", FACT + "root"),
}


def main_tasks(role: str) -> list[dict[str, Any]]:
    return read_yaml(ROLES / role / "tasks" / "main.yml")


def the_check(role: str) -> dict[str, Any]:
    """The role's first task: its check of its variables."""
    return main_tasks(role)[0]


def role_main_options(role: str) -> dict[str, Any]:
    specs = read_yaml(ROLES / role / "meta" / "argument_specs.yml")
    return specs["argument_specs"]["main"]["options"]


def checked(role: str) -> dict[str, Any]:
    """The variables the role's check hands the filter (vars/main.yml ``__<role>_checked``), as written."""
    variables = read_yaml(ROLES / role / "vars" / "main.yml")
    return variables[f"__{role}_checked"]


def verdict(role: str, **variables: Any) -> tuple[bool, list[str]]:
    """The role's check over its defaults and vars, then ``variables``: whether it passes, and the lines of
    its message."""
    task = the_check(role)
    values = {**role_vars(role), **trusted(task.get("vars") or {}), **variables}
    passed = templated("{{ " + task["ansible.builtin.assert"]["that"] + " }}", values)
    return bool(passed), str(templated(task["ansible.builtin.assert"]["fail_msg"], values)).splitlines()


def test_the_filter_returns_a_line_for_each_of_the_issues_values_as_a_host_renders_them() -> None:
    problems = rolevars.bench_rolevar_problems(
        {
            "app_server_cpu_affinity": "0\nExecStartPre=+/bin/touch /tmp/x",
            "nginx_worker_processes": "auto; user root",
            "host_user": "root",
            "host_group": "bench\nsudo",
            "app_server_nofile": "65536",  # -e app_server_nofile=65536: a string, typed as the spec says
            "nginx_cpu_affinity": "0-1",
        }
    )
    assert problems == [
        "role app_server: app_server_cpu_affinity: must be a CPU list such as 1 or 2-3 or 0,2 "
        "(empty: any CPU), not '0\\nExecStartPre=+/bin/touch /tmp/x'",
        "role host: host_user: must not be a privileged account such as 'root': choose another name",
        "role host: host_group: must be a user or group name (a-z, 0-9, '_', '-'; at most 32), "
        "not 'bench\\nsudo'",
        "role nginx: nginx_worker_processes: must be auto or a number of processes from 1 to 1024, "
        "not 'auto; user root'",
    ]


def test_the_filter_leaves_what_the_plan_sets_to_the_plan_and_names_a_variable_no_role_declares() -> None:
    from_plan = {"nginx_stacks": [{"name": "x"}], "app_server_env_lines": {}}
    assert rolevars.bench_rolevar_problems(from_plan) == []
    assert rolevars.bench_rolevar_problems({"app_server_cpu_afinity": "0"}) == [
        "app_server_cpu_afinity: no role declares it, so nothing checks it"
    ]
    with pytest.raises(AnsibleFilterError, match="expects a mapping"):
        rolevars.bench_rolevar_problems(["app_server_user"])


def test_the_filter_module_exposes_its_filter() -> None:
    assert set(rolevars.FilterModule().filters()) == {"bench_rolevar_problems"}


@pytest.mark.parametrize("role", CHECKED)
def test_each_role_checks_its_variables_first_in_every_stage_it_has(role: str) -> None:
    task = the_check(role)
    assert task["ansible.builtin.assert"]["that"] == f"__{role}_problems | length == 0"
    assert task["vars"] == {
        f"__{role}_problems": f"{{{{ __{role}_checked | benchstack.bench.bench_rolevar_problems }}}}"
    }
    assert f"__{role}_problems | join(" in task["ansible.builtin.assert"]["fail_msg"]
    # Whatever stage --tags picks, the check runs first.
    assert set(task["tags"]) == {tag for t in main_tasks(role) for tag in t.get("tags") or []}


@pytest.mark.parametrize("role", CHECKED)
def test_each_role_checks_every_variable_of_its_own_that_has_a_check(role: str) -> None:
    """One source: what rolevars checks for the role's main entry point, but what only the plan sets (what it
    sets from an experiment's logs, a user's playbook sets too: checked on the host)."""
    wanted = {
        name for name in role_main_options(role) if CHECKS.get(name) is not None and not plan_only(name)
    }
    assert set(checked(role)) == wanted
    assert all(value == f"{{{{ {name} }}}}" for name, value in checked(role).items())


@pytest.mark.parametrize("role", CHECKED)
def test_each_roles_check_passes_on_its_own_values(role: str) -> None:
    assert verdict(role)[0]


@pytest.mark.parametrize("role", CHECKED)
def test_each_roles_check_stops_the_issues_value_once_facts_are_gathered(role: str) -> None:
    """The value the plan could not template, as the host renders it: the role stops before it is written."""
    name, value = ISSUE_44[role]
    passed, message = verdict(role, ansible_facts={"os_family": "Debian"}, **{name: trusted(value)})
    assert not passed
    assert message[0] == "invalid variables (nothing was changed):"
    assert len(message) == 2 and message[1].startswith(f"  - role {role}: {name}: must "), message


def test_the_app_server_check_stops_a_newline_in_the_plans_cpu_split_or_the_benchmark_user() -> None:
    """What playbooks/vars/roles.yml hands the role is checked as well: the CPU split, the user."""
    passed, message = verdict(
        "app_server", app_server_user="bench\nGroup=root", app_server_cpu_affinity="1\n"
    )
    assert not passed
    assert [line.split(": must")[0] for line in message[1:]] == [
        "  - role app_server: app_server_user",
        "  - role app_server: app_server_cpu_affinity",
    ]
