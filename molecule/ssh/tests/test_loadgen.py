"""The loadgen's wrk, built from the mirror's source tarball with the system's OpenSSL
(loadgen_wrk_method: source), as on Amazon Linux 2023: built once per tarball (the side effect provisions
again with every role, then with a new tarball)."""

import json
import os
from pathlib import Path

from sideeffect import load
from testinfra.host import Host

testinfra_hosts = ["bench-mol-ssh-lg"]
RUN = Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "run"
BUILD = "/var/lib/bench-stack/build/wrk-"
FIRST = BUILD + "2dc92a6936b7e8a2"  # wrk-4.2.0-without-openssl.tar.gz's sha256, first 16 digits
BUILD_TASK = "loadgen : Build wrk with the system's OpenSSL"


def test_wrk_is_the_source_build_linked_to_the_systems_openssl(host: Host) -> None:
    assert host.check_output("command -v wrk") == "/usr/local/bin/wrk"
    assert host.check_output("wrk --version || true").startswith("wrk 4.2.0 [epoll]")
    assert "libssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3" in host.check_output("ldd /usr/local/bin/wrk")
    assert not host.package("wrk").is_installed


def test_siege_is_debians_and_left_no_config_in_any_home(host: Host) -> None:
    # bench-stack gives siege its own resource file in the command's folder (removed after the run).
    assert host.package("siege").is_installed
    left = host.check_output("find / -xdev \\( -name .siege -o -path '/tmp/*' -name siegerc \\) -print")
    assert left == ""


def test_the_wrk_cells_ran_the_source_build() -> None:
    [cell] = [json.loads(p.read_text(encoding="utf-8")) for p in (RUN / "cells").glob("*__wrk__*.json")]
    assert cell["tool_version"].startswith("wrk 4.2.0"), cell["tool_version"]


def test_every_role_again_over_ssh_changed_nothing_and_built_nothing() -> None:
    every = load("every-role")
    assert (every["rc"], every["failed"], every["changed_on_hosts"]) == (0, [], [])
    assert "loadgen" in every["roles_provisioned"]["loadgen-1"]
    assert "app_server" in every["roles_provisioned"]["target-1"]
    assert load("first")["task_seconds"][BUILD_TASK] is not None
    assert every["task_seconds"][BUILD_TASK] is None  # built already (creates:)


def test_a_new_tarball_is_built_afresh_and_installed(host: Host) -> None:
    new = load("new-tarball")
    assert (new["rc"], new["failed"]) == (0, [])
    assert new["roles_provisioned"] == {"target-1": [], "loadgen-1": ["loadgen"]}
    assert ["Provision every host", BUILD_TASK, "loadgen-1"] in new["changed_on_hosts"]
    folders = host.check_output(f"ls -d {BUILD}*/").split()
    assert len(folders) == 2 and f"{FIRST}/" in folders
    [second] = [f.rstrip("/") for f in folders if f != f"{FIRST}/"]
    assert host.file("/usr/local/bin/wrk").sha256sum == host.file(f"{second}/wrk").sha256sum


def test_a_deleted_wrk_build_makes_the_loadgen_role_run_again_and_put_it_back(host: Host) -> None:
    deleted = load("wrk-deleted")
    assert (deleted["rc"], deleted["failed"]) == (0, [])
    # Nothing else changed since the new tarball's run: only the record's hash of wrk makes the role run.
    assert deleted["roles_provisioned"] == {"target-1": [], "loadgen-1": ["loadgen"]}
    installed = ["Provision every host", "loadgen : Install the wrk binary", "loadgen-1"]
    assert installed in deleted["changed_on_hosts"]
    assert deleted["task_seconds"][BUILD_TASK] is None  # copied back from the build, not built again
    [second] = [f.rstrip("/") for f in host.check_output(f"ls -d {BUILD}*/").split() if f != f"{FIRST}/"]
    assert host.file("/usr/local/bin/wrk").sha256sum == host.file(f"{second}/wrk").sha256sum
