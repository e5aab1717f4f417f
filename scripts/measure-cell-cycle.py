#!/usr/bin/env python3
"""How many seconds does one cell cost beyond its measured run, and so how many cells fit in a run's budget?

Precision is bought with cells (docs/how-it-works.md#what-precision-this-machine-class-gives), so every
second between two cells' measured windows is precision lost. This runs the default experiment (or
``--experiment``) with a fixed number of rounds and no extra ones, alternately from each project tree given
(``--trees``, e.g. a checkout of an older commit beside this one), on the default local inventory, and reads
from the stored cells, per run:

* the gap between one cell's measured window (the loadgen's clock around the tool) and the next one's:
  the warm-up, the pause, the round trips and the controller's own work, per stack and overall;
* the cycle: (last window's end - first window's start) / (cells - 1), and how many cells
  ``load.max_seconds`` (600 s by default) holds at that cycle.

Run from the project folder, the default inventory provisioned (``./run bench`` once):
``.venv/bin/python scripts/measure-cell-cycle.py [--trees DIR ...] [--runs 2] [--rounds 6]``;
``--analyse DIR...`` reads run folders an earlier call (or any run) left. ``--round-trips N`` only times,
N times alternately in the default container, what a cell sends before its measured run (version probe, wrk
report script, a 2,000-request warm-up of nginx-static) as separate ``docker exec`` calls and as one batch
(:func:`benchstack.measure.remote.batch_script`); never beside a run (its warm-up would load that run's
stacks).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 600


def _time(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def analyse(run_dir: Path) -> dict[str, object]:
    cells = [json.loads(p.read_text(encoding="utf-8")) for p in (run_dir / "cells").glob("*.json")]
    cells = sorted((c for c in cells if c.get("window")), key=lambda c: _time(c["window"]["start"]))
    gaps: dict[str, list[float]] = {}
    for before, after in zip(cells, cells[1:], strict=False):
        gap = _time(after["window"]["start"]) - _time(before["window"]["end"])
        gaps.setdefault(after["stack"], []).append(gap)
    every = [g for v in gaps.values() for g in v]
    span = _time(cells[-1]["window"]["end"]) - _time(cells[0]["window"]["start"]) if cells else 0.0
    cycle = span / (len(cells) - 1) if len(cells) > 1 else float("nan")
    measured = statistics.median(_time(c["window"]["end"]) - _time(c["window"]["start"]) for c in cells)
    return {
        "cells": len(cells),
        "gap": statistics.median(every) if every else float("nan"),
        "gaps": {stack: statistics.median(v) for stack, v in sorted(gaps.items())},
        "cycle": cycle,
        "measured": measured,
    }


def show(label: str, a: dict[str, object]) -> None:
    gaps = ", ".join(f"{s} {g:.2f}" for s, g in a["gaps"].items())  # type: ignore[attr-defined]
    cycle = float(a["cycle"])  # type: ignore[arg-type]
    print(
        f"{label}: {a['cells']} cells, window {a['measured']:.2f} s, median gap {a['gap']:.2f} s, "
        f"cycle {cycle:.2f} s -> {BUDGET_S / cycle:.0f} cells in {BUDGET_S} s\n  gap per stack: {gaps}",
        flush=True,
    )


def one_run(tree: Path, experiment: Path, results: Path, label: str) -> Path:
    run_dir = results / label
    # This tree's package and plugins, whatever the venv's editable install points at.
    env = dict(os.environ, ANSIBLE_CONFIG=str(tree / "ansible.cfg"), PYTHONPATH=str(tree))
    command = [str(Path(sys.executable).with_name("ansible-playbook")), "bench-stack.yml",
               "-e", f"experiment={experiment}", "-e", f"bench_results_dir={results}",
               "-e", f"bench_run_dir={run_dir}",
               # The verdict is read from run.json: the run's gate must not fail the playbook.
               "-e", "bench_fail_on=never"]  # fmt: skip
    proc = subprocess.run(
        command, cwd=tree, env=env, text=True, capture_output=True, check=False, timeout=1800
    )
    (results / f"{label}.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    if proc.returncode != 0:
        raise SystemExit(f"{label}: bench-stack.yml failed (log: {results / f'{label}.log'})")
    return run_dir


def round_trips(times: int) -> None:
    sys.path.insert(0, str(ROOT))
    from benchstack.kinds.loadtools import by_name
    from benchstack.measure.remote import batch_script, load_script, split_batch

    wrk = by_name("wrk")
    warm = "timeout 30 ab -q -k -c32 -n 2000 http://127.0.0.1:8010/index.html"
    commands = [str(wrk.version_probe), str(wrk.setup_command()), load_script("cell-cycle", warm)]

    def execute(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["docker", "exec", "-i", "bench-local", "/bin/sh", "-c", command],
                              capture_output=True, text=True, check=False, timeout=60)  # fmt: skip

    apart, together = [], []
    for _ in range(times):
        start = time.monotonic()
        for command in commands:
            execute(command)
        apart.append(time.monotonic() - start)
        start = time.monotonic()
        replies = split_batch(execute(batch_script(commands)).stdout, len(commands))
        together.append(time.monotonic() - start)
        if [rc for rc, _, _ in replies] != [0] * len(commands):
            raise SystemExit(f"a batched command failed: {replies}")
    a, t = statistics.median(apart), statistics.median(together)
    print(f"{len(commands)} commands before a cell, {times} times each way: one exec each {a:.3f} s, "
          f"one batch {t:.3f} s (median), {a - t:.3f} s saved per cell")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--trees", nargs="+", type=Path, default=[ROOT], help="project folders to compare")
    parser.add_argument("--runs", type=int, default=2, help="runs per tree, alternating (default 2)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per run, no extra ones (default 6)")
    parser.add_argument("--experiment", type=Path, default=ROOT / "experiments" / "sinatra-thin-nginx.yml")
    parser.add_argument("--analyse", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument("--round-trips", type=int, metavar="N")
    args = parser.parse_args()
    if args.round_trips:
        round_trips(args.round_trips)
        return 0
    if args.analyse:
        for run_dir in args.analyse:
            show(str(run_dir), analyse(run_dir))
        return 0
    results = Path(tempfile.mkdtemp(prefix="bench-cycle-"))
    data = yaml.safe_load(args.experiment.read_text(encoding="utf-8"))
    data["load"].update(repetitions=args.rounds, max_repetitions=args.rounds)
    experiment = results / "experiment.yml"
    experiment.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    print(f"results under {results}; {args.rounds} rounds of {args.experiment.name} per run", flush=True)
    found: dict[Path, list[dict[str, object]]] = {tree: [] for tree in args.trees}
    for i in range(args.runs):
        for j, tree in enumerate(args.trees):
            label = f"{i + 1:02d}-tree{j + 1}"
            start = time.monotonic()
            a = analyse(one_run(tree.resolve(), experiment, results, label))
            found[tree].append(a)
            show(f"{label} ({tree}, {time.monotonic() - start:.0f} s)", a)
    print("\nper tree (median over its runs):")
    for tree, runs in found.items():
        gap = statistics.median(float(a["gap"]) for a in runs)  # type: ignore[arg-type]
        cycle = statistics.median(float(a["cycle"]) for a in runs)  # type: ignore[arg-type]
        print(f"  {tree}: gap {gap:.2f} s, cycle {cycle:.2f} s, {BUDGET_S / cycle:.0f} cells in {BUDGET_S} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
