#!/usr/bin/env python3
"""Converge timing: bench-stack's provisioning against the plain floor playbook, in one sitting.

For each subject it starts a fresh systemd container (the local base image), times a cold converge, then a
re-run with nothing changed, and prints wall seconds, task results per host and changed counts. The floor's
container is started with ``docker run``, bench-stack's by an untimed ``playbooks/hosts.yml`` run: each
converge starts on the same booted, unprovisioned container, made as its own tool would make it, and
bench-stack's cold converge still runs hosts.yml, which finds its container as wanted.

* ``default``: ``playbooks/hosts.yml playbooks/provision.yml`` with the default experiment;
* ``one-stack``: the same with ``experiments/perf-one-stack.yml`` (thin x2 on unix sockets behind nginx);
* ``floor``: ``tests/perf/floor.yml``, the same one-stack chain with the fewest plain tasks.

It also counts how often an experiment file was read and how often its stacks were resolved during each
converge (``BENCH_STACK_RESOLVE_LOG``, appended to by benchstack). Containers are removed afterwards.

With ``--ssh`` every subject's container is first made what a fresh cloud host is (sshd, a login user
``admin`` with passwordless sudo and a key made for the measurement, as the Molecule scenario ``ssh`` makes
them), untimed; both sides then converge over SSH as that user with become, so the ratios are those of a
user's real hosts.

Run from the project folder with ./run's tools: ``.venv/bin/python scripts/measure-converge.py
[--subjects default,one-stack,floor] [--runs N] [--extra-args '...'] [--ssh]``. Load is not sent; only
Ansible runs.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGE = "bench-stack/debian:bookworm"
RECAP = re.compile(
    r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+skipped=(\d+)"
)
# profile_tasks' time line: "(0:00:01.466)       0:00:03.968" - the last task's time, then the run's so far.
ELAPSED = re.compile(r"\(\d+:\d+:[\d.]+\)\s+(\d+):(\d+):([\d.]+)")
# profile_tasks' recap line of the apt transaction (bench-stack's one, the floor's "Packages").
APT = re.compile(r"^(?:Install them in one transaction \(Debian family\)|Packages) -+ ([\d.]+)s$")


@dataclass
class Result:
    subject: str
    phase: str
    seconds: float
    ok: int
    changed: int
    skipped: int
    reads: int
    resolves: int
    # Seconds before provision.yml's play began (hosts.yml: plan, engine, image, container, boot wait).
    before_provision: float = 0.0
    # Seconds of the apt transaction: the same kind of work on both sides, and the noisiest on this machine.
    apt: float = 0.0


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, check=check, text=True, capture_output=True)


def start_container(name: str, inventory: Path | None = None) -> None:
    sh("docker", "rm", "-f", name, check=False)
    if inventory is not None:
        # As a user's first hosts.yml run makes it (settings label included); hosts.yml waits for boot.
        playbook = str(Path(sys.executable).with_name("ansible-playbook"))
        made = subprocess.run(
            [playbook, "-i", str(inventory), "playbooks/hosts.yml"],
            cwd=ROOT,
            env=dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), PYTHONPATH=str(ROOT)),
            text=True,
            capture_output=True,
        )
        if made.returncode != 0:
            raise SystemExit(f"{name}: hosts.yml failed:\n{made.stdout[-3000:]}{made.stderr[-2000:]}")
        return
    sh(
        # The same settings as hosts.yml's (restart policy included).
        "docker", "run", "-d", "--name", name, "--hostname", name, "--restart", "unless-stopped",
        "--tmpfs", "/run", "--tmpfs", "/run/lock", "-v", "/sys/fs/cgroup:/sys/fs/cgroup:ro",
        IMAGE, "/lib/systemd/systemd",
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        out = sh("docker", "exec", name, "systemctl", "is-system-running", check=False).stdout.strip()
        if out in ("running", "degraded"):
            return
        time.sleep(0.5)
    raise SystemExit(f"{name}: systemd did not finish booting")


# A fresh cloud host, as molecule/ssh/prepare.yml makes one: sshd, admin with passwordless sudo and a key.
CLOUD_HOST = """set -e
apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends openssh-server sudo >/dev/null
id admin >/dev/null 2>&1 || useradd -m -s /bin/bash admin
install -d -m 700 -o admin -g admin /home/admin/.ssh
cat > /home/admin/.ssh/authorized_keys
chown admin:admin /home/admin/.ssh/authorized_keys
chmod 600 /home/admin/.ssh/authorized_keys
echo 'admin ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/90-admin
chmod 440 /etc/sudoers.d/90-admin
printf 'PermitRootLogin no\nPasswordAuthentication no\n' > /etc/ssh/sshd_config.d/50-bench-perf.conf
systemctl enable --now ssh >/dev/null 2>&1
systemctl restart ssh
"""


def cloud_host(name: str, key: Path) -> str:
    """Make container ``name`` a host reached over SSH as admin with sudo; its address."""
    if not key.exists():
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "bench-perf", "-f", str(key))
    subprocess.run(
        ["docker", "exec", "-i", name, "sh", "-c", CLOUD_HOST],
        input=key.with_suffix(".pub").read_text(),
        text=True,
        check=True,
        capture_output=True,
        timeout=600,
    )
    return sh("docker", "inspect", "-f", "{{.NetworkSettings.IPAddress}}", name).stdout.strip()


def inventory(
    folder: Path,
    name: str,
    experiment: str | None,
    connection: str,
    ssh: tuple[str, Path] | None = None,
) -> Path:
    """One host in both groups: a local container reached over ``connection``, or with ``ssh`` (its address
    and key) a host reached over SSH as admin with become, as inventories/example's hosts are."""
    path = folder / f"{name}.yml"
    lines = ["all:", "  vars:"]
    if ssh:
        address, key = ssh
        lines += [
            "    ansible_connection: ssh",
            f"    ansible_host: {address}",
            "    ansible_user: admin",
            "    ansible_become: true",
            f"    ansible_ssh_private_key_file: {key}",
            "    ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
        ]
    else:
        lines.append(f"    ansible_connection: {connection}")
    lines.append("    ruby_method: system")
    if experiment:
        lines.append(f"    experiment: {experiment}")
        if not ssh:
            lines.append(f"    bench_container: {{image: '{IMAGE}'}}")
    lines += [
        "  children:",
        "    targets: {hosts: {" + name + ": {}}}",
        "    loadgens: {hosts: {" + name + ": {}}}",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def converge(
    subject: str,
    phase: str,
    inv: Path,
    playbooks: list[str],
    extra: list[str],
    log: Path,
    env_extra: dict[str, str],
    tree: Path = ROOT,
) -> Result:
    """Run ``playbooks`` of ``tree`` (another revision's checkout: its ansible.cfg, and its benchstack first
    with PYTHONPATH in ``env_extra``) once, timed."""
    resolve_log = log.with_suffix(".resolves")
    resolve_log.unlink(missing_ok=True)
    env = dict(
        os.environ,
        ANSIBLE_CONFIG=str(tree / "ansible.cfg"),
        BENCH_STACK_RESOLVE_LOG=str(resolve_log),
        # Per-task times in each log, for finding where a converge spends them.
        ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks",
        # The recap this script reads (ansible.cfg's bench_stack console prints it only for a failed run).
        ANSIBLE_STDOUT_CALLBACK="default",
    )
    env.update(env_extra)
    start = time.monotonic()
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(inv), *playbooks, *extra],
        cwd=tree,
        env=env,
        text=True,
        capture_output=True,
    )
    seconds = time.monotonic() - start
    log.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-2000:])
        raise SystemExit(f"{subject} {phase}: ansible-playbook failed (log: {log})")
    ok = changed = skipped = 0
    for line in proc.stdout.splitlines():
        m = RECAP.match(line)
        if m and m.group(1) != "localhost":
            ok, changed, skipped = int(m.group(2)), int(m.group(3)), int(m.group(6))
    events = resolve_log.read_text().split() if resolve_log.exists() else []
    return Result(
        subject,
        phase,
        seconds,
        ok,
        changed,
        skipped,
        events.count("read"),
        events.count("resolve"),
        before_provision(proc.stdout),
        next((float(m.group(1)) for m in map(APT.match, proc.stdout.splitlines()) if m), 0.0),
    )


