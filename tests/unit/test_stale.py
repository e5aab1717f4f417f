"""Units of stacks no longer in the plan (benchstack.provision.stale, benchstack.hoststate.found): what
bench-stack made for a stack the plan does not name is found in the command that reads the provisioning
record, and provisioning stops, disables and removes it before the app servers and fronts are set up;
run.json keeps it (swept)."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import schema_file_errors

from benchstack import hoststate, provision

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
    stale = provision.stale(FOUND, PLANNED, nginx_planned=True)
    assert stale["units"] == [
        "apache2@bench-php.service",
        "bench-gone@1.service",
        "bench-gone@2.service",
        "bench-kept@3.service",
        "bench-old@1.service",
        "httpd@bench-rh.service",
    ]


def test_front_configs_and_template_units_of_dropped_stacks_are_stale_the_plans_are_kept() -> None:
    stale = provision.stale(FOUND, PLANNED, nginx_planned=True)
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
    stale = provision.stale(FOUND, planned, nginx_planned=False)
    assert "nginx.service" in stale["units"]
    assert {
        "/etc/nginx/conf.d/bench-stack.conf",
        "/etc/systemd/system/nginx.service.d/bench-stack-cpus.conf",
    } <= set(stale["files"])
    assert "nginx.service" not in provision.stale(FOUND, PLANNED, nginx_planned=True)["units"]


def test_a_host_with_only_the_plans_stacks_has_nothing_stale() -> None:
    found = {
        "units": {u: "enabled active" for u in PLANNED},
        "files": [
            "/etc/apache2-bench-web",
            "/etc/nginx/conf.d/bench-stack.conf",
            "/etc/systemd/system/bench-kept@.service",
        ],
    }
    assert provision.stale(found, PLANNED, nginx_planned=True) == {"units": [], "files": []}
    assert provision.stale({}, PLANNED, nginx_planned=True) == {"units": [], "files": []}


def test_a_loadgen_only_host_stops_every_stack_it_once_ran_as_a_target() -> None:
    stale = provision.stale(FOUND, [], nginx_planned=False)
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
    }
    assert calls[0][-3:] == list(hoststate.STACK_UNITS) and len(calls) == 2


def test_the_read_command_finds_them_in_the_same_command_and_parses_back() -> None:
    command = provision.read_command(["nginx.service"], "/usr/bin/python3")
    # One Python on the host for the state of what the roles made and what any stack left.
    assert command.count("/usr/bin/python3 -c") == 1 and provision.FOUND_SEPARATOR in command
    state = {"nginx": {"file /etc/nginx/nginx.conf": "cc"}}
    stdout = "\n".join(
        [
            "",
            provision.SEPARATOR,
            "active",
            provision.STATE_SEPARATOR,
            json.dumps(state),
            provision.FOUND_SEPARATOR,
            json.dumps(FOUND),
        ]
    )
    assert provision.parse_now(stdout) == state
    assert provision.parse_found(stdout) == FOUND
    assert provision.parse_read(stdout, ["nginx.service"])[1] == {"nginx.service": True}
    assert provision.parse_found(f"{provision.FOUND_SEPARATOR}\nTraceback") == {}
    assert provision.parse_found("no separator") == {}


def test_the_host_side_still_runs_on_the_oldest_python_the_hosts_have() -> None:
    ast.parse(provision.HOSTSTATE.read_text(encoding="utf-8"), feature_version=(3, 6))


def test_run_json_keeps_what_was_swept_and_what_still_runs() -> None:
    data = {
        "schema": "bench-stack/run/v3",
        "hosts_match_plan": {"t": {"matches": False, "differs": {}, "stale": ["bench-gone@1.service"]}},
        "swept": {"t": {"units": ["bench-gone@1.service"], "files": ["/etc/apache2-bench-php"]}, "l": None},
    }
    assert schema_file_errors("run.schema.json", data) == []
    bad = {**data, "swept": {"t": {"units": "bench-gone@1.service"}}}
    assert schema_file_errors("run.schema.json", bad) != []


def test_the_host_side_answers_both_in_one_python_and_they_parse_back(tmp_path: Path) -> None:
    command = provision.hoststate_command(
        "python3", {"marker": str(tmp_path / "none.json"), "found": provision.FOUND_SEPARATOR}
    )
    out = subprocess.run(["sh", "-c", command], check=True, capture_output=True, text=True).stdout
    stdout = f"{provision.STATE_SEPARATOR}\n{out}"
    assert provision.parse_now(stdout) == {}
    found = provision.parse_found(stdout)
    assert set(found) == {"units", "files"} and isinstance(found["units"], dict)
