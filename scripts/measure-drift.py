#!/usr/bin/env python3
"""The drift table and the re-run cost, in one sitting, on fresh local containers (bench-stack/debian:
bookworm).

bench-stack: a container made by playbooks/hosts.yml, converged with experiments/perf-one-stack.yml (thin x2
on unix sockets behind nginx; ab and wrk) and the tuned profile. Then each kind of drift of the drift table is
done by hand (all at once, or with --each one at a time), playbooks/doctor.yml lists it, one normal re-run of
hosts.yml + provision.yml repairs it, and the table says, per kind, whether the host is back as before.
Then re-runs with nothing changed are timed, beside the re-runs of the plain floor playbook
(tests/perf/floor.yml, the same chain with the fewest plain tasks) on its own container.

Run from the project folder with ./run's tools: ``.venv/bin/python scripts/measure-drift.py [--each]
[--runs N] [--keep]``. Load is not sent; only Ansible runs. Containers are removed afterwards.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("measure_converge", ROOT / "scripts" / "measure-converge.py")
assert spec and spec.loader
mc = importlib.util.module_from_spec(spec)
sys.modules["measure_converge"] = mc
spec.loader.exec_module(mc)

NAME = "bench-perf-drift"
FLOOR = "bench-perf-drift-floor"
UNIT = "bench-sinatra-thin-x2-nginx@.service"
ONE, TWO = "bench-sinatra-thin-x2-nginx@1.service", "bench-sinatra-thin-x2-nginx@2.service"
# kind -> (the change by hand, a probe printing how the host shows it).
DRIFT: dict[str, tuple[str, str]] = {
    "file edited": (
        "sed -i 's/worker_connections [0-9]*;/worker_connections 64;/' /etc/nginx/nginx.conf",
        "grep -o 'worker_connections [0-9]*' /etc/nginx/nginx.conf",
    ),
    "file deleted": (
        "rm /etc/nginx/conf.d/bench-stack.conf",
        "sha256sum < /etc/nginx/conf.d/bench-stack.conf || echo missing",
    ),
    # apt still sees wrk installed: its package is installed again.
    "binary deleted": ("rm /usr/bin/wrk", "test -x /usr/bin/wrk && echo present || echo missing"),
    "package removed": (
        "DEBIAN_FRONTEND=noninteractive apt-get remove -y -q thin >/dev/null",
        "dpkg-query -W -f '${db:Status-Status}' thin; "
        "test -x /usr/bin/thin && echo ' present' || echo ' gone'",
    ),
    "unit stopped": (f"systemctl stop {ONE}", f"systemctl is-active {ONE}"),
    "unit disabled": (f"systemctl disable -q {TWO}", f"systemctl is-enabled {TWO}"),
    "unit file edited": (
        "sed -i 's/^\\[Service\\]$/[Service]\\nEnvironment=DRIFT=1\\nLimitNOFILE=1024/' "
        f"/etc/systemd/system/{UNIT} && systemctl daemon-reload && systemctl restart {TWO}",
        # Root in a container may not read another user's /proc/PID/environ; limits are world-readable.
        f"sha256sum < /etc/systemd/system/{UNIT} | cut -c1-16; systemctl show -p Environment --value {TWO}; "
        f"grep 'Max open files' /proc/$(systemctl show -p MainPID --value {TWO})/limits",
    ),
    "sysctl changed": ("sysctl -q -w net.core.somaxconn=128", "cat /proc/sys/net/core/somaxconn"),
    "app file edited": (
        "sed -i 's/I am sinatra/I drifted/' /opt/bench-stack/apps/sinatra/app.rb",
        "sha256sum < /opt/bench-stack/apps/sinatra/app.rb | cut -c1-16",
    ),
}


def sh(script: str) -> str:
    done = subprocess.run(["docker", "exec", NAME, "sh", "-c", script], capture_output=True, text=True)
    return " ".join((done.stdout + done.stderr).split())


def probe() -> dict[str, str]:
    return {kind: sh(f"{{ {p}; }} 2>&1; true") for kind, (_, p) in DRIFT.items()}


def proc_sys(mode: str) -> None:
    """/proc/sys read-write (rw) or read-only again (ro, as Docker mounts it): the container's net.* keys are
    its own network namespace's."""
    pid = subprocess.run(
        ["docker", "inspect", "-f", "{{.State.Pid}}", NAME], capture_output=True, text=True, check=True
    ).stdout.strip()
    subprocess.run(
        ["nsenter", "-t", pid, "-m", "mount", "-o", f"remount,bind,{mode}", "/proc/sys"], check=True
    )


