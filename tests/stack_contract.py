"""What every Molecule scenario checks of every stack, whatever its servers: the answer through the front,
the answer of each instance on its own, and each instance an active unit run by the benchmark user.

A scenario's test module sets ``STACKS`` and imports these tests; its conftest imports
``pytest_generate_tests``, which parametrizes them from that module's ``STACKS``.
"""

from __future__ import annotations

from typing import Any

import pytest
from stackcheck import ask, endpoints, front_checks, instance_checks, main_pid, users_of
from testinfra.host import Host

from benchstack.plan.cpusplit import cpu_split, cpulist


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    stacks = getattr(metafunc.module, "STACKS", None)
    if stacks is None:
        return
    if "front_check" in metafunc.fixturenames:
        fronts = front_checks(stacks)
        metafunc.parametrize("front_check", fronts, ids=[f"{c['stack']}{c['path']}" for c in fronts])
    if "instance_check" in metafunc.fixturenames:
        checks = instance_checks(stacks)
        metafunc.parametrize("instance_check", checks, ids=[f"{c['via']}{c['path']}" for c in checks])
    if "endpoint" in metafunc.fixturenames:
        eps = endpoints(stacks)
        metafunc.parametrize("endpoint", eps, ids=[e["unit"] for e in eps])


def test_every_stack_answers_through_its_front(host: Host, front_check: dict[str, Any]) -> None:
    out = host.check_output("curl -sS --max-time 10 -w '\\n%%{http_code}' %s", front_check["url"])
    body, status = out.rsplit("\n", 1)
    assert (status, body) == ("200", front_check["body"])


def test_every_instance_answers_on_its_own(host: Host, instance_check: dict[str, Any]) -> None:
    assert ask(host, instance_check) == instance_check["body"]


def test_every_instance_is_an_active_unit_whose_processes_all_run_as_the_benchmark_user(
    host: Host, endpoint: dict[str, Any]
) -> None:
    assert host.service(endpoint["unit"]).is_running
    assert host.service(endpoint["unit"]).is_enabled
    pid = main_pid(host, endpoint["unit"])
    assert pid != "0"
    assert users_of(host, pid) == {"bench"}


def test_on_a_loopback_host_every_instance_runs_on_the_stacks_cpus_only(
    host: Host, endpoint: dict[str, Any]
) -> None:
    """A host that loads itself splits its CPUs (bench_cpu_split auto, which .config/molecule/config.yml sets
    for every scenario; the default is off): the stacks on theirs, the tool on the others. The instance's main
    process (and so everything it forks) may run on the stacks' CPUs only."""
    groups = set(host.ansible.get_variables().get("group_names", []))
    vcpus = int(host.check_output("nproc --all"))
    split = cpu_split(vcpus, "auto", loopback={"targets", "loadgens"} <= groups)
    pid = main_pid(host, endpoint["unit"])
    allowed = host.check_output("grep Cpus_allowed_list /proc/%s/status", pid).split()[-1]
    if split is None:
        assert allowed == cpulist(0, vcpus - 1)
    else:
        assert allowed == split["stack_cpus"]
