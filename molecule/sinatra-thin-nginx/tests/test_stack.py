"""The seed-000 stacks, checked from outside: HTTP through every chain, sockets, units, config."""

from typing import Any

import pytest
from stackcheck import endpoints, experiment_stacks, front_checks, instance_checks
from testinfra.host import Host

STACKS = experiment_stacks("sinatra-thin-nginx")


@pytest.mark.parametrize("check", front_checks(STACKS), ids=lambda c: f"{c['stack']}{c['path']}")
def test_every_stack_answers_through_its_front(host: Host, check: dict[str, Any]) -> None:
    out = host.check_output("curl -sS --max-time 10 -w '\\n%%{http_code}' %s", check["url"])
    body, status = out.rsplit("\n", 1)
    assert status == "200"
    assert body == check["body"]


@pytest.mark.parametrize("check", instance_checks(STACKS), ids=lambda c: f"{c['via']}{c['path']}")
def test_every_app_server_instance_answers_on_its_own(host: Host, check: dict[str, Any]) -> None:
    if check["unix_socket"]:
        out = host.check_output(
            "curl -sS --max-time 10 --unix-socket %s %s", check["unix_socket"], check["url"]
        )
    else:
        out = host.check_output("curl -sS --max-time 10 %s", check["url"])
    assert out == check["body"].rstrip("\n")


@pytest.mark.parametrize("ep", endpoints(STACKS), ids=lambda e: e["unit"])
def test_every_instance_is_an_active_unit_run_by_the_benchmark_user(host: Host, ep: dict[str, Any]) -> None:
    assert host.service(ep["unit"]).is_running
    assert host.service(ep["unit"]).is_enabled
    pid = host.check_output("systemctl show -p MainPID --value %s", ep["unit"])
    assert pid != "0"
    assert host.check_output("ps -o user= -p %s", pid) == "bench"


@pytest.mark.parametrize("ep", [e for e in endpoints(STACKS) if e["socket"]], ids=lambda e: e["unit"])
def test_unix_sockets_listen_where_nginx_expects_them(host: Host, ep: dict[str, Any]) -> None:
    assert host.socket(f"unix://{ep['socket']}").is_listening
    assert f"server unix:{ep['socket']} " in host.file("/etc/nginx/conf.d/bench-stack.conf").content_string


def test_benchmark_user_cannot_log_in(host: Host) -> None:
    user = host.user("bench")
    assert user.exists
    assert user.shell.endswith("nologin")
    assert user.uid != 0


def test_nginx_config_passes_its_own_check(host: Host) -> None:
    assert host.run("nginx -t").rc == 0
    assert host.service("nginx").is_running


def test_main_context_follows_the_hosts_nginx_profile(host: Host) -> None:
    profile = host.ansible.get_variables().get("nginx_profile", "tuned")
    conf = host.file("/etc/nginx/nginx.conf").content_string
    if profile == "stock":
        assert conf == host.file("/etc/nginx/nginx.conf.dist").content_string
        assert "worker_connections 10000;" not in conf
    else:
        assert "worker_connections 10000;" in conf
        assert "bench-stack" in conf


def test_tuned_stacks_keep_connections_to_their_pool(host: Host) -> None:
    servers = host.file("/etc/nginx/conf.d/bench-stack.conf").content_string
    assert "keepalive 32;" in servers
    assert "access_log off;" in servers


def test_a_killed_instance_comes_back(host: Host) -> None:
    ep = endpoints(STACKS)[-1]
    before = host.check_output("systemctl show -p MainPID --value %s", ep["unit"])
    host.run("kill -9 %s", before)
    # systemd restarts it (Restart=on-failure); wait up to 10 s for a new main process.
    after = host.check_output(
        "for i in $(seq 50); do p=$(systemctl show -p MainPID --value %s);"
        ' [ "$p" != 0 ] && [ "$p" != %s ] && systemctl is-active -q %s && echo $p && exit 0;'
        " sleep 0.2; done; echo none",
        ep["unit"],
        before,
        ep["unit"],
    )
    answer = host.check_output(
        "curl -sS --max-time 5 --retry 20 --retry-delay 1 --retry-all-errors --unix-socket %s http://localhost/",
        ep["socket"],
    )
    assert answer == "Hello World! I am sinatra!"
    assert after not in ("none", before)