def ansible(inv: Path, *books: str) -> tuple[float, str, int]:
    start = time.monotonic()
    done = subprocess.run(
        [str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(inv), *books, "-v"],
        cwd=ROOT,
        text=True,
        capture_output=True,
        env={**mc.os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "PYTHONPATH": str(ROOT)},
    )
    return time.monotonic() - start, done.stdout + done.stderr, done.returncode


def decision(log: str) -> str:
    """The "Decide which roles run" task's message (-v output)."""
    _, _, rest = log.partition("TASK [Decide which roles run")
    _, found, msg = rest.partition("    msg: ")
    return " ".join(msg.split("\n\n")[0].split()) if found else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--each", action="store_true", help="one kind of drift per re-run")
    parser.add_argument("--runs", type=int, default=3, help="re-runs with nothing changed, each side")
    parser.add_argument("--keep", action="store_true", help="keep the containers")
    args = parser.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="bench-stack-drift-"))
    inv = logs / "inventory.yml"
    inv.write_text(
        "all:\n  vars:\n    ansible_connection: community.docker.docker\n    ruby_method: system\n"
        "    experiment: perf-one-stack\n    host_profile: tuned\n"
        f"    bench_container: {{image: '{mc.IMAGE}'}}\n"
        f"  children:\n    targets: {{hosts: {{{NAME}: {{}}}}}}\n    loadgens: {{hosts: {{{NAME}: {{}}}}}}\n"
    )
    books = ["playbooks/hosts.yml", "playbooks/provision.yml"]
    rows: list[tuple[str, str, str, str, bool]] = []
    times: dict[str, list[float]] = {"bench-stack": [], "floor": []}
    try:
        mc.start_container(NAME, inv)
        proc_sys("rw")
        seconds, log, rc = ansible(inv, *books)
        (logs / "cold.log").write_text(log)
        print(f"cold converge {seconds:.1f} s rc={rc}", flush=True)
        groups = [[k] for k in DRIFT] if args.each else [list(DRIFT)]
        for group in groups:
            before = probe()
            for kind in group:
                sh(DRIFT[kind][0])
            drifted = probe()
            doctor_s, doctor_log, doctor_rc = ansible(inv, "playbooks/doctor.yml")
            seconds, log, rc = ansible(inv, *books)
            (logs / f"repair-{group[0].replace(' ', '-')}.log").write_text(doctor_log + log)
            after = probe()
            print(
                f"{', '.join(group)}: doctor {doctor_s:.1f} s rc={doctor_rc}; "
                f"re-run {seconds:.1f} s rc={rc}: {decision(log)}",
                flush=True,
            )
            for kind in group:
                rows.append((kind, before[kind], drifted[kind], after[kind], after[kind] == before[kind]))
        for i in range(args.runs):
            seconds, log, rc = ansible(inv, *books)
            times["bench-stack"].append(seconds)
            print(f"bench-stack re-run {i + 1}: {seconds:.1f} s rc={rc} {decision(log)}", flush=True)
        proc_sys("ro")
        floor_inv = mc.inventory(logs, FLOOR, None, "community.docker.docker")
        mc.start_container(FLOOR)
        for i in range(args.runs + 1):
            seconds, log, rc = ansible(floor_inv, "tests/perf/floor.yml")
            if i:
                times["floor"].append(seconds)
            print(f"floor {'cold' if i == 0 else f're-run {i}'}: {seconds:.1f} s rc={rc}", flush=True)
    finally:
        if not args.keep:
            for name in (NAME, FLOOR):
                subprocess.run(["docker", "rm", "-f", name], capture_output=True)
    print(
        f"\nlogs: {logs}\n\n| kind | before | after the drift | after one re-run | repaired |\n"
        "|---|---|---|---|---|"
    )
    for kind, first, changed, last, ok in rows:
        print(f"| {kind} | `{first[:90]}` | `{changed[:90]}` | `{last[:90]}` | {'yes' if ok else 'NO'} |")
    ours, floor = times["bench-stack"], times["floor"]
    if ours and floor:
        print(
            f"\nre-run, nothing changed: bench-stack {', '.join(f'{s:.1f}' for s in ours)} s; floor "
            f"{', '.join(f'{s:.1f}' for s in floor)} s; best/best = {min(ours) / min(floor):.2f}x"
        )
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
