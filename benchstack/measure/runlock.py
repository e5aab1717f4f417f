"""The run lock: one controller at a time measures into a run folder.

A resumed run that starts while another controller still works on the same folder (or while the measuring
workers of a killed one still run) would measure beside it: its cells would carry the other run's load,
and the other run's cells would be stored as done. So the controller (the ``ansible-playbook`` process)
holds ``<run>/.bench-stack.lock`` (JSON: its pid, its start, host name, time) from its plan to its report
(:func:`acquire`, :func:`release`), or until the run stops (playbooks/benchmark.yml: the run folder not
writable, or every loadgen stopped; plugins/action/bench_run_folder.py), and each worker measuring a cell
registers itself in ``<run>/.bench-stack.workers/`` while it measures (:func:`worker`).

:func:`acquire` takes a free lock; refuses (RunLockError, naming the holder) while another live run holds
it; waits, bounded, while a dead holder's workers still measure (they store nothing: their playbook is
gone, plugins/action/bench_cell.py), then takes the lock over with a message. A holder on another host
cannot be checked from here: refused, naming the file to remove once that run is over.

The run folder's lock does not see a run in another folder, or from another controller, that measures the
same host. So each host also holds a lock of its own, naming the controller and the run folder that hold it
(:func:`benchstack.provision.hoststate.lock`, on the host), taken by provision.yml and benchmark.yml in the
one command that reads the host before they change or load anything there
(plugins/action/bench_provision_state.py) and given up when measuring ends (:func:`take_host`,
:func:`release_host`; plugins/action/bench_host_lock.py). The holder is judged as above: a live one refused,
naming its run folder and pid (or, with ``bench_lock_wait``, polled for until it ends or that many seconds
have passed); an ended one's workers waited for (bounded), then the lock taken over.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchstack.measure.barrier import process_started
from benchstack.provision.hoststate import IDENTITY
from benchstack.provision.hoststate import LOCK_PATH as HOST_LOCK_FILE
from benchstack.results.layout import LOCK_FILE, WORKERS_DIR

# How long a resume waits for a dead run's workers to finish their cells before it refuses.
WAIT_S = 600.0
POLL_S = 2.0
# How often take_host asks a host whose lock it found free (or ended, to take over) before it gives up.
ASK_TRIES = 5


class RunLockError(RuntimeError):
    """The run folder is in use; the message names by whom and what to do."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def holder(pid: int, **more: Any) -> dict[str, Any]:
    """What a lock or worker file records of process ``pid``."""
    return {"pid": pid, "started": process_started(pid), "host": socket.gethostname(), "at": _now(), **more}


def alive(entry: dict[str, Any]) -> bool | None:
    """Whether the process a lock or worker file names still runs; None when it runs on another host."""
    if entry.get("host") != socket.gethostname():
        return None
    try:
        return process_started(int(entry["pid"])) == entry.get("started")
    except (ProcessLookupError, KeyError, TypeError, ValueError):
        return False


def read_entry(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}  # unreadable: a half-written file of a killed process, stale
    return data if isinstance(data, dict) else {}


def _write_new(path: Path, data: dict[str, Any]) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    return True


def _describe(entry: dict[str, Any]) -> str:
    return f"pid {entry.get('pid')} on {entry.get('host')} since {entry.get('at')}"


def live_workers(run_dir: Path) -> list[dict[str, Any]]:
    """The registered workers still measuring (or unknown: on another host)."""
    folder = run_dir / WORKERS_DIR
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        entry = read_entry(path)
        if entry and alive(entry) is not False:
            found.append(entry)
        else:
            path.unlink(missing_ok=True)
    return found


