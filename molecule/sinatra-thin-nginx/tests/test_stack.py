"""The "Sinatra on thin behind nginx" stacks, checked from outside: HTTP through every chain, sockets, units,
config."""

from typing import Any

import pytest
from stack_contract import (  # noqa: F401  (run here, parametrized from STACKS)
    test_every_instance_answers_on_its_own,
    test_every_instance_is_an_active_unit_whose_processes_all_run_as_the_benchmark_user,
    test_every_stack_answers_through_its_front,
    test_on_a_loopback_host_every_instance_runs_on_the_stacks_cpus_only,
)
from stackcheck import endpoints, experiment_stacks, kill_main_and_wait, resolved
from testinfra.host import Host

STACKS = experiment_stacks("sinatra-thin-nginx")


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


def shipped_md5(host: Host, path: str) -> str:
    """The md5 of ``path`` as its Debian package shipped it (dpkg's conffile record)."""
    package = host.check_output("dpkg -S %s | cut -d: -f1", path)
    conffiles = host.check_output("dpkg-query -W -f='${Conffiles}' %s", package)
    return next(line.split()[1] for line in conffiles.splitlines() if line.split()[:1] == [path])


def test_main_context_follows_the_hosts_nginx_profile(host: Host) -> None:
    profile = host.ansible.get_variables().get("nginx_profile", "tuned")
    conf = host.file("/etc/nginx/nginx.conf").content_string
    if profile == "stock":
        # What the package shipped, not a copy the role made itself.
        assert host.file("/etc/nginx/nginx.conf").md5sum == shipped_md5(host, "/etc/nginx/nginx.conf")
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
    # systemd restarts it (Restart=on-failure); wait up to 10 s for a new main process.
    before, after = kill_main_and_wait(host, ep["unit"], tries=50)
    answer = host.check_output(
        "curl -sS --max-time 5 --retry 20 --retry-delay 1 --retry-all-errors --unix-socket %s http://localhost/",
        ep["socket"],
    )
    assert answer == "Hello World! I am sinatra!"
    assert after not in ("none", before)


def test_nginx_follows_no_link_out_of_a_static_app(host: Host) -> None:
    """A link planted in a served folder after the plan checked it (a user's deploy step, a hostile app)
    serves nothing outside the folder: nginx's disable_symlinks refuses it, while a plain file beside it is
    served. Removing disable_symlinks from the server block turns this red (it then serves /etc/passwd)."""
    stack = next(s for s in resolved(STACKS) if s["name"] == "nginx-static")
    folder, port = stack["app"]["dir"], stack["port"]
    url = f"http://127.0.0.1:{port}"
    planted = [f"{folder}/bench-test-plain.txt", f"{folder}/bench-test-passwd", f"{folder}/bench-test-etc"]
    try:
        host.run_test("echo plain > %s", planted[0])
        host.run_test("ln -sfn /etc/passwd %s && ln -sfn /etc %s", planted[1], planted[2])
        assert host.check_output("curl -sS --max-time 5 %s/bench-test-plain.txt", url) == "plain"
        for path in ("bench-test-passwd", "bench-test-etc/passwd"):
            out = host.run("curl -sS --max-time 5 -o /dev/stdout -w '\\n%%{http_code}' %s/%s", url, path)
            body, code = out.stdout.rsplit("\n", 1)
            # try_files finds no file it may open: 404 (403 where a location serves without try_files).
            assert code in ("403", "404"), f"{path}: HTTP {code}"
            assert "root:" not in body
    finally:
        host.run("rm -f %s %s %s", *planted)
