"""The ssh scenario's converge: bench-stack.yml over SSH, as a user runs it on cloud hosts.

The inventory is inventories/example itself plus one small inventory of the containers' addresses
(``ansible_host``); the test's own settings (its key, Debian's Ruby, the mirror's wrk tarball, the scenario's
experiment and run folder) go in as extra vars. The first converge provisions, measures and reports; the
idempotence step's converge runs the same command again, which must change nothing on the hosts and measure
nothing again (the run folder is the same: stored cells are kept). Each run's exit code, wall time and changed
tasks are saved as evidence (tests/sideeffect.py) for the tests; a run that changed a host prints
CHANGED ON THE HOSTS, which converge.yml reports as changed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

PROJECT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(PROJECT), str(PROJECT / "tests")]

from sideeffect import TaskResult, _reports, _tasks, ephemeral, evidence_path, save  # noqa: E402

SCENARIO = Path(__file__).resolve().parent
NETWORK = "bench-mol-ssh-net"
# inventories/example's hosts and the containers that stand in for them.
HOSTS = {"target-1": "bench-mol-ssh-target", "loadgen-1": "bench-mol-ssh-lg"}
WRK_TARBALL = "wrk-4.2.0-without-openssl.tar.gz"
MIRROR = "http://127.0.0.1:8799"
PROVISION = "Provision every host"  # playbooks/provision.yml's play
# Tasks whose wall time the evidence keeps (None: it changed nothing).
TIMED = ["loadgen : Build wrk with the system's OpenSSL"]


def address(container: str) -> str:
    out = subprocess.check_output(
        [
            "docker",
            "inspect",
            "-f",
            f"{{{{(index .NetworkSettings.Networks {json.dumps(NETWORK)}).IPAddress}}}}",
            container,
        ],
        text=True,
        timeout=60,
    )
    return out.strip()


def wrk_sha256(tarball: str = WRK_TARBALL) -> str:
    """A tarball's sha256 as the mirror part recorded it (tests/mirror/parts/wrk.sh)."""
    sums = subprocess.check_output(
        ["docker", "exec", HOSTS["loadgen-1"], "cat", "/srv/bench-mirror/wrk/SHA256SUMS"],
        text=True,
        timeout=60,
    )
    return {name: sha for sha, name in (line.split() for line in sums.splitlines())}[tarball]


def write_inputs(eph: Path) -> tuple[Path, Path]:
    hosts = eph / "ssh-hosts.yml"
    hosts.write_text(
        yaml.safe_dump({"all": {"hosts": {name: {"ansible_host": address(c)} for name, c in HOSTS.items()}}}),
        encoding="utf-8",
    )
    test_vars = eph / "ssh-vars.yml"
    test_vars.write_text(
        yaml.safe_dump(
            {
                "ansible_ssh_private_key_file": str(eph / "id_ed25519"),
                # Fresh host keys every scenario run: keep them out of the user's known_hosts.
                "ansible_ssh_common_args": "-o UserKnownHostsFile=/dev/null",
                # Local containers take Ruby and the server gems from Debian's packages (no gem sources here).
                "ruby_method": "system",
                "loadgen_wrk_source_url": f"{MIRROR}/wrk/{WRK_TARBALL}",
                "loadgen_wrk_source_sha256": wrk_sha256(),
                "experiment": str(SCENARIO / "experiment.yml"),
                "bench_results_dir": str(eph),
                "bench_run_dir": str(eph / "run"),
            }
        ),
        encoding="utf-8",
    )
    return hosts, test_vars


def changed_on_hosts(report: dict[str, Any]) -> list[list[str]]:
    """[play, task, host] of each change made on a host itself: a task delegated to the controller (run.json,
    the report) writes there, not on the host it names."""
    changed = []
    for play in report["plays"]:
        for task in play.get("tasks", []):
            for host, res in task.get("hosts", {}).items():
                delegated = (res.get("_ansible_delegated_vars") or {}).get("ansible_connection") == "local"
                if host in HOSTS and res.get("changed") and not delegated:
                    changed.append([play["play"]["name"], task["task"]["name"], host])
    return changed


