"""sinatra-thin-nginx's side effect: bad inputs and reconfigurations applied to the provisioned hosts through
the project's provisioning (skipping the roles whose inputs did not change, as a user's rerun does). Records
evidence (tests/sideeffect.py); the tests in tests/ say what must hold. In order:

0. verify-gate: one thin instance on the Debian 12 host frozen (SIGSTOP: its unit stays active, so
   provisioning sees nothing to repair), then bench-stack.yml;
1. broken-server-block: the nginx role alone (nginx.yml, as a user's own playbook runs it) given stacks on
   port 70000 after the plan, which only nginx refuses there (a role variable such as upstream keepalive -5
   is refused by the plan and by the role's own check first), then the same without it;
2. bad-input-*: the nginx config injection (tests/bad-inputs), thin stacks whose app folder is missing or
   holds no config.ru, a static stack whose folder is missing;
3. stock-switch: the Debian 12 host (tuned) switched to nginx's stock main config;
4. reconfigure: sinatra-thin-x2-nginx given 3 instances (the Debian 12 host back to tuned in the same run);
5. restore: the scenario's own experiment again (3 instances back to 2), the hosts as the converge left them;
6. dropped: bench-stack.yml (one short cell) with sinatra-thin-x1 alone, the other four stacks dropped (so
   no stack is behind nginx any more), then provision.yml with it once more (nothing to stop), then the
   scenario's own experiment again; before it, an earlier experiment's user app is planted as its
   deployment leaves one (folder link, release, record, gems, clone), with a user's own folders beside it;
7. drift: on the Debian 12 host, every kind of drift of the drift table (DRIFT) by hand at once (the unit
   edit and its restart first, until the instance runs with it), then playbooks/doctor.yml (lists it,
   changes nothing: no unit started, stopped or restarted either), a normal re-run (repairs it) and one
   more (nothing to do);
8. held: a first run holds both hosts (hold.yml, as provision.yml holds them, until told to let go); a
   second provision.yml is refused before it changes anything; a third, with bench_lock_wait, waits, and
   goes on once the first has ended.

Before and after each step: every unit's main pid, every stack's answer through its front, and the sha256 of
every file under /etc/nginx, /etc/systemd/system, the units' env folder and the app folders.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

PROJECT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(PROJECT), str(PROJECT / "tests")]

from sideeffect import (  # noqa: E402
    ended_run,
    ephemeral,
    fresh_evidence,
    main_pids,
    playbook,
    playbook_command,
    proc_sys_writable,
    save,
    sh,
    snapshot,
    task_results,
)
from sideeffect import wait_until as wait_until_true  # noqa: E402
from stackcheck import endpoints, front_checks  # noqa: E402
from stackcheck import resolved as plan_stacks  # noqa: E402

from benchstack.kinds.stackfields import DEFAULT_ROOTS  # noqa: E402
from benchstack.provision.made import PATH as MADE_PATH  # noqa: E402

HOSTS = ["bench-mol-thin-bookworm", "bench-mol-thin-trixie"]
TUNED_HOST = HOSTS[0]
EXPERIMENT = PROJECT / "experiments" / "sinatra-thin-nginx.yml"
BASE = yaml.safe_load(EXPERIMENT.read_text(encoding="utf-8"))
WATCHED = ["/etc/nginx", "/etc/systemd/system", DEFAULT_ROOTS.units, DEFAULT_ROOTS.apps]
RECONFIGURED = "sinatra-thin-x2-nginx"
# The nginx role without bench-stack's plan in front of it (broken_server_block).
NGINX_ALONE = str(Path(__file__).resolve().parent / "nginx.yml")
# Rerun only what changed, as a user's second run does (the scenario's inventory says false for idempotence).
SKIP = {"bench_provision_skip_unchanged": True}


def resolved(experiment: dict[str, Any]) -> list[dict[str, Any]]:
    return plan_stacks(copy.deepcopy(experiment["stacks"]))


def units(experiment: dict[str, Any]) -> list[str]:
    return [ep["unit"] for ep in endpoints(copy.deepcopy(experiment["stacks"]))] + ["nginx.service"]


def state(experiment: dict[str, Any] = BASE, extra_units: tuple[str, ...] = ()) -> dict[str, Any]:
    """What must not change when a bad input is refused, per host."""
    urls = [c["url"] for c in front_checks(experiment["stacks"])]
    return {host: snapshot(host, [*units(experiment), *extra_units], urls, WATCHED) for host in HOSTS}


def expected_answers(experiment: dict[str, Any] = BASE) -> dict[str, str]:
    return {c["url"]: f"200 {c['body']}" for c in front_checks(experiment["stacks"])}


def variant(name: str, change: dict[str, dict[str, Any]]) -> Path:
    """The scenario's experiment with some stacks changed (stack name -> keys to set), in a file."""
    data = copy.deepcopy(BASE)
    for stack in data["stacks"]:
        for key, value in change.get(stack["name"], {}).items():
            stack[key] = {**stack.get(key, {}), **value} if isinstance(value, dict) else value
    path = ephemeral() / f"{name}.yml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def step(name: str, *, extra: dict[str, Any], limit: str | None = None, **more: Any) -> dict[str, Any]:
    before = state()
    run = playbook("provision.yml", extra={**SKIP, **extra}, limit=limit)
    evidence = {"playbook": run.to_dict(), "before": before, "after": state(), **more}
    save(name, evidence)
    return evidence


