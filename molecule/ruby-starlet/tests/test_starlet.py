"""The Ruby Starlet for real: prefork_engine's Rack handler under start_server on a unix socket behind nginx,
its gems from the gem source, beside unicorn with the same workers; SIGHUP to start_server is a hot restart
that keeps the listening socket."""

import re
import shlex
import time
from pathlib import Path

from stack_contract import (  # noqa: F401  (run here, parametrized from STACKS)
    test_every_instance_answers_on_its_own,
    test_every_instance_is_an_active_unit_whose_processes_all_run_as_the_benchmark_user,
    test_every_stack_answers_through_its_front,
    test_on_a_loopback_host_every_instance_runs_on_the_stacks_cpus_only,
)
from stackcheck import children, main_pid, resolved
from testinfra.host import Host

from benchstack.plan.experiment import load_experiment

STACKS = load_experiment(Path(__file__).resolve().parents[1] / "experiment.yml").stacks
BY_NAME = {s["name"]: s for s in resolved(STACKS)}
STARLET = BY_NAME["sinatra-starlet-nginx"]
UNICORN = BY_NAME["sinatra-unicorn-nginx"]
(EP,) = STARLET["endpoints"]


def listener(host: Host, socket: str) -> tuple[str, set[str]]:
    """The unix socket's listener as ss sees it: its inode and the PIDs holding it. ss runs as the benchmark
    user: only the owner (or CAP_SYS_PTRACE, which the container lacks) may read a process's fds."""
    lines = host.check_output("runuser -u bench -- ss -Hxlpn").splitlines()
    line = next(ln for ln in lines if ln.split()[4] == socket)
    return line.split()[5], set(re.findall(r"\bpid=(\d+)", line))


def serving_master(host: Host, tries: int = 40) -> str:
    """Starlet's master (the one child of start_server) once it runs all its workers: a generation that has
    just started may still be forking them (at most ``tries`` x 0.25 s)."""
    workers = STARLET["server"]["workers"]
    for _ in range(tries):
        pids = host.run("ps -o pid= --ppid %s", main_pid(host, EP["unit"])).stdout.split()
        if len(pids) == 1 and len(host.run("ps -o pid= --ppid %s", pids[0]).stdout.split()) == workers:
            return pids[0]
        time.sleep(0.25)
    raise AssertionError(f"{EP['unit']}: no Starlet master with {workers} workers after {tries * 0.25:.0f} s")


def test_the_gems_come_from_the_gem_source_at_their_pins(host: Host) -> None:
    gems = host.check_output("gem list --local --no-details").splitlines()
    for gem in ("pico_http_parser (0.0.4)", "prefork_engine (0.0.7)", "proc-wait3 (1.7.3)"):
        assert gem in gems


def test_starlet_runs_under_start_server_which_holds_its_unix_socket(host: Host) -> None:
    main = main_pid(host, EP["unit"])
    assert host.check_output("ps -o comm= -p %s", main) == "start_server"
    master = serving_master(host)
    args = host.check_output("ps -o args= -p %s", master)
    assert "--server Starlet" in args and "/gems/prefork_engine-0.0.7/example/starlet.rb" in args
    assert len(children(host, master)) == STARLET["server"]["workers"]
    _, holders = listener(host, EP["socket"])
    assert main in holders
    # The answer on the socket is Starlet's own (nginx replaces the Server header).
    out = host.check_output("curl -sSi --max-time 5 --unix-socket %s http://localhost/hello/s", EP["socket"])
    assert out.startswith("HTTP/1.0 200 OK") and "\r\nServer: RubyStarlet\r\n" in out, out


def test_unicorn_beside_it_runs_the_same_workers_behind_the_same_nginx(host: Host) -> None:
    assert UNICORN["server"]["workers"] == STARLET["server"]["workers"]
    (ep,) = UNICORN["endpoints"]
    master = main_pid(host, ep["unit"])
    assert "unicorn master" in host.check_output("ps -o args= -p %s", master)
    assert len(children(host, master)) == UNICORN["server"]["workers"]
    nginx = host.file("/etc/nginx/conf.d/bench-stack.conf").content_string
    for stack, sock in ((STARLET, EP["socket"]), (UNICORN, ep["socket"])):
        assert f"server unix:{sock}" in nginx, stack["name"]


