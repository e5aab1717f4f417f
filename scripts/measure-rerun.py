#!/usr/bin/env python3
"""Re-run cost: this tree's re-run with nothing changed against an older revision's and the floor's, in one
sitting, interleaved.

One provisioned local container (bench-stack/debian:bookworm, made by playbooks/hosts.yml and converged once
with the experiment, ``perf-one-stack`` by default) serves both revisions: ``after`` (this tree) and
``before`` (``--before REV``, checked out in a temporary git worktree; its own plugins, playbooks and
benchstack run, through this tree's .venv with PYTHONPATH set to it). The roles are the same, so either
revision's record describes the host and a re-run finds nothing to do. The floor (tests/perf/floor.yml, the
same one-stack chain in the fewest plain tasks) gets a container of its own, converged once. Then each round
re-runs ``hosts.yml provision.yml`` of after and before, and the floor, in an order that turns every round,
and times each run (wall seconds of ansible-playbook, as scripts/measure-converge.py runs it, profile_tasks
on). Before each bench-stack re-run the host's lock is left as a whole bench-stack.yml run leaves it (given up
when measuring ended; ``--lock ended``: as provision.yml alone leaves it, held by a run that has ended, which
each re-run then takes over).

It also times the per-host read alone, interleaved, through ``docker exec`` as the docker connection runs it:
before, the lock request (benchstack/hostlock.py) and the read command as two commands; after, the one
command that takes the lock and reads.

Prints each time, then per subject the median and range, the ratios of the medians (after / floor, before /
floor, after / before) and the read times. Containers and the worktree are removed afterwards.

Run from the project folder with ./run's tools: ``.venv/bin/python scripts/measure-rerun.py [--before main]
[--rounds 3 (0: the reads alone)] [--reads 15] [--experiment perf-one-stack] [--lock released|ended]
[--keep]``. Load is not sent.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
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
HOST, FLOOR = "bench-perf-rerun", "bench-perf-rerun-floor"
HOST_LOCK = "/var/lib/bench-stack/run.lock"
# Prints, from a tree's own benchstack, the commands its provision.yml sends to read a host (JSON list; the
# lock request first where it is one of its own).
COMMANDS = r"""
import json, os, sys
try:
    from benchstack.provision import hostcommand
    from benchstack.measure import runlock
except ImportError:  # a tree from before the package had a folder per step (issue 26)
    from benchstack import provision, runlock  # relayout: keep
holder = runlock.holder
units = json.loads(sys.argv[1])
me = holder(os.getpid(), run="/tmp/measure-rerun")
lock = {"op": "take", "me": me, "over": None}
if hasattr(runlock, "host_lock_command"):
    print(json.dumps([runlock.host_lock_command("/usr/bin/python3", lock),
                      hostcommand.read_command(units, "/usr/bin/python3")]))
else:
    print(json.dumps([hostcommand.read_command(units, "/usr/bin/python3", None, lock)]))
