"""Ruby the rbenv way, offline, checked from outside: the stacks answer through nginx and directly from
processes of the rbenv Ruby 3.1.2 run by the benchmark user without a login shell; the first host compiled
that Ruby, the second unpacked it from the build-once archive and has no compiler."""

import json
import os
from pathlib import Path

import pytest
import yaml
from stack_contract import (  # noqa: F401  (run here, parametrized from STACKS)
    test_every_instance_answers_on_its_own,
    test_every_instance_is_an_active_unit_whose_processes_all_run_as_the_benchmark_user,
    test_every_stack_answers_through_its_front,
    test_on_a_loopback_host_every_instance_runs_on_the_stacks_cpus_only,
)
from stackcheck import main_pid
from testinfra.host import Host

from benchstack.plan.experiment import load_experiment

STACKS = load_experiment(Path(__file__).resolve().parents[1] / "experiment.yml").stacks
ROOT = "/opt/rbenv"
PREFIX = f"{ROOT}/versions/3.1.2"
BUILDER = "bench-mol-rbenv-build"


def name_of(host: Host) -> str:
    return host.ansible.get_variables()["inventory_hostname"]


def marker(host: Host) -> dict:
    return json.loads(host.file("/var/lib/bench-stack/ruby-rbenv/ruby-3.1.2.json").content_string)


# `endpoint` is parametrized from STACKS by stack_contract's pytest_generate_tests (see conftest.py).
def test_each_server_process_is_the_rbenv_ruby_started_without_a_shell(host: Host, endpoint: dict) -> None:
    pid = main_pid(host, endpoint["unit"])
    # The process's own user may read its exe link (root would need CAP_SYS_PTRACE in the container).
    assert host.check_output("runuser -u bench -- readlink /proc/%s/exe", pid) == f"{PREFIX}/bin/ruby"
    exec_start = host.check_output("systemctl show -p ExecStart --value %s", endpoint["unit"])
    assert f"path={PREFIX}/bin/rackup" in exec_start


def test_the_rbenv_ruby_reports_its_version_to_the_benchmark_user(host: Host) -> None:
    out = host.check_output(
        "runuser -u bench -- %s/bin/ruby -ropenssl -rpsych -rzlib -rsinatra/base -rwebrick -e %s",
        PREFIX,
        "print RUBY_VERSION, ' ', %w[sinatra webrick].map { |g| Gem.loaded_specs[g].version }.join(' ')",
    )
    assert out == "3.1.2 3.0.5 1.8.1"


def test_rbenv_itself_selects_the_global_version(host: Host) -> None:
    assert host.check_output(f"RBENV_ROOT={ROOT} {ROOT}/bin/rbenv global") == "3.1.2"
    assert host.check_output(f"RBENV_ROOT={ROOT} {ROOT}/shims/ruby -e 'print RUBY_VERSION'") == "3.1.2"
    assert host.check_output(f"git -C {ROOT} describe --tags") == "v1.1.2"
    assert host.check_output(f"git -C {ROOT}/plugins/ruby-build describe --tags") == "v20241225.2"


def test_the_root_is_shared_through_its_group(host: Host) -> None:
    root = host.file(ROOT)
    assert (root.group, root.mode) == ("rbenv", 0o2775)
    assert "rbenv" in host.user("bench").groups


def test_the_builder_compiled_ruby_and_the_other_host_only_unpacked_it(host: Host) -> None:
    m = marker(host)
    # the scenario's configure options, as the builder used them and the reuser recorded them
    scenario = yaml.safe_load((Path(__file__).resolve().parents[1] / "molecule.yml").read_text())
    wanted = scenario["provisioner"]["inventory"]["group_vars"]["all"]["ruby_rbenv_configure_opts"]
    assert "--disable-install-doc" in wanted
    assert m["options_sha256"] and m["configure_opts"] == wanted
    compilers = host.run("command -v cc gcc make")
    if name_of(host) == BUILDER:
        assert m["origin"] == "build"
        assert compilers.rc == 0
    else:
        assert m["origin"] == "archive"
        # No compiler (nor make) was ever installed on this host, so nothing can have been compiled on it.
        assert compilers.stdout == "" and compilers.rc != 0
        assert not host.package("build-essential").is_installed
        assert not host.package("libssl-dev").is_installed
        assert m["archive"].startswith("ruby-3.1.2-debian-12-") and m["archive"].endswith(".tar.gz")


def test_the_build_once_archive_holds_exactly_one_ruby() -> None:
    archive = Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "rubies"
    assert [p.name.split("-")[:4] for p in archive.iterdir()] == [["ruby", "3.1.2", "debian", "12"]]


def test_check_mode_ran_through_on_the_provisioned_host(host: Host) -> None:
    assert host.file("/var/lib/bench-stack/check-mode-ruby").exists
    if name_of(host) != BUILDER:
        assert host.file("/var/lib/bench-stack/check-mode-pyenv").exists


def test_a_deleted_ruby_executable_was_put_back_by_a_normal_rerun(host: Host) -> None:
    if name_of(host) == BUILDER:
        pytest.skip("the side effect deletes it on the host that unpacked Ruby")
    deleted_at = int(host.file("/root/bench-drift-at").content_string)
    assert host.file(f"{PREFIX}/bin/ruby").exists
    # Put back after the deletion (ctime: when the file was made here, whatever mtime the archive kept).
    assert int(host.check_output(f"stat -c %Z {PREFIX}/bin/ruby")) >= deleted_at
    assert host.check_output(f"{PREFIX}/bin/ruby -rsinatra/base -e 'print RUBY_VERSION'") == "3.1.2"