def task_seconds(report: dict[str, Any], name: str) -> float | None:
    """Wall time of the task ``name`` where it changed a host (a build skipped by creates: does not), from the
    callback's times."""
    for play in report["plays"]:
        for task in play.get("tasks", []):
            changed = any(r.get("changed") for r in task.get("hosts", {}).values())
            if task["task"]["name"] == name and changed:
                span = task["task"]["duration"]
                start, end = (
                    datetime.fromisoformat(span[k].replace("Z", "+00:00")) for k in ("start", "end")
                )
                return round((end - start).total_seconds(), 1)
    return None


def roles_provisioned(tasks: list[TaskResult], host: str) -> list[str]:
    """The roles provision.yml ran on ``host`` (the markers skip the others)."""
    ran = (t.role for t in tasks if t.play == PROVISION and t.host == host and t.role and not t.skipped)
    return list(dict.fromkeys(ran))


def run_bench(name: str, playbook: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run ``playbook`` (relative to the project) over SSH as the user would, with the scenario's inputs and
    ``extra`` vars; save and return its evidence (``name``)."""
    eph = ephemeral()
    hosts, test_vars = write_inputs(eph)
    cmd = ["ansible-playbook", playbook, "-i", "inventories/example", "-i", str(hosts), "-e", f"@{test_vars}"]
    if extra:
        cmd += ["-e", json.dumps(extra)]
    # As a user's shell has it: the project's ansible.cfg, none of Molecule's ANSIBLE_* settings.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "MOLECULE_"))}
    env |= {
        "ANSIBLE_CONFIG": str(PROJECT / "ansible.cfg"),
        "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
        "ANSIBLE_NOCOLOR": "1",
    }
    start = time.monotonic()
    done = subprocess.run(
        cmd, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=2400, check=False
    )
    seconds = round(time.monotonic() - start, 1)
    (eph / "evidence").mkdir(exist_ok=True)
    (eph / "evidence" / f"{name}.output").write_text(done.stdout + done.stderr, encoding="utf-8")
    report = _reports(done.stdout)
    tasks = _tasks(report)
    evidence: dict[str, Any] = {
        "command": cmd,
        "rc": done.returncode,
        "seconds": seconds,
        "changed_on_hosts": changed_on_hosts(report),
        "failed": [[t.play, t.role, t.name, t.host, t.msg] for t in tasks if t.failed],
        "tasks": len(tasks),
        "roles_provisioned": {host: roles_provisioned(tasks, host) for host in HOSTS},
        "task_seconds": {name: task_seconds(report, name) for name in TIMED},
    }
    save(name, evidence)
    print(f"{name}: {playbook} over SSH, exit {done.returncode}, {seconds} s, {len(tasks)} task results")
    for play, task, host in evidence["changed_on_hosts"]:
        print(f"changed: [{host}] {play} / {task}")
    if done.returncode != 0:
        for play, role, task, host, msg in evidence["failed"]:
            print(f"FAILED: [{host}] {play} / {role or '-'} : {task}\n{msg}")
        print(done.stderr[-3000:] if evidence["failed"] else (done.stdout + done.stderr)[-6000:])
    return evidence


def main() -> int:
    name = "again" if evidence_path("first").exists() else "first"
    # The verdict of a run on these small hosts is not what this scenario checks: its exit code stays 0
    # whatever the verdict (docs/verdict.md, Exit codes), as before the run's gate.
    evidence = run_bench(name, "bench-stack.yml", {"bench_fail_on": "never"})
    if evidence["rc"] != 0:
        return 1
    if evidence["changed_on_hosts"]:
        print("CHANGED ON THE HOSTS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