def before_provision(stdout: str) -> float:
    """profile_tasks' elapsed time when provision.yml's play started (0 when the log has no such play)."""
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("PLAY [Provision every host]"):
            for later in lines[i + 1 : i + 5]:
                m = ELAPSED.search(later)
                if m:
                    return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subjects", default="default,one-stack,floor")
    parser.add_argument("--runs", type=int, default=1, help="re-runs after the cold converge")
    parser.add_argument("--extra-args", default="", help="extra ansible-playbook arguments for bench-stack")
    parser.add_argument("--keep", action="store_true", help="keep the containers")
    parser.add_argument("--mitogen", action="store_true", help="bench-stack (not the floor) under Mitogen")
    parser.add_argument("--ssh", action="store_true", help="converge over SSH as a sudo user (not docker)")
    args = parser.parse_args()
    subjects = args.subjects.split(",")
    results: list[Result] = []
    logs = Path(tempfile.mkdtemp(prefix="bench-stack-measure-"))
    for subject in subjects:
        name = f"bench-perf-{subject}"
        try:
            env: dict[str, str] = {}
            connection = "community.docker.docker"
            experiment = {"floor": None, "default": "sinatra-thin-nginx"}.get(subject, "perf-one-stack")
            books, extra = ["tests/perf/floor.yml"], []
            if experiment:
                books, extra = ["playbooks/hosts.yml", "playbooks/provision.yml"], args.extra_args.split()
            if args.ssh:
                if args.mitogen:
                    raise SystemExit("--ssh and --mitogen: choose one")
                start_container(name)
                ssh = (cloud_host(name, logs / "id_ed25519"), logs / "id_ed25519")
                inv = inventory(logs, name, experiment, "ssh", ssh)
            elif subject == "floor":
                inv = inventory(logs, name, None, connection)
                start_container(name)
            else:
                inv = inventory(logs, name, experiment, connection)
                start_container(name, inv)
                if args.mitogen:
                    import ansible_mitogen  # noqa: PLC0415 - only with --mitogen

                    plugins = Path(ansible_mitogen.__file__).parent / "plugins" / "strategy"
                    env = {"ANSIBLE_STRATEGY_PLUGINS": str(plugins), "ANSIBLE_STRATEGY": "mitogen_linear"}
                    connection = "docker"  # Mitogen replaces the builtin names only
                    # Under Mitogen the apt module cannot load python3-apt after installing it itself.
                    apt = "apt-get update -q && apt-get install -y -q python3-apt"
                    sh("docker", "exec", name, "sh", "-c", apt)
                    inv = inventory(logs, name, experiment, connection)
            for i in range(args.runs + 1):
                phase = "cold" if i == 0 else f"re-run {i}"
                r = converge(subject, phase, inv, books, extra, logs / f"{subject}-{i}.log", env)
                results.append(r)
                hosts = f" (hosts.yml {r.before_provision:.1f} s)" if r.before_provision else ""
                hosts += f" (apt {r.apt:.1f} s)" if r.apt else ""
                print(
                    f"{subject:10} {phase:9} {r.seconds:7.1f} s{hosts}  ok={r.ok} changed={r.changed} "
                    f"skipped={r.skipped} experiment reads={r.reads} stack resolves={r.resolves}",
                    flush=True,
                )
        finally:
            if not args.keep:
                sh("docker", "rm", "-f", name, check=False)

    def best(subject: str, phase: str) -> float | None:
        times = [r.seconds for r in results if r.subject == subject and r.phase.startswith(phase)]
        return min(times) if times else None

    floor_cold, floor_rerun = best("floor", "cold"), best("floor", "re-run")
    print(f"\nlogs: {logs}")
    for subject in subjects:
        if subject == "floor":
            continue
        cold, rerun = best(subject, "cold"), best(subject, "re-run")
        if floor_cold and cold:
            print(f"{subject}: cold / floor cold = {cold / floor_cold:.2f}x")
            ours = next(r for r in results if r.subject == subject and r.seconds == cold)
            floor = next(r for r in results if r.subject == "floor" and r.seconds == floor_cold)
            # The floor starts on a booted container; hosts.yml's part (container, boot wait) left out.
            without_hosts = (cold - ours.before_provision) / floor_cold
            print(f"{subject}: cold without hosts.yml / floor cold = {without_hosts:.2f}x")
            # apt's time swings by seconds between two installs of the same packages here: without it, the
            # ratio compares what bench-stack adds.
            if ours.apt and floor.apt:
                print(
                    f"{subject}: cold without apt / floor cold without apt = "
                    f"{(cold - ours.apt) / (floor_cold - floor.apt):.2f}x"
                )
        if floor_rerun and rerun:
            print(f"{subject}: re-run / floor re-run = {rerun / floor_rerun:.2f}x (best re-runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