def _workers_gone(
    run: Path,
    ended: str,
    then: str,
    deadline: float,
    wait_s: float,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> bool:
    """Whether the workers of ``run``, a run that ended (``ended`` names it), have stopped measuring: False
    after one poll while they still do, RunLockError once ``wait_s`` (until ``deadline``) has passed."""
    workers = live_workers(run) if run.is_dir() else []
    if not workers:
        return True
    if clock() < deadline:
        sleep(POLL_S)
        return False
    names = ", ".join(_describe(w) for w in workers)
    raise RunLockError(
        f"{ended} has ended, but its workers still measure after {wait_s:g} s ({names}): stop them, "
        f"then {then}"
    )


def acquire(
    run_dir: str | os.PathLike[str],
    pid: int,
    wait_s: float = WAIT_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> list[str]:
    """Hold ``run_dir``'s lock for the controller ``pid`` (the folder must exist); what was done, as
    messages (a stale lock taken over). RunLockError when another run holds it (module docstring)."""
    run = Path(run_dir)
    path = run / LOCK_FILE
    me = holder(pid)
    deadline = clock() + wait_s
    while True:
        current = read_entry(path)
        if current is None:
            if _write_new(path, me):
                return []
            continue  # another run took it in between: judge that one
        if current.get("pid") == pid and current.get("started") == me["started"]:
            return []
        state = alive(current) if current else False
        if state is None:
            raise RunLockError(
                f"run folder {run} is locked by a bench-stack run on another host ({_describe(current)}): "
                f"if that run is over, remove {path} and resume"
            )
        if state:
            raise RunLockError(
                f"run folder {run} is in use by another bench-stack run ({_describe(current)}): let it end "
                "(or stop it), then resume"
            )
        ended = f"run folder {run}: the run that held it ({_describe(current)})"
        if not _workers_gone(run, ended, "resume", deadline, wait_s, sleep, clock):
            continue
        tmp = run / f"{LOCK_FILE}.{pid}.tmp"
        tmp.write_text(json.dumps(me), encoding="utf-8")
        os.replace(tmp, path)
        was = _describe(current) if current else "unreadable"
        return [f"took over the run folder's lock from a run that ended without releasing it ({was})"]


def release(run_dir: str | os.PathLike[str], pid: int) -> bool:
    """Give up ``run_dir``'s lock if ``pid`` (the same process) holds it; whether it did."""
    path = Path(run_dir) / LOCK_FILE
    current = read_entry(path)
    if not current or current.get("pid") != pid:
        return False
    try:
        if current.get("started") != process_started(pid):
            return False
    except ProcessLookupError:
        return False
    path.unlink(missing_ok=True)
    return True


@contextlib.contextmanager
def worker(run_dir: str | os.PathLike[str], pid: int) -> Iterator[Path]:
    """Register the worker ``pid`` as measuring in ``run_dir`` while the block runs (a worker that is killed
    leaves its file: a dead pid, which :func:`live_workers` drops)."""
    folder = Path(run_dir) / WORKERS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{pid}.json"
    path.write_text(json.dumps(holder(pid)), encoding="utf-8")
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two holders are the same controller process (as benchstack.provision.hoststate.same judges)."""
    return all(a.get(k) == b.get(k) for k in IDENTITY)


def _describe_run(entry: dict[str, Any]) -> str:
    return f"run folder {entry.get('run')}, {_describe(entry)}"


@dataclass
class _Waiting:
    """:func:`take_host`'s wait for a live holder: since when (None: not waiting), for which run."""

    host: str
    lock_wait: float
    clock: Callable[[], float]
    waiting: Callable[[str], None] | None
    since: float | None = None
    held_by: str = ""

    def go_on(self, was: dict[str, Any], state: bool | None, check_only: bool) -> None:
        """RunLockError when the live (``state`` True) or unknown (None) holder ``was`` is not to be waited
        for, or has been for ``lock_wait``; else the wait goes on (``waiting`` told when it begins)."""
        if state is None:
            refusal = (
                f"{self.host} is held by a bench-stack run of another controller ({_describe_run(was)}): if "
                f"that run is over, remove {HOST_LOCK_FILE} on {self.host} and run again"
            )
        else:
            refusal = (
                f"{self.host} is in use by another bench-stack run ({_describe_run(was)}): let it end (or "
                "stop it), then run again"
            )
        if check_only or not self.lock_wait:
            raise RunLockError(refusal)
        now = self.clock()
        if self.since is None:
            self.since, self.held_by = now, _describe_run(was)
            if self.waiting is not None:
                self.waiting(
                    f"{self.host} is held by another bench-stack run ({_describe_run(was)}): waiting up to "
                    f"{self.lock_wait:g} s for it to end (bench_lock_wait)"
                )
        if now - self.since >= self.lock_wait:
            raise RunLockError(f"{refusal} (still held after bench_lock_wait, {self.lock_wait:g} s)")

    def taken(self, over: dict[str, Any] | None) -> list[str]:
        """What taking the lock took: the wait, an ended run's lock taken over."""
        messages = []
        if self.since is not None:
            messages.append(
                f"{self.host}: waited {self.clock() - self.since:.0f} s for another bench-stack run "
                f"({self.held_by}) to end"
            )
        if over is not None:
            messages.append(
                f"{self.host}: took over its lock from an ended run that kept it ({_describe_run(over)})"
            )
        return messages


def take_host(
    host: str,
    run_dir: str | os.PathLike[str],
    pid: int,
    ask: Callable[[dict[str, Any]], dict[str, Any]],
    check_only: bool = False,
    wait_s: float = WAIT_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    lock_wait: float = 0.0,
    waiting: Callable[[str], None] | None = None,
) -> list[str]:
    """Hold ``host``'s lock for the controller ``pid`` measuring into ``run_dir``; ``ask`` sends a request
    (``op``, ``me``, ``over``) to :func:`benchstack.provision.hoststate.lock` on the host and returns its
    answer. What was done, as messages (waited for, an ended run's lock taken over). RunLockError, naming the
    holder's run folder and pid, while another run holds it (module docstring); with ``lock_wait`` (seconds,
    ``bench_lock_wait``), only once it has held it that long, asked again every :data:`POLL_S` (``waiting``
    is told once, when the wait begins). ``check_only`` (check mode): the same judgement, nothing written,
    nothing waited for."""
    me = holder(pid, run=str(Path(run_dir).resolve()))
    over: dict[str, Any] | None = None
    # Counted from when a live holder, or an ended one's workers, are first seen.
    wait = _Waiting(host, lock_wait, clock, waiting)
    unanswered = 0
    deadline: float | None = None
    while True:
        answer = ask({"op": "read" if check_only else "take", "me": me, "over": over})
        was = answer.get("was")
        if answer.get("held") or (check_only and not was):
            return wait.taken(over)
        # Freed in between, or the ended holder's lock not taken over as asked: ask again, a few times (a host
        # side that never answers held would otherwise be asked for ever).
        if not isinstance(was, dict) or (over is not None and _same(was, over)):
            unanswered += 1
            if unanswered > ASK_TRIES:
                raise RunLockError(
                    f"{host}: its lock at {HOST_LOCK_FILE} was not taken after {ASK_TRIES} tries"
                )
            if not isinstance(was, dict):
                continue
        state = alive(was)
        if state is not False:
            wait.go_on(was, state, check_only)
            sleep(POLL_S)
            continue
        if was.get("run"):
            if deadline is None:
                deadline = clock() + wait_s
            ended = f"{host}: the run that held it ({_describe_run(was)})"
            if not _workers_gone(Path(str(was["run"])), ended, "run again", deadline, wait_s, sleep, clock):
                continue
        if check_only:
            return [f"{host}: held by a run that has ended ({_describe_run(was)}): it would be taken over"]
        over = was


def release_host(pid: int, ask: Callable[[dict[str, Any]], dict[str, Any]]) -> bool:
    """Give up a host's lock if the controller ``pid`` holds it; whether it did."""
    try:
        me = holder(pid)
    except ProcessLookupError:
        return False
    return bool(ask({"op": "release", "me": me, "over": None}).get("held"))
