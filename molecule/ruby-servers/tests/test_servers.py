"""Every Ruby server kind, checked from outside: through nginx and directly, every instance, units run by
the benchmark user with the typed options in effect, restart after kill -9 of the master. Passenger's
watchdog and core leave `passenger start`'s process tree, so its checks read every process of the unit."""

import time
from pathlib import Path

import pytest
from stack_contract import (  # noqa: F401  (run here, parametrized from STACKS)
    test_every_instance_answers_on_its_own,
    test_every_instance_is_an_active_unit_whose_processes_all_run_as_the_benchmark_user,
    test_every_stack_answers_through_its_front,
    test_on_a_loopback_host_every_instance_runs_on_the_stacks_cpus_only,
)
from stackcheck import ask, children, instance_checks, kill_main_and_wait, main_pid, resolved
from testinfra.host import Host

from benchstack.plan.experiment import load_experiment

STACKS = load_experiment(Path(__file__).resolve().parents[1] / "experiment.yml").stacks
BY_NAME = {s["name"]: s for s in resolved(STACKS)}


@pytest.mark.parametrize(
    ("stack", "workers"),
    [("sinatra-unicorn-x2", 2), ("sinatra-puma-unix", 2), ("user-sinatra-unicorn", 1)],
)
def test_the_master_runs_the_configured_number_of_workers(host: Host, stack: str, workers: int) -> None:
    for ep in BY_NAME[stack]["endpoints"]:
        assert len(children(host, main_pid(host, ep["unit"]))) == workers


def test_unicorn_and_puma_configs_carry_the_typed_options(host: Host) -> None:
    unicorn = host.file("/etc/bench-stack/units/sinatra-unicorn-x2-2.unicorn.rb").content_string
    assert "worker_processes 2\npreload_app true\n" in unicorn
    assert 'listen "/run/bench-stack/sinatra-unicorn-x2-2/server.sock"' in unicorn
    puma = host.file("/etc/bench-stack/units/sinatra-puma-tcp-x2-1.puma.rb").content_string
    assert "workers 0\nthreads 4, 4\n" in puma
    assert 'bind "tcp://127.0.0.1:' in puma
    assert "preload_app!" in host.file("/etc/bench-stack/units/sinatra-puma-unix-1.puma.rb").content_string


def test_webrick_without_front_listens_on_the_stack_port(host: Host) -> None:
    assert host.socket("tcp://0.0.0.0:8201").is_listening


def unit_processes(host: Host, unit: str) -> list[tuple[str, str]]:
    """(user, command line) of every process of ``unit`` (its cgroup), however they were forked."""
    rows = [line.split(None, 2) for line in host.check_output("ps -e -o user=,unit=,args=").splitlines()]
    return [(row[0], row[2]) for row in rows if len(row) == 3 and row[1] == unit]


@pytest.mark.parametrize("stack", ["sinatra-passenger", "sinatra-passenger-unix-x2"])
def test_passenger_runs_its_app_processes_and_all_its_own_as_the_benchmark_user(
    host: Host, stack: str
) -> None:
    s = BY_NAME[stack]
    for ep in s["endpoints"]:
        # The app processes are spawned after the first request (verify asked every instance), one by one.
        for _ in range(50):
            processes = unit_processes(host, ep["unit"])
            apps = [args for _, args in processes if args.startswith("Passenger RubyApp")]
            if len(apps) == s["server"]["workers"]:
                break
            time.sleep(0.2)
        assert len(apps) == s["server"]["workers"], processes
        assert {user for user, _ in processes} == {"bench"}
        assert any(args.startswith("Passenger core") for _, args in processes)
        # `passenger start` in the foreground is the unit's main process.
        main = host.check_output("ps -o args= -p %s", main_pid(host, ep["unit"]))
        assert "passenger start --engine builtin" in main and "--daemonize" not in main


@pytest.mark.parametrize(
    "stack",
    [
        "sinatra-webrick",
        "sinatra-unicorn-x2",
        "sinatra-puma-unix",
        "sinatra-puma-tcp-x2",
        "sinatra-passenger-unix-x2",
    ],
)
def test_a_killed_master_comes_back_and_serves(host: Host, stack: str) -> None:
    s = BY_NAME[stack]
    ep = s["endpoints"][-1]
    before, after = kill_main_and_wait(host, ep["unit"])
    assert after not in ("none", before)
    check = next(c for c in instance_checks(STACKS) if c["via"].startswith(ep["unit"]) and c["path"] == "/")
    # A deadline, not a count of tries: Passenger's new master starts its core and spawns the app for the
    # first request, which took over 10 s in a CI run while the other lane's e2e test ran its CPU hog.
    deadline = time.monotonic() + 90
    while True:
        try:
            answer = ask(host, check)  # check_output: AssertionError while nothing answers
        except AssertionError as exc:
            answer = (str(exc).splitlines() or [""])[0]
        if answer == check["body"]:
            break
        if time.monotonic() > deadline:
            pytest.fail(f"{ep['unit']} did not answer within 90 s of its restart (last: {answer!r})")
        time.sleep(0.5)
