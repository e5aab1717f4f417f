"""Units of stacks no longer in the plan (benchstack.provision.sweep.stale,
benchstack.provision.hoststate.found): what bench-stack made for a stack the plan does not name is found in
the command that reads the provisioning record, and provisioning stops, disables and removes it before the app
servers and fronts are set up; run.json keeps it (swept)."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import schema_file_errors

from benchstack.plan.resolved import compile_plan
from benchstack.provision import hostcommand, hoststate, sweep

PLANNED = [
    "bench-kept@1.service",
    "bench-kept@2.service",
    "apache2@bench-web.service",
    "nginx.service",
]
FOUND: dict[str, Any] = {
    "units": {
        "bench-kept@1.service": "enabled active",
        "bench-kept@2.service": "enabled active",
        # an instance beyond the kept stack's count (it was lowered)
        "bench-kept@3.service": "enabled active",
        "bench-gone@1.service": "enabled active",
        # crash-looping: waits to restart
        "bench-gone@2.service": "disabled activating",
        # stopped and disabled already (a failed one stays listed): nothing runs
        "bench-gone@3.service": "disabled failed",
        "bench-gone@4.service": "disabled inactive",
        # enabled, not running now: starts at the next boot
        "bench-old@1.service": "enabled inactive",
        "apache2@bench-web.service": "enabled active",
        "apache2@bench-php.service": "enabled active",
        "httpd@bench-rh.service": "disabled active",
        "nginx.service": "enabled active",
    },
    "files": [
        "/etc/apache2-bench-php",
        "/etc/apache2-bench-web",
        "/etc/default/apache-htcacheclean-bench-php",
        "/etc/default/apache-htcacheclean-bench-web",
        "/etc/httpd/conf/bench-rh.conf",
        "/etc/httpd/conf/bench-rh.vhost.conf",
        "/etc/httpd/conf/bench-web.conf",
        "/etc/httpd/conf/bench-web.vhost.conf",
        "/etc/nginx/conf.d/bench-stack.conf",
        "/etc/systemd/system/bench-gone@.service",
        "/etc/systemd/system/bench-kept@.service",
        "/etc/systemd/system/nginx.service.d/bench-stack-cpus.conf",
        "/usr/local/sbin/a2enmod-bench-php",
        "/usr/local/sbin/apache2ctl-bench-php",
        "/usr/local/sbin/apache2ctl-bench-web",
        "/var/log/apache2-bench-php",
        "/var/log/apache2-bench-web",
    ],
}


def test_units_no_stack_of_the_plan_owns_are_stale_when_they_run_or_start_at_boot() -> None:
    stale = sweep.stale(FOUND, PLANNED, nginx_planned=True)
    assert stale["units"] == [
        "apache2@bench-php.service",
        "bench-gone@1.service",
        "bench-gone@2.service",
        "bench-kept@3.service",
        "bench-old@1.service",
        "httpd@bench-rh.service",
    ]


def test_front_configs_and_template_units_of_dropped_stacks_are_stale_the_plans_are_kept() -> None:
    stale = sweep.stale(FOUND, PLANNED, nginx_planned=True)
    # Debian's setup-instance refuses to make an instance again while any of its files is left.
    assert stale["files"] == [
        "/etc/apache2-bench-php",
        "/etc/default/apache-htcacheclean-bench-php",
        "/etc/httpd/conf/bench-rh.conf",
        "/etc/httpd/conf/bench-rh.vhost.conf",
        "/etc/systemd/system/bench-gone@.service",
        "/usr/local/sbin/a2enmod-bench-php",
        "/usr/local/sbin/apache2ctl-bench-php",
        "/var/log/apache2-bench-php",
    ]


def test_nginx_and_its_server_blocks_are_stale_only_when_no_stack_of_the_plan_is_behind_nginx() -> None:
    planned = [u for u in PLANNED if u != "nginx.service"]
    stale = sweep.stale(FOUND, planned, nginx_planned=False)
    assert "nginx.service" in stale["units"]
    assert {
        "/etc/nginx/conf.d/bench-stack.conf",
        "/etc/systemd/system/nginx.service.d/bench-stack-cpus.conf",
    } <= set(stale["files"])
    assert "nginx.service" not in sweep.stale(FOUND, PLANNED, nginx_planned=True)["units"]


def test_a_host_with_only_the_plans_stacks_has_nothing_stale() -> None:
    found = {
        "units": {u: "enabled active" for u in PLANNED},
        "files": [
            "/etc/apache2-bench-web",
            "/etc/nginx/conf.d/bench-stack.conf",
            "/etc/systemd/system/bench-kept@.service",
        ],
    }
    nothing = {"units": [], "files": [], "foreign": []}
    assert sweep.stale(found, PLANNED, nginx_planned=True) == nothing
    assert sweep.stale({}, PLANNED, nginx_planned=True) == nothing


def test_fluentd_is_stopped_by_a_run_that_ships_no_access_logs_and_kept_by_one_that_does() -> None:
    assert "bench-fluentd.service" in hoststate.STACK_UNITS  # found on the host as the stacks' units are
    found = {"units": {"bench-fluentd.service": "enabled active"}}
    assert sweep.stale(found, PLANNED, nginx_planned=True)["units"] == ["bench-fluentd.service"]
    shipping = [*PLANNED, "bench-fluentd.service"]
    assert sweep.stale(found, shipping, nginx_planned=True)["units"] == []


def test_a_loadgen_only_host_stops_every_stack_it_once_ran_as_a_target() -> None:
    stale = sweep.stale(FOUND, [], nginx_planned=False)
    running = [
        u
        for u, s in FOUND["units"].items()
        if s.split()[1] in ("active", "activating") or s.startswith("enabled")
    ]
    assert sorted(stale["units"]) == sorted(running)
    assert stale["files"] == FOUND["files"]


def test_found_lists_the_stack_units_systemd_has_loaded_with_their_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    listed = (
        "bench-a@1.service loaded active running bench-stack a: thin instance 1\n"
        "\u25cf bench-b@1.service loaded failed failed bench-stack b: thin instance 1\n"
        "apache2@bench-c.service loaded active running The Apache HTTP Server\n"
    )
    shown = (
        "Id=apache2@bench-c.service\nActiveState=active\nUnitFileState=enabled\n\n"
        "Id=bench-a@1.service\nActiveState=active\nUnitFileState=enabled\n\n"
        "Id=bench-b@1.service\nActiveState=failed\nUnitFileState=disabled\n\n"
        "Id=nginx.service\nActiveState=active\nUnitFileState=enabled\n"
    )
    calls: list[list[str]] = []

    def out(argv: list[str]) -> str:
        calls.append(argv)
        return listed if argv[1] == "list-units" else shown

    existing = {"/etc/nginx/conf.d/bench-stack.conf", "/etc/apache2-bench-c"}
    monkeypatch.setattr(hoststate, "_out", out)
    monkeypatch.setattr(
        hoststate.glob,
        "glob",
        lambda pattern: (
            [p for p in existing if p.startswith(pattern.split("*")[0])]
            if "*" in pattern
            else [p for p in existing if p == pattern]
        ),
    )
    found = hoststate.found()
    assert found == {
        "units": {
            "apache2@bench-c.service": "enabled active",
            "bench-a@1.service": "enabled active",
            "bench-b@1.service": "disabled failed",
            "nginx.service": "enabled active",
        },
        "files": ["/etc/apache2-bench-c", "/etc/nginx/conf.d/bench-stack.conf"],
        "paths": [],
    }
    assert calls[0][-len(hoststate.STACK_UNITS) :] == list(hoststate.STACK_UNITS) and len(calls) == 2


def test_the_read_command_finds_them_in_the_same_command_and_parses_back() -> None:
    command = hostcommand.read_command(["nginx.service"], "/usr/bin/python3")
    # One Python on the host for the state of what the roles made and what any stack left.
    assert command.count("/usr/bin/python3 -c") == 1 and hostcommand.FOUND_SEPARATOR in command
    state = {"nginx": {"file /etc/nginx/nginx.conf": "cc"}}
    stdout = "\n".join(
        [
            "",
            hostcommand.SEPARATOR,
            "active",
            hostcommand.STATE_SEPARATOR,
            json.dumps(state),
            hostcommand.FOUND_SEPARATOR,
            json.dumps(FOUND),
        ]
    )
    assert hostcommand.parse_now(stdout) == state
    assert hostcommand.parse_found(stdout) == FOUND
    assert hostcommand.parse_read(stdout, ["nginx.service"])[1] == {"nginx.service": True}
    assert hostcommand.parse_found(f"{hostcommand.FOUND_SEPARATOR}\nTraceback") == {}
    assert hostcommand.parse_found("no separator") == {}


def test_the_host_side_still_runs_on_the_oldest_python_the_hosts_have() -> None:
    ast.parse(hostcommand.HOSTSTATE.read_text(encoding="utf-8"), feature_version=(3, 6))


def test_run_json_keeps_what_was_swept_and_what_still_runs() -> None:
    data = {
        "schema": "bench-stack/run/v3",
        "hosts_match_plan": {"t": {"matches": False, "differs": {}, "stale": ["bench-gone@1.service"]}},
        "swept": {
            "t": {
                "units": ["bench-gone@1.service"],
                "files": ["/etc/apache2-bench-php"],
                "foreign": ["/x/php"],
            },
            "l": None,
        },
    }
    assert schema_file_errors("run.schema.json", data) == []
    bad = {**data, "swept": {"t": {"units": "bench-gone@1.service"}}}
    assert schema_file_errors("run.schema.json", bad) != []
    bad = {**data, "swept": {"t": {"units": [], "files": [], "foreign": "/x/php"}}}
    assert schema_file_errors("run.schema.json", bad) != []


def test_the_host_side_answers_both_in_one_python_and_they_parse_back(tmp_path: Path) -> None:
    command = hostcommand.hoststate_command("python3", {"marker": str(tmp_path / "none.json"), "found": True})
    stdout = subprocess.run(["sh", "-c", command], check=True, capture_output=True, text=True).stdout
    assert hostcommand.parse_now(stdout) == {}
    found = hostcommand.parse_found(stdout)
    assert set(found) == {"units", "files", "paths"} and isinstance(found["units"], dict)
    # Asked for, the record of what bench-stack made (none here) and the accounts' ids.
    request = {"marker": "/none", "found": True, "made": str(tmp_path / "made.json"), "accounts": ACCOUNTS}
    stdout = subprocess.run(
        ["sh", "-c", hostcommand.hoststate_command("python3", request)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found = hostcommand.parse_found(stdout)
    assert found["made"] is None
    assert found["accounts"]["users"]["root"] == {"uid": 0, "gid": 0, "home": "/root"}
    assert found["accounts"]["users"]["bench-stack-no-such-user"] is None
    assert found["accounts"]["groups"] == {"root": {"gid": 0}, "bench-stack-no-such-group": None}


ACCOUNTS = {"users": ["root", "bench-stack-no-such-user"], "groups": ["root", "bench-stack-no-such-group"]}

# ---------------------------------------------------------------- env files and app folders

ROOTS = {"apps": "/opt/bench-stack/apps", "units": "/etc/bench-stack/units"}
UNITS, APPS, USER = ROOTS["units"], ROOTS["apps"], ROOTS["apps"] + "/user"
OWNED: dict[str, Any] = {
    "roots": ROOTS,
    "app_server": [f"{UNITS}/kept.env", f"{UNITS}/kept-1.puma.rb", f"{UNITS}/kept-2.puma.rb"],
    "app": {
        "kinds": ["sinatra"],
        "user_apps": ["mine"],
        # a stack serving a folder of its own below the apps root, one holding the static kind's folder
        "dirs": [f"{APPS}/sinatra", f"{USER}/mine", "/srv/own-app", f"{APPS}/static/site"],
    },
}
RELEASE = "0123456789abcdef"
PATHS = [
    f"{UNITS}/kept.env",
    f"{UNITS}/kept-1.puma.rb",
    f"{UNITS}/kept-2.puma.rb",
    # an instance beyond the kept stack's count (it was lowered)
    f"{UNITS}/kept-3.puma.rb",
    f"{UNITS}/gone.env",
    f"{UNITS}/gone-1.php-fpm.conf",
    f"{UNITS}/gone-x2-12.unicorn.rb",
    f"{APPS}/sinatra",
    f"{APPS}/php",
    f"{APPS}/static",
    f"{USER}/mine",
    f"{USER}/.releases/mine-{RELEASE}",
    f"{USER}/.records/mine.json",
    f"{USER}/.bundle/mine",
    f"{USER}/old",
    f"{USER}/.releases/old-{RELEASE}",
    f"{USER}/.releases/old-fedcba9876543210.partial",
    f"{USER}/.records/old.json",
    f"{USER}/.bundle/old",
    f"{USER}/.git/old.git",
    # names bench-stack gives, made by someone else (the record of what bench-stack made does not name them)
    f"{APPS}/psgi",
    f"{UNITS}/theirs.env",
    f"{UNITS}/theirs-1.puma.rb",
    f"{USER}/theirs",
    # names bench-stack never gives: someone else's
    f"{UNITS}/notes.env.txt",
    f"{USER}/.releases/old-backup",
    f"{USER}/.git/old",
]
DROPPED = [
    f"{UNITS}/gone-1.php-fpm.conf",
    f"{UNITS}/gone-x2-12.unicorn.rb",
    f"{UNITS}/gone.env",
    f"{UNITS}/kept-3.puma.rb",
    f"{APPS}/php",
    f"{USER}/.bundle/old",
    f"{USER}/.git/old.git",
    f"{USER}/.records/old.json",
    f"{USER}/.releases/old-{RELEASE}",
    f"{USER}/.releases/old-fedcba9876543210.partial",
    f"{USER}/old",
]


FOREIGN = sorted([f"{APPS}/psgi", f"{UNITS}/theirs-1.puma.rb", f"{UNITS}/theirs.env", f"{USER}/theirs"])
# What the host's record of what bench-stack made names (benchstack.provision.made): every stack, kind and
# user app of PATHS but the foreign ones.
MADE: dict[str, Any] = {
    "schema": "bench-stack/made/v1",
    "paths": [
        f"{UNITS}/kept.env",
        f"{UNITS}/gone.env",
        f"{UNITS}/gone-x2.env",
        f"{APPS}/sinatra",
        f"{APPS}/php",
        f"{APPS}/static",
        f"{USER}/mine",
        f"{USER}/old",
    ],
    "users": [],
    "groups": [],
}


def test_a_dropped_stacks_env_file_configs_and_app_folders_go_the_plans_stay() -> None:
    stale = sweep.stale({"paths": PATHS}, PLANNED, True, OWNED, ["webapp", "app_server"], MADE)
    assert stale == {"units": [], "files": DROPPED, "foreign": FOREIGN}


def test_what_bench_stack_did_not_make_is_left_alone_and_named_whatever_its_name() -> None:
    # The case: -e bench_app_root=/var/www, where php and psgi folders hold another program's files.
    owned = {**OWNED, "roots": {**ROOTS, "apps": "/var/www"}, "app": {"kinds": ["sinatra"]}}
    found = {"paths": ["/var/www/php", "/var/www/psgi", "/var/www/sinatra"]}
    stale = sweep.stale(found, [], False, owned, ["webapp"], MADE)
    assert stale == {"units": [], "files": [], "foreign": ["/var/www/php", "/var/www/psgi"]}
    # Without a record (None), nothing under the roots is bench-stack's.
    unproven = sweep.stale({"paths": PATHS}, PLANNED, True, OWNED, ["webapp", "app_server"])
    assert unproven["files"] == [] and unproven["foreign"] == sorted(DROPPED + FOREIGN)


def test_a_folder_a_planned_stack_serves_or_one_holding_it_is_never_removed() -> None:
    owned = {**OWNED, "app": {**OWNED["app"], "kinds": []}}
    files = sweep.stale({"paths": PATHS}, PLANNED, True, owned, ["webapp", "app_server"], MADE)["files"]
    # sinatra: a stack's app.dir; static: holds one.
    assert f"{APPS}/sinatra" not in files and f"{APPS}/static" not in files
    assert f"{APPS}/php" in files


def test_without_the_roles_that_wrote_them_a_host_owns_none_of_them() -> None:
    names = ("notes.env.txt", "old-backup", "/.git/old")
    ours = [p for p in PATHS if not p.endswith(names) and p not in FOREIGN]
    loadgen = sweep.stale({"paths": PATHS}, [], False, OWNED, ["host", "loadgen"], MADE)
    assert loadgen["files"] == sorted(ours) and loadgen["foreign"] == FOREIGN
    # Without the plan's owned (an older caller), nothing under the roots is judged.
    assert sweep.stale({"paths": PATHS}, PLANNED, True)["files"] == []


@pytest.mark.parametrize(
    ("path", "owner"),
    [
        (f"{UNITS}/a-1.env", ("file", f"{UNITS}/a-1.env")),
        (f"{UNITS}/a-1-2.puma.rb", ("file", f"{UNITS}/a-1-2.puma.rb")),
        (f"{UNITS}/a.puma.rb", None),
        (f"{UNITS}/A.env", None),
        (f"{APPS}/mruby-file", ("kind", "mruby-file")),
        (f"{APPS}/lua-inline", None),
        (f"{APPS}/mine", None),
        (f"{USER}/a-b", ("app", "a-b")),
        (f"{USER}/.releases/a-b-{RELEASE}", ("app", "a-b")),
        (f"{USER}/.releases/a-b-{RELEASE[:15]}", None),
        (f"{USER}/.git/a.git", ("app", "a")),
        ("/etc/bench-stack/units-other/a.env", None),
    ],
)
def test_only_the_names_bench_stack_gives_under_its_roots_have_an_owner(
    path: str, owner: tuple[str, str] | None
) -> None:
    assert sweep.path_owner(path, ROOTS) == owner


def test_the_host_lists_what_the_globs_match_and_a_user_apps_folder_only_as_a_link(tmp_path: Path) -> None:
    roots = {"apps": str(tmp_path / "apps"), "units": str(tmp_path / "units")}
    user = tmp_path / "apps" / "user"
    for folder in ("units", "apps/php", "apps/mine", "apps/user/.releases/old-" + RELEASE, "own"):
        (tmp_path / folder).mkdir(parents=True)
    for name in ("units/gone.env", "units/gone-1.php-fpm.conf", "units/README"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    (user / "old").symlink_to(user / ".releases" / f"old-{RELEASE}")
    # a folder of the user's own in bench-stack's, and a link to a folder outside: neither is followed
    (user / "own").mkdir()
    (user / ".releases" / f"old-{RELEASE}" / "outside").symlink_to(tmp_path / "own")
    command = hostcommand.hoststate_command(
        "python3", {"marker": str(tmp_path / "none.json"), "found": True, **sweep.stack_paths(roots)}
    )
    out = subprocess.run(["sh", "-c", command], check=True, capture_output=True, text=True).stdout
    found = hostcommand.parse_found(out)
    assert found["paths"] == [
        str(tmp_path / p)
        for p in (
            "apps/php",
            "apps/user/.releases/old-" + RELEASE,
            "apps/user/old",
            "units/gone-1.php-fpm.conf",
        )
    ] + [str(tmp_path / "units/gone.env")]
    ours = {"paths": [str(tmp_path / p) for p in ("apps/php", "apps/user/old", "units/gone.env")]}
    stale = sweep.stale(found, [], False, {"roots": roots, "app": {}}, ["webapp", "app_server"], ours)
    assert stale["files"] == found["paths"]


def test_the_read_command_asks_for_the_roots_globs() -> None:
    command = hostcommand.read_command([], "python3", {"apps": "/srv/b/apps", "units": "/etc/b/units"})
    assert "/etc/b/units/*.env" in command and "/srv/b/apps/user/*" in command
    assert "/srv/b/apps" not in hostcommand.read_command([], "python3")


def test_the_plan_says_what_its_stacks_own_under_the_roots() -> None:
    root = Path(__file__).resolve().parents[3]
    plan = compile_plan(root / "molecule" / "python-perl-php-servers" / "experiment.yml", allow_large=True)
    owned = plan.owned
    assert owned["roots"] == {"apps": "/opt/bench-stack/apps", "units": "/etc/bench-stack/units"}
    assert "/etc/bench-stack/units/php-fpm-x2-2.php-fpm.conf" in owned["app_server"]
    assert "/etc/bench-stack/units/user-wsgi-gunicorn.env" in owned["app_server"]
    assert owned["app"] == {
        "kinds": ["asgi", "php", "psgi", "wsgi"],
        "user_apps": [],
        "dirs": [f"/opt/bench-stack/apps/{k}" for k in ("asgi", "php", "psgi", "wsgi")]
        + ["/srv/user-apps/wsgi"],
    }
