"""What Molecule side effects use to break a provisioned scenario on purpose and record what happened.

A scenario's ``side_effect.yml`` runs its ``side_effect.py`` on the controller. That script drives the
project's own playbooks against the scenario's hosts (``ansible-playbook`` with Molecule's inventory; JSON
output, read into :class:`PlaybookRun`), looks at the hosts through ``docker exec``, and saves what it saw
as evidence (``$MOLECULE_EPHEMERAL_DIRECTORY/evidence/<name>.json``). It asserts nothing itself: the
scenario's tests read the evidence (:func:`load`) and say what must hold, so a broken behaviour shows as a
named failing test. Every side effect leaves the hosts as the converge left them, since the tests of the
stacks run after it.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]


def ephemeral() -> Path:
    return Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"])


def evidence_path(name: str) -> Path:
    return ephemeral() / "evidence" / f"{name}.json"


def fresh_evidence() -> None:
    """Start a side effect without an earlier one's evidence (Molecule keeps the folder between runs)."""
    folder = ephemeral() / "evidence"
    for old in folder.glob("*.json"):
        old.unlink()


def save(name: str, data: Any) -> None:
    path = evidence_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")


def load(name: str) -> Any:
    """Evidence a side effect saved (a missing file fails the test that needs it, naming it)."""
    return json.loads(evidence_path(name).read_text(encoding="utf-8"))


@dataclass
class TaskResult:
    play: str
    role: str | None
    name: str
    host: str
    changed: bool
    failed: bool
    skipped: bool
    msg: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class PlaybookRun:
    """One ansible-playbook run: its exit code, how long it took, and each task's result on each host."""

    command: list[str]
    rc: int
    seconds: float
    tasks: list[TaskResult]
    output: str

    def failed(self) -> list[TaskResult]:
        return [t for t in self.tasks if t.failed]

    def changed(self) -> list[TaskResult]:
        return [t for t in self.tasks if t.changed]

    def roles_that_ran(self, host: str) -> list[str]:
        """Roles with at least one task that ran (not skipped) on ``host``, in order."""
        seen: list[str] = []
        for t in self.tasks:
            if t.host == host and t.role and not t.skipped and t.role not in seen:
                seen.append(t.role)
        return seen

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["output"] = self.output[-20000:]
        return data


def _tasks(report: dict[str, Any]) -> list[TaskResult]:
    out = []
    for play in report.get("plays", []):
        play_name = play.get("play", {}).get("name", "")
        for task in play.get("tasks", []):
            full = task.get("task", {}).get("name", "")
            role, sep, name = full.partition(" : ")
            if not sep:
                role, name = "", full
            for host, res in task.get("hosts", {}).items():
                out.append(
                    TaskResult(
                        play=play_name,
                        role=role or None,
                        name=name,
                        host=host,
                        changed=bool(res.get("changed")),
                        failed=bool(res.get("failed")) or bool(res.get("unreachable")),
                        skipped=bool(res.get("skipped")),
                        # a validate: failure says "failed to validate"; the checker's words are in stderr
                        msg="\n".join(str(res[k]) for k in ("msg", "stderr") if res.get(k))[:4000],
                        facts=res.get("ansible_facts") or {},
                    )
                )
    return out


def playbook_command(
    *playbooks: str, extra: dict[str, Any] | None = None, limit: str | None = None, tags: str | None = None
) -> list[str]:
    cmd = ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"]]
    # bench-stack.yml (the project's root) or a name under playbooks/
    cmd += [str(PROJECT / p if (PROJECT / p).is_file() else PROJECT / "playbooks" / p) for p in playbooks]
    if extra:
        cmd += ["-e", json.dumps(extra)]
    if limit:
        cmd += ["--limit", limit]
    if tags:
        cmd += ["--tags", tags]
    return cmd


