"""The host's lock, taken in the one command that reads the host (benchstack.measure.runlock.take_host, the
lock in benchstack.provision.hoststate run as the host runs it): one run at a time on a host, whatever its run
folder, which the run folder's lock alone does not see. "Other runs" are real processes (sleep), alive or
ended, as the lock judges them by pid; the host side is the real script with the read request provision.yml
sends, on a record and a lock file in a temporary folder: run by ``python3 -c`` in the first test, its
``main`` in this process in the others (tests/unit/provision/hostside.py)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import hostside
import pytest

from benchstack.measure.runlock import (
    HOST_LOCK_FILE,
    POLL_S,
    RunLockError,
    acquire,
    holder,
    release_host,
    take_host,
    worker,
)
from benchstack.plan.settings import lock_wait_seconds
from benchstack.provision import hostcommand, hostrecord, hoststate

Ask = Callable[[dict[str, Any]], dict[str, Any]]
UNITS = ["nginx.service"]


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
def marker(tmp_path: Path) -> Path:
    """The host's provisioning record: one role, no manifest."""
    path = tmp_path / "host" / "provisioned.json"
    path.parent.mkdir(parents=True)
    record = {"schema": hostrecord.SCHEMA, "roles": {"nginx": {"hash": "h", "facts": {}, "at": "t"}}}
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


class Host:
    """Sends the lock requests of take_host as bench_provision_state does: each in the whole read request, on
    the test's record and lock file; keeps every output. ``real``: as the shell command the controller sends
    (``python3 -c``), else the host side's main in this process."""

    def __init__(self, marker: Path, lock: Path, real: bool = False) -> None:
        self.marker, self.lock, self.real = marker, lock, real
        self.outputs: list[str] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        read = hostcommand.read_request(UNITS, lock={**request, "path": str(self.lock)})
        full = {**read, "marker": str(self.marker)}
        stdout = hostside.run_on_host(full) if self.real else hostside.answer(full)
        self.outputs.append(stdout)
        answer = hostcommand.parse_lock(stdout)
        assert answer is not None, stdout
        return answer

    def release(self, request: dict[str, Any]) -> dict[str, Any]:
        """As bench_host_lock does: the lock alone."""
        lock = {**request, "path": str(self.lock)}
        if self.real:
            command = hostcommand.lock_command("python3", lock)
            stdout = subprocess.run(["sh", "-c", command], check=True, capture_output=True, text=True).stdout
        else:
            stdout = hostside.answer({"lock": lock})
        answer = hostcommand.parse_lock(stdout)
        assert answer is not None and hostcommand.SEPARATOR not in stdout, stdout
        return answer


@pytest.fixture
def host(marker: Path, lock: Path) -> Host:
    return Host(marker, lock)


@pytest.fixture
def real_host(marker: Path, lock: Path) -> Host:
    return Host(marker, lock, real=True)


def read_back(stdout: str) -> dict[str, Any]:
    """The record as provisioning parses it from one output (empty when the host was not read)."""
    return hostcommand.parse_read(stdout, UNITS)[0]


def runs(tmp_path: Path, *names: str) -> list[Path]:
    folders = [tmp_path / "results" / name for name in names]
    for folder in folders:
        folder.mkdir(parents=True)
    return folders


def held_by(lock: Path) -> dict[str, Any]:
    return json.loads(lock.read_text(encoding="utf-8"))


