"""Apache fronts, checked from outside: every stack through its own Apache instance, the MPM each instance
really runs, the modules of its handler, the proxy pool, mod_lua and mod_mruby reading their file on every
request, mod_mruby built from the mirror's repository and recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from stack_contract import (  # noqa: F401  (run here, parametrized from STACKS)
    test_every_instance_answers_on_its_own,
    test_every_instance_is_an_active_unit_whose_processes_all_run_as_the_benchmark_user,
    test_every_stack_answers_through_its_front,
    test_on_a_loopback_host_every_instance_runs_on_the_stacks_cpus_only,
)
from stackcheck import PLANTED, PLANTED_MARKS, children, main_pid, planted_answers, resolved
from testinfra.host import Host

from benchstack.kinds.apps.static import ONE_KB_BODY
from benchstack.plan.experiment import load_experiment

STACKS = load_experiment(Path(__file__).resolve().parents[1] / "experiment.yml").stacks
APACHE = [s for s in resolved(STACKS) if s["front"]["kind"] == "apache"]
BY_NAME = {s["name"]: s for s in APACHE}
MODULE_OF_HANDLER = {
    "proxy": "proxy_balancer_module",
    "static": None,
    "mod_php": "php_module",
    "lua-inline": "lua_module",
    "lua-file": "lua_module",
    "mruby-inline": "mruby_module",
    "mruby-file": "mruby_module",
}
MRUBY_BUILD = "/var/lib/bench-stack/build/mod_mruby"


def unit(stack: dict[str, Any]) -> str:
    return f"apache2@{stack['front']['instance']}.service"


def server_pid(host: Host, stack: dict[str, Any]) -> str:
    """The instance's parent process, from the pid file its envvars name (/run/apache2-INSTANCE)."""
    return host.check_output("cat /run/apache2-%s/apache2.pid", stack["front"]["instance"])


def ctl(host: Host, stack: dict[str, Any], args: str) -> str:
    return host.check_output(
        f"APACHE_CONFDIR=/etc/apache2-{stack['front']['instance']} apachectl {args} 2>&1"
    )


@pytest.mark.parametrize("stack", APACHE, ids=lambda s: s["name"])
def test_each_instance_is_an_enabled_unit_listening_on_its_port(host: Host, stack: dict[str, Any]) -> None:
    assert host.service(unit(stack)).is_running
    assert host.service(unit(stack)).is_enabled
    assert host.socket(f"tcp://0.0.0.0:{stack['port']}").is_listening


@pytest.mark.parametrize("stack", APACHE, ids=lambda s: s["name"])
def test_apachectl_reports_the_configured_mpm_and_the_handlers_module(
    host: Host, stack: dict[str, Any]
) -> None:
    mpm = stack["front"]["mpm"]
    assert f"Server MPM:     {mpm}\n" in ctl(host, stack, "-V")
    modules = ctl(host, stack, "-M")
    loaded_mpms = [line.split()[0] for line in modules.splitlines() if line.strip().startswith("mpm_")]
    assert loaded_mpms == [f"mpm_{mpm}_module"]
    wanted = MODULE_OF_HANDLER[stack["front"]["handler"]]
    if wanted:
        assert f" {wanted} (" in modules
    if stack["front"]["handler"] != "mod_php":
        assert " php_module (" not in modules


@pytest.mark.parametrize("stack", APACHE, ids=lambda s: s["name"])
def test_the_running_server_has_its_mpm_mapped_and_no_other(host: Host, stack: dict[str, Any]) -> None:
    pid = server_pid(host, stack)
    assert main_pid(host, unit(stack)) == pid
    maps = host.check_output("cat /proc/%s/maps", pid)
    mpm = stack["front"]["mpm"]
    assert f"mod_mpm_{mpm}.so" in maps
    assert [m for m in ("prefork", "worker", "event") if f"mod_mpm_{m}.so" in maps] == [mpm]


@pytest.mark.parametrize("stack", APACHE, ids=lambda s: s["name"])
def test_the_mpm_tuning_is_in_the_instances_config(host: Host, stack: dict[str, Any]) -> None:
    conf = host.file(
        f"/etc/apache2-{stack['front']['instance']}/conf-enabled/bench-stack.conf"
    ).content_string
    for directive, value in stack["front"]["mpm_directives"]:
        assert f"    {directive} {value}\n" in conf


def test_prefork_starts_the_seeds_five_servers(host: Host) -> None:
    # StartServers 5, MinSpareServers 5: five children serve before any request arrives.
    pid = server_pid(host, BY_NAME["apache-prefork-static"])
    assert len(children(host, pid)) >= 5