def verify_gate() -> None:
    unit = "bench-sinatra-thin-x4-nginx@2.service"
    pid = main_pids(TUNED_HOST, [unit])[unit]
    run_dir = ephemeral() / "gate"
    sh(TUNED_HOST, f"kill -STOP {pid}")
    try:
        # The entry point: one playbook, where a host that fails leaves the plays and the others go on.
        # bench_fail_on never: the host that fails verify is what this checks, not the run's verdict.
        run = playbook(
            "bench-stack.yml",
            extra={
                **SKIP,
                "bench_results_dir": str(ephemeral()),
                "bench_run_dir": str(run_dir),
                "bench_fail_on": "never",
            },
        )
    finally:
        sh(TUNED_HOST, f"kill -CONT {pid}")
    save(
        "verify-gate",
        {
            "frozen": {"host": TUNED_HOST, "unit": unit, "pid": pid},
            "playbook": run.to_dict(),
            "run_dir_files": sorted(str(p.relative_to(run_dir)) for p in run_dir.rglob("*"))
            if run_dir.exists()
            else [],
            "run_dir_exists": run_dir.exists(),
        },
    )


def broken_server_block() -> None:
    before = state()
    extra = {"side_effect_stack_fields": {"port": 70000}}
    run = playbook(NGINX_ALONE, extra=extra, tags="bench_nginx_config")
    save("broken-server-block", {"playbook": run.to_dict(), "before": before, "after": state()})
    run = playbook(NGINX_ALONE, tags="bench_nginx_config")
    save("good-after-broken", {"playbook": run.to_dict(), "after": state()})


def bad_inputs() -> None:
    step(
        "bad-input-injection",
        extra={"experiment": str(PROJECT / "tests" / "bad-inputs" / "injection-app-dir.yml")},
    )
    missing = variant(
        "missing-app",
        {
            "sinatra-thin-x1-nginx": {"app": {"dir": f"{DEFAULT_ROOTS.apps}/no-such-app"}},
            # the static app's folder: there, but without a config.ru
            "sinatra-thin-x2-nginx": {"app": {"dir": f"{DEFAULT_ROOTS.apps}/static"}},
        },
    )
    step("bad-input-missing-app", extra={"experiment": str(missing)})
    missing_static = variant(
        "missing-static", {"nginx-static": {"app": {"dir": f"{DEFAULT_ROOTS.apps}/no-such-site"}}}
    )
    step("bad-input-missing-static", extra={"experiment": str(missing_static)})