def hold(lock: Path, entry: dict[str, Any]) -> None:
    """The host's lock as another run left it."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(json.dumps(entry), encoding="utf-8")


class Time:
    """A clock that moves only when slept on; ``then`` runs after each sleep (its count)."""

    def __init__(self, then: Callable[[int], None] = lambda _: None) -> None:
        self.now, self.slept, self.then = 0.0, [], then

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        self.then(len(self.slept))

    def clock(self) -> float:
        return self.now


def test_a_free_host_is_held_in_the_command_that_reads_it_and_released_by_its_run(
    tmp_path: Path, lock: Path, real_host: Host
) -> None:
    host = real_host  # the commands the controller sends, run by sh and python3 -c
    (run,) = runs(tmp_path, "a")
    assert take_host("web", run, os.getpid(), host) == []
    # One command: the lock taken, then the record, the units and what any stack left read.
    [out] = host.outputs
    assert read_back(out)["roles"]["nginx"]["hash"] == "h"
    assert hostcommand.parse_read(out, UNITS)[1] == {"nginx.service": False}
    assert set(hostcommand.parse_found(out)) == {"units", "files", "paths", "made"}
    assert held_by(lock)["pid"] == os.getpid() and held_by(lock)["run"] == str(run)
    written = lock.read_text(encoding="utf-8")
    # benchmark.yml reads again after provision.yml: the same one command, the lock not written again.
    assert take_host("web", run, os.getpid(), host) == []
    assert len(host.outputs) == 2 and read_back(host.outputs[1])["roles"]
    assert lock.read_text(encoding="utf-8") == written
    assert release_host(os.getpid(), host.release)
    assert lock.read_text(encoding="utf-8") == ""
    assert not release_host(os.getpid(), host.release)


def test_a_run_in_another_folder_is_refused_while_a_live_run_holds_the_host_and_reads_nothing(
    tmp_path: Path, lock: Path, host: Host, other: subprocess.Popen[bytes]
) -> None:
    first, second = runs(tmp_path, "a", "b")
    hold(lock, holder(other.pid, run=str(first)))
    # The run folder's lock alone lets the second run in: its folder is free.
    assert acquire(second, os.getpid()) == []
    with pytest.raises(
        RunLockError,
        match=rf"^web is in use by another bench-stack run \(run folder {first}, pid {other.pid} on .*let it",
    ):
        take_host("web", second, os.getpid(), host, wait_s=0)
    assert held_by(lock)["pid"] == other.pid
    # Not held: nothing of the host was read for a run that may not touch it.
    assert read_back(host.outputs[-1]) == {} and hostcommand.SEPARATOR not in host.outputs[-1]
    with pytest.raises(RunLockError, match="in use by another bench-stack run"):
        take_host("web", second, os.getpid(), host, check_only=True, wait_s=0)
    assert not release_host(os.getpid(), host.release)  # not ours to release
    assert held_by(lock)["pid"] == other.pid


def test_an_ended_runs_lock_is_taken_over_naming_it_and_the_host_read_then(
    tmp_path: Path, lock: Path, host: Host, other: subprocess.Popen[bytes]
) -> None:
    first, second = runs(tmp_path, "a", "b")
    hold(lock, holder(other.pid, run=str(first)))
    end(other)
    [message] = take_host("web", second, os.getpid(), host, wait_s=0)
    ended = "an ended run that kept it"
    assert message.startswith(f"web: took over its lock from {ended} (run folder {first}, pid {other.pid}")
    assert held_by(lock)["pid"] == os.getpid() and held_by(lock)["run"] == str(second)
    # Asked twice: the ended holder found (nothing read), then taken over and read in one command.
    assert [bool(read_back(out)) for out in host.outputs] == [False, True]


def test_an_ended_runs_workers_are_waited_for_bounded_then_refused_or_taken_over(
    tmp_path: Path, lock: Path, host: Host, other: subprocess.Popen[bytes]
) -> None:
    first, second = runs(tmp_path, "a", "b")
    controller = subprocess.Popen(["sleep", "60"])
    hold(lock, holder(controller.pid, run=str(first)))
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
                host,
                wait_s=10,
                sleep=waited.append,
                clock=lambda: float(next(clock)),
            )
        assert len(waited) == 4
        assert held_by(lock)["pid"] == controller.pid
        end(other)
        [message] = take_host("web", second, os.getpid(), host, wait_s=10, sleep=waited.append)
        assert message.startswith("web: took over") and len(waited) == 4


def test_with_bench_lock_wait_a_live_runs_hold_is_waited_for_polling_then_the_host_is_taken(
    tmp_path: Path, lock: Path, host: Host, other: subprocess.Popen[bytes]
) -> None:
    first, second = runs(tmp_path, "a", "b")
    hold(lock, holder(other.pid, run=str(first)))
    told: list[str] = []
    # The first run ends while the second waits.
    time = Time(lambda count: end(other) if count == 3 else None)
    [waited, took] = take_host(
        "web",
        second,
        os.getpid(),
        host,
        lock_wait=60,
        sleep=time.sleep,
        clock=time.clock,
        waiting=told.append,
    )
    assert time.slept == [POLL_S] * 3
    # Told once, when the wait begins.
    [said] = told
    assert said.startswith(f"web is held by another bench-stack run (run folder {first}, pid {other.pid} on ")
    assert said.endswith(": waiting up to 60 s for it to end (bench_lock_wait)")
    assert waited.startswith(
        f"web: waited {3 * POLL_S:.0f} s for another bench-stack run (run folder {first}"
    )
    assert took.startswith("web: took over its lock from an ended run")
    assert held_by(lock)["pid"] == os.getpid() and read_back(host.outputs[-1])["roles"]


def test_with_bench_lock_wait_a_hold_that_outlasts_it_is_refused_and_check_mode_never_waits(
    tmp_path: Path, lock: Path, host: Host, other: subprocess.Popen[bytes]
) -> None:
    first, second = runs(tmp_path, "a", "b")
    hold(lock, holder(other.pid, run=str(first)))
    time = Time()
    with pytest.raises(
        RunLockError, match=r"in use by another .* \(still held after bench_lock_wait, 5 s\)$"
    ):
        take_host("web", second, os.getpid(), host, lock_wait=5, sleep=time.sleep, clock=time.clock)
    assert len(time.slept) == 3 and held_by(lock)["pid"] == other.pid  # at 0, 2 and 4 s; refused at 6
    time.slept.clear()
    with pytest.raises(RunLockError, match=r"in use by another bench-stack run .*run again$"):
        take_host("web", second, os.getpid(), host, check_only=True, lock_wait=5, sleep=time.sleep)
    assert time.slept == []


def test_bench_lock_wait_is_seconds_zero_or_more() -> None:
    assert [lock_wait_seconds(v) for v in (0, "30", 1.5, "0")] == [0.0, 30.0, 1.5, 0.0]
    assert [lock_wait_seconds(v) for v in (-1, "soon", None, True, float("inf"), float("nan"))] == [None] * 6


def test_a_lock_of_another_controller_is_refused_naming_the_file(
    tmp_path: Path, lock: Path, host: Host
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
        take_host("web", run, os.getpid(), host, wait_s=0)


def test_check_mode_writes_nothing_and_still_reads_the_host(
    tmp_path: Path, lock: Path, host: Host, other: subprocess.Popen[bytes]
) -> None:
    (run,) = runs(tmp_path, "a")
    assert take_host("web", run, os.getpid(), host, check_only=True) == []
    assert not lock.exists() and read_back(host.outputs[-1])["roles"]
    assert take_host("web", run, os.getpid(), host) == []
    assert release_host(os.getpid(), host.release)
    assert take_host("web", run, os.getpid(), host, check_only=True) == []
    assert lock.read_text(encoding="utf-8") == ""
    # An ended run's lock: it would be taken over; the host is read all the same.
    lock.write_text(json.dumps(holder(other.pid, run=str(run))), encoding="utf-8")
    end(other)
    [message] = take_host("web", run, os.getpid(), host, check_only=True)
    assert message.endswith("it would be taken over") and read_back(host.outputs[-1])["roles"]
    assert held_by(lock)["pid"] == other.pid


def test_an_unreadable_lock_is_free(tmp_path: Path, lock: Path, host: Host) -> None:
    (run,) = runs(tmp_path, "a")
    lock.parent.mkdir(parents=True)
    lock.write_text('{"pid": 12', encoding="utf-8")  # a writer killed half way
    assert take_host("web", run, os.getpid(), host) == []
    assert held_by(lock)["pid"] == os.getpid()


def test_the_host_side_takes_only_a_free_lock_its_own_or_the_one_it_was_told_is_over(host: Host) -> None:
    ask = host.release  # the lock alone
    me, them = holder(os.getpid(), run="/r/a"), {**holder(os.getpid(), run="/r/b"), "pid": 1, "started": "x"}
    assert ask({"op": "take", "me": them, "over": None}) == {"held": True, "was": None}
    assert ask({"op": "take", "me": me, "over": None})["held"] is False
    assert ask({"op": "release", "me": me, "over": None})["held"] is False
    stale = {**them, "at": "earlier"}  # the identity is host, pid and start; not when it was written
    assert ask({"op": "take", "me": me, "over": stale})["held"] is True
    assert ask({"op": "read", "me": them, "over": None}) == {"held": False, "was": me}
    # Its own: held, not written again (a later "at" does not count).
    assert ask({"op": "take", "me": {**me, "at": "later"}, "over": None}) == {"held": True, "was": me}
    assert held_by(host.lock) == me


def test_the_read_asks_systemd_once_for_every_unit_it_needs(
    tmp_path: Path, marker: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The roles' services, what they made and what any stack left: one ``systemctl show`` (each costs
    tens of milliseconds to start on a host)."""
    record = json.loads(marker.read_text(encoding="utf-8"))
    record["roles"]["nginx"]["made"] = {"units": ["nginx.service", "bench-a@1.service"]}
    marker.write_text(json.dumps(record), encoding="utf-8")
    calls: list[list[str]] = []

    def out(argv: list[str]) -> str:
        calls.append(argv)
        if argv[1] == "list-units":
            return "bench-old@1.service loaded active running x\n"
        units = argv[3:]
        return "\n\n".join(f"Id={u}\nActiveState=active\nUnitFileState=enabled" for u in units) + "\n"

    monkeypatch.setattr(hoststate, "_out", out)
    hoststate.read({"marker": str(marker), "active": ["nginx.service", "bench-b@1.service"], "found": True})
    stdout = capsys.readouterr().out
    shows = [argv for argv in calls if argv[1] == "show"]
    assert len(shows) == 1
    assert shows[0][3:] == ["nginx.service", "bench-b@1.service", "bench-a@1.service", "bench-old@1.service"]
    assert hostcommand.parse_read(stdout, ["nginx.service", "bench-b@1.service"])[1] == {
        "nginx.service": True,
        "bench-b@1.service": True,
    }
    assert hostcommand.parse_now(stdout)["nginx"] == {
        "unit nginx.service": "enabled active",
        "unit bench-a@1.service": "enabled active",
    }
    assert hostcommand.parse_found(stdout)["units"] == {"bench-old@1.service": "enabled active"}


def test_the_host_side_runs_on_the_oldest_python_the_hosts_have_and_names_the_same_file() -> None:
    ast.parse(hostcommand.HOSTSTATE.read_text(encoding="utf-8"), feature_version=(3, 6))
    assert hoststate.LOCK_PATH == HOST_LOCK_FILE


def test_a_host_side_that_never_gives_the_lock_is_asked_a_few_times_then_refused(tmp_path: Path) -> None:
    (run,) = runs(tmp_path, "a")
    asked: list[dict[str, Any]] = []

    def free_but_never_held(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        return {"held": False, "was": None}

    with pytest.raises(
        RunLockError, match=rf"^web: its lock at {HOST_LOCK_FILE} was not taken after 5 tries"
    ):
        take_host("web", run, os.getpid(), free_but_never_held)
    assert len(asked) == 6
