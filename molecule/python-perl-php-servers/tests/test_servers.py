"""gunicorn, uvicorn, Starman and php-fpm, checked from outside: through nginx and directly (php-fpm over
FastCGI), every instance, units run by the benchmark user with the typed options in effect, restart after
kill -9 of the master."""

import time
from pathlib import Path

import pytest
from stack_contract import (  # noqa: F401  (run here, parametrized from STACKS)
    test_every_instance_answers_on_its_own,
    test_every_instance_is_an_active_unit_whose_processes_all_run_as_the_benchmark_user,
    test_every_stack_answers_through_its_front,
)
from stackcheck import ask, children, instance_checks, kill_main_and_wait, main_pid
from testinfra.host import Host

from benchstack.experiment import load_experiment
from benchstack.stacks import normalize_stacks

STACKS = load_experiment(Path(__file__).resolve().parents[1] / "experiment.yml").stacks
BY_NAME = {s["name"]: s for s in normalize_stacks(STACKS)}


@pytest.mark.parametrize(
    ("stack", "workers"),
    [("wsgi-gunicorn-x2", 2), ("user-wsgi-gunicorn", 1), ("psgi-starman-x2", 2), ("php-fpm-x2", 2)],
)
def test_the_master_runs_the_configured_number_of_workers(host: Host, stack: str, workers: int) -> None:
    for ep in BY_NAME[stack]["endpoints"]:
        assert len(children(host, main_pid(host, ep["unit"]))) == workers


def test_starman_on_tcp_runs_under_start_server(host: Host) -> None:
    unit = BY_NAME["psgi-starman-tcp"]["endpoints"][0]["unit"]
    assert "start_server" in host.check_output("ps -o args= -p %s", main_pid(host, unit))


def test_python_servers_run_from_the_root_owned_venv_at_pinned_versions(host: Host) -> None:
    venv = host.file("/opt/bench-stack/venv")
    assert (venv.user, venv.mode & 0o022) == ("root", 0)
    freeze = host.check_output("/opt/bench-stack/venv/bin/pip freeze").splitlines()
    assert "gunicorn==23.0.0" in freeze
    assert "uvicorn==0.32.1" in freeze


def test_php_fpm_pool_config_and_front_controller(host: Host) -> None:
    conf = host.file("/etc/bench-stack/units/php-fpm-x2-1.php-fpm.conf").content_string
    assert "pm = static\npm.max_children = 2\n" in conf
    nginx = host.file("/etc/nginx/conf.d/bench-stack.conf").content_string
    assert "try_files $uri /index.php$is_args$args;" in nginx
    assert "fastcgi_keep_conn" not in nginx


def test_the_distro_php_fpm_service_is_stopped(host: Host) -> None:
    assert host.run("systemctl is-active php8.2-fpm").stdout.strip() != "active"


@pytest.mark.parametrize(
    "stack", ["wsgi-gunicorn-x2", "asgi-uvicorn", "psgi-starman-x2", "psgi-starman-tcp", "php-fpm-tcp"]
)
def test_a_killed_master_comes_back_and_serves(host: Host, stack: str) -> None:
    s = BY_NAME[stack]
    ep = s["endpoints"][-1]
    before, after = kill_main_and_wait(host, ep["unit"])
    assert after not in ("none", before)
    check = next(c for c in instance_checks([s]) if c["via"].startswith(ep["unit"]) and c["path"] == "/")
    for _ in range(50):
        try:
            assert ask(host, check) == check["body"]
            break
        except AssertionError:
            time.sleep(0.2)
    else:
        pytest.fail(f"{ep['unit']} did not answer after its restart")