"""
UNITS = [
    "bench-sinatra-thin-x2-nginx@1.service",
    "bench-sinatra-thin-x2-nginx@2.service",
    "nginx.service",
]


def sh(*args: str, check: bool = True, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, check=check, text=True, capture_output=True, cwd=cwd)


def playbook(tree: Path, inv: Path, books: list[str], log: Path) -> tuple[float, str]:
    """Run ``books`` of ``tree`` (its ansible.cfg, its benchstack first on the path) as measure-converge
    runs a converge; wall seconds and the container's recap (provision.yml's)."""
    r = mc.converge(tree.name, log.stem, inv, books, [], log, {"PYTHONPATH": str(tree)}, tree=tree)
    return r.seconds, f"ok={r.ok} changed={r.changed} skipped={r.skipped}"


def read_commands(tree: Path) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    # cwd too: ``python -c`` puts the current folder before PYTHONPATH.
    done = subprocess.run(
        [sys.executable, "-c", COMMANDS, json.dumps(UNITS)],
        cwd=tree,
        env=env,
        text=True,
        capture_output=True,
        check=True,
    )
    return json.loads(done.stdout)


def timed_read(commands: list[str]) -> list[float]:
    """Seconds of each command, one ``docker exec`` each."""
    times = []
    for command in commands:
        start = time.monotonic()
        sh("docker", "exec", HOST, "sh", "-c", command)
        times.append(time.monotonic() - start)
    return times


def summary(times: list[float]) -> str:
    median = statistics.median(times)
    return f"median {median:6.2f} s (min {min(times):.2f}, max {max(times):.2f}, n={len(times)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="main", help="the older revision (a git revision)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reads", type=int, default=15, help="timed reads of each revision")
    parser.add_argument("--experiment", default="perf-one-stack")
    parser.add_argument("--lock", choices=("released", "ended"), default="released")
    parser.add_argument("--keep", action="store_true", help="keep the containers and the worktree")
    args = parser.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="bench-stack-rerun-"))
    before = logs / "before-tree"
    rev = sh("git", "rev-parse", "--short", args.before, cwd=ROOT).stdout.strip()
    sh("git", "worktree", "add", "--detach", str(before), args.before, cwd=ROOT)
    trees = {"after": ROOT, "before": before}
    docker = "community.docker.docker"
    host_inv, floor_inv = (
        mc.inventory(logs, HOST, args.experiment, docker),
        mc.inventory(logs, FLOOR, None, docker),
    )
    books = ["playbooks/hosts.yml", "playbooks/provision.yml"]
    times: dict[str, list[float]] = {"after": [], "before": [], "floor": []}
    try:
        print(f"before = {args.before} ({rev}), after = working tree; logs: {logs}", flush=True)
        sh("docker", "rm", "-f", HOST, check=False)
        for name, (tree, inv, run) in {
            "cold": (ROOT, host_inv, books),
            "floor cold": (ROOT, floor_inv, ["tests/perf/floor.yml"]),
        }.items():
            if name == "floor cold":
                mc.start_container(FLOOR)  # booted, unprovisioned, as measure-converge starts it
            seconds, recap = playbook(tree, inv, run, logs / f"{name.replace(' ', '-')}.log")
            print(f"{name:12} {seconds:6.1f} s  {recap}", flush=True)
        # One untimed re-run of each revision: whatever either finds to do is done before the timing.
        for subject in ("before", "after") if args.rounds else ():
            seconds, recap = playbook(trees[subject], host_inv, books, logs / f"{subject}-warm.log")
            print(f"{subject + ' warm':12} {seconds:6.1f} s  {recap}", flush=True)
        order = ["after", "before", "floor"]
        for i in range(args.rounds):
            for subject in order[i % 3 :] + order[: i % 3]:
                if subject == "floor":
                    seconds, recap = playbook(
                        ROOT, floor_inv, ["tests/perf/floor.yml"], logs / f"floor-{i}.log"
                    )
                else:
                    if args.lock == "released":
                        sh(
                            "docker",
                            "exec",
                            HOST,
                            "sh",
                            "-c",
                            f"if [ -f {HOST_LOCK} ]; then : > {HOST_LOCK}; fi",
                        )
                    seconds, recap = playbook(trees[subject], host_inv, books, logs / f"{subject}-{i}.log")
                times[subject].append(seconds)
                print(f"round {i + 1} {subject:7} {seconds:6.1f} s  {recap}", flush=True)
        commands = {subject: read_commands(tree) for subject, tree in trees.items()}
        # before: the lock request, then the read; after: the one command; "docker exec" alone beside them.
        labels = {"after": ["after"], "before": ["before lock", "before read"], "exec": ["docker exec true"]}
        commands["exec"] = ["true"]
        reads: dict[str, list[float]] = {label: [] for names in labels.values() for label in names}
        reads["before"] = []
        for _ in range(args.reads):
            for subject in ("after", "before", "exec"):
                # Free before each, as after a whole run: the lock taken in the first request.
                sh("docker", "exec", HOST, "sh", "-c", f"if [ -f {HOST_LOCK} ]; then : > {HOST_LOCK}; fi")
                each = timed_read(commands[subject])
                for label, seconds in zip(labels[subject], each, strict=True):
                    reads[label].append(seconds)
                if subject == "before":
                    reads["before"].append(sum(each))
    finally:
        if not args.keep:
            sh("docker", "rm", "-f", HOST, FLOOR, check=False)
            sh("git", "worktree", "remove", "--force", str(before), cwd=ROOT, check=False)
    if args.rounds:
        print(f"\nre-runs of hosts.yml + provision.yml ({args.experiment}; lock {args.lock} before each):")
        for subject, values in times.items():
            print(f"  {subject:7} {summary(values)}")
        med = {subject: statistics.median(values) for subject, values in times.items()}
        print(f"  after / floor  = {med['after'] / med['floor']:.2f}x")
        print(f"  before / floor = {med['before'] / med['floor']:.2f}x")
        print(f"  after / before = {med['after'] / med['before']:.2f}x")
    print("the per-host read alone (one docker exec a command; before: lock command + read command):")
    for label, values in reads.items():
        print(f"  {label:16} {summary(values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
