"""The run lock (benchstack.measure.runlock) and dropping cells (benchstack.measure.drop, bench-stack drop):
one controller at a time in a run folder; a killed one's workers are waited for; named cells leave a run to be
measured again. "Other runs" are real processes here (sleep), alive or ended, as the lock judges them by
pid."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import STORED_META, read_data

from benchstack.cli import main
from benchstack.kinds.loadtools import parse
from benchstack.measure.drop import DropError, drop_cells
from benchstack.measure.runlock import RunLockError, acquire, holder, release, worker
from benchstack.results.cell import load_cells, make_cell, write_cell
from benchstack.results.layout import DROPPED_DIR, LOCK_FILE, WORKERS_DIR


@pytest.fixture
def other() -> Iterator[subprocess.Popen[bytes]]:
    """Another run's controller (or worker): a process that runs until the test ends it."""
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    proc.kill()
    proc.wait()


def end(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait()


def lock_of(run: Path, entry: dict[str, Any]) -> None:
    (run / LOCK_FILE).write_text(json.dumps(entry), encoding="utf-8")


def test_a_free_folder_is_locked_by_its_run_and_released_by_it(tmp_path: Path) -> None:
    assert acquire(tmp_path, os.getpid()) == []
    assert json.loads((tmp_path / LOCK_FILE).read_text(encoding="utf-8"))["pid"] == os.getpid()
    assert acquire(tmp_path, os.getpid()) == []  # each import of plan.yml asks again: it holds it
    assert release(tmp_path, os.getpid()) and not (tmp_path / LOCK_FILE).exists()


def test_a_resume_refuses_while_another_live_run_holds_the_folder(
    tmp_path: Path, other: subprocess.Popen[bytes]
) -> None:
    lock_of(tmp_path, holder(other.pid))
    with pytest.raises(RunLockError, match=rf"in use by another bench-stack run \(pid {other.pid} on "):
        acquire(tmp_path, os.getpid(), wait_s=0)
    assert not release(tmp_path, os.getpid())  # not ours to release
    assert json.loads((tmp_path / LOCK_FILE).read_text(encoding="utf-8"))["pid"] == other.pid


def test_a_stale_lock_is_taken_over_with_a_message(tmp_path: Path, other: subprocess.Popen[bytes]) -> None:
    lock_of(tmp_path, holder(other.pid))
    end(other)
    [message] = acquire(tmp_path, os.getpid(), wait_s=0)
    assert message.startswith(
        f"took over the run folder's lock from a run that ended without releasing it (pid {other.pid}"
    )
    assert json.loads((tmp_path / LOCK_FILE).read_text(encoding="utf-8"))["pid"] == os.getpid()


def test_a_resume_waits_for_a_killed_runs_workers_bounded_then_refuses_or_takes_over(
    tmp_path: Path, other: subprocess.Popen[bytes]
) -> None:
    controller = subprocess.Popen(["sleep", "60"])
    lock_of(tmp_path, holder(controller.pid))
    end(controller)
    # The killed controller's worker still measures (its docker exec outlived the controller).
    with worker(tmp_path, other.pid):
        waited: list[float] = []
        clock = iter(range(0, 1000, 2))
        with pytest.raises(RunLockError, match=rf"workers still measure after 10 s \(pid {other.pid} on"):
            acquire(tmp_path, os.getpid(), wait_s=10, sleep=waited.append, clock=lambda: float(next(clock)))
        assert len(waited) == 4  # at 2, 4, 6 and 8 s of 10
        end(other)
        [message] = acquire(tmp_path, os.getpid(), wait_s=10, sleep=waited.append)
        assert message.startswith("took over") and len(waited) == 4
    assert not (tmp_path / WORKERS_DIR / f"{other.pid}.json").exists()


def test_a_lock_held_on_another_host_is_refused_naming_the_file(tmp_path: Path) -> None:
    lock_of(tmp_path, {**holder(os.getpid()), "pid": 1, "host": "elsewhere.example"})
    with pytest.raises(RunLockError, match=rf"on another host .*remove {tmp_path / LOCK_FILE} and resume"):
        acquire(tmp_path, os.getpid(), wait_s=0)


# ---------------------------------------------------------------- bench-stack drop

PARSED = parse("ab", read_data("ab", "normal.txt"))


def stored(run: Path, repetition: int) -> str:
    meta = {**STORED_META, "experiment": "e", "stack": "s", "repetition": repetition, "requests": 2000}
    cell = make_cell(PARSED, **meta)
    path = write_cell(run, cell)
    (run / "raw").mkdir(exist_ok=True)
    (run / "raw" / f"{path.stem}.txt").write_text("ab output\n", encoding="utf-8")
    (run / "raw" / f"{path.stem}.vmstat.txt").write_text("vmstat\n", encoding="utf-8")
    return path.stem


def test_drop_moves_named_cells_and_their_raw_files_out_of_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "run.json").write_text("{}", encoding="utf-8")
    one, two, three = (stored(tmp_path, r) for r in (1, 2, 3))
    assert main(["drop", str(tmp_path), two, f"cells/{three}.json"]) == 0
    out = capsys.readouterr().out
    assert f"dropped {two}\ndropped {three}\n" in out and "-e bench_run_dir=" in out
    assert [c.repetition for c in load_cells(tmp_path)] == [1]
    assert sorted(p.name for p in (tmp_path / "raw").iterdir()) == [f"{one}.txt", f"{one}.vmstat.txt"]
    [dest] = (tmp_path / DROPPED_DIR).iterdir()
    assert (dest / "cells" / f"{two}.json").is_file() and (dest / "raw" / f"{three}.vmstat.txt").is_file()


def test_drop_takes_a_merged_cells_loadgen_cells_too_so_a_resume_measures_it_again(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text("{}", encoding="utf-8")
    merged = stored(tmp_path, 1)
    for lg in ("lg1", "lg2"):
        stored(tmp_path / "loadgens" / lg, 1)
    drop_cells(tmp_path, [merged])
    found = list(tmp_path.glob(f"**/cells/{merged}.json"))
    assert len(found) == 3 and all(DROPPED_DIR in p.relative_to(tmp_path).parts for p in found)


def test_drop_refuses_unknown_cells_moving_nothing_and_refuses_while_a_run_holds_the_folder(
    tmp_path: Path, other: subprocess.Popen[bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "run.json").write_text("{}", encoding="utf-8")
    one = stored(tmp_path, 1)
    assert main(["drop", str(tmp_path), one, "no-such-cell"]) == 1
    assert "no stored cell no-such-cell" in capsys.readouterr().err
    assert len(load_cells(tmp_path)) == 1
    with pytest.raises(DropError, match="is not a cell id"):
        drop_cells(tmp_path, ["bad id!"])
    lock_of(tmp_path, holder(other.pid))
    with pytest.raises(DropError, match=rf"in use by a bench-stack run \(pid {other.pid} "):
        drop_cells(tmp_path, [one])
    end(other)
    drop_cells(tmp_path, [one])
    assert load_cells(tmp_path) == []
