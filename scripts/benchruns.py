"""What the measuring scripts share: a run of bench-stack.yml on the default local inventory, from this
checkout or another one (an older revision, to compare against in the same sitting), with or without a
bounded CPU hog beside the container. Imported by scripts/measure-precision.py and measure-answer.py."""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _spin(end: float) -> None:
    while time.time() < end:
        pass


def hog(stop: multiprocessing.synchronize.Event, on_s: float, off_s: float) -> None:
    """One busy process per CPU, on for ``on_s`` seconds, off for ``off_s``, until ``stop`` is set."""
    while not stop.is_set():
        end = time.time() + on_s
        procs = [multiprocessing.Process(target=_spin, args=(end,)) for _ in range(os.cpu_count() or 1)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        stop.wait(off_s)


def one_run(
    results: Path,
    label: str,
    log: Path,
    disturb: tuple[float, float] | None,
    experiment: str | None,
    tree: Path = ROOT,
) -> tuple[Path, float]:
    """One run of ``tree``'s bench-stack.yml into ``results/label``: (its run folder, wall seconds)."""
    run_dir = results / label
    # That checkout's package, whatever the venv's editable install names (./run does the same).
    env = dict(os.environ, ANSIBLE_CONFIG=str(tree / "ansible.cfg"), PYTHONPATH=str(tree))
    command = [str(Path(sys.executable).with_name("ansible-playbook")), "bench-stack.yml",
               "-e", f"bench_results_dir={results}", "-e", f"bench_run_dir={run_dir}",
               # The verdict is read from run.json; an older checkout ignores this variable.
               "-e", "bench_fail_on=never"]  # fmt: skip
    if experiment:
        command += ["-e", f"experiment={experiment}"]
    stop = multiprocessing.Event()
    hogger = None
    if disturb:
        hogger = multiprocessing.Process(target=hog, args=(stop, *disturb))
        hogger.start()
    start = time.monotonic()
    try:
        proc = subprocess.run(command, cwd=tree, env=env, text=True, capture_output=True, check=False,
                              timeout=3600)  # fmt: skip
    finally:
        stop.set()
        if hogger:
            hogger.join(timeout=120)
    took = time.monotonic() - start
    log.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"{label}: bench-stack.yml failed (log: {log})")
    return run_dir, took
