"""The barrier at which several loadgens start a cell's measured run together (bench_cell, on the controller).

One barrier is a folder in the controller's temporary folder, named after the cell and the playbook run
(:func:`barrier_dir`: the playbook's pid and its start time, so a later playbook that gets the same pid never
finds an earlier one's markers). Each loadgen marks itself ready and waits for every peer
(:func:`wait_for_peers`), marks itself passed, and after the cell leaves (:func:`leave_barrier`): the last
one to leave removes the folder. A loadgen that gives up waiting takes its ready marker back, so a late peer
waits too instead of starting alone. Only a playbook killed mid-cell leaves a folder behind, under a name no
later run uses.

The first peer (the lead) takes the target's system stats in network mode, one round trip to the target after
the barrier. So that this does not start it late, the others wait for its go (:func:`release`, after that
round trip) before marking themselves passed: all measured runs start together, after the target's stats.

Each loadgen also marks itself joined when it starts the cell (:func:`join`, its process and start time), so
the others stop waiting at once when it dies before its measured run (:func:`dead_peers`) instead of
waiting out the timeout; the caller's ``gone`` check stops the wait for any other reason (its playbook ended).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

PREFIX = "bench-stack-barrier"
READY = "ready"
PASSED = "passed"
JOINED = "joined"
GO = "go"


class BarrierBroken(RuntimeError):
    """The wait was given up before the timeout: a peer died, or the caller's ``gone`` check said stop."""


def process_started(pid: int) -> str:
    """When process ``pid`` started, as a word: with the pid it names that process alone (pids are reused,
    (pid, start) pairs are not). Linux: the boot and the start time in clock ticks from /proc; elsewhere the
    start time ps prints (whole seconds). ProcessLookupError when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            raise ProcessLookupError(f"no process {pid}") from None
        return started_by_ps(pid)
    # Field 22, starttime, counted after the command name: the name is in brackets and may hold spaces.
    ticks = stat.rsplit(")", 1)[1].split()[19]
    return f"{boot[:8]}-{ticks}"


def started_by_ps(pid: int) -> str:
    """Where there is no /proc: ``ps -o lstart=``, e.g. ``Mon Jan  6 12:00:00 2025``, as a word."""
    out = subprocess.run(
        ["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True, text=True, check=False, timeout=10
    ).stdout
    if not out.strip():
        raise ProcessLookupError(f"no process {pid}")
    return re.sub(r"\W+", "-", out.strip())


def playbook_run_id(playbook_pid: int) -> str:
    """The id of the playbook run whose process is ``playbook_pid``: its pid and start (a resume is another
    playbook run)."""
    return f"{playbook_pid}-{process_started(playbook_pid)}"


def barrier_dir(cell_id: str, playbook_pid: int, tmp: Path | None = None) -> Path:
    """The barrier of one cell in the playbook run whose process is ``playbook_pid``."""
    root = Path(tempfile.gettempdir()) if tmp is None else tmp
    return root / f"{PREFIX}-{playbook_pid}-{process_started(playbook_pid)}-{cell_id}"


def _mark(directory: Path, state: str, me: str) -> None:
    # A peer that gave up may remove the empty folders at the same moment: make them again.
    for attempt in range(5):
        try:
            (directory / state).mkdir(parents=True, exist_ok=True)
            (directory / state / me).touch()
            return
        except FileNotFoundError:
            if attempt == 4:
                raise


def join(directory: Path, me: str, pid: int | None = None) -> None:
    """Mark ``me`` (process ``pid``, this one by default) as measuring this cell, before its warm-up."""
    pid = os.getpid() if pid is None else pid
    _mark(directory, JOINED, me)
    (directory / JOINED / me).write_text(f"{pid} {process_started(pid)}\n", encoding="ascii")


def dead_peers(directory: Path, peers: Sequence[str]) -> list[str]:
    """Peers that joined and are not ready whose process has ended."""
    waiting = [p for p in peers if not (directory / READY / p).exists() and (directory / JOINED / p).exists()]
    return [p for p in waiting if not _alive(directory, p)]


def _zombie(pid: int) -> bool:
    # A worker killed a moment ago stays a zombie until ansible-playbook reaps it.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def wait_for_peers(
    directory: Path,
    me: str,
    peers: Sequence[str],
    timeout_s: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    gone: Callable[[], str | None] | None = None,
    lead: str | None = None,
) -> float:
    """Mark ``me`` ready in ``directory``, wait until every peer is, mark ``me`` passed; return the seconds
    waited. With a ``lead`` other than ``me``, also wait for the lead's go (:func:`release`) before passing.
    After ``timeout_s`` raises TimeoutError naming the peers that never arrived; when a peer that joined
    dies first, or ``gone()`` returns a reason, raises BarrierBroken at once. Either way ``me``'s markers
    are taken back, so that a late peer does not start alone."""
    _mark(directory, READY, me)
    start = clock()
    while True:
        missing = [p for p in peers if not (directory / READY / p).exists()]
        if not missing and (lead in (None, me) or (directory / GO / lead).exists()):
            _mark(directory, PASSED, me)
            return clock() - start
        dead = dead_peers(directory, missing)
        if not missing and lead is not None and not _alive(directory, lead):
            dead = [lead]
        reason = f"loadgens stopped before their measured run: {', '.join(dead)}" if dead else None
        reason = reason or (gone() if gone else None)
        if reason or clock() - start > timeout_s:
            for state in (READY, JOINED):
                (directory / state / me).unlink(missing_ok=True)
            for peer in dead:
                (directory / JOINED / peer).unlink(missing_ok=True)
            _remove_if_empty(directory)
            if reason:
                raise BarrierBroken(reason)
            if not missing:
                raise TimeoutError(f"no go from {lead} after {timeout_s:g} s")
            raise TimeoutError(f"loadgens not ready after {timeout_s:g} s: {', '.join(missing)}")
        sleep(0.05)


def release(directory: Path, me: str) -> None:
    """The lead's go, once it is ready to start its measured run: the peers waiting for it pass."""
    _mark(directory, GO, me)


def _alive(directory: Path, peer: str) -> bool:
    # A peer without a joined marker (an older caller, or one being written) counts as alive.
    try:
        pid, started = (directory / JOINED / peer).read_text(encoding="ascii").split()
        return process_started(int(pid)) == started and not _zombie(int(pid))
    except ProcessLookupError:
        return False
    except (OSError, ValueError):
        return True


def leave_barrier(directory: Path, peers: Sequence[str]) -> None:
    """After the cell: remove the barrier once every peer has passed it. Until then a peer still waiting
    needs the others' ready markers, and the last of them to leave removes the folder."""
    if all((directory / PASSED / p).exists() for p in peers):
        shutil.rmtree(directory, ignore_errors=True)


def _remove_if_empty(directory: Path) -> None:
    # rmdir only: a folder a late peer has just marked itself in is not empty and stays.
    for folder in (directory / READY, directory / PASSED, directory / JOINED, directory / GO, directory):
        try:
            os.rmdir(folder)
        except OSError:
            pass
