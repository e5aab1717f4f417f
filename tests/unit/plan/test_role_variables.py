"""Role variables and project settings checked for the place they land in (issue 29, item 3): the plan and
`bench-stack experiment --vars` refuse each case of tests/bad-inputs/variables before any host is touched,
every role variable that is not a bool or a choice has a check (benchstack.plan.rolevars: a pattern, a range),
the project's own values pass it, and the names bench-stack sets itself are refused from -e
(benchstack.plan.innervars)."""

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ansible.errors import AnsibleActionFail
from conftest import bench_stack, read_yaml
from test_bad_inputs import expected, nowhere
from test_plugins import bench_plan, run_plan

from benchstack.plan import settings
from benchstack.plan.innervars import inner_names, inner_variable_problems
from benchstack.plan.rolevars import CHECKS, variable_problems

ROOT = Path(__file__).resolve().parents[3]
CASES = sorted((ROOT / "tests" / "bad-inputs" / "variables").glob("*.yml"))
SPECS = sorted((ROOT / "roles").glob("*/meta/argument_specs.yml"))
# Project settings the plan action takes as its arguments, not as variables.
AS_ARGUMENTS = {"bench_results_dir": "results_dir", "bench_run_dir": "run_dir"}
HOSTILE = "1\nExecStartPre=/bin/touch /tmp/pwn"


@functools.cache
def options() -> dict[str, dict[str, Any]]:
    """Every role variable, by name, with its argument spec (the first entry point that declares it).
    Read once: each of the ~120 cases below re-reading every argument_specs.yml cost 60 ms."""
    out: dict[str, dict[str, Any]] = {}
    for path in SPECS:
        specs = read_yaml(path)["argument_specs"]
        for entry in specs.values():
            for name, spec in (entry.get("options") or {}).items():
                out.setdefault(name, spec)
    return out


def needs_a_check(spec: dict[str, Any]) -> bool:
    """Whether argument_specs alone leave the value open: not a bool, not a choice. A number is open too:
    specs have no ranges, and ``keepalive 0;`` or ``LimitNOFILE=0`` reach a config as they are."""
    return spec.get("type", "str") != "bool" and not spec.get("choices")


def numeric(spec: dict[str, Any]) -> bool:
    return spec.get("type") in ("int", "float")


def test_every_open_role_variable_has_a_check_and_every_check_a_variable() -> None:
    every = options()
    open_ = {name for name, spec in every.items() if needs_a_check(spec)}
    assert sorted(open_ - set(CHECKS)) == []
    assert sorted(set(CHECKS) - set(every)) == []


def test_every_free_variable_is_one_on_purpose() -> None:
    # Apache configuration lines on purpose, checked by apachectl configtest before any reload.
    assert sorted(name for name, check in CHECKS.items() if check is None) == ["apache_extra_config"]


def test_the_projects_own_values_pass_their_checks() -> None:
    values: dict[str, Any] = {}
    for path in sorted((ROOT / "roles").glob("*/defaults/main.yml")):
        values |= read_yaml(path) or {}
    scenarios = ("ruby-rbenv", "dns-check", "user-apps", "log-shipper")
    for path in [ROOT / "molecule" / s / "molecule.yml" for s in scenarios]:
        groups = read_yaml(path)["provisioner"]["inventory"]
        for section in ("group_vars", "host_vars"):
            for each in (groups.get(section) or {}).values():
                values |= each
    plain = {k: v for k, v in values.items() if k in CHECKS and "{{" not in str(v) and "${" not in str(v)}
    plan_set = {k for k, v in plain.items() if CHECKS[k] and "plan" in (CHECKS[k](v) or "")}
    assert len(plain) > 60
    assert variable_problems({k: v for k, v in plain.items() if k not in plan_set}) == []


