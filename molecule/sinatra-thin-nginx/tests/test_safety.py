"""What the side effect (side_effect.py) applied on purpose, checked from its evidence: bad inputs are refused
before any file, unit or service changes and every stack keeps answering; a server block only nginx can
refuse (the role used alone, without the plan) never replaces the live one; a host switched to the stock
profile gets the package's nginx.conf back; a new instance count restarts that stack's instances only, and
only the roles whose inputs changed run."""

from __future__ import annotations

from typing import Any

import pytest
from sideeffect import load

HOSTS = ["bench-mol-thin-bookworm", "bench-mol-thin-trixie"]
TUNED_HOST, STOCK_HOST = HOSTS
RECONFIGURED = "sinatra-thin-x2-nginx"
NGINX_CONFIG_TASK = (
    "Write the tuned main config and the server blocks (each checked before it replaces the live one)"
)


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    return load("expected")


def failed_tasks(evidence: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in evidence["playbook"]["tasks"] if t["failed"]]


def assert_nothing_changed(evidence: dict[str, Any], expected: dict[str, Any]) -> None:
    for host in HOSTS:
        before, after = evidence["before"][host], evidence["after"][host]
        assert after["pids"] == before["pids"], host
        assert all(pid != "0" for pid in after["pids"].values()), host
        changed = {
            p
            for p in before["sums"].keys() | after["sums"].keys()
            if before["sums"].get(p) != after["sums"].get(p)
        }
        assert changed == set(), host
        assert after["answers"] == expected["answers"], host


def test_a_frozen_instance_stops_the_whole_run_in_verify_before_any_cell() -> None:
    gate = load("verify-gate")
    run = gate["playbook"]
    assert run["rc"] != 0
    [first, *_] = [t for t in run["tasks"] if t["failed"]]
    assert (first["name"], first["host"]) == ("Ask each instance directly", gate["frozen"]["host"])
    assert gate["frozen"]["unit"] in first["msg"]
    # the other host is fine, and still nothing after verify runs: no fingerprint, run.json, cell or report
    after_verify = {"Fingerprint the hosts and open the run", "Measure the cells", "Report"}
    assert [t["play"] for t in run["tasks"] if t["play"] in after_verify] == []
    assert not gate["run_dir_exists"], gate["run_dir_files"]
    decided = {
        t["host"]: t["facts"]["bench_provision"]["run"]
        for t in run["tasks"]
        if t["name"].startswith("Decide")
    }
    assert decided == dict.fromkeys(HOSTS, {})  # its unit is active: provisioning had nothing to repair


def test_a_server_block_only_nginx_can_refuse_never_replaces_the_live_one(expected: dict[str, Any]) -> None:
    evidence = load("broken-server-block")
    assert evidence["playbook"]["rc"] != 0
    failed = failed_tasks(evidence)
    assert {(t["role"], t["name"], t["host"]) for t in failed} == {
        ("nginx", NGINX_CONFIG_TASK, h) for h in HOSTS
    }
    assert all('"70000" of the "listen" directive' in t["msg"] for t in failed), failed
    assert not any(t["name"] == "Reload nginx" for t in evidence["playbook"]["tasks"])
    # nginx's main pid, every instance's, the files on disk (bench-stack.conf the old good one), the answers
    assert_nothing_changed(evidence, expected)


def test_a_good_run_after_the_refused_one_changes_nothing(expected: dict[str, Any]) -> None:
    broken, good = load("broken-server-block"), load("good-after-broken")
    assert good["playbook"]["rc"] == 0, good["playbook"]["output"]
    # the nginx role runs again, with the role's default, and finds nothing to change
    assert {t["name"] for t in good["playbook"]["tasks"] if t["changed"]} == set()
    assert any(
        t["role"] == "nginx" and t["name"] == NGINX_CONFIG_TASK and not t["skipped"]
        for t in good["playbook"]["tasks"]
    )
    assert_nothing_changed({"before": broken["before"], "after": good["after"]}, expected)