def dpkg_nginx_conf(host: str) -> dict[str, str | list[str]]:
    """md5 of nginx.conf as the package shipped it (dpkg's conffile record) and as it is now."""
    package = sh(host, "dpkg -S /etc/nginx/nginx.conf | cut -d: -f1").strip()
    conffiles = sh(host, f"dpkg-query -W -f='${{Conffiles}}\\n' {package}")
    shipped = next(
        line.split()[1] for line in conffiles.splitlines() if line.split()[:1] == ["/etc/nginx/nginx.conf"]
    )
    now = sh(host, "md5sum /etc/nginx/nginx.conf").split()[0]
    # A reload keeps the master and starts new workers.
    workers = sh(host, "pgrep -f '^nginx: worker'; true").split()
    return {"package": package, "shipped_md5": shipped, "md5": now, "workers": sorted(workers)}


def stock_switch() -> None:
    before = {h: dpkg_nginx_conf(h) for h in HOSTS}
    step(
        "stock-switch",
        extra={"nginx_profile": "stock"},
        limit=TUNED_HOST,
        conf_before=before,
    )
    evidence = {"conf_before": before, "conf_after": {h: dpkg_nginx_conf(h) for h in HOSTS}}
    save("stock-switch-conf", evidence)


def reconfigure() -> None:
    changed = variant("reconfigured", {RECONFIGURED: {"server": {"instances": 3}}})
    new = yaml.safe_load(changed.read_text(encoding="utf-8"))
    third = f"bench-{RECONFIGURED}@3.service"
    before = state()
    run = playbook("provision.yml", extra={**SKIP, "experiment": str(changed)})
    after = state(new)
    active = {h: sh(h, f"systemctl is-active {third}; true").strip() for h in HOSTS}
    save("reconfigure", {"playbook": run.to_dict(), "before": before, "after": after, "third_active": active})
    run = playbook("provision.yml", extra=SKIP)
    after_restore = state(BASE, extra_units=(third,))
    third_state = {
        h: sh(h, f"systemctl is-active {third}; systemctl is-enabled {third}; true").split() for h in HOSTS
    }
    save(
        "restore", {"playbook": run.to_dict(), "before": after, "after": after_restore, "third": third_state}
    )


KEPT = "sinatra-thin-x1"
USER_APPS = f"{DEFAULT_ROOTS.apps}/user"
OLD_RELEASE = f"{USER_APPS}/.releases/old-0123456789abcdef"
# What an earlier experiment's user app 'old' left, as the webapp role deploys one: bench-stack's, to go.
OLD_APP = [
    f"{USER_APPS}/old",
    OLD_RELEASE,
    f"{USER_APPS}/.records/old.json",
    f"{USER_APPS}/.bundle/old",
    f"{USER_APPS}/.git/old.git",
]
# A user's own folders among bench-stack's (a real folder where a deployed app's link would be, a name no
# bundled app has): never bench-stack's to remove.
OWN = [f"{USER_APPS}/own", f"{DEFAULT_ROOTS.apps}/mine"]
PLANT = " && ".join(
    [
        f"mkdir -p {OLD_RELEASE} {USER_APPS}/.records {USER_APPS}/.bundle/old {USER_APPS}/.git/old.git",
        f"echo old > {OLD_RELEASE}/config.ru",
        f"ln -sfn {OLD_RELEASE} {USER_APPS}/old",
        f"echo '{{}}' > {USER_APPS}/.records/old.json",
        *(f"mkdir -p {path} && echo own > {path}/config.ru" for path in OWN),
        # The earlier deployment recorded its key (benchstack.provision.made) before making it; the user's
        # own folders are in no record.
        "python3 -c "
        + shlex.quote(
            "import json; p = '" + MADE_PATH + "'; d = json.load(open(p)); "
            "d['paths'] = sorted(set(d['paths']) | {'" + f"{USER_APPS}/old" + "'}); "
            "json.dump(d, open(p, 'w'))"
        ),
    ]
)