def playbook(
    *playbooks: str,
    extra: dict[str, Any] | None = None,
    limit: str | None = None,
    tags: str | None = None,
    timeout: int = 900,
) -> PlaybookRun:
    """Run the project's ``playbooks`` (names under playbooks/) against the scenario's hosts."""
    cmd = playbook_command(*playbooks, extra=extra, limit=limit, tags=tags)
    env = {**os.environ, "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json", "ANSIBLE_NOCOLOR": "1"}
    start = time.monotonic()
    done = subprocess.run(
        cmd, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    seconds = round(time.monotonic() - start, 1)
    return ended_run(cmd, done.returncode, seconds, done.stdout, done.stderr)


def ended_run(cmd: list[str], rc: int, seconds: float, stdout: str, stderr: str) -> PlaybookRun:
    """A playbook run with the JSON callback (:func:`playbook`, or one started in the background), ended."""
    return PlaybookRun(cmd, rc, seconds, _tasks(_reports(stdout)), stdout + stderr)


def task_results(stdout: str, name: str) -> dict[str, dict[str, Any]]:
    """host -> the whole result of the task ``name`` (every key its action returned), from the JSON report
    in ``stdout``."""
    return {
        host: res
        for play in _reports(stdout)["plays"]
        for task in play.get("tasks", [])
        if task.get("task", {}).get("name") == name
        for host, res in task.get("hosts", {}).items()
    }


def _reports(stdout: str) -> dict[str, Any]:
    """The plays of every JSON report in ``stdout``: the callback prints one per playbook file."""
    decoder, at = json.JSONDecoder(), stdout.find("{")
    plays: list[Any] = []
    while at != -1:
        try:
            report, end = decoder.raw_decode(stdout, at)
        except ValueError:
            break
        plays += report.get("plays", []) if isinstance(report, dict) else []
        at = stdout.find("{", end)
    return {"plays": plays}


def start_playbook(
    *playbooks: str, log: Path, extra: dict[str, Any] | None = None, limit: str | None = None
) -> subprocess.Popen[bytes]:
    """Start the ``playbooks`` in a process group of their own, as a terminal runs a command (the text
    output to ``log``); interrupt it with :func:`interrupt`."""
    cmd = playbook_command(*playbooks, extra=extra, limit=limit)
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_STDOUT_CALLBACK": "default"}
    with log.open("wb") as out:
        return subprocess.Popen(
            cmd, cwd=PROJECT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def interrupt(proc: subprocess.Popen[bytes], sig: int = signal.SIGINT, wait_s: float = 120) -> dict[str, Any]:
    """Send ``sig`` to the playbook's process group (Ctrl-C does that) and wait for it to end; SIGKILL and
    report it hung when it does not within ``wait_s``."""
    start = time.monotonic()
    os.killpg(proc.pid, sig)
    try:
        rc = proc.wait(timeout=wait_s)
        hung = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        rc = proc.wait(timeout=30)
        hung = True
    return {
        "signal": signal.Signals(sig).name,
        "rc": rc,
        "hung": hung,
        "seconds": round(time.monotonic() - start, 1),
    }


def sh(container: str, script: str, check: bool = True, timeout: int = 120) -> str:
    """stdout of ``script`` run by sh as root in ``container``."""
    done = subprocess.run(
        ["docker", "exec", container, "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"{container}: {script!r} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return done.stdout


# Run by the host's python3 (Ansible's own interpreter there): one exec for the whole snapshot.
_SNAPSHOT = r"""
import hashlib, json, os, subprocess, sys, urllib.error, urllib.request
units, urls, paths = json.loads(sys.argv[1])
pids = subprocess.run(["systemctl", "show", "-p", "MainPID", "--value", *units],
                      capture_output=True, text=True).stdout.split()
answers = {}
for url in urls:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            answers[url] = f"{r.status} {r.read().decode(errors='replace')}"
    except urllib.error.HTTPError as e:
        answers[url] = f"{e.code} {e.read().decode(errors='replace')}"
    except Exception as e:
        answers[url] = f"000 {e}"
sums = {}
for root in paths:
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                sums[path] = "-> " + os.readlink(path)
            elif os.path.isfile(path):
                with open(path, "rb") as f:
                    sums[path] = hashlib.sha256(f.read()).hexdigest()
print(json.dumps({"pids": dict(zip(units, pids)), "answers": answers, "sums": sums}))
"""


def snapshot(container: str, units: list[str], urls: list[str], paths: list[str]) -> dict[str, Any]:
    """Each unit's main pid (0: not running), each url's status and body as asked from inside
    ``container``, and the sha256 of every file (the target of every link) under ``paths``."""
    done = subprocess.run(
        ["docker", "exec", container, "python3", "-c", _SNAPSHOT, json.dumps([units, urls, paths])],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout)


def main_pids(container: str, units: list[str]) -> dict[str, str]:
    """Each unit's main pid (0 when it is not running)."""
    out = sh(container, " ".join(["systemctl show -p MainPID --value", *map(shlex.quote, units)]))
    return dict(zip(units, out.split(), strict=True))


def wait_until(check: Any, timeout_s: float, step_s: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(step_s)
    return bool(check())


def proc_sys_writable(container: str, writable: bool) -> None:
    """Remount the container's /proc/sys read-write (or read-only again, as Docker mounts it), from the
    controller through the container's mount namespace: root inside cannot. Its network namespace's net.*
    settings are its own; anything else there is the machine's, so the caller writes only net.* keys."""
    pid = subprocess.run(
        ["docker", "inspect", "-f", "{{.State.Pid}}", container], capture_output=True, text=True, check=True
    ).stdout.strip()
    mode = "rw" if writable else "ro"
    subprocess.run(
        ["nsenter", "-t", pid, "-m", "mount", "-o", f"remount,bind,{mode}", "/proc/sys"],
        check=True,
        timeout=30,
    )
