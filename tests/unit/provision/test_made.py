"""bench-stack changes only what it made (issue 44, item 2): the host's record of what it made
(benchstack.provision.made) decides what the sweep removes, what the plan may write into, and which accounts
and groups the host role may change (benchstack.provision.accounts); a host provisioned before that record
keeps what its provisioning record proves. The host side runs on this machine (its accounts: root, daemon,
backup, users are Debian's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ansible.errors import AnsibleActionFail
from test_decision_facts import decision

from benchstack.provision import accounts, hostcommand, hostrecord, made, sweep

ROOTS = {"apps": "/srv/b/apps", "units": "/etc/b/units"}
OWNED: dict[str, Any] = {
    "roots": ROOTS,
    "app_server": ["/etc/b/units/web.env", "/etc/b/units/web-1.puma.rb", "/etc/b/units/web-2.puma.rb"],
    "app": {"kinds": ["sinatra"], "user_apps": ["mine"], "dirs": ["/srv/b/apps/sinatra"]},
}
RELEASE = "0123456789abcdef"


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("/etc/b/units/web.env", "/etc/b/units/web.env"),
        ("/etc/b/units/web-2.puma.rb", "/etc/b/units/web.env"),
        ("/etc/b/units/web-x2-12.unicorn.rb", "/etc/b/units/web-x2.env"),
        ("/etc/b/units/web-1.env", "/etc/b/units/web-1.env"),
        ("/srv/b/apps/php", "/srv/b/apps/php"),
        ("/srv/b/apps/php/index.php", "/srv/b/apps/php"),
        ("/srv/b/apps/user/mine", "/srv/b/apps/user/mine"),
        (f"/srv/b/apps/user/.releases/mine-{RELEASE}/app.py", "/srv/b/apps/user/mine"),
        ("/srv/b/apps/user/.records/mine.json", "/srv/b/apps/user/mine"),
        ("/srv/b/apps/user/.git/mine.git", "/srv/b/apps/user/mine"),
        ("/srv/b/apps/notes", None),
        ("/etc/b/units/README", None),
        ("/etc/b/units/web.env/x", None),
        ("/srv/other/php", None),
    ],
)
def test_every_path_bench_stack_writes_under_its_roots_has_one_key(path: str, key: str | None) -> None:
    assert sweep.path_key(path, ROOTS) == key


def test_the_plan_names_the_keys_it_makes_for_the_roles_a_host_runs() -> None:
    assert made.planned_keys(OWNED, ["host", "webapp", "app_server"]) == [
        "/etc/b/units/web.env",
        "/srv/b/apps/sinatra",
        "/srv/b/apps/user/mine",
    ]
    assert made.planned_keys(OWNED, ["host", "loadgen"]) == []


def test_keys_are_recorded_before_they_are_made_and_dropped_once_nothing_of_them_is_left() -> None:
    ours = {**made.empty(), "paths": ["/srv/b/apps/php", "/etc/b/units/gone.env"], "users": ["bench"]}
    existing = made.existing_keys(["/srv/b/apps/php", "/srv/b/apps/sinatra", "/srv/b/apps/psgi"], ROOTS)
    planned = made.planned_keys(OWNED, ["webapp", "app_server"])
    after = made.after(ours, existing, planned, groups=["bench"])
    assert after == {
        "schema": made.SCHEMA,
        # php: still there; gone.env: nothing left of it; sinatra: planned but there already (not ours).
        "paths": ["/etc/b/units/web.env", "/srv/b/apps/php", "/srv/b/apps/user/mine"],
        "users": ["bench"],
        "groups": ["bench"],
    }
    # The plan would write into the sinatra folder someone else made: refused (bench_provision_state).
    assert made.foreign_planned(planned, existing, after) == ["/srv/b/apps/sinatra"]
    # Roots not looked at (None): what is recorded stays.
    assert made.after(ours, None, [])["paths"] == sorted(ours["paths"])


def test_a_host_provisioned_before_the_record_keeps_what_its_provisioning_record_proves() -> None:
    record = {
        "schema": hostrecord.SCHEMA,
        "roles": {
            "host": {"hash": "h", "made": {"files": ["/etc/sysctl.d/60-bench-stack.conf"]}},
            "app_server": {"hash": "h", "made": {"files": ["/etc/systemd/system/bench-web@.service"]}},
            "webapp": {
                "hash": "h",
                "made": {
                    "files": [
                        "/srv/b/apps/sinatra/config.ru",
                        "/srv/b/apps/static/index.html",
                        "/srv/b/apps/user/.records/mine.json",
                        "/etc/b/units/web.env",
                    ]
                },
            },
        },
    }
    assert made.migrated(record, ROOTS, True) == {
        "schema": made.SCHEMA,
        "paths": [
            "/etc/b/units/web.env",
            "/srv/b/apps/sinatra",
            "/srv/b/apps/static",
            "/srv/b/apps/user/mine",
        ],
        # Every earlier bench-stack made the host role's default account on each host it provisioned.
        "users": ["bench"],
        "groups": ["bench"],
    }
    # No provisioning record (or no host role in it): nothing is proven.
    assert made.migrated({}, ROOTS, True) == made.empty()
    assert made.migrated({"roles": {"webapp": record["roles"]["webapp"]}}, None, True) == made.empty()
    assert made.parse({"schema": "other"}) is None and made.parse(None) is None
    parsed = made.parse({"schema": made.SCHEMA, "paths": ["/b", "/a"]})
    assert parsed == {**made.empty(), "paths": ["/a", "/b"]}


# ---------------------------------------------------------------- accounts

WANTED = {"host_user": "bench", "host_group": "bench", "app_server_group": "bench", "webapp_group": "bench"}
NONE: dict[str, Any] = {"users": {"bench": None}, "groups": {"bench": None}}
SYSTEM = {"users": {"bench": {"uid": 998, "gid": 998, "home": "/x"}}, "groups": {"bench": {"gid": 998}}}


def test_an_account_that_does_not_exist_is_bench_stacks_to_create_and_recorded() -> None:
    verdict = accounts.check(WANTED, NONE, made.empty(), adopt=False)
    assert verdict == accounts.Verdict(problems=[], users=["bench"], groups=["bench"])
    # Made by bench-stack (a system account: bench-stack makes it one): used as it is, nothing to record.
    ours = {**made.empty(), "users": ["bench"], "groups": ["bench"]}
    assert accounts.check(WANTED, SYSTEM, ours, adopt=False) == accounts.Verdict()


def test_an_existing_system_account_is_refused_whatever_the_adopt_flag_says() -> None:
    found = {"users": {"backup": {"uid": 34, "gid": 34, "home": "/var/backups"}}, "groups": {}}
    for adopt in (False, True):
        verdict = accounts.check({"host_user": "backup"}, found, made.empty(), adopt)
        assert verdict.problems == [
            "host_user: 'backup' is an existing system account (uid 34) that bench-stack did not create, and "
            "bench-stack would change its group, home, shell and password: choose another name (bench-stack "
            "creates it)"
        ]
        assert verdict.users == []


def test_an_existing_regular_account_is_refused_unless_adopted_then_recorded() -> None:
    found = {"users": {"alice": {"uid": 1001, "gid": 1001, "home": "/home/alice"}}, "groups": {}}
    refused = accounts.check({"host_user": "alice"}, found, made.empty(), adopt=False)
    assert refused.problems == [
        "host_user: 'alice' is an existing account (uid 1001) that bench-stack did not create: choose "
        "another name (bench-stack creates it), or set host_adopt_user: true to let bench-stack use and "
        "change it"
    ]
    adopted = accounts.check({"host_user": "alice"}, found, made.empty(), adopt=True)
    assert adopted == accounts.Verdict(users=["alice"])


def test_the_runtimes_users_are_checked_as_the_benchmark_user_is() -> None:
    # The ruby and python roles add them to the rbenv and pyenv groups, creating those that do not exist.
    found = {
        "users": {"bench": None, "backup": {"uid": 34, "gid": 34, "home": "/var/backups"}, "new": None},
        "groups": {},
    }
    wanted = {"host_user": "bench", "ruby_rbenv_users": ["bench", "backup"], "python_pyenv_users": ["new"]}
    verdict = accounts.check(wanted, found, made.empty(), adopt=True)
    assert verdict.problems == [
        "ruby_rbenv_users: 'backup' is an existing system account (uid 34) that bench-stack did not create, "
        "and bench-stack would change its groups (it joins the rbenv group): choose another name "
        "(bench-stack creates it)"
    ]
    assert verdict.users == ["bench", "new"]
    assert accounts.names(wanted) == {"users": ["bench", "backup", "new"], "groups": []}


def test_an_earlier_bench_stacks_account_of_another_name_is_known_by_its_home() -> None:
    # -e host_user=mybench with an earlier bench-stack: a system account whose home is bench-stack's.
    found = {
        "users": {
            "mybench": {"uid": 997, "gid": 996, "home": "/var/lib/bench-stack/home"},
            "backup": {"uid": 34, "gid": 34, "home": "/var/backups"},
        },
        "groups": {"mybench": {"gid": 996}, "users": {"gid": 100}},
    }
    assert accounts.proven(found) == {"users": ["mybench"], "groups": ["mybench"]}
    ours = made.migrated({}, ROOTS, True, accounts.proven(found))
    wanted = {"host_user": "mybench", "host_group": "mybench"}
    assert accounts.check(wanted, found, ours, adopt=False) == accounts.Verdict()
    assert accounts.check({"host_user": "backup"}, found, ours, adopt=False).problems != []


def test_privileged_and_system_groups_are_refused_for_every_group_variable() -> None:
    found = {"users": {}, "groups": {"users": {"gid": 100}, "staff2": {"gid": 1500}}}
    wanted = {"host_group": "sudo", "app_server_group": "users", "webapp_group": "staff2"}
    verdict = accounts.check(wanted, found, made.empty(), adopt=False)
    assert verdict.problems == [
        "host_group: 'sudo' is a privileged group: choose another name",
        "app_server_group: 'users' is an existing system group (gid 100) that bench-stack did not create, "
        "whose rights would reach the benchmark's processes: choose another name",
        "webapp_group: 'staff2' is an existing group (gid 1500) that bench-stack did not create: choose "
        "another name, or set host_adopt_user: true to let bench-stack use and change it",
    ]
    adopted = accounts.check(wanted, found, made.empty(), adopt=True)
    assert len(adopted.problems) == 2 and adopted.groups == ["staff2"]


# ---------------------------------------------------------------- the decision, on this machine


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This machine as the host: its records in the test's folder, roots below it."""
    monkeypatch.setattr(hostrecord, "MARKER", str(tmp_path / "provisioned.json"))
    monkeypatch.setattr(made, "PATH", str(tmp_path / "made.json"))
    for folder in ("apps", "units"):
        (tmp_path / folder).mkdir()
    return tmp_path


