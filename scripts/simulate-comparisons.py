#!/usr/bin/env python3
"""How often do the comparisons call a difference that is not there, and how many rounds do they take?

Runs the package's own stopping rule (:func:`benchstack.measure.repetitions.due`) and comparisons
(:func:`benchstack.analysis.comparison.compare_to_baseline`) on simulated cells, many times, without a host:
each cell's req/s is the stack's true ratio to the baseline times the host's level (a random walk from round
to round, shared by every cell of a round) times its own noise (log-normal, ``--sigma`` per cell; a pair's log
ratio then spreads by sigma * sqrt(2)). Rounds go on while :func:`due` asks for cells, up to the experiment's
bounds and ``--budget`` seconds at ``--cell-seconds`` a cell.

Prints, per comparison, the share of runs ending in each state, and the pairs and simulated seconds it took.
For an A/A experiment (``--ratios 1``) the share called faster or slower is the false-difference rate the
experiment's ``load.confidence`` and Holm's adjustment are meant to hold near 5 %.

``.venv/bin/python scripts/simulate-comparisons.py --experiment experiments/aa-thin.yml --ratios 1``
``.venv/bin/python scripts/simulate-comparisons.py --ratios 0.86,1.12,1.05,6.5 --sigma 0.05`` (the default's)
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchstack.analysis import comparison  # noqa: E402
from benchstack.analysis.comparison import compare_to_baseline  # noqa: E402
from benchstack.measure.repetitions import due, settings_of  # noqa: E402
from benchstack.plan.experiment import Experiment, cells, load_experiment  # noqa: E402
from benchstack.records.cellparts import Latency, Window  # noqa: E402
from benchstack.results.cell import SCHEMA, Cell  # noqa: E402


def simulate(
    exp: Experiment,
    ratios: dict[str, float],
    sigma: float,
    drift: float,
    budget: float,
    cell_s: float,
    rng: random.Random,
) -> tuple[list[Any], int, float]:
    """One run: (its comparisons at the end, rounds, simulated seconds)."""
    load = exp.load
    level = 1.0
    stored: list[Cell] = []
    clock = 0.0

    def measure(plan: Any) -> None:
        nonlocal clock
        rps = 1000.0 * level * ratios[plan.stack] * math.exp(rng.gauss(0.0, sigma))
        stored.append(simulated_cell(plan, rps))
        clock += cell_s

    planned = cells(exp, seed=rng.randrange(1 << 30))
    rounds = 0
    for rep in range(1, load.repetitions + 1):
        level *= math.exp(rng.gauss(0.0, drift))
        for plan in (p for p in planned if p.repetition == rep):
            measure(plan)
        rounds += 1
    names = [s["name"] for s in exp.stacks]
    keys = [(s, *p.key) for s in names for p in _points(exp)]
    while clock < budget:
        wanted = due(stored, exp, keys)
        if not wanted:
            break
        level *= math.exp(rng.gauss(0.0, drift))
        rounds += 1
        rep = load.repetitions + rounds
        for plan in (
            p
            for p in planned
            if p.repetition == 1 and (p.stack, p.tool, p.keepalive, p.concurrency or p.rate) in wanted
        ):
            measure(replace(plan, repetition=rep))
    found = compare_to_baseline(stored, str(load.baseline), names, settings_of(load))
    return found, rounds, clock


def simulated_cell(plan: Any, rps: float) -> Cell:
    """A cell of ``plan`` at ``rps``, with only what the rule and the comparisons read (every pair of
    windows starts at the same moment: no gap)."""
    return Cell(
        schema=SCHEMA, experiment=None, stack=plan.stack, target=None, loadgen=None, mode=None,
        tool=plan.tool, tool_version=None, command=None, url=None, concurrency=plan.concurrency or 1,
        keepalive=plan.keepalive, requests=None, duration_s=None, repetition=plan.repetition,
        started_at=None, elapsed_s=None, requests_completed=0, rps=rps, transfer_bytes=0,
        latency_ms=Latency(), rate=plan.rate, window=Window("2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
    )  # fmt: skip


def _points(exp: Experiment) -> list[Any]:
    from benchstack.plan.experiment import load_points

    return load_points(exp)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--experiment", default=str(ROOT / "experiments/sinatra-thin-nginx.yml"))
    parser.add_argument("--ratios", default="0.86,1.12,1.05,6.5",
                        help="each other stack's true ratio to the baseline, in order")  # fmt: skip
    parser.add_argument("--sigma", type=float, default=0.05, help="spread of one cell's log req/s")
    parser.add_argument(
        "--drift", type=float, default=0.03, help="spread of the host's level from round to round"
    )
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--cell-seconds", type=float, default=2.4, help="wall seconds per cell")
    parser.add_argument("--budget", type=float, help="seconds of measuring (default: load.max_seconds)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--confidence", type=float, help="instead of the experiment's load.confidence")
    parser.add_argument("--margin", type=float, help="instead of the experiment's load.equivalence")
    parser.add_argument(
        "--no-holm", action="store_true", help="every comparison at load.confidence, as if alone (to compare)"
    )
    args = parser.parse_args()
    if args.no_holm:
        comparison.holm_levels = lambda p_values, alpha: [alpha] * len(p_values)
    exp = load_experiment(args.experiment)
    if args.confidence is not None or args.margin is not None:
        load = replace(
            exp.load,
            confidence=exp.load.confidence if args.confidence is None else args.confidence,
            equivalence=exp.load.equivalence if args.margin is None else args.margin,
        )
        exp = replace(exp, load=load)
    others = [s["name"] for s in exp.stacks if s["name"] != exp.load.baseline]
    given = [float(x) for x in args.ratios.split(",")]
    given += [given[-1]] * (len(others) - len(given))
    ratios = {exp.load.baseline: 1.0, **dict(zip(others, given, strict=False))}
    budget = args.budget or exp.load.max_seconds or 600
    rng = random.Random(args.seed)
    states: dict[str, Counter[str]] = {s: Counter() for s in others}
    pairs: dict[str, list[int]] = {s: [] for s in others}
    seconds = []
    any_difference = 0
    for _ in range(args.runs):
        found, _, clock = simulate(exp, ratios, args.sigma, args.drift, budget, args.cell_seconds, rng)
        seconds.append(clock)
        any_difference += any(c.state in ("faster", "slower") and ratios[c.stack] == 1.0 for c in found)
        for c in found:
            states[c.stack][c.state] += 1
            pairs[c.stack].append(c.pairs)
    print(f"{args.runs} simulated runs of {exp.name}: sigma {args.sigma} per cell, drift {args.drift} per "
          f"round, margin {exp.load.equivalence}, confidence {exp.load.confidence} per look, "
          f"budget {budget:g} s")  # fmt: skip
    print(f"  measuring: median {statistics.median(seconds):.0f} s, 90th percentile "
          f"{sorted(seconds)[int(0.9 * len(seconds))]:.0f} s")  # fmt: skip
    if any(ratios[s] == 1.0 for s in others):
        share = 100 * any_difference / args.runs
        print(f"  runs calling a difference between stacks that do not differ: {share:.1f} %")
    for stack in others:
        shares = ", ".join(f"{state} {100 * n / args.runs:.1f} %" for state, n in states[stack].most_common())
        print(
            f"  {stack} (true {ratios[stack]:g}x): {shares}; "
            f"pairs median {statistics.median(pairs[stack]):.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
