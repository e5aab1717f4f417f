import os
import subprocess
import threading
from pathlib import Path

import pytest

from benchstack.measure import barrier
from benchstack.measure.barrier import (
    barrier_dir,
    leave_barrier,
    process_started,
    started_by_ps,
    wait_for_peers,
)

PEERS = ["lg1", "lg2"]


class FakeClock:
    """Time that passes only when the barrier sleeps: a timeout without waiting for it."""

    def __init__(self) -> None:
        self.now = 0.0

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def __call__(self) -> float:
        return self.now


class Polls:
    """The pauses of a loadgen waiting in another thread: its k-th poll is held in its pause until the test
    lets k polls go, so the test knows it looked (and found it must wait) without waiting real time. Its
    clock is the pauses it took."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.count = 0
        self.allowed = 0
        self.now = 0.0

    def sleep(self, seconds: float) -> None:
        with self.changed:
            self.count += 1
            self.now += seconds
            self.changed.notify_all()
            # Bounded: a test that failed before letting it go ends the thread too.
            if not self.changed.wait_for(lambda: self.allowed >= self.count, timeout=10):
                raise TimeoutError("the test never let this poll go on")

    def clock(self) -> float:
        return self.now

    def polled(self, count: int) -> None:
        """Returns once the waiting loadgen has looked ``count`` times, held in its pause after the last."""
        with self.changed:
            self.allowed = max(self.allowed, count - 1)
            self.changed.notify_all()
            assert self.changed.wait_for(lambda: self.count >= count, timeout=10)

    def go_on(self) -> None:
        with self.changed:
            self.allowed = 1_000_000
            self.changed.notify_all()


def test_the_last_loadgen_to_arrive_releases_every_one(tmp_path: Path) -> None:
    waited: dict[str, float] = {}
    polls = Polls()
    lg2 = threading.Thread(
        daemon=True,
        target=lambda: waited.setdefault(
            "lg2", wait_for_peers(tmp_path, "lg2", PEERS, 9, sleep=polls.sleep, clock=polls.clock)
        ),
    )
    lg2.start()
    polls.polled(3)
    assert lg2.is_alive() and waited == {}  # lg1 has not arrived yet: lg2 looked three times and waits
    clock = FakeClock()
    waited["lg1"] = wait_for_peers(tmp_path, "lg1", PEERS, 10, sleep=clock.sleep, clock=clock)
    polls.go_on()
    lg2.join(5)
    assert not lg2.is_alive()
    # lg2 waited its three pauses; lg1 found lg2 ready and passed without one.
    assert waited == {"lg2": pytest.approx(3 * 0.05), "lg1": 0.0}


def test_a_loadgen_that_never_arrives_is_named_after_the_timeout(tmp_path: Path) -> None:
    clock = FakeClock()
    with pytest.raises(TimeoutError, match="not ready after 1 s: lg2"):
        wait_for_peers(tmp_path / "b", "lg1", PEERS, 1, sleep=clock.sleep, clock=clock)


def test_a_peer_that_gave_up_does_not_let_a_late_one_start_alone(tmp_path: Path) -> None:
    directory = tmp_path / "b"
    clock = FakeClock()
    with pytest.raises(TimeoutError):
        wait_for_peers(directory, "lg1", PEERS, 1, sleep=clock.sleep, clock=clock)
    assert not directory.exists()  # its marker taken back, the empty folders removed
    with pytest.raises(TimeoutError, match="not ready after 1 s: lg1"):
        wait_for_peers(directory, "lg2", PEERS, 1, sleep=clock.sleep, clock=clock)
    assert not directory.exists()


def test_the_barrier_is_removed_when_every_loadgen_has_left(tmp_path: Path) -> None:
    directory = tmp_path / "b"

    def loadgen(me: str) -> None:
        wait_for_peers(directory, me, PEERS, 10)
        leave_barrier(directory, PEERS)

    threads = [threading.Thread(target=loadgen, args=(me,)) for me in PEERS]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert list(tmp_path.iterdir()) == []


def test_the_first_to_leave_keeps_the_barrier_for_a_peer_still_waiting(tmp_path: Path) -> None:
    # lg2 marked itself ready but has not yet seen lg1's marker when lg1 passes, measures and leaves.
    directory = tmp_path / "b"
    (directory / "ready").mkdir(parents=True)
    (directory / "ready" / "lg2").touch()
    wait_for_peers(directory, "lg1", PEERS, 10)
    leave_barrier(directory, PEERS)
    assert (directory / "ready" / "lg1").exists()
    clock = FakeClock()
    wait_for_peers(directory, "lg2", PEERS, 1, sleep=clock.sleep, clock=clock)  # passes: lg1 is still there
    leave_barrier(directory, PEERS)
    assert not directory.exists()


# ---------------------------------------------------------------- the name


def test_the_barrier_is_named_after_the_playbook_process_and_the_cell(tmp_path: Path) -> None:
    pid = os.getpid()
    first = barrier_dir("s__ab__c50__r1", pid, tmp_path)
    assert first == barrier_dir("s__ab__c50__r1", pid, tmp_path)
    assert first.name == f"bench-stack-barrier-{pid}-{process_started(pid)}-s__ab__c50__r1"
    assert barrier_dir("s__ab__c50__r2", pid, tmp_path) != first


def test_a_barrier_left_by_an_earlier_process_with_the_same_pid_is_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An interrupted playbook left every loadgen's ready marker behind; the next one got the same pid.
    monkeypatch.setattr(barrier, "process_started", lambda pid: "started-earlier")
    stale = barrier_dir("cell", 4242, tmp_path)
    for me in PEERS:
        (stale / "ready").mkdir(parents=True, exist_ok=True)
        (stale / "ready" / me).touch()
    monkeypatch.setattr(barrier, "process_started", lambda pid: "started-later")
    clock = FakeClock()
    with pytest.raises(TimeoutError, match="not ready after 1 s: lg2"):
        wait_for_peers(barrier_dir("cell", 4242, tmp_path), "lg1", PEERS, 1, sleep=clock.sleep, clock=clock)


def test_process_start_tells_a_later_process_apart() -> None:
    child = subprocess.Popen(["sleep", "5"])
    try:
        assert process_started(child.pid) == process_started(child.pid)
        assert process_started(child.pid) != process_started(os.getpid())
    finally:
        child.kill()
        child.wait()
    with pytest.raises(ProcessLookupError):
        process_started(child.pid)


def test_without_proc_the_start_time_comes_from_ps() -> None:
    pid = os.getpid()
    out = subprocess.run(["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True, text=True).stdout
    assert started_by_ps(pid) == "-".join(out.split()).replace(":", "-")
    with pytest.raises(ProcessLookupError):
        started_by_ps(2**22 + 1)  # above Linux's highest pid


# ---------------------------------------------------------------- a peer or the playbook gone


def test_a_peer_that_died_before_its_measured_run_stops_the_wait_at_once(tmp_path: Path) -> None:
    directory = tmp_path / "b"
    peer = subprocess.Popen(["sleep", "30"])
    barrier.join(directory, "lg2", peer.pid)  # lg2 started the cell: warming up
    peer.kill()
    peer.wait()
    clock = FakeClock()
    with pytest.raises(barrier.BarrierBroken, match="loadgens stopped before their measured run: lg2"):
        wait_for_peers(directory, "lg1", PEERS, 300, sleep=clock.sleep, clock=clock)
    assert clock.now < 1  # not the 300 s timeout
    assert not directory.exists()


def test_a_peer_still_warming_up_is_waited_for(tmp_path: Path) -> None:
    directory = tmp_path / "b"
    barrier.join(directory, "lg2")  # this process: alive
    clock = FakeClock()
    with pytest.raises(TimeoutError, match="not ready after 2 s: lg2"):
        wait_for_peers(directory, "lg1", PEERS, 2, sleep=clock.sleep, clock=clock)


def test_the_callers_gone_check_stops_the_wait(tmp_path: Path) -> None:
    clock = FakeClock()
    with pytest.raises(barrier.BarrierBroken, match="the playbook has ended"):
        wait_for_peers(
            tmp_path / "b",
            "lg1",
            PEERS,
            300,
            sleep=clock.sleep,
            clock=clock,
            gone=lambda: "the playbook has ended",
        )
    assert not (tmp_path / "b").exists()


# ---------------------------------------------------------------- the lead's go


def test_the_others_start_only_after_the_leads_go(tmp_path: Path) -> None:
    directory = tmp_path / "b"
    passed: list[str] = []
    polls = Polls()
    lg2 = threading.Thread(
        daemon=True,
        target=lambda: passed.append(
            str(wait_for_peers(directory, "lg2", PEERS, 9, sleep=polls.sleep, clock=polls.clock, lead="lg1"))
        ),
    )
    lg2.start()
    wait_for_peers(directory, "lg1", PEERS, 9, lead="lg1")  # the lead passes when every peer is ready
    assert (directory / "passed" / "lg1").exists()
    # lg2 looks again after the lead passed (the second poll from here began after it) and still waits for
    # the lead's round trip to the target.
    polls.polled(polls.count + 2)
    assert lg2.is_alive() and passed == []
    barrier.release(directory, "lg1")
    polls.go_on()
    lg2.join(5)
    assert not lg2.is_alive() and len(passed) == 1


def test_a_lead_that_died_before_its_go_stops_the_wait_at_once(tmp_path: Path) -> None:
    directory = tmp_path / "b"
    lead = subprocess.Popen(["sleep", "30"])
    barrier.join(directory, "lg1", lead.pid)
    barrier._mark(directory, barrier.READY, "lg1")  # passed the barrier, then killed
    lead.kill()
    lead.wait()
    clock = FakeClock()
    with pytest.raises(barrier.BarrierBroken, match="stopped before their measured run: lg1"):
        wait_for_peers(directory, "lg2", PEERS, 300, sleep=clock.sleep, clock=clock, lead="lg1")
    assert clock.now < 1


def test_no_go_from_a_living_lead_times_out_naming_it(tmp_path: Path) -> None:
    directory = tmp_path / "b"
    barrier.join(directory, "lg1")  # this process: alive
    barrier._mark(directory, barrier.READY, "lg1")
    clock = FakeClock()
    with pytest.raises(TimeoutError, match="no go from lg1 after 2 s"):
        wait_for_peers(directory, "lg2", PEERS, 2, sleep=clock.sleep, clock=clock, lead="lg1")