def test_workers_run_as_the_distributions_web_user(host: Host) -> None:
    for stack in APACHE:
        pid = server_pid(host, stack)
        assert host.check_output("ps -o user= -p %s", pid) == "root"
        users = {host.check_output("ps -o user= -p %s", child) for child in children(host, pid)}
        assert users == {"www-data"}, stack["name"]


def test_the_proxy_pool_has_one_named_member_per_socket(host: Host) -> None:
    stack = BY_NAME["sinatra-thin-x2-apache"]
    vhost = host.file(
        f"/etc/apache2-{stack['front']['instance']}/sites-enabled/bench-stack.conf"
    ).content_string
    for ep in stack["endpoints"]:
        assert f'BalancerMember "unix:{ep["socket"]}|http://sinatra-thin-x2-apache-{ep["instance"]}"' in vhost
        assert host.socket(f"unix://{ep['socket']}").is_listening


def test_the_seeds_1k_query_string_reaches_the_static_file(host: Host) -> None:
    url = "http://127.0.0.1:8502/1k.html?q=" + "x" * 1022
    body = host.check_output("curl -sSf --max-time 10 %s", url)
    assert body == ONE_KB_BODY.rstrip("\n")  # check_output strips the final newline


def test_lua_file_is_read_on_every_request(host: Host) -> None:
    path = "/opt/bench-stack/apps/lua-file/hello.lua"
    original = host.file(path).content_string
    try:
        host.run_expect([0], "sed -i 's/I am lua-file!/I am lua-file, edited!/' %s", path)
        answer = host.check_output("curl -sSf --max-time 10 http://127.0.0.1:8504/hello.lua")
        assert answer == "Hello World! I am lua-file, edited!"
    finally:
        host.run_expect([0], "sed -i 's/I am lua-file, edited!/I am lua-file!/' %s", path)
    assert host.file(path).content_string == original


def test_mruby_file_is_run_on_every_request_not_served_as_text(host: Host) -> None:
    path = "/opt/bench-stack/apps/mruby-file/hello.rb"
    url = "http://127.0.0.1:8507/hello.rb"
    original = host.file(path).content_string
    assert "Apache.rputs" in original
    content_type = host.check_output("curl -sS --max-time 10 -o /dev/null -w '%%{content_type}' %s", url)
    assert content_type == "text/plain"
    try:
        host.run_expect([0], "sed -i 's/I am mruby-file!/I am mruby-file, edited!/' %s", path)
        assert host.check_output("curl -sSf --max-time 10 %s", url) == "Hello World! I am mruby-file, edited!"
    finally:
        host.run_expect([0], "sed -i 's/I am mruby-file, edited!/I am mruby-file!/' %s", path)
    assert host.file(path).content_string == original


def test_mod_mruby_is_built_from_the_mirrors_tag_and_recorded(host: Host) -> None:
    commit = host.check_output("git -C %s/src rev-parse HEAD", MRUBY_BUILD)
    assert host.check_output("git -C %s/src rev-parse 'v1.16.0^{commit}'", MRUBY_BUILD) == commit
    record = host.file(f"{MRUBY_BUILD}/built").content_string
    assert f"commit: {commit}\n" in record
    config = host.file(f"{MRUBY_BUILD}/build_config.rb").content_string
    # Only mruby's own gems and mod_mruby's two: nothing fetched from GitHub.
    assert "conf.gembox 'full-core'" in config
    assert ":github" not in config
    assert host.file("/usr/lib/apache2/modules/mod_mruby.so").exists


def test_the_distributions_own_apache_is_stopped_and_nothing_listens_on_80(host: Host) -> None:
    assert not host.service("apache2").is_running
    assert not host.service("apache2").is_enabled
    assert not host.socket("tcp://0.0.0.0:80").is_listening


def test_mod_php_runs_only_its_entry_and_serves_no_other_file_of_the_app_folder(host: Host) -> None:
    # FallbackResource served existing files as they are: another .php file ran, a config was read.
    stack = BY_NAME["php-apache-prefork"]
    answers = planted_answers(host, stack["port"], stack["app"]["dir"])
    assert answers["/"] == "200 Hello World! I am php!"
    for name in PLANTED:
        # The entry's own answer for a path it does not route.
        assert answers[f"/{name}"] == "404 Not Found", answers
    assert not [a for a in answers.values() if any(mark in a for mark in PLANTED_MARKS)], answers
