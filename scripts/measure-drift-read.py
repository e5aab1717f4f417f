#!/usr/bin/env python3
"""The cost of the one command that reads the provisioning record, in one sitting, on one provisioned host.

A fresh local container (bench-stack/debian:bookworm) is made by playbooks/hosts.yml and provisioned once
with experiments/perf-one-stack.yml and the tuned profile (host, ruby, webapp, app_server, nginx, loadgen
record what they made). Then three commands are timed, interleaved, each through ``docker exec`` as the
docker connection runs it:

* ``without state``: the record and ``systemctl is-active`` only (what the command was before drift);
* ``before``: the whole read command with benchstack/provision/hoststate.py as it is at ``--before`` (a git
  revision);
* ``after``: the whole read command with the working tree's benchstack/provision/hoststate.py.

Both whole commands must report the same state. Prints every time, then the median, min and max of each.

Run from the project folder with ./run's tools: ``.venv/bin/python scripts/measure-drift-read.py
[--before main] [--runs 9] [--keep]``. Load is not sent. The container is removed afterwards.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
spec = importlib.util.spec_from_file_location("measure_converge", ROOT / "scripts" / "measure-converge.py")
assert spec and spec.loader
mc = importlib.util.module_from_spec(spec)
sys.modules["measure_converge"] = mc
spec.loader.exec_module(mc)

from benchstack.provision import hostcommand, hostrecord  # noqa: E402 (after the path is set)

NAME = "bench-perf-drift-read"
UNITS = [
    "bench-sinatra-thin-x2-nginx@1.service",
    "bench-sinatra-thin-x2-nginx@2.service",
    "nginx.service",
]


def read_command(hoststate: Path | None) -> str:
    """The read command with ``hoststate`` as the host-side source (None: without the state). A
    benchstack/provision/hoststate.py older than the lock in it (it did not print the record and the units'
    states itself) is sent in the shell form of its time: the record by cat, the units by ``systemctl
    is-active``, then the Python."""
    check = f"systemctl is-active {' '.join(UNITS)}"
    legacy = (
        f"cat {hostrecord.MARKER} 2>/dev/null; echo; echo {shlex.quote(hostcommand.SEPARATOR)}; {check}; "
    )
    if hoststate is None:
        return legacy + "true"
    source = hoststate.read_text(encoding="utf-8")
    if "LOCK_SEPARATOR" not in source:
        request = shlex.quote(json.dumps({"marker": hostrecord.MARKER}))
        made = f"/usr/bin/python3 -c {shlex.quote(source)} {request}"
        return legacy + f"echo {shlex.quote(hostcommand.STATE_SEPARATOR)}; {made}; true"
    saved = hostcommand.HOSTSTATE
    hostcommand.HOSTSTATE = hoststate
    try:
        return hostcommand.read_command(UNITS, "/usr/bin/python3")
    finally:
        hostcommand.HOSTSTATE = saved


def timed(command: str) -> tuple[float, str]:
    start = time.monotonic()
    done = subprocess.run(
        ["docker", "exec", NAME, "sh", "-c", command], capture_output=True, text=True, check=True
    )
    return time.monotonic() - start, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--before", default="main", help="git revision of the benchstack/provision/hoststate.py to compare"
    )
    parser.add_argument("--runs", type=int, default=9, help="timings of each command")
    parser.add_argument("--keep", action="store_true", help="keep the container")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-stack-drift-read-"))
    old = work / "hoststate-before.py"
    # Where the revision keeps it: at the package's top before the package had a folder per step.
    for where in ("benchstack/provision/hoststate.py", "benchstack/hoststate.py"):  # relayout: keep
        shown = subprocess.run(
            ["git", "show", f"{args.before}:{where}"], cwd=ROOT, capture_output=True, text=True, check=False
        )
        if shown.returncode == 0:
            break
    else:
        raise SystemExit(f"{args.before}: no hoststate module ({shown.stderr.strip()})")
    old.write_text(shown.stdout)
    commands = {
        "without state": read_command(None),
        f"before ({args.before})": read_command(old),
        "after (working tree)": read_command(hostcommand.HOSTSTATE),
    }
    inv = work / "inventory.yml"
    inv.write_text(
        "all:\n  vars:\n    ansible_connection: community.docker.docker\n    ruby_method: system\n"
        "    experiment: perf-one-stack\n    host_profile: tuned\n"
        f"    bench_container: {{image: '{mc.IMAGE}'}}\n"
        f"  children:\n    targets: {{hosts: {{{NAME}: {{}}}}}}\n    loadgens: {{hosts: {{{NAME}: {{}}}}}}\n"
    )
    times: dict[str, list[float]] = {label: [] for label in commands}
    try:
        mc.start_container(NAME, inv)
        done = subprocess.run(
            [
                str(Path(sys.executable).with_name("ansible-playbook")),
                "-i",
                str(inv),
                "playbooks/provision.yml",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**mc.os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "PYTHONPATH": str(ROOT)},
        )
        if done.returncode != 0:
            raise SystemExit(f"provision.yml failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
        states = {}
        for label, command in commands.items():
            timed(command)  # warm the page cache and systemd's unit cache alike for each
            states[label] = hostcommand.parse_now(timed(command)[1])
        whole = [s for label, s in states.items() if label != "without state"]
        roles = sorted(whole[0])
        print(f"roles recorded: {', '.join(roles)}; items: {sum(len(s) for s in whole[0].values())}")
        if whole[0] != whole[1] or not roles:
            print(json.dumps(states, indent=1, sort_keys=True))
            raise SystemExit("before and after do not read the same state")
        for i in range(args.runs):
            row = []
            for label, command in commands.items():
                seconds, _ = timed(command)
                times[label].append(seconds)
                row.append(f"{label} {seconds:.3f}")
            print(f"run {i + 1}: " + "; ".join(row), flush=True)
    finally:
        if not args.keep:
            subprocess.run(["docker", "rm", "-f", NAME], capture_output=True)
    print(f"\n| command (docker exec, {args.runs} runs) | median s | min s | max s |\n|---|---|---|---|")
    for label, values in times.items():
        print(f"| {label} | {statistics.median(values):.3f} | {min(values):.3f} | {max(values):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
