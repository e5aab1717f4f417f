"""Drift (benchstack.provision.markers + benchstack.provision.hoststate): what a role made is recorded with
its state, compared in the command that reads the record, and a role whose state differs runs again (its lost
binaries' packages reinstalled first)."""

import ast
import json
import shlex
from pathlib import Path

import hostside
import pytest

from benchstack.provision import hostcommand, hostrecord, hoststate, markers

ROLES = ["host", "app_server", "nginx", "loadgen"]
HASHES = {role: f"h-{role}" for role in ROLES}
UNITS = {"app_server": ["bench-a@1.service"], "nginx": ["nginx.service"]}
ACTIVE = {"bench-a@1.service": True, "nginx.service": True}
STATE = {
    "host": {"file /etc/sysctl.d/60-bench-stack.conf": "aa", "sysctl net.core.somaxconn": "4096"},
    "app_server": {
        "file /etc/systemd/system/bench-a@.service": "bb",
        "unit bench-a@1.service": "enabled active",
    },
    "nginx": {
        "file /etc/nginx/nginx.conf": "cc",
        "package nginx": "1.22.1-9",
        "binary /usr/sbin/nginx": "present",
    },
    "loadgen": {"binary /usr/bin/ab": "present", "binary /usr/bin/wrk": "present", "package wrk": "4.1.0-3"},
}
MADE = {
    "nginx": {"binaries": {"/usr/sbin/nginx": "nginx-core"}},
    "loadgen": {"binaries": {"/usr/bin/ab": "apache2-utils", "/usr/bin/wrk": "wrk"}},
}


def record() -> dict:
    return {
        "schema": hostrecord.SCHEMA,
        "roles": {
            r: {"hash": h, "facts": {}, "at": "t", "made": MADE.get(r, {}), "state": STATE[r]}
            for r, h in HASHES.items()
        },
    }


def decide(now: dict) -> markers.Decision:
    return markers.decide(ROLES, HASHES, record(), UNITS, ACTIVE, True, now)


def test_nothing_drifted_skips_every_role() -> None:
    d = decide(STATE)
    assert d.run == {} and d.drift == {} and d.reinstall == []


@pytest.mark.parametrize(
    ("role", "item", "before", "after", "line"),
    [
        ("nginx", "file /etc/nginx/nginx.conf", "cc", "dd", "file /etc/nginx/nginx.conf: changed"),
        ("nginx", "file /etc/nginx/nginx.conf", "cc", "missing", "file /etc/nginx/nginx.conf: deleted"),
        ("nginx", "package nginx", "1.22.1-9", "absent", "package nginx: 1.22.1-9 -> absent"),
        ("app_server", "unit bench-a@1.service", "enabled active", "enabled inactive", None),
        ("app_server", "unit bench-a@1.service", "enabled active", "disabled active", None),
        ("app_server", "file /etc/systemd/system/bench-a@.service", "bb", "ee", None),
        ("host", "sysctl net.core.somaxconn", "4096", "128", "sysctl net.core.somaxconn: 4096 -> 128"),
    ],
)
def test_each_kind_of_drift_reruns_the_role_that_made_it_and_only_that_role(
    role: str, item: str, before: str, after: str, line: str | None
) -> None:
    now = {r: dict(s) for r, s in STATE.items()}
    assert now[role][item] == before
    now[role][item] = after
    d = decide(now)
    expected = line or f"{item}: " + ("changed" if item.startswith("file ") else f"{before} -> {after}")
    assert d.drift == {role: [expected]}
    assert list(d.run) == [role]
    assert d.run[role] == f"drifted: {expected}"


def test_a_deleted_binary_reinstalls_the_package_that_owns_it() -> None:
    now = {r: dict(s) for r, s in STATE.items()}
    now["loadgen"]["binary /usr/bin/ab"] = "missing"
    now["nginx"]["binary /usr/sbin/nginx"] = "missing"
    d = decide(now)
    assert d.reinstall == ["nginx-core", "apache2-utils"]
    assert d.run["loadgen"] == "drifted: binary /usr/bin/ab: present -> missing"