@pytest.mark.parametrize("name", sorted(n for n, c in CHECKS.items() if c), ids=str)
def test_a_newline_and_a_directive_are_refused_in_every_checked_variable(name: str) -> None:
    spec = options()[name]
    kind = spec.get("type", "str")
    value: Any = {"a": HOSTILE} if kind == "dict" else [HOSTILE] if kind == "list" else HOSTILE
    if kind == "dict" and spec.get("elements") == "dict":  # pragma: no cover - none today
        value = {"a": {"x": HOSTILE}}
    problems = variable_problems({name: value})
    assert len(problems) == 1 and problems[0].startswith(f"{name}: ")
    assert "\n" not in problems[0]  # quoted escaped, on one line


@pytest.mark.parametrize("name", sorted(n for n, spec in options().items() if numeric(spec)), ids=str)
def test_a_number_outside_its_range_is_refused_and_its_default_is_not(name: str) -> None:
    low, high = variable_problems({name: -1}), variable_problems({name: 10**9})
    assert len(low) == 1 and low[0].startswith(f"{name}: must be ") and low[0].endswith("not -1"), low
    assert len(high) == 1 and high[0].endswith("not 1000000000"), high
    assert variable_problems({name: options()[name]["default"]}) == []
    assert variable_problems({name: True}) != []  # a bool is an int to Python, never a number here


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_the_plan_refuses_each_bad_variable_before_anything(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = read_yaml(path)
    args = {AS_ARGUMENTS[k]: v for k, v in given.items() if k in AS_ARGUMENTS}
    variables = {k: v for k, v in given.items() if k not in AS_ARGUMENTS}
    args.setdefault("results_dir", str(tmp_path / "results"))
    # Given with -e, as the issue did: extra vars reach the task's variables and ansible's extra vars alike.
    monkeypatch.setattr(bench_plan, "load_extra_vars", lambda _loader: dict(given))
    with pytest.raises(AnsibleActionFail) as err:
        run_plan("sinatra-thin-nginx", variables, **args)
    message = str(err.value)
    for problem in expected(path):
        assert problem in message, (problem, message)
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_the_command_line_refuses_each_bad_variable_as_the_plan_does(path: Path) -> None:
    """``bench-stack experiment --vars FILE``: the variables as ``-e @FILE`` gives them, one validator."""
    result = bench_stack("experiment", "sinatra-thin-nginx", "--vars", path)
    assert result.returncode == 1, result.stdout[-500:]
    assert result.stderr.startswith("bench-stack: ") and "Traceback" not in result.stderr
    for problem in expected(path):
        assert problem in result.stderr, (problem, result.stderr)


def test_the_command_line_takes_good_variables_and_says_nothing_of_them(tmp_path: Path) -> None:
    given = tmp_path / "vars.yml"
    given.write_text(
        "nginx_worker_processes: 2\napp_server_cpu_affinity: 0-1\nbench_yes: false\n"
        f"bench_results_dir: {tmp_path / 'results'}\nbench_run_dir: {tmp_path / 'results' / 'mine'}\n",
        encoding="utf-8",
    )
    result = bench_stack("experiment", "sinatra-thin-nginx", "--vars", given)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr


def bench_stack_play(
    folder: Path, inventory: Path, env: dict[str, str], *extra: str
) -> tuple[list[str], dict[str, str], Path]:
    """bench-stack.yml through ansible-playbook against ``inventory``, results under ``folder``: an early
    command (conftest's early_commands)."""
    argv = [
        str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(inventory), "bench-stack.yml",
        *extra, "-e", f"bench_results_dir={folder / 'results'}",
    ]  # fmt: skip
    return argv, {**env, "ANSIBLE_LOCAL_TEMP": str(folder / "tmp")}, ROOT


# Issue 29's command line, the names bench-stack sets itself and a loadgens group's variable: one refusal of
# the plan play lists every problem (four runs became two; each ansible-playbook run is ~0.8 s of CPU), and
# each test below finds its own problem in it, so a check that stopped refusing its value turns its test red.
ISSUE_29 = '{"app_server_cpu_affinity": "0\\nExecStartPre=/bin/touch /tmp/relpwn-aff"}'
INNER_GIVEN = {
    "bench_user": "bench\nGroup=root",
    "__nginx_user": "www-data; load_module /tmp/x.so",
    "stack": {"name": "x"},
    "bench_plan": {"stacks": []},
}


def refused_together(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """bench-stack.yml via ansible-playbook with `-e '{"app_server_cpu_affinity": "0\\nExecStartPre=..."}'`
    as issue 29 ran it, -e of names bench-stack sets itself (which reached unit files and nginx.conf
    unchecked, and a whole plan, which skipped every check), against an inventory whose first host is a
    target only and whose loadgens group has a bad role variable (started with the session: conftest's
    early_commands)."""
    _, env = nowhere(folder)
    inventory = folder / "hosts.yml"
    inventory.write_text(
        "all:\n  vars: {ansible_host: 192.0.2.1}\n  children:\n    targets: {hosts: {t1: {}}}\n"
        "    loadgens:\n      hosts: {lg1: {}}\n"
        '      vars: {loadgen_wrk_source_url: "http://mirror/wrk.tar.gz; touch /tmp/pwn"}\n'
    )
    given = ("-e", ISSUE_29, "-e", json.dumps(INNER_GIVEN))
    return {"refused": bench_stack_play(folder, inventory, env, *given)}


@pytest.mark.ansible
@pytest.mark.early.with_args(refused_together)
def test_the_issues_command_line_is_refused_in_the_plan_play(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    result = early_results["refused"]
    out = result.stdout + result.stderr
    assert result.returncode != 0, out[-2000:]
    assert "TASK [Compile the plan" in out and "UNREACHABLE" not in out
    assert "app_server_cpu_affinity: must be a CPU list such as 1 or 2-3 or 0,2" in out
    assert not os.path.exists("/tmp/relpwn-aff")


def test_the_names_bench_stack_sets_itself_are_read_from_its_playbooks_and_roles() -> None:
    inner = inner_names(ROOT)
    assert inner["bench_user"] == "playbooks/vars/roles.yml"  # derived from host_user, checked
    assert inner["bench_cpu_split_now"] == "playbooks/vars/bench.yml"
    assert inner["__nginx_user"].startswith("roles/nginx/vars/")  # nginx.conf's user
    assert inner["__app_server_host_values"] == "roles/app_server/vars/main.yml"  # ExecStart's values
    assert inner["stack"].startswith("roles/")  # the loop over the stacks a role writes units for
    assert inner["bench_round"] == "playbooks/tasks/target.yml"  # a loop variable of the measuring tasks
    assert inner["bench_capacity"] == "playbooks/benchmark.yml"  # a registered result
    assert inner["bench_plan"] == "playbooks/plan.yml"


def test_a_name_bench_stack_sets_is_refused_and_a_role_variable_is_left_to_its_check() -> None:
    problems = inner_variable_problems(
        ["bench_user", "app_server_user", "__nginx_user", "experiment", "bench_yes"],
        ROOT,
        {"app_server_user"},
    )
    assert [p.split(":")[0] for p in problems] == ["bench_user", "__nginx_user"]
    assert problems[0].startswith("bench_user: set by bench-stack itself (playbooks/vars/roles.yml)")


@pytest.mark.ansible
@pytest.mark.early.with_args(refused_together)
def test_names_bench_stack_sets_itself_are_refused_from_the_command_line_a_plan_included(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    result = early_results["refused"]
    out = result.stdout + result.stderr
    assert result.returncode != 0, out[-2000:]
    assert "TASK [Compile the plan" in out and "UNREACHABLE" not in out, out[-2000:]
    for name, where in [
        ("bench_user", "playbooks/vars/roles.yml"),
        ("__nginx_user", "roles/nginx/vars/"),
        ("stack", "roles/"),
        ("bench_plan", "playbooks/plan.yml"),
    ]:
        assert f"{name}: set by bench-stack itself ({where}" in out, (name, out[-2000:])


def test_the_other_hosts_variables_are_checked_naming_the_hosts(tmp_path: Path) -> None:
    """The plan task's variables are its first host's: a loadgens group's or a host's own were not checked."""
    bad = {"app_server_cpu_affinity": "0\nExecStartPre=/bin/touch /tmp/pwn", "nginx_profile": "stock"}
    task_vars = {
        "inventory_hostname": "t1",
        "ansible_play_hosts_all": ["t1", "lg1", "lg2"],
        "hostvars": {"t1": {}, "lg1": bad, "lg2": bad},
    }
    with pytest.raises(AnsibleActionFail) as err:
        run_plan("sinatra-thin-nginx", task_vars, results_dir=str(tmp_path))
    assert str(err.value).splitlines()[1:] == [
        "  - role app_server: app_server_cpu_affinity: must be a CPU list such as 1 or 2-3 or 0,2 "
        "(empty: any CPU), not '0\\nExecStartPre=/bin/touch /tmp/pwn' (on lg1, lg2)"
    ]
    # The same value on this host too: said once, as this host's.
    task_vars = {**task_vars, **bad}
    with pytest.raises(AnsibleActionFail) as err:
        run_plan("sinatra-thin-nginx", task_vars, results_dir=str(tmp_path))
    assert "(on lg1" not in str(err.value) and str(err.value).count("app_server_cpu_affinity") == 1


@pytest.mark.ansible
@pytest.mark.early.with_args(refused_together)
def test_a_loadgens_group_variable_is_refused_in_the_plan_play(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    result = early_results["refused"]
    out = result.stdout + result.stderr
    assert result.returncode != 0, out[-2000:]
    assert "TASK [Compile the plan" in out and "UNREACHABLE" not in out, out[-2000:]
    refused = "role loadgen: loadgen_wrk_source_url: must be an http(s), file, git or ssh URL"
    assert refused in out, out[-2000:]
    assert "(on lg1)" in out


# ---------------------------------------------------------------- issue 44: values that need facts

# The issue's values: each renders on a host (facts gathered) to a second directive or a privileged account,
# and could not be templated when the plan checked (no facts yet), so no check saw them.
FACT = '{{ ansible_facts["os_family"][:0] }}'
ISSUE_44 = {
    "app_server_cpu_affinity": FACT + "0\nExecStartPre=+/bin/touch /tmp/x",
    "nginx_worker_processes": FACT + "auto; user root",
    "host_user": FACT + "root",
}
NEEDS_FACTS = (
    "must be a plain value: the plan could not template it (object of type 'dict' has no attribute "
    "'os_family'), and facts are not gathered when the plan checks"
)


def task_templar(task_vars: dict[str, Any]) -> Any:
    """The plan task's templar, Ansible's own, over ``task_vars``."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    return Templar(loader=DataLoader(), variables=task_vars)


def given_as_templates(values: dict[str, str]) -> dict[str, Any]:
    """``values`` as -e or an inventory hands them to a play: templates Ansible trusts."""
    from ansible.template import trust_as_template

    return {name: trust_as_template(value) for name, value in values.items()}


def test_a_value_that_needs_facts_is_refused_by_the_plan_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 44: the value could not be templated when the plan checked, was left out of the checks, and
    wrote ExecStartPre=+... into the unit."""
    monkeypatch.setattr(bench_plan, "load_extra_vars", lambda _loader: dict(ISSUE_44))
    task_vars = {"ansible_facts": {}, **given_as_templates(ISSUE_44)}
    with pytest.raises(AnsibleActionFail) as err:
        run_plan("sinatra-thin-nginx", task_vars, task_templar(task_vars), results_dir=str(tmp_path))
    assert str(err.value).splitlines()[1:] == [
        f"  - role {role}: {name}: {NEEDS_FACTS}"
        for role, name in [
            ("app_server", "app_server_cpu_affinity"),
            ("host", "host_user"),
            ("nginx", "nginx_worker_processes"),
        ]
    ]
    assert not (tmp_path / "results").exists()


def test_a_template_the_plan_can_render_is_checked_as_rendered() -> None:
    """What can be templated is: the values checked as the role will get them (facts from a cache, a
    variable of the inventory), good ones pass."""
    given = given_as_templates(
        {
            **ISSUE_44,
            "ruby_gem_source": "{{ bench_mirror_url }}/gems/",  # as the Molecule scenarios give it
            "nginx_cpu_affinity": "{{ '0-1' }}",
        }
    )
    task_vars = {
        "ansible_facts": {"os_family": "Debian"},
        "bench_mirror_url": "http://127.0.0.1:8799",
        **given,
    }
    values, untemplated = bench_plan.given_settings(task_vars, task_templar(task_vars))
    assert untemplated == []
    assert (
        values["ruby_gem_source"] == "http://127.0.0.1:8799/gems/" and values["nginx_cpu_affinity"] == "0-1"
    )
    assert [line.split(": must")[0] for line in settings.role_problems(values)] == [
        "role app_server: app_server_cpu_affinity",
        "role host: host_user",
        "role nginx: nginx_worker_processes",
    ]


def real_hostvars(folder: Path, inventory: str) -> Any:
    """Ansible's own hostvars of ``inventory`` (YAML), as the plan task sees the play's other hosts: each
    lookup templates the host's variable."""
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.hostvars import HostVars
    from ansible.vars.manager import VariableManager

    (folder / "hosts.yml").write_text(inventory, encoding="utf-8")
    loader = DataLoader()
    hosts = InventoryManager(loader=loader, sources=[str(folder / "hosts.yml")])
    manager = VariableManager(loader=loader, inventory=hosts)
    return HostVars(inventory=hosts, variable_manager=manager, loader=loader)


def test_a_value_that_needs_facts_on_another_host_is_refused_naming_the_host(tmp_path: Path) -> None:
    lines = "".join(f"        {name}: {json.dumps(value)}\n" for name, value in ISSUE_44.items())
    loadgens = f"    loadgens:\n      hosts: {{lg1: {{}}}}\n      vars:\n{lines}"
    hostvars = real_hostvars(tmp_path, f"all:\n  hosts: {{t1: {{}}}}\n  children:\n{loadgens}")
    task_vars = {"inventory_hostname": "t1", "ansible_play_hosts_all": ["t1", "lg1"], "hostvars": hostvars}
    with pytest.raises(AnsibleActionFail) as err:
        run_plan("sinatra-thin-nginx", task_vars, results_dir=str(tmp_path / "results"))
    assert str(err.value).splitlines()[1:] == [
        f"  - role {role}: {name}: {NEEDS_FACTS} (on lg1)"
        for role, name in [
            ("app_server", "app_server_cpu_affinity"),
            ("host", "host_user"),
            ("nginx", "nginx_worker_processes"),
        ]
    ]


def test_a_value_the_plan_hands_the_roles_is_refused_by_its_name_even_as_a_template(tmp_path: Path) -> None:
    task_vars = {"ansible_facts": {}, **given_as_templates({"nginx_stacks": FACT})}
    with pytest.raises(AnsibleActionFail) as err:
        run_plan("sinatra-thin-nginx", task_vars, task_templar(task_vars), results_dir=str(tmp_path))
    assert str(err.value).splitlines()[1:] == [
        f"  - role nginx: nginx_stacks: {CHECKS['nginx_stacks'](None)}"
    ]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("app_server_cpu_affinity", "0\nExecStartPre=+/bin/touch /tmp/x"),
        ("nginx_cpu_affinity", "0\nExecStartPre=+/bin/touch /tmp/x"),
        ("nginx_worker_processes", "auto; user root"),
        ("nginx_worker_processes", "auto\nuser root"),
        ("nginx_worker_processes", "²"),  # a digit to str.isdigit(), not to int(): was a ValueError
        ("nginx_worker_processes", "١"),  # an Arabic-Indic 1: a digit to int(), not to nginx
        ("host_user", "root"),
        ("host_user", "bench\n* hard nofile 0"),
        ("host_group", "bench\nsudo"),
        ("app_server_user", "bench\nGroup=root"),
        ("app_server_group", "bench\nUser=root"),
        ("host_tuned_sysctls", {"net.core.somaxconn": "4096\nkernel.modprobe = /tmp/x"}),
    ],
)
def test_the_issues_values_as_a_host_renders_them_are_refused(name: str, value: Any) -> None:
    problems = settings.role_problems({name: value})
    assert len(problems) == 1 and f": {name}" in problems[0] and "\n" not in problems[0], problems


def issue_44(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """The issue's command line: `-e '{"app_server_cpu_affinity": "{{ ansible_facts[...][:0] }}0\\n..."}'`
    with its nginx and host_user variants, via ansible-playbook (started with the session)."""
    inventory, env = nowhere(folder)
    return {"facts": bench_stack_play(folder, inventory, env, "-e", json.dumps(ISSUE_44))}


@pytest.mark.ansible
@pytest.mark.early.with_args(issue_44)
def test_the_issues_fact_templated_command_line_is_refused_in_the_plan_play(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    result = early_results["facts"]
    out = result.stdout + result.stderr
    assert result.returncode != 0, out[-2000:]
    assert "TASK [Compile the plan" in out and "UNREACHABLE" not in out, out[-2000:]
    for name in ISSUE_44:
        assert f"{name}: must be a plain value: the plan could not template it" in out, (name, out[-2000:])
    assert "facts are not gathered when the plan checks" in out


ARCHIVE_DIRS = ("build_archive_dir", "python_pyenv_archive_dir", "ruby_rbenv_archive_dir")


@pytest.mark.parametrize("name", ARCHIVE_DIRS)
@pytest.mark.parametrize(
    ("where", "why"),
    [
        ("/", "/ (/) is a system folder"),
        ("/var/lib", "/var/lib (/var/lib) is a system folder"),
        ("/etc/ssh/rubies", "/etc/ssh/rubies (/etc/ssh/rubies) is in /etc/ssh, which bench-stack must not"),
        ("/usr/local/rubies", "is in /usr, which bench-stack must not write into"),
        ("/run/systemd/x", "is in /run/systemd, which bench-stack must not write into"),
        ("/home/u/.ssh/rubies", "is in a .ssh folder, which bench-stack must not write into"),
    ],
)
def test_an_archive_folder_takes_the_controllers_folder_rule(name: str, where: str, why: str) -> None:
    """Issue 44: the runtimes' ``*_archive_dir`` are folders on the controller that a built runtime is
    fetched into; they were checked for control characters only, so /etc/ssh/x or / were accepted. They
    take the results folder's rule (benchstack.common.paths.controller_folder_problem)."""
    [problem] = variable_problems({name: where})
    assert problem.startswith(f"{name}: ") and why in problem, problem
    assert problem.endswith("bench-stack needs a folder of its own"), problem


@pytest.mark.parametrize("name", ARCHIVE_DIRS)
def test_an_archive_folder_of_its_own_or_none_is_taken_and_a_link_is_judged_where_it_leads(
    name: str, tmp_path: Path
) -> None:
    assert variable_problems({name: str(tmp_path / "cache" / "rubies")}) == []
    assert variable_problems({name: "~/.cache/bench-stack/rubies"}) == []
    assert variable_problems({name: ""}) == []  # build_archive_dir's default: no archive kept
    (tmp_path / "to-etc").symlink_to("/etc")
    [problem] = variable_problems({name: str(tmp_path / "to-etc" / "x")})
    assert "is in /etc, which bench-stack must not write into" in problem