def decide(host: Path, **args: Any) -> tuple[dict[str, Any], list[str]]:
    """bench_provision_state as provision.yml runs it on a host running the host and webapp roles."""
    roots = {"apps": str(host / "apps"), "units": str(host / "units")}
    owned = {"roots": roots, "app_server": [], "app": {"kinds": ["sinatra"], "user_apps": [], "dirs": []}}
    given = {"roles": ["host", "webapp"], "units": {}, "hashes": {"host": "h", "webapp": "h"}, "owned": owned}
    action = decision({"ansible_run_tags": ["all"]}, **{**given, **args})
    result = action.run(task_vars={"ansible_run_tags": ["all"], "inventory_hostname": "box"})
    return result, action.commands


def test_the_decision_leaves_another_programs_folder_and_records_what_the_roles_will_make(host: Path) -> None:
    (host / "apps" / "php").mkdir()
    (host / "apps" / "php" / "index.php").write_text("theirs", encoding="utf-8")
    result, commands = decide(host, accounts={"host_user": "bench-stack-test-user"})
    stale = result["ansible_facts"]["bench_provision"]["stale"]
    assert stale == {"units": [], "files": [], "foreign": [str(host / "apps" / "php")]}
    assert result["msg"].endswith(f"; not made by bench-stack, left alone: {host / 'apps' / 'php'}")
    # Recorded before the roles run: the sinatra folder and the user they will make.
    assert json.loads((host / "made.json").read_text(encoding="utf-8")) == {
        "schema": made.SCHEMA,
        "paths": [str(host / "apps" / "sinatra")],
        "users": ["bench-stack-test-user"],
        "groups": [],
    }
    assert len(commands) == 2
    # Made now: the next decision sweeps it when no stack runs its kind; the php folder stays.
    (host / "apps" / "sinatra").mkdir()
    result, commands = decide(host, owned={"roots": stale_roots(host), "app": {"kinds": []}})
    stale = result["ansible_facts"]["bench_provision"]["stale"]
    assert stale["files"] == [str(host / "apps" / "sinatra")]
    assert stale["foreign"] == [str(host / "apps" / "php")]