@pytest.mark.parametrize(
    ("name", "task", "says"),
    [
        ("bad-input-injection", "Compile the plan", "app.dir: must be an absolute path"),
        (
            "bad-input-missing-app",
            "Check that every stack's app folder holds its entry file",
            "stack sinatra-thin-x1-nginx: app.dir /opt/bench-stack/apps/no-such-app does not exist on this "
            "host; stack sinatra-thin-x2-nginx: app.dir /opt/bench-stack/apps/static holds no config.ru",
        ),
        (
            "bad-input-missing-static",
            "Check that every such app folder holds its entry file",
            "stack nginx-static: app.dir /opt/bench-stack/apps/no-such-site does not exist on this host",
        ),
    ],
)
def test_a_bad_input_is_refused_before_any_file_unit_or_service_changes(
    name: str, task: str, says: str, expected: dict[str, Any]
) -> None:
    evidence = load(name)
    assert evidence["playbook"]["rc"] != 0
    [first, *_] = failed_tasks(evidence)
    assert first["name"].startswith(task) and says in first["msg"], first
    assert_nothing_changed(evidence, expected)


def test_switching_a_tuned_host_to_stock_puts_the_packages_nginx_conf_back_and_reloads() -> None:
    conf, step = load("stock-switch-conf"), load("stock-switch")
    assert step["playbook"]["rc"] == 0, step["playbook"]["output"]
    before, after = conf["conf_before"][TUNED_HOST], conf["conf_after"][TUNED_HOST]
    assert before["md5"] != before["shipped_md5"]  # tuned: bench-stack's main config
    assert after["md5"] == after["shipped_md5"]  # stock: what the package shipped (dpkg's conffile md5)
    # reloaded, not restarted: the same master, new workers
    assert (
        step["after"][TUNED_HOST]["pids"]["nginx.service"]
        == step["before"][TUNED_HOST]["pids"]["nginx.service"]
    )
    assert after["workers"] and not set(after["workers"]) & set(before["workers"])
    assert step["after"][STOCK_HOST] == step["before"][STOCK_HOST]  # not in the run


def test_the_stock_host_keeps_the_packages_nginx_conf() -> None:
    conf = load("stock-switch-conf")
    for when in ("conf_before", "conf_after"):
        assert conf[when][STOCK_HOST]["md5"] == conf[when][STOCK_HOST]["shipped_md5"]
    assert conf["conf_after"][STOCK_HOST]["workers"] == conf["conf_before"][STOCK_HOST]["workers"]


def units_of(stack: str, pids: dict[str, str]) -> list[str]:
    return sorted(u for u in pids if u.startswith(f"bench-{stack}@"))


def test_a_new_instance_count_restarts_that_stacks_instances_only(expected: dict[str, Any]) -> None:
    evidence = load("reconfigure")
    assert evidence["playbook"]["rc"] == 0, evidence["playbook"]["output"]
    for host in HOSTS:
        before, after = evidence["before"][host]["pids"], evidence["after"][host]["pids"]
        mine = units_of(RECONFIGURED, after)
        assert mine == [f"bench-{RECONFIGURED}@{i}.service" for i in (1, 2, 3)]
        assert evidence["third_active"][host] == "active"
        for unit in mine:
            assert after[unit] not in ("0", before.get(unit)), (host, unit)
        others = {u: p for u, p in before.items() if u not in mine}
        assert {u: after[u] for u in others} == others, host
        assert evidence["after"][host]["answers"] == expected["answers"]


def test_only_the_roles_whose_inputs_changed_run() -> None:
    run = load("reconfigure")["playbook"]
    decided = {
        t["host"]: t["facts"]["bench_provision"] for t in run["tasks"] if t["name"].startswith("Decide")
    }
    for host in HOSTS:
        assert set(decided[host]["run"]) == {"app_server", "nginx"}, decided[host]
        ran = {t["role"] for t in run["tasks"] if t["host"] == host and t["role"] and not t["skipped"]}
        assert ran == {"app_server", "nginx"}, host


def test_lowering_the_count_again_stops_and_disables_the_extra_instance(expected: dict[str, Any]) -> None:
    evidence = load("restore")
    assert evidence["playbook"]["rc"] == 0, evidence["playbook"]["output"]
    for host in HOSTS:
        assert evidence["third"][host] == ["inactive", "disabled"], host
        before, after = evidence["before"][host]["pids"], evidence["after"][host]["pids"]
        for unit in units_of(RECONFIGURED, expected_units(expected)):
            assert after[unit] not in ("0", before[unit]), (host, unit)
        assert evidence["after"][host]["answers"] == expected["answers"]


def expected_units(expected: dict[str, Any]) -> dict[str, str]:
    return dict.fromkeys(expected["units"], "")