def stack_files(experiment: dict[str, Any]) -> list[str]:
    """Every env file and server config, and every app folder, of the experiment's stacks."""
    stacks = resolved(experiment)
    files = [s["server"]["env_file"] for s in stacks if s["server"]]
    files += [ep["config_file"] for s in stacks for ep in s["endpoints"] if ep.get("config_file")]
    return sorted(set(files) | {s["app"]["dir"] for s in stacks})


def present(paths: list[str]) -> dict[str, dict[str, str]]:
    """Per host, each path: ``present`` (a link counts, whatever it points to) or ``absent``."""
    script = "; ".join(
        f"if [ -e {p} ] || [ -L {p} ]; then echo {p} present; else echo {p} absent; fi" for p in paths
    )
    return {host: dict(line.split(" ", 1) for line in sh(host, script).splitlines()) for host in HOSTS}


def dropped() -> None:
    data = copy.deepcopy(BASE)
    data["stacks"] = [stack for stack in data["stacks"] if stack["name"] == KEPT]
    # One short cell: what matters is what runs on the hosts when measuring begins, and run.json.
    data["load"].update(repetitions=1, max_repetitions=1, max_seconds=None, warmup={"duration_s": 1})
    data["load"]["plans"] = [{"tool": "wrk", "concurrency": [8], "threads": 1, "duration_s": 1}]
    path = ephemeral() / "dropped.yml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    gone = [
        ep["unit"]
        for ep in endpoints(copy.deepcopy(BASE["stacks"]))
        if not ep["unit"].startswith(f"bench-{KEPT}@")
    ] + ["nginx.service"]
    ports = {stack["name"]: stack["port"] for stack in BASE["stacks"]}

    def probe() -> dict[str, dict[str, str]]:
        """Per host, each dropped unit's `is-active is-enabled`, and whether each stack's port takes a TCP
        connection, asked from inside the container."""
        script = "; ".join(
            [
                f"echo {u} $(systemctl is-active {u}) $(systemctl is-enabled {u} 2>/dev/null || echo none)"
                for u in gone
            ]
            + [
                f"echo port-{port} $(timeout 3 bash -c '</dev/tcp/127.0.0.1/{port}' 2>/dev/null "
                "&& echo open || echo closed)"
                for port in ports.values()
            ]
        )
        return {
            host: {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in sh(host, script).splitlines()}
            for host in HOSTS
        }

    for host in HOSTS:
        sh(host, PLANT)
    paths = sorted(set(stack_files(BASE)) | set(OLD_APP) | set(OWN))
    files_before = present(paths)
    before = probe()
    run_dir = ephemeral() / "dropped-run"
    run = playbook(
        "bench-stack.yml",
        extra={
            **SKIP,
            "experiment": str(path),
            "bench_results_dir": str(ephemeral()),
            "bench_run_dir": str(run_dir),
            # One short cell: its verdict is not what this checks (docs/verdict.md, Exit codes).
            "bench_fail_on": "never",
        },
    )
    after = probe()
    files_after = present(paths)
    info = run_dir / "run.json"
    again = playbook("provision.yml", extra={**SKIP, "experiment": str(path)})
    restore = playbook("provision.yml", extra=SKIP)
    files_restored = present(paths)
    for host in HOSTS:
        sh(host, f"rm -rf {USER_APPS} {' '.join(OWN)}")
    save(
        "dropped",
        {
            "kept": KEPT,
            "units": gone,
            "ports": ports,
            "before": before,
            "run": run.to_dict(),
            "after": after,
            "kept_files": stack_files(data),
            "old_app": OLD_APP,
            "own": OWN,
            "files_before": files_before,
            "files_after": files_after,
            "files_restored": files_restored,
            "run_json": yaml.safe_load(info.read_text(encoding="utf-8")) if info.is_file() else None,
            "again": again.to_dict(),
            "restore": restore.to_dict(),
            "restored": probe(),
            "answers": {h: state()[h]["answers"] for h in HOSTS},
        },
    )