def test_a_package_removed_altogether_is_installed_by_the_transaction_not_reinstalled() -> None:
    now = {r: dict(s) for r, s in STATE.items()}
    now["loadgen"]["binary /usr/bin/wrk"] = "missing"
    now["loadgen"]["package wrk"] = "absent"
    now["loadgen"]["binary /usr/bin/ab"] = "missing"
    d = decide(now)
    assert d.reinstall == ["apache2-utils"]
    assert "package wrk: 4.1.0-3 -> absent" in d.run["loadgen"]


def test_a_file_gone_from_a_glob_or_a_new_one_is_drift() -> None:
    assert markers.drift({"file /a": "1"}, {}) == ["file /a: gone"]
    assert markers.drift({}, {"file /b": "2"}) == ["file /b: new"]


def test_a_record_without_a_state_written_before_drift_was_recorded_is_not_drift() -> None:
    old = record()
    for entry in old["roles"].values():
        del entry["state"]
    d = markers.decide(ROLES, HASHES, old, UNITS, ACTIVE, True, {})
    assert d.run == {}


def test_drift_is_listed_even_when_every_role_runs() -> None:
    now = {r: dict(s) for r, s in STATE.items()}
    now["nginx"]["file /etc/nginx/nginx.conf"] = "zz"
    d = markers.decide(ROLES, HASHES, record(), UNITS, ACTIVE, False, now)
    assert list(d.run) == ROLES and d.drift == {"nginx": ["file /etc/nginx/nginx.conf: changed"]}


def test_the_record_takes_what_each_role_that_ran_made_and_its_state() -> None:
    d = markers.Decision(hashes=HASHES, run={"nginx": "drifted"}, skip=[])
    made = {"nginx": {"made": {"files": ["/x"]}, "state": {"file /x": "ff"}}}
    after = hostrecord.record_after(record(), d, {}, "now", made)
    assert after["roles"]["nginx"]["state"] == {"file /x": "ff"}
    assert after["roles"]["nginx"]["made"] == {"files": ["/x"]}
    assert after["roles"]["loadgen"] == record()["roles"]["loadgen"]
    assert not hostrecord.same_state(record(), after)


def test_the_host_side_records_then_reads_back_the_same_state_and_sees_files_edited_or_deleted(
    tmp_path: Path,
) -> None:
    conf = tmp_path / "nginx.conf"
    conf.write_text("worker_connections 10000;\n")
    (tmp_path / "sites").mkdir()
    (tmp_path / "sites" / "a.conf").write_text("a\n")
    (tmp_path / "sites" / "b.conf").write_text("b\n")
    tool = tmp_path / "wrk"
    tool.write_text("#!/bin/sh\n")
    manifest = {
        "files": [str(conf), str(tmp_path / "sites" / "*.conf")],
        "binaries": [str(tool)],
        "packages": ["coreutils", "no-such-package-here"],
        "sysctls": ["no.such.key"],
    }
    # Recorded by the command provisioning sends (python3 -c); read back by the same code in this process.
    made = json.loads(hostside.run_on_host({"manifests": {"nginx": manifest}}))
    entry = made["nginx"]
    # Only installed packages are recorded (a virtual name would read as absent forever), with their binaries.
    assert entry["made"]["packages"] == ["coreutils"]
    assert entry["made"]["binaries"]["/usr/bin/sort"] == "coreutils"
    assert entry["made"]["binaries"][str(tool)] == ""
    assert entry["state"]["file " + str(tmp_path / "sites" / "b.conf")] == hoststate.sha256(
        str(tmp_path / "sites" / "b.conf")
    )
    assert entry["state"]["sysctl no.such.key"] == "missing"
    marker = tmp_path / "provisioned.json"
    marker.write_text(json.dumps({"schema": hostrecord.SCHEMA, "roles": {"nginx": entry}}))

    def now() -> dict:
        return hostcommand.parse_now(hostside.answer({"marker": str(marker)}))["nginx"]

    assert now() == entry["state"]
    conf.write_text("worker_connections 64;\n")
    (tmp_path / "sites" / "b.conf").unlink()
    tool.unlink()
    assert markers.drift(entry["state"], now()) == [
        f"binary {tool}: present -> missing",
        f"file {conf}: changed",
        f"file {tmp_path / 'sites' / 'b.conf'}: gone",
    ]