def stale_roots(host: Path) -> dict[str, str]:
    return {"apps": str(host / "apps"), "units": str(host / "units")}


def test_the_decision_refuses_a_folder_it_would_write_into_and_accounts_it_did_not_make(host: Path) -> None:
    (host / "apps" / "sinatra").mkdir()
    wanted = {"host_user": "daemon", "host_group": "users", "app_server_group": "users"}
    with pytest.raises(AnsibleActionFail) as err:
        decide(host, accounts=wanted, adopt_user=True)
    lines = str(err.value).splitlines()
    assert lines == [
        f"bench_provision_state: box: {host / 'apps' / 'sinatra'}: exists and bench-stack did not make it "
        f"(its record {made.PATH} does not name it): the plan would write into it; move it away, or choose "
        "another bench_app_root or bench_unit_config_dir",
        "bench_provision_state: box: host_user: 'daemon' is an existing system account (uid 1) that "
        "bench-stack did not create, and bench-stack would change its group, home, shell and password: "
        "choose another name (bench-stack creates it)",
        "bench_provision_state: box: host_group: 'users' is an existing system group (gid 100) that "
        "bench-stack did not create, whose rights would reach the benchmark's processes: choose another name",
        "bench_provision_state: box: app_server_group: 'users' is an existing system group (gid 100) that "
        "bench-stack did not create, whose rights would reach the benchmark's processes: choose another name",
    ]
    assert not (host / "made.json").exists()  # nothing recorded, nothing changed


