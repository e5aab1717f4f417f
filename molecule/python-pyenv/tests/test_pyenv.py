"""Python the pyenv way, offline, checked from outside: the stacks answer through nginx and directly from
gunicorn processes of the pyenv CPython 3.11.2 (through the venv made from it) run by the benchmark user; the
first host compiled that Python from the given tarball, the second unpacked it from the build-once archive and
has no compiler; the host fingerprint names the built Python."""

import json
import os
from pathlib import Path

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

SCENARIO = Path(__file__).resolve().parents[1]
STACKS = load_experiment(SCENARIO / "experiment.yml").stacks
GROUP_VARS = yaml.safe_load((SCENARIO / "molecule.yml").read_text())["provisioner"]["inventory"][
    "group_vars"
]["all"]
ROOT = "/opt/pyenv"
PREFIX = f"{ROOT}/versions/3.11.2"
VENV = "/opt/bench-stack/venv"
BUILDER = "bench-mol-pyenv-build"


def name_of(host: Host) -> str:
    return host.ansible.get_variables()["inventory_hostname"]


def marker(host: Host) -> dict:
    return json.loads(host.file("/var/lib/bench-stack/python-pyenv/python-3.11.2.json").content_string)


# `endpoint` is parametrized from STACKS by stack_contract's pytest_generate_tests (see conftest.py).
def test_each_server_process_is_the_pyenv_python_through_the_venv(host: Host, endpoint: dict) -> None:
    pid = main_pid(host, endpoint["unit"])
    # The process's own user may read its exe link (root would need CAP_SYS_PTRACE in the container).
    assert host.check_output("runuser -u bench -- readlink /proc/%s/exe", pid) == f"{PREFIX}/bin/python3.11"
    exec_start = host.check_output("systemctl show -p ExecStart --value %s", endpoint["unit"])
    assert f"path={VENV}/bin/gunicorn" in exec_start


def test_the_venv_is_made_from_the_pyenv_python_with_its_stdlib_modules(host: Host) -> None:
    out = host.check_output(
        "runuser -u bench -- %s/bin/python -c %s",
        VENV,
        "import sys, ssl, sqlite3, lzma, bz2, ctypes, readline, gunicorn; "
        "print(sys.base_prefix, sys.version.split()[0], gunicorn.__version__)",
    )
    assert out == f"{PREFIX} 3.11.2 23.0.0"


def test_the_python_was_built_with_the_scenarios_configure_options(host: Host) -> None:
    """Also on the host that only unpacked it: the archive holds the builder's Python, options and all."""
    wanted = GROUP_VARS["python_pyenv_configure_opts"]
    assert wanted == "OPT=-O1 --disable-test-modules"
    config_args = host.check_output(
        "%s/bin/python3 -c %s", PREFIX, "import sysconfig; print(sysconfig.get_config_var('CONFIG_ARGS'))"
    )
    for arg in ("'OPT=-O1'", "'--disable-test-modules'", f"'--prefix={PREFIX}'"):
        assert arg in config_args, config_args


def test_pyenv_itself_selects_the_global_version(host: Host) -> None:
    assert host.check_output(f"PYENV_ROOT={ROOT} {ROOT}/bin/pyenv global") == "3.11.2"
    shim = f"PYENV_ROOT={ROOT} {ROOT}/shims/python3"
    assert host.check_output(f"{shim} -c 'import sys; print(sys.prefix)'") == PREFIX
    assert host.check_output(f"git -C {ROOT} describe --tags") == "v2.8.1"


def test_the_root_is_shared_through_its_group(host: Host) -> None:
    root = host.file(ROOT)
    assert (root.group, root.mode) == ("pyenv", 0o2775)
    assert "pyenv" in host.user("bench").groups


def test_the_builder_built_from_the_given_tarball_through_pyenvs_own_definition(host: Host) -> None:
    definition = host.file("/var/lib/bench-stack/python-pyenv-definitions/3.11.2")
    if name_of(host) != BUILDER:
        assert not definition.exists
        return
    tarball = GROUP_VARS["python_pyenv_tarballs"]["3.11.2"]
    text = definition.content_string
    url = f'"http://127.0.0.1:8799/python/Python-3.11.2.tgz#{tarball["sha256"]}"'
    # both branches of the stock definition (.tar.xz when tar has xz, else .tgz) now name the given tarball,
    # and the stock build steps stay
    assert text.count(url) == 2
    assert "python.org" not in text
    assert "standard verify_py311 copy_python_gdb ensurepip" in text


def test_the_builder_compiled_python_and_the_other_host_only_unpacked_it(host: Host) -> None:
    m = marker(host)
    assert m["options_sha256"] and m["configure_opts"] == GROUP_VARS["python_pyenv_configure_opts"]
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
        assert m["archive"].startswith("python-3.11.2-debian-12-") and m["archive"].endswith(".tar.gz")


def test_the_build_once_archive_holds_exactly_one_python() -> None:
    archive = Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "pythons"
    assert [p.name.split("-")[:4] for p in archive.iterdir()] == [["python", "3.11.2", "debian", "12"]]


def test_the_fingerprint_names_the_built_python(host: Host) -> None:
    fingerprint = json.loads(host.file("/var/lib/bench-stack/test-fingerprint.json").content_string)
    assert fingerprint["runtimes"] == {"python-3.11.2": marker(host)}
    assert fingerprint["runtimes"]["python-3.11.2"]["version"] == "3.11.2"
