#!/usr/bin/env python3
"""Where does the spread of interleaved cells come from: the host's level drifting between rounds, or each
stack being cold again when its turn comes?

In the provisioned default container (``bench-local``), rounds in a random order (seeded, printed): every
stack gets the default warm-up (``ab -k -c32 -n 2000``), then two raw ``wrk -t2 -c32`` cells back to back
(A, B).
Before each round, a fixed CPU loop on this host (``--calibrate`` seconds) gives the host's speed right now.
Then, per stack:

* CV of the A cells and of the B cells over the rounds (B's lower: being cold costs; alike: it does not);
* CV of B/A (two cells seconds apart: the noise left when nothing has time to drift);
* the residual CV after each round's common level is taken out (log req/s = stack + round + rest): what a
  comparison paired by round sees;
* the 95 % interval of the median (+- %) over the A cells as they are, and over the A cells each divided by
  its round's level as the other stacks' cells of that round tell it (rounds as blocks): how much narrower
  a blocked estimate would make a load point's interval;

Each table is printed twice: over every round, and over the quiet rounds only (no cell above
``--max-interference`` foreign + steal CPU, read as the harness reads a cell's interference). Also
the share of the A cells' variance that the rounds' common level explains, the lag-1 autocorrelation of
that level (drift is slow: high; bursts: near 0), and its correlation with the CPU loop's speed (a host-speed
probe that tracks it could normalize the level).

Run from the project folder, the default inventory provisioned (``./run bench`` once):
``.venv/bin/python scripts/measure-interleave.py [--seconds 600] [--cell 2]``
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("cell_length", HERE / "measure-cell-length.py")
assert _spec and _spec.loader
cell_length = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cell_length)
STACKS: dict[str, str] = cell_length.STACKS
relative_half_width = cell_length.relative_half_width


def calibrate(seconds: float) -> float:
    """Iterations per second of a fixed pure-Python loop run for about ``seconds``: the host's speed now."""
    n, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        x = 0
        for i in range(20000):
            x += i * i
        n += 1
    return n / elapsed


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def cv(xs: list[float]) -> float:
    return statistics.stdev(xs) / statistics.fmean(xs) if len(xs) > 1 else math.nan


def correlation(xs: list[float], ys: list[float]) -> float:
    try:
        return statistics.correlation(xs, ys)
    except statistics.StatisticsError:
        return math.nan


def analyse(title: str, a: dict[str, list[float]], b: dict[str, list[float]], speed: list[float]) -> None:
    """The tables of the module docstring over the rounds given (every stack's cells of each round)."""
    rounds = len(speed)
    print(f"\n{title}: {rounds} rounds")
    if rounds < 3:
        print("  too few rounds")
        return
    # log req/s = stack effect + round effect + rest, fitted on the A cells (a balanced table: means suffice)
    logs = {s: [math.log(x) for x in a[s]] for s in STACKS}
    stack_mean = {s: statistics.fmean(v) for s, v in logs.items()}
    round_level = [statistics.fmean(logs[s][r] - stack_mean[s] for s in STACKS) for r in range(rounds)]
    rest = {s: [logs[s][r] - stack_mean[s] - round_level[r] for r in range(rounds)] for s in STACKS}
    total_var = statistics.fmean(statistics.pvariance(v) for v in logs.values())
    rest_var = statistics.fmean(statistics.pvariance(v) for v in rest.values())
    dof = (len(STACKS) - 1) / len(STACKS)  # the round level takes one value of each round's five
    print(f"{'stack':24} {'median A':>9} {'CV A %':>7} {'CV B %':>7} {'CV B/A %':>9} {'B/A med':>8} "
          f"{'resid CV %':>10} {'+-% raw':>8} {'+-% blocked':>11}")  # fmt: skip
    for s in STACKS:
        ratios = [y / x for x, y in zip(a[s], b[s], strict=True)]
        resid = math.sqrt(statistics.pvariance(rest[s]) / dof)
        # Each cell over its round's level as the other stacks' cells of that round tell it (leave-one-out,
        # so a cell never explains itself): the rounds as blocks of a randomized complete block design.
        blocked = [
            a[s][r] / math.exp(statistics.fmean(logs[o][r] - stack_mean[o] for o in STACKS if o != s))
            for r in range(rounds)
        ]
        raw_hw, blocked_hw = relative_half_width(a[s]), relative_half_width(blocked)
        print(f"{s:24} {statistics.median(a[s]):>9,.0f} {100 * cv(a[s]):>7.1f} {100 * cv(b[s]):>7.1f} "
              f"{100 * cv(ratios):>9.1f} {statistics.median(ratios):>8.3f} {100 * resid:>10.1f} "
              f"{pct(raw_hw):>8} {pct(blocked_hw):>11}")  # fmt: skip
    explained = 1 - rest_var / total_var if total_var else math.nan
    lag1 = correlation(round_level[:-1], round_level[1:])
    level_range = math.exp(max(round_level) - min(round_level)) - 1
    print(
        f"rounds' common level: explains {100 * explained:.0f} % of the A cells' variance; "
        f"spans {100 * level_range:.0f} % (lowest to highest round); lag-1 autocorrelation {lag1:.2f}"
    )
    print(
        f"CPU loop: CV {100 * cv(speed):.1f} % over rounds; correlation with the common level "
        f"{correlation([math.log(x) for x in speed], round_level):.2f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600, help="wall time of the rounds (bounded)")
    parser.add_argument("--cell", type=int, default=2, help="seconds of each wrk cell")
    parser.add_argument("--warmup", default="ab2000", help="as measure-cell-length.py: N s of wrk, or abN")
    parser.add_argument("--pause", type=float, default=0.2, help="pause after the warm-up")
    parser.add_argument("--calibrate", type=float, default=0.3, help="seconds of the CPU loop per round")
    parser.add_argument("--max-interference", type=float, default=0.10,
                        help="a round counts as quiet when no cell had more foreign + steal CPU")  # fmt: skip
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    rng = random.Random(seed)
    print(f"seed {seed}; cells {args.cell} s, warm-up {args.warmup}, pause {args.pause} s", flush=True)
    a: dict[str, list[float]] = {s: [] for s in STACKS}
    b: dict[str, list[float]] = {s: [] for s in STACKS}
    speed: list[float] = []
    loud: list[float] = []  # each round's highest foreign + steal share of any cell
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        speed.append(calibrate(args.calibrate))
        order = list(STACKS)
        rng.shuffle(order)
        shares: list[float] = []
        for stack in order:
            cell_length.warm_up(STACKS[stack], args.warmup)
            time.sleep(args.pause)
            for cells in (a, b):
                rps, share = cell_length.wrk_share(STACKS[stack], args.cell)
                cells[stack].append(rps)
                shares.append(1.0 if share is None else share)
        loud.append(max(shares))
        print(f"round {len(speed)} (interference up to {100 * loud[-1]:.0f} %): "
              + ", ".join(f"{s} {a[s][-1]:,.0f}/{b[s][-1]:,.0f}" for s in STACKS), flush=True)  # fmt: skip
    print(f"\n{len(speed)} rounds in {args.seconds:.0f} s; seed {seed}")
    analyse("every round", a, b, speed)
    quiet = [r for r, x in enumerate(loud) if x <= args.max_interference]
    analyse(
        f"quiet rounds (no cell above {100 * args.max_interference:.0f} % foreign + steal CPU)",
        {s: [v[r] for r in quiet] for s, v in a.items()},
        {s: [v[r] for r in quiet] for s, v in b.items()},
        [speed[r] for r in quiet],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