def test_the_read_command_asks_for_the_record_and_the_accounts() -> None:
    request = hostcommand.read_request([], ROOTS, None, {"users": ["bench"], "groups": ["bench"]})
    assert request["made"] == made.PATH and request["accounts"] == {"users": ["bench"], "groups": ["bench"]}


def test_a_host_that_does_not_answer_is_not_recorded_nor_taken_for_one_without_accounts(host: Path) -> None:
    roots = stale_roots(host)
    owned = {"roots": roots, "app_server": [], "app": {"kinds": ["sinatra"], "user_apps": [], "dirs": []}}
    given = {"roles": ["host", "webapp"], "units": {}, "hashes": {"host": "h", "webapp": "h"}, "owned": owned}
    task_vars = {"ansible_run_tags": ["all"], "inventory_hostname": "box"}
    for accounts_given in ({}, {"accounts": {"host_user": "bench", "host_group": "bench"}}):
        action = decision({"ansible_run_tags": ["all"]}, **given, **accounts_given)
        commands: list[str] = []

        def silent(command: str, sent: list[str] = commands) -> dict[str, Any]:
            sent.append(command)
            return {"rc": 0, "stdout": "", "stderr": ""}

        action._low_level_execute_command = silent
        if not accounts_given:
            action.run(task_vars=task_vars)
            assert len(commands) == 1  # read, nothing written over a record it did not see
        else:
            with pytest.raises(AnsibleActionFail, match="cannot read the accounts bench on the host"):
                action.run(task_vars=task_vars)