def test_reading_the_record_the_units_and_the_state_now_is_one_command_and_parses_back() -> None:
    command = hostcommand.read_command(["nginx.service"], "/usr/bin/python3")
    # One Python on the host reads the record and the units' states too (after the host's lock).
    argv = shlex.split(command)
    assert argv[:2] == ["/usr/bin/python3", "-c"] and len(argv) == 4, argv[:2]
    rec = record()
    stdout = "\n".join(
        [json.dumps(rec), "", hostcommand.SEPARATOR, "active", hostcommand.STATE_SEPARATOR, json.dumps(STATE)]
    )
    assert hostcommand.parse_read(stdout, ["nginx.service"]) == (rec, {"nginx.service": True})
    assert hostcommand.parse_now(stdout) == STATE
    assert hostcommand.parse_now(f"{hostcommand.STATE_SEPARATOR}\nTraceback") == {}


def test_units_state_reads_one_systemctl_show_for_all_units_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = (
        "Id=nginx.service\nActiveState=active\nUnitFileState=enabled\n\n"
        "Id=bench-a@2.service\nActiveState=inactive\nUnitFileState=disabled\n\n"
        "Id=gone.service\nActiveState=inactive\nUnitFileState=\n"
    )
    calls: list[list[str]] = []

    def out(argv: list[str]) -> str:
        calls.append(argv)
        return shown

    monkeypatch.setattr(hoststate, "_out", out)
    units = ["nginx.service", "bench-a@2.service", "gone.service"]
    assert hoststate.units_state(units) == {
        "unit nginx.service": "enabled active",
        "unit bench-a@2.service": "disabled inactive",
        "unit gone.service": "none inactive",
    }
    assert len(calls) == 1


def test_the_host_side_runs_on_the_oldest_python_the_hosts_have() -> None:
    ast.parse(hostcommand.HOSTSTATE.read_text(encoding="utf-8"), feature_version=(3, 6))


def test_every_role_is_probed_at_once_one_package_query_and_one_systemctl_show(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    conf = tmp_path / "nginx.conf"
    conf.write_text("worker_connections 10000;\n")
    calls: list[list[str]] = []

    def out(argv: list[str]) -> str:
        calls.append(argv)
        if argv[0] == "dpkg-query":
            return "nginx installed 1.22.1-9\nwrk installed 4.1.0-3\n"
        return "Id=nginx.service\nActiveState=active\nUnitFileState=enabled\n\n" * (len(argv) - 2)

    monkeypatch.setattr(hoststate, "_out", out)
    monkeypatch.setattr(hoststate, "_dpkg", lambda: True)
    manifests = {
        "app_server": {"files": [str(conf)], "units": ["bench-a@1.service"]},
        "nginx": {"files": [str(conf)], "packages": ["nginx"], "units": ["nginx.service"]},
        "loadgen": {"packages": ["wrk", "nginx"]},
    }
    states = hoststate.states_of(manifests)
    assert [argv[0] for argv in calls] == ["dpkg-query", "systemctl"]
    # Shared items are asked for once, and every role still gets its own whole state.
    assert calls[0][-2:] == ["nginx", "wrk"]
    assert calls[1][-2:] == ["bench-a@1.service", "nginx.service"]
    assert states["loadgen"] == {"package wrk": "4.1.0-3", "package nginx": "1.22.1-9"}
    assert states["nginx"]["unit nginx.service"] == "enabled active"
    assert states["app_server"]["file " + str(conf)] == states["nginx"]["file " + str(conf)]