# The drift table: kind -> (what a user or a package manager does by hand, how the host shows it). Each probe
# prints one line; the side effect keeps it before, after the drift and after the re-run.
DRIFT_UNIT = "bench-sinatra-thin-x1-nginx@.service"
# The instance the "unit file edited" drift restarts by hand, and its socket.
RESTARTED_UNIT = "bench-sinatra-thin-x1-nginx@1.service"
RESTARTED_SOCKET = next(
    ep["socket"] for ep in endpoints(copy.deepcopy(BASE["stacks"])) if ep["unit"] == RESTARTED_UNIT
)
DRIFT: dict[str, tuple[str, str]] = {
    "file edited": (
        "sed -i 's/worker_connections [0-9]*;/worker_connections 64;/' /etc/nginx/nginx.conf",
        "grep -o 'worker_connections [0-9]*' /etc/nginx/nginx.conf; sha256sum < /etc/nginx/nginx.conf",
    ),
    "file deleted": (
        "rm /etc/nginx/conf.d/bench-stack.conf",
        "sha256sum < /etc/nginx/conf.d/bench-stack.conf 2>&1 || echo missing",
    ),
    # apt still sees wrk installed: its package is installed again.
    "binary deleted": ("rm /usr/bin/wrk", "test -x /usr/bin/wrk && echo present || echo missing"),
    "package removed": (
        "DEBIAN_FRONTEND=noninteractive apt-get remove -y -q thin >/dev/null",
        "dpkg-query -W -f '${db:Status-Status}' thin 2>&1; "
        "test -x /usr/bin/thin && echo ' present' || echo ' gone'",
    ),
    "unit stopped": (
        "systemctl stop bench-sinatra-thin-x2-nginx@1.service",
        "systemctl is-active bench-sinatra-thin-x2-nginx@1.service",
    ),
    "unit disabled": (
        "systemctl disable -q bench-sinatra-thin-x2-nginx@2.service",
        "systemctl is-enabled bench-sinatra-thin-x2-nginx@2.service",
    ),
    # Edited, reloaded and restarted by hand: the running instance has the edit too (its open-files limit:
    # the unit's own LimitNOFILE line is the one edited, an added one would come before it and lose).
    "unit file edited": (
        "sed -i -e 's/^\\[Service\\]$/[Service]\\nEnvironment=DRIFT=1/' "
        "-e 's/^LimitNOFILE=.*/LimitNOFILE=1024/' "
        f"/etc/systemd/system/{DRIFT_UNIT} && systemctl daemon-reload && systemctl restart {RESTARTED_UNIT}",
        # The file, what systemd loaded, and the running instance's open-files limit (root in a container may
        # not read another user's /proc/PID/environ; its limits are world-readable). A unit without a main
        # process says so: never /proc/0 (#45).
        f"sha256sum < /etc/systemd/system/{DRIFT_UNIT} | cut -c1-16; "
        f"systemctl show -p Environment --value {RESTARTED_UNIT}; "
        f"pid=$(systemctl show -p MainPID --value {RESTARTED_UNIT}); "
        "if [ \"$pid\" -gt 0 ]; then grep 'Max open files' /proc/$pid/limits; "
        f"else echo no main process: $(systemctl is-active {RESTARTED_UNIT}); fi",
    ),
    "sysctl changed": ("sysctl -q -w net.core.somaxconn=128", "cat /proc/sys/net/core/somaxconn"),
    # A file of a bundled app (the webapp role's): written back, and its instances restart with it.
    "app file edited": (
        f"sed -i 's/I am sinatra/I drifted/' {DEFAULT_ROOTS.apps}/sinatra/app.rb",
        f"sha256sum < {DEFAULT_ROOTS.apps}/sinatra/app.rb | cut -c1-16",
    ),
}


def drift_probe(host: str) -> dict[str, str]:
    return {
        kind: " ".join(sh(host, f"{{ {probe}; }} 2>&1; true").split()) for kind, (_, probe) in DRIFT.items()
    }


