"""The host's lock (benchstack.runlock.take_host, benchstack.hostlock run as the host runs it): one run at a
time on a host, whatever its run folder, which the run folder's lock alone does not see. "Other runs" are
real processes (sleep), alive or ended, as the lock judges them by pid; the host side is the real script,
run by ``python3 -c`` on a lock file in a temporary folder."""

from __future__ import annotations

import ast
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchstack.runlock import (
    HOSTLOCK,
    RunLockError,
    acquire,
    holder,
    host_lock_command,
    release_host,
    take_host,
    worker,
)

Ask = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture
def other() -> Iterator[subprocess.Popen[bytes]]:
    """Another run's controller (or worker): a process that runs until the test ends it."""
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    end(proc)


def end(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait()


@pytest.fixture
def lock(tmp_path: Path) -> Path:
    return tmp_path / "host" / "var" / "lib" / "bench-stack" / "run.lock"


@pytest.fixture
def ask(lock: Path) -> Ask:
    """Sends a request to the host side, as bench_host_lock does (one shell command), on the test's file."""

    def send(request: dict[str, Any]) -> dict[str, Any]:
        command = host_lock_command("python3", {**request, "path": str(lock)})
        done = subprocess.run(["sh", "-c", command], check=True, capture_output=True, text=True)
        return json.loads(done.stdout)

    return send


def runs(tmp_path: Path, *names: str) -> list[Path]:
    folders = [tmp_path / "results" / name for name in names]
    for folder in folders:
        folder.mkdir(parents=True)
    return folders


def held_by(lock: Path) -> dict[str, Any]:
    return json.loads(lock.read_text(encoding="utf-8"))


def test_a_free_host_is_held_by_its_run_naming_its_folder_and_released_by_it(
    tmp_path: Path, lock: Path, ask: Ask
) -> None:
    (run,) = runs(tmp_path, "a")
    assert take_host("web", run, os.getpid(), ask) == []
    assert held_by(lock)["pid"] == os.getpid() and held_by(lock)["run"] == str(run)
    assert take_host("web", run, os.getpid(), ask) == []  # benchmark.yml asks again after provision.yml
    assert release_host(os.getpid(), ask)
    assert lock.read_text(encoding="utf-8") == ""
    assert not release_host(os.getpid(), ask)


def test_a_run_in_another_folder_is_refused_while_a_live_run_holds_the_host(
    tmp_path: Path, lock: Path, ask: Ask, other: subprocess.Popen[bytes]
) -> None:
    first, second = runs(tmp_path, "a", "b")
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps(holder(other.pid, run=str(first))), encoding="utf-8")
    # The run folder's lock alone lets the second run in: its folder is free.
    assert acquire(second, os.getpid()) == []
    with pytest.raises(
        RunLockError,
        match=rf"^web is in use by another bench-stack run \(run folder {first}, pid {other.pid} on .*let it",
    ):
        take_host("web", second, os.getpid(), ask, wait_s=0)
    assert held_by(lock)["pid"] == other.pid
    with pytest.raises(RunLockError, match="in use by another bench-stack run"):
        take_host("web", second, os.getpid(), ask, check_only=True, wait_s=0)
    assert not release_host(os.getpid(), ask)  # not ours to release
    assert held_by(lock)["pid"] == other.pid


def test_an_ended_runs_lock_is_taken_over_naming_it(
    tmp_path: Path, lock: Path, ask: Ask, other: subprocess.Popen[bytes]
) -> None:
    first, second = runs(tmp_path, "a", "b")
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps(holder(other.pid, run=str(first))), encoding="utf-8")
    end(other)
    [message] = take_host("web", second, os.getpid(), ask, wait_s=0)
    ended = "an ended run that kept it"
    assert message.startswith(f"web: took over its lock from {ended} (run folder {first}, pid {other.pid}")
    assert held_by(lock)["pid"] == os.getpid() and held_by(lock)["run"] == str(second)


def test_an_ended_runs_workers_are_waited_for_bounded_then_refused_or_taken_over(
    tmp_path: Path, lock: Path, ask: Ask, other: subprocess.Popen[bytes]
) -> None:
    first, second = runs(tmp_path, "a", "b")
    controller = subprocess.Popen(["sleep", "60"])
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps(holder(controller.pid, run=str(first))), encoding="utf-8")
    end(controller)
    # The killed run's worker still measures on the host (its docker exec outlived the controller).
    with worker(first, other.pid):
        waited: list[float] = []
        clock = iter(range(0, 1000, 2))
        with pytest.raises(RunLockError, match=rf"its workers still measure after 10 s \(pid {other.pid} on"):
            take_host(
                "web",
                second,
                os.getpid(),
                ask,
                wait_s=10,
                sleep=waited.append,
                clock=lambda: float(next(clock)),
            )
        assert len(waited) == 4
        assert held_by(lock)["pid"] == controller.pid
        end(other)
        [message] = take_host("web", second, os.getpid(), ask, wait_s=10, sleep=waited.append)
        assert message.startswith("web: took over") and len(waited) == 4


def test_a_lock_of_another_controller_is_refused_naming_the_file(
    tmp_path: Path, lock: Path, ask: Ask
) -> None:
    (run,) = runs(tmp_path, "a")
    lock.parent.mkdir(parents=True)
    elsewhere = {**holder(os.getpid(), run="/home/x/results/r1"), "pid": 1, "host": "elsewhere.example"}
    lock.write_text(json.dumps(elsewhere), encoding="utf-8")
    with pytest.raises(
        RunLockError,
        match=r"^web is held by a bench-stack run of another controller \(run folder /home/x/results/r1, "
        r"pid 1 on elsewhere.example .*remove /var/lib/bench-stack/run.lock on web and run again",
    ):
        take_host("web", run, os.getpid(), ask, wait_s=0)


def test_check_mode_writes_nothing(tmp_path: Path, lock: Path, ask: Ask) -> None:
    (run,) = runs(tmp_path, "a")
    assert take_host("web", run, os.getpid(), ask, check_only=True) == []
    assert not lock.exists()
    assert take_host("web", run, os.getpid(), ask) == []
    assert release_host(os.getpid(), ask)
    assert take_host("web", run, os.getpid(), ask, check_only=True) == []
    assert lock.read_text(encoding="utf-8") == ""


def test_an_unreadable_lock_is_free(tmp_path: Path, lock: Path, ask: Ask) -> None:
    (run,) = runs(tmp_path, "a")
    lock.parent.mkdir(parents=True)
    lock.write_text('{"pid": 12', encoding="utf-8")  # a writer killed half way
    assert take_host("web", run, os.getpid(), ask) == []
    assert held_by(lock)["pid"] == os.getpid()


def test_the_host_side_takes_only_a_free_lock_its_own_or_the_one_it_was_told_is_over(ask: Ask) -> None:
    me, them = holder(os.getpid(), run="/r/a"), {**holder(os.getpid(), run="/r/b"), "pid": 1, "started": "x"}
    assert ask({"op": "take", "me": them, "over": None}) == {"held": True, "was": None}
    assert ask({"op": "take", "me": me, "over": None})["held"] is False
    assert ask({"op": "release", "me": me, "over": None})["held"] is False
    stale = {**them, "at": "earlier"}  # the identity is host, pid and start; not when it was written
    assert ask({"op": "take", "me": me, "over": stale})["held"] is True
    assert ask({"op": "read", "me": them, "over": None}) == {"held": False, "was": me}


def test_the_host_side_runs_on_the_oldest_python_the_hosts_have() -> None:
    ast.parse(HOSTLOCK.read_text(encoding="utf-8"), feature_version=(3, 6))