def test_sighup_to_start_server_is_a_hot_restart_that_keeps_the_socket(host: Host) -> None:
    """SIGHUP to start_server: a new Starlet generation, the same start_server and listening socket (inode),
    and no request fails or waits 2 s meanwhile."""
    old_master = serving_master(host)
    main = main_pid(host, EP["unit"])
    old_workers = set(children(host, old_master))
    inode, _ = listener(host, EP["socket"])
    file_inode = host.file(EP["socket"]).inode
    url = f"--unix-socket {shlex.quote(EP['socket'])} http://localhost"
    # The old generation serves for app_server_starlet_kill_old_delay (5) s after the new one started.
    # At most 300 requests of at most 2 s each, until 10 have ended after the old Starlet master was gone;
    # each line is the status, curl's exit code and whether that master was alive when the request ended.
    out = host.check_output(
        "(n=0; for i in $(seq 300); do"
        f" c=$(curl -s -o /dev/null -w '%%{{http_code}}' --max-time 2 {url}/hello/reload); e=$?;"
        " if [ -d /proc/%s ]; then echo $c $e old;"
        " else echo $c $e new; n=$((n+1)); [ $n -ge 10 ] && break; fi;"
        " sleep 0.05; done) & sleep 0.5; kill -HUP %s; wait",
        old_master,
        main,
    )
    rows = [line.split() for line in out.splitlines()]
    assert rows[0][2] == "old"
    assert [when for _, _, when in rows[-10:]] == ["new"] * 10, "the old Starlet outlived the loop"
    assert all(row[:2] == ["200", "0"] for row in rows), out
    assert main_pid(host, EP["unit"]) == main
    new_master = serving_master(host)
    assert new_master != old_master
    new_workers = set(children(host, new_master))
    assert len(new_workers) == STARLET["server"]["workers"]
    assert not new_workers & old_workers
    assert not any(host.file(f"/proc/{pid}").exists for pid in old_workers | {old_master})
    new_inode, holders = listener(host, EP["socket"])
    assert (new_inode, main in holders, new_master in holders) == (inode, True, True)
    assert host.file(EP["socket"]).inode == file_inode
    out = host.check_output("curl -sS --max-time 5 http://127.0.0.1:%s/hello/after", str(STARLET["port"]))
    assert out == "Hello after!"


def test_a_client_gone_before_its_answer_costs_no_worker(host: Host) -> None:
    """prefork_engine 0.0.7's handler dies on EPIPE (and is respawned after 1 s); bench-stack's
    starlet_peer_gone.rb drops the connection instead. 20 clients send a request and close at once."""
    master = serving_master(host)
    workers = set(children(host, master))
    since = "@" + host.check_output("date +%s")
    host.check_output(
        "python3 -c %s %s",
        "import socket, sys\n"
        "for _ in range(20):\n"
        "    s = socket.socket(socket.AF_UNIX)\n"
        "    s.connect(sys.argv[1])\n"
        "    s.sendall(b'GET /hello/gone HTTP/1.0\\r\\n\\r\\n')\n"
        "    s.close()\n",
        EP["socket"],
    )
    time.sleep(2)
    log = host.check_output("journalctl -u %s --since %s --no-pager -o cat", EP["unit"], since)
    assert "Errno::EPIPE" not in log, log
    assert (serving_master(host), set(children(host, master))) == (master, workers)
    out = host.check_output("curl -sS --max-time 5 http://127.0.0.1:%s/hello/b", str(STARLET["port"]))
    assert out == "Hello b!"


def test_the_units_reload_is_that_sighup(host: Host) -> None:
    reload = host.check_output("systemctl show -p ExecReload --value %s", EP["unit"])
    assert "argv[]=/bin/kill -HUP $MAINPID" in reload