# The kind whose drift restarts an instance: done first. After "package removed" (thin) the restarted
# instance cannot start (status 203/EXEC) and systemd restarts it on its own every RestartSec until its start
# limit, through the probes and the doctor: what #45 saw as a main PID of 0 after the doctor.
RESTART_FIRST = "unit file edited"


def unit_states(host: str, units: list[str]) -> dict[str, str]:
    """Each unit's main pid, automatic restarts and state: a unit started, stopped or restarted between two
    reads (by systemd itself too) reads differently."""
    script = "; ".join(
        f"echo {u} $(systemctl show -p MainPID --value {u}) "
        f"restarts=$(systemctl show -p NRestarts --value {u}) $(systemctl is-active {u})"
        for u in units
    )
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in sh(host, script).splitlines()}


def settled(host: str, timeout_s: float = 60) -> dict[str, Any]:
    """After the drift's own restart: wait (bounded) until the instance is active with a main process that
    systemd has not restarted and that answers on its socket; the drift's evidence is read after that. The
    state seen last, and whether and when it settled (not settled: the test that reads it fails)."""
    check = (
        f"pid=$(systemctl show -p MainPID --value {RESTARTED_UNIT}); "
        f"echo $pid restarts=$(systemctl show -p NRestarts --value {RESTARTED_UNIT}) "
        f"$(systemctl is-active {RESTARTED_UNIT}) "
        f"$(curl -s -o /dev/null -w '%{{http_code}}' --max-time 5 --unix-socket {RESTARTED_SOCKET} "
        "http://localhost/ || true)"
    )
    seen: list[str] = []

    def ok() -> bool:
        seen.append(" ".join(sh(host, check).split()))
        pid, restarts, active, answer = (seen[-1].split() + ["", "", "", ""])[:4]
        return (
            pid.isdigit()
            and int(pid) > 0
            and restarts == "restarts=0"
            and active == "active"
            and answer == "200"
        )

    start = time.monotonic()
    done = wait_until_true(ok, timeout_s)
    return {"settled": done, "seconds": round(time.monotonic() - start, 1), "seen": seen[-1] if seen else ""}


def drift() -> None:
    host = TUNED_HOST
    # The host tuned (host_profile; the scenario's converge keeps it stock), so host records the
    # sysctls it sets. Docker mounts /proc/sys read-only: writable, its net.* keys are the container's own.
    tuned = {**SKIP, "host_profile": "tuned"}
    every_unit = units(BASE)
    proc_sys_writable(host, True)
    try:
        first = playbook("provision.yml", extra=tuned, limit=host)
        before = drift_probe(host)
        sh(host, DRIFT[RESTART_FIRST][0])
        restarted = settled(host)
        for kind, (change, _) in DRIFT.items():
            if kind != RESTART_FIRST:
                sh(host, change)
        drifted = drift_probe(host)
        units_before_doctor = unit_states(host, every_unit)
        doctor = playbook("doctor.yml", extra=tuned, limit=host)
        units_after_doctor = unit_states(host, every_unit)
        after_doctor = drift_probe(host)
        repair = playbook("provision.yml", extra=tuned, limit=host)
        after = drift_probe(host)
        again = playbook("provision.yml", extra=tuned, limit=host)
        # Back to the scenario's own profile (stock puts the originals back) for the tests after this.
        back = playbook("provision.yml", extra=SKIP, limit=host)
    finally:
        proc_sys_writable(host, False)
    save(
        "drift",
        {
            "host": host,
            "first": first.to_dict(),
            "before": before,
            "restarted": restarted,
            "drifted": drifted,
            "units_before_doctor": units_before_doctor,
            "doctor": doctor.to_dict(),
            "units_after_doctor": units_after_doctor,
            "after_doctor": after_doctor,
            "repair": repair.to_dict(),
            "after": after,
            "again": again.to_dict(),
            "back": back.to_dict(),
            "answers": state()[host]["answers"],
        },
    )


DECIDE_TASK = "Decide which roles run (inputs changed since they last ran here, or a service is down)"
HOST_LOCK = "/var/lib/bench-stack/run.lock"


