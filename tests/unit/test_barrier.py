import threading
from pathlib import Path

import pytest

from benchstack.merge import wait_for_peers


def test_the_last_loadgen_to_arrive_releases_every_one(tmp_path: Path) -> None:
    waited: dict[str, float] = {}
    lg2 = threading.Thread(
        target=lambda: waited.setdefault("lg2", wait_for_peers(tmp_path, "lg2", ["lg1", "lg2"], 10))
    )
    lg2.start()
    lg2.join(0.3)
    assert lg2.is_alive()  # lg1 has not arrived yet
    waited["lg1"] = wait_for_peers(tmp_path, "lg1", ["lg1", "lg2"], 10)
    lg2.join(5)
    assert not lg2.is_alive()
    assert waited["lg2"] >= 0.3 and waited["lg1"] < 0.3


def test_a_loadgen_that_never_arrives_is_named_after_the_timeout(tmp_path: Path) -> None:
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    with pytest.raises(TimeoutError, match="not ready after 1 s: lg2"):
        wait_for_peers(tmp_path, "lg1", ["lg1", "lg2"], 1, sleep=sleep, clock=lambda: now[0])
