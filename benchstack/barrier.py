"""The barrier at which several loadgens start a cell's measured run together (bench_cell, on the controller).

One barrier is a folder in the controller's temporary folder, named after the cell and the playbook run
(:func:`barrier_dir`: the playbook's pid and its start time, so a later playbook that gets the same pid never
finds an earlier one's markers). Each loadgen marks itself ready and waits for every peer
(:func:`wait_for_peers`), marks itself passed, and after the cell leaves (:func:`leave_barrier`): the last
one to leave removes the folder. A loadgen that gives up waiting takes its ready marker back, so a late peer
waits too instead of starting alone. Only a playbook killed mid-cell leaves a folder behind, under a name no
later run uses.
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


def wait_for_peers(
    directory: Path,
    me: str,
    peers: Sequence[str],
    timeout_s: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> float:
    """Mark ``me`` ready in ``directory``, wait until every peer is, mark ``me`` passed; return the seconds
    waited. After ``timeout_s`` raises TimeoutError naming the peers that never arrived, and takes ``me``'s
    ready marker back so that a late peer does not start alone."""
    _mark(directory, READY, me)
    start = clock()
    while True:
        missing = [p for p in peers if not (directory / READY / p).exists()]
        if not missing:
            _mark(directory, PASSED, me)
            return clock() - start
        if clock() - start > timeout_s:
            (directory / READY / me).unlink(missing_ok=True)
            _remove_if_empty(directory)
            raise TimeoutError(f"loadgens not ready after {timeout_s:g} s: {', '.join(missing)}")
        sleep(0.05)


def leave_barrier(directory: Path, peers: Sequence[str]) -> None:
    """After the cell: remove the barrier once every peer has passed it. Until then a peer still waiting
    needs the others' ready markers, and the last of them to leave removes the folder."""
    if all((directory / PASSED / p).exists() for p in peers):
        shutil.rmtree(directory, ignore_errors=True)


def _remove_if_empty(directory: Path) -> None:
    # rmdir only: a folder a late peer has just marked itself in is not empty and stays.
    for folder in (directory / READY, directory / PASSED, directory):
        try:
            os.rmdir(folder)
        except OSError:
            pass