def wait_until(what: str, done: Any, timeout: float = 180) -> float:
    """Poll ``done()`` every second until it is true; the seconds it took (RuntimeError after ``timeout``)."""
    start = time.monotonic()
    while not done():
        if time.monotonic() - start > timeout:
            raise RuntimeError(f"held: {what} did not happen within {timeout:g} s")
        time.sleep(1)
    return round(time.monotonic() - start, 1)


def held() -> None:
    folder = ephemeral() / "held"
    folder.mkdir(exist_ok=True)
    release = folder / "release"
    release.unlink(missing_ok=True)
    first_dir = folder / "first-run"
    env = {**os.environ, "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json", "ANSIBLE_NOCOLOR": "1"}

    def start(name: str, *playbooks: str, extra: dict[str, Any]) -> tuple[subprocess.Popen[bytes], Any]:
        """A playbook run in the background: its JSON report to NAME.json, its warnings to NAME.err."""
        out, err = (folder / f"{name}.json").open("wb"), (folder / f"{name}.err").open("wb")
        cmd = playbook_command(*playbooks, extra=extra)
        return subprocess.Popen(cmd, cwd=PROJECT, env=env, stdout=out, stderr=err), time.monotonic()

    def holder(host: str) -> dict[str, Any]:
        text = sh(host, f"cat {HOST_LOCK} 2>/dev/null; true").strip()
        return json.loads(text) if text else {}

    first, _ = start(
        "first",
        str(Path(__file__).with_name("hold.yml")),
        extra={"bench_hold_run_dir": str(first_dir), "bench_hold_release": str(release)},
    )
    try:
        took = wait_until(
            "the first run holding both hosts",
            lambda: all(holder(h).get("pid") == first.pid for h in HOSTS) or first.poll() is not None,
        )
        first_holds = {h: holder(h) for h in HOSTS}
        # A second run, as a user starts one: refused before it changes anything on either host.
        before = state()
        refused = playbook("provision.yml", extra=SKIP)
        after = state()
        # A third with bench_lock_wait: it waits (and says so) until the first run ends, then goes on.
        third, third_start = start("third", "provision.yml", extra={**SKIP, "bench_lock_wait": 300})
        err = folder / "third.err"
        said_after = wait_until(
            "the third run saying it waits",
            lambda: (
                "waiting up to" in err.read_text(encoding="utf-8", errors="replace")
                or third.poll() is not None
            ),
        )
        time.sleep(5)  # still waiting, polling: not done
        waiting_still = third.poll() is None
    finally:
        release.touch()
        first_rc = first.wait(timeout=300)
    released_at = time.monotonic()
    third_rc = third.wait(timeout=900)
    third_end = time.monotonic()
    stdout = (folder / "third.json").read_text(encoding="utf-8", errors="replace")
    warnings = err.read_text(encoding="utf-8", errors="replace")
    third_run = ended_run([], third_rc, round(third_end - third_start, 1), stdout, warnings)
    locks = {host: res.get("lock") for host, res in task_results(stdout, DECIDE_TASK).items()}
    save(
        "held",
        {
            "first": {"pid": first.pid, "run_dir": str(first_dir), "rc": first_rc, "took_s": took},
            "first_holds": first_holds,
            "refused": refused.to_dict(),
            "before": before,
            "after": after,
            "third": third_run.to_dict(),
            "third_warnings": warnings,
            "third_said_after_s": said_after,
            "third_waiting_still": waiting_still,
            "third_ended_after_release_s": round(third_end - released_at, 1),
            "third_locks": locks,
            "holds_after": {h: holder(h) for h in HOSTS},
            "answers": {h: state()[h]["answers"] for h in HOSTS},
        },
    )


def main() -> None:
    fresh_evidence()
    save("expected", {"answers": expected_answers(), "units": units(BASE)})
    verify_gate()
    broken_server_block()
    bad_inputs()
    stock_switch()
    reconfigure()
    dropped()
    drift()
    held()


if __name__ == "__main__":
    main()
