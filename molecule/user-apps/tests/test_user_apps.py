"""Users' apps deployed by the provision playbook, checked from outside: every stack answers through its
chain, the Sinatra app runs its own locked gems (thin and puma) through `bundle exec`, the WSGI app its own
requirement and app.env, the git app the pinned commit; folders and env files have their owners and modes;
the records (and so the fingerprint) name each app's source, hash or commit and lock files.

The side effect ran before this: it edited the WSGI app (a copy in the ephemeral folder) and provisioned
again, and checked the bad inputs and which instances restarted."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from stack_contract import (  # noqa: F401  (run here, parametrized from STACKS)
    test_every_instance_answers_on_its_own,
    test_every_instance_is_an_active_unit_whose_processes_all_run_as_the_benchmark_user,
    test_every_stack_answers_through_its_front,
    test_on_a_loopback_host_every_instance_runs_on_the_stacks_cpus_only,
)
from testinfra.host import Host

from benchstack.kinds.apps.userapp import scan
from benchstack.plan.experiment import load_experiment

SCENARIO = Path(__file__).resolve().parents[1]
PROJECT = SCENARIO.parents[1]
EXPERIMENT = load_experiment(SCENARIO / "experiment.yml")
# The stacks with each app.src made absolute: the shared helpers resolve them again, without the file.
STACKS = [
    {**s, "app": {**s["app"], "src": str((SCENARIO / s["app"]["src"]).resolve())}} if "src" in s["app"] else s
    for s in EXPERIMENT.stacks
]
USER = "/opt/bench-stack/apps/user"
BUNDLE = f"{USER}/.bundle/sinatra-bundled/ruby/3.1.0/gems"


def record(host: Host, name: str) -> dict[str, Any]:
    return json.loads(host.file(f"{USER}/.records/{name}.json").content_string)


@pytest.mark.parametrize(
    ("stack", "server"), [("user-sinatra-thin-nginx", "thin"), ("user-sinatra-puma", "puma")]
)
def test_the_sinatra_app_runs_its_own_locked_server_gem_through_bundle_exec(
    host: Host, stack: str, server: str
) -> None:
    unit = f"bench-{stack}@1.service"
    assert f"path=/usr/bin/bundle ; argv[]=/usr/bin/bundle exec {server} " in host.check_output(
        "systemctl show -p ExecStart --value %s", unit
    )
    socket = "/run/bench-stack/user-sinatra-thin-nginx-1/server.sock"
    url = (
        "--unix-socket " + socket + " http://localhost/gems"
        if server == "thin"
        else "http://127.0.0.1:8062/gems"
    )
    gems = dict(line.split(" ", 1) for line in host.check_output(f"curl -sSf {url}").splitlines())
    assert gems == {
        "sinatra": f"{BUNDLE}/sinatra-3.0.5",
        "thin": f"{BUNDLE}/thin-1.8.1-x86_64-linux",
        "puma": f"{BUNDLE}/puma-5.6.5-x86_64-linux",
    }


def test_stacks_sharing_an_app_share_one_deployed_folder(host: Host) -> None:
    for stack in ("user-sinatra-thin-nginx", "user-sinatra-puma"):
        assert (
            host.check_output("systemctl show -p WorkingDirectory --value bench-%s@1.service", stack)
            == f"{USER}/sinatra-bundled"
        )


def test_an_app_folder_is_a_root_owned_release_readable_by_the_benchmark_group(host: Host) -> None:
    link = host.file(f"{USER}/sinatra-bundled")
    assert link.is_symlink
    release = host.file(link.linked_to)
    sha = scan(PROJECT / "tests" / "apps" / "sinatra-bundled").sha256
    assert release.path == f"{USER}/.releases/sinatra-bundled-{sha[:16]}"
    assert (release.user, release.group, release.mode) == ("root", "bench", 0o755)
    rb = host.file(f"{release.path}/app.rb")
    assert (rb.user, rb.group, rb.mode) == ("root", "bench", 0o644)
    # A deployment removes the app's earlier releases (the side effect deployed an edited WSGI app).
    wsgi = host.check_output(f"ls {USER}/.releases").split()
    assert [r for r in wsgi if r.startswith("user-wsgi-gunicorn-")] == [
        Path(host.file(f"{USER}/user-wsgi-gunicorn").linked_to).name
    ]


def test_app_env_reaches_the_instances_exactly_from_a_root_only_env_file(host: Host) -> None:
    env = host.file("/etc/bench-stack/units/user-wsgi-gunicorn.env")
    assert (env.user, env.group, env.mode) == ("root", "root", 0o640)
    assert 'GREETING="Hello \\"quoted\\" $HOME \\\\n"' in env.content_string
    assert host.check_output("curl -sSf http://127.0.0.1:8063/env") == 'Hello "quoted" $HOME \\n'


def test_requirements_are_installed_into_the_stacks_venv(host: Host) -> None:
    assert (
        host.check_output("/opt/bench-stack/venv/bin/python -c 'import six; print(six.__version__)'")
        == "1.17.0"
    )


def test_the_git_app_runs_the_commit_its_tag_names(host: Host) -> None:
    repo = Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "userapp.git"
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "v1.0^{commit}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    r = record(host, "user-git-wsgi")
    assert r["source"] == {
        "type": "git",
        "repo": "http://127.0.0.1:8799/git/userapp.git",
        "version": "v1.0",
        "moving_ref": False,
        "commit": commit,
    }
    assert host.file(f"{USER}/user-git-wsgi").linked_to == f"{USER}/.releases/user-git-wsgi-{commit[:16]}"


def test_records_name_the_source_its_hash_and_the_lock_files(host: Host) -> None:
    app = PROJECT / "tests" / "apps" / "sinatra-bundled"
    r = record(host, "sinatra-bundled")
    assert r["source"]["type"] == "src" and r["source"]["path"] == str(app)
    assert r["source"]["sha256"] == scan(app).sha256
    assert r["stacks"] == ["user-sinatra-thin-nginx", "user-sinatra-puma"]
    assert r["lock_sha256"] == {"Gemfile.lock": scan(app).lock_sha256["Gemfile.lock"]}
    edited = record(host, "user-wsgi-gunicorn")
    assert edited["source"]["path"].endswith("/wsgi-edited")
    assert edited["source"]["sha256"] != scan(PROJECT / "tests" / "apps" / "wsgi-requirements").sha256
    assert set(edited["lock_sha256"]) == {"requirements.txt"}


def test_the_fingerprint_holds_every_apps_record(host: Host) -> None:
    apps = json.loads(host.file("/var/lib/bench-stack/mol-fingerprint-apps.json").content_string)
    assert sorted(a["name"] for a in apps) == ["sinatra-bundled", "user-git-wsgi", "user-wsgi-gunicorn"]
    assert apps == [record(host, a["name"]) for a in apps]


# What another program put under bench-stack's roots (prepare.yml), named as bench-stack names its own.
THEIRS = {
    "/opt/bench-stack/apps/php/index.php": "<?php echo 'not bench-stack'; ?>\n",
    "/etc/bench-stack/units/theirs.env": "THEIRS=1\n",
    "/srv/theirs/app.py": "# not bench-stack\n",
}


def test_provisioning_left_what_bench_stack_did_not_make_under_its_roots(host: Host) -> None:
    for path, content in THEIRS.items():
        assert host.file(path).content_string == content, path
    assert host.file(f"{USER}/theirs").linked_to == "/srv/theirs"
    made = json.loads(host.file("/var/lib/bench-stack/made.json").content_string)
    # The record of what bench-stack made names its own (the users' apps, the stacks' env files), not theirs.
    assert f"{USER}/sinatra-bundled" in made["paths"]
    assert "/etc/bench-stack/units/user-wsgi-gunicorn.env" in made["paths"]
    assert not {"/opt/bench-stack/apps/php", f"{USER}/theirs", "/etc/bench-stack/units/theirs.env"} & set(
        made["paths"]
    )
    assert made["users"] == ["bench"] and made["groups"] == ["bench"]


def test_the_refused_existing_account_and_group_are_as_they_were(host: Host) -> None:
    # The side effect ran provisioning with -e host_user=backup -e webapp_group=users: refused, unchanged.
    assert host.check_output("getent passwd backup") == "backup:x:34:34:backup:/var/backups:/usr/sbin/nologin"
    assert host.check_output("getent group users") == "users:x:100:"
