#!/usr/bin/env python3
"""Which cell length and warm-up buy the most precision per second of measuring on this machine?

In the provisioned default container (``bench-local``, the default experiment's five stacks), rounds of raw
``wrk -t2 -c32`` cells in a random order (seeded, printed): every stack with every variant (measured seconds,
warm-up seconds) once per round, until ``--seconds`` have passed. Per stack and variant: the median req/s,
the CV of the cells and the sign-test interval of the median over the cells measured. Then, for each variant,
the interval half-width (+- % of the median) that a run with ``--budget`` seconds of measuring would reach,
scaled from the observed CV with the cycle cost of the variant (measured + warm-up + ``--overhead`` per cell):
the variant with the smallest projected half-width gives the most precision per second.

Run from the project folder, the default inventory already provisioned (``./run bench`` once):
``.venv/bin/python scripts/measure-cell-length.py [--seconds 600] [--variants 2:ab2000,2:1,3:1]``
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchstack.analysis.stats import relative_half_width  # noqa: E402
from benchstack.measure.interference import (  # noqa: E402
    SNAPSHOT_FUNCTION,
    print_snapshot,
    share_of,
    summarize,
    usage_from_text,
)

CONTAINER = "bench-local"
STACKS = {
    "sinatra-thin-x1": "http://127.0.0.1:8001/hello/bar",
    "sinatra-thin-x1-nginx": "http://127.0.0.1:8002/hello/bar",
    "sinatra-thin-x2-nginx": "http://127.0.0.1:8003/hello/bar",
    "sinatra-thin-x4-nginx": "http://127.0.0.1:8004/hello/bar",
    "nginx-static": "http://127.0.0.1:8010/index.html",
}
Variant = tuple[int, str]


def wrk_share(url: str, seconds: int) -> tuple[float, float | None]:
    """req/s of one raw wrk cell and the foreign + steal share of the machine's CPU during it (as a cell's
    ``interference``: the container's cgroup is ours), None when it cannot be read."""
    script = (
        f"{SNAPSHOT_FUNCTION}; {print_snapshot('before')}; "
        f"timeout {seconds + 30} wrk -t2 -c32 -d{seconds}s {url}; {print_snapshot('after')}"
    )
    out = subprocess.run(
        ["docker", "exec", CONTAINER, "sh", "-c", script],
        capture_output=True, text=True, check=True, timeout=seconds + 60,
    ).stdout  # fmt: skip
    rps = float(next(x for x in out.splitlines() if x.startswith("Requests/sec:")).split()[1])
    usage, _ = usage_from_text(out)
    found = summarize({CONTAINER: usage})
    return rps, share_of(found.foreign, found.steal)


def wrk(url: str, seconds: int) -> float:
    return wrk_share(url, seconds)[0]


def warm_up(url: str, warmup: str) -> float:
    """Run the warm-up ("N": wrk for N s; "abN": ab -k -c32 -n N, as load.warmup.requests); its seconds."""
    start = time.monotonic()
    if warmup.startswith("ab"):
        subprocess.run(
            ["docker", "exec", CONTAINER, "timeout", "30", "ab", "-q", "-k", "-c32", "-n", warmup[2:], url],
            capture_output=True, check=True, timeout=60,
        )  # fmt: skip
    elif int(warmup):
        wrk(url, int(warmup))
    return time.monotonic() - start


def cycle(variant: Variant, pause: float, overhead: float, warm_s: float) -> float:
    measured, warmup = variant
    return measured + warm_s + (pause if warmup != "0" else 0) + overhead


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600, help="wall time of the rounds (bounded)")
    parser.add_argument("--variants", default="2:ab2000,2:1,3:1",
                        help="measured s:warm-up (N s of wrk, or abN requests), comma-separated")  # fmt: skip
    parser.add_argument("--pause", type=float, default=0.2, help="pause after the warm-up")
    parser.add_argument("--budget", type=float, default=600, help="measuring seconds of the projected run")
    parser.add_argument("--overhead", type=float, default=0.7,
                        help="harness seconds per cell besides warm-up and measuring")  # fmt: skip
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    variants: list[Variant] = [(int(m), w) for m, w in (v.split(":") for v in args.variants.split(","))]
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    rng = random.Random(seed)
    print(f"seed {seed}; variants (measured s, warm-up s): {variants}; pause {args.pause} s")
    values: dict[tuple[str, Variant], list[float]] = {(s, v): [] for s in STACKS for v in variants}
    warm_s: dict[tuple[str, Variant], list[float]] = {key: [] for key in values}
    end = time.monotonic() + args.seconds
    rounds = 0
    while time.monotonic() < end:
        order = list(values)
        rng.shuffle(order)
        for stack, (measured, warmup) in order:
            if warmup != "0":
                warm_s[(stack, (measured, warmup))].append(warm_up(STACKS[stack], warmup))
                time.sleep(args.pause)
            values[(stack, (measured, warmup))].append(wrk(STACKS[stack], measured))
        rounds += 1
    print(f"{rounds} rounds in {args.seconds:.0f} s\n")
    print(f"{'stack':24} {'variant':>10} {'n':>3} {'warm s':>6} {'median':>8} {'CV %':>6} {'+-% now':>8} "
          f"{'+-% in budget':>13}")  # fmt: skip
    projected: dict[Variant, list[float]] = {v: [] for v in variants}
    cells: dict[Variant, list[float]] = {v: [] for v in variants}
    for (stack, variant), xs in values.items():
        measured, warmup = variant
        cv = statistics.stdev(xs) / statistics.fmean(xs) if len(xs) > 1 else math.nan
        now = relative_half_width(xs)
        warm = statistics.median(warm_s[(stack, variant)]) if warm_s[(stack, variant)] else 0.0
        per_point = args.budget / len(STACKS) / cycle(variant, args.pause, args.overhead, warm)
        # the median's asymptotic standard error is sqrt(pi/2) sigma / sqrt(n) for a normal sample
        budget = 1.96 * math.sqrt(math.pi / 2) * cv / math.sqrt(per_point)
        projected[variant].append(budget)
        cells[variant].append(per_point)
        now_text = f"{100 * now:.1f}" if now is not None else "-"
        middle = statistics.median(xs)
        print(f"{stack:24} {measured:>3}:{warmup:<6} {len(xs):>3} {warm:>6.2f} {middle:>8,.0f} "
              f"{100 * cv:>6.1f} {now_text:>8} {100 * budget:>13.1f}")  # fmt: skip
    print("\nper variant: cells per load point in the budget, projected +-% (median over stacks, worst)")
    for variant, hs in projected.items():
        measured, warmup = variant
        print(f"  {measured} s measured, warm-up {warmup}: {statistics.median(cells[variant]):.0f} cells, "
              f"+-{100 * statistics.median(hs):.1f} % (worst {100 * max(hs):.1f} %)")  # fmt: skip
    print("\nwarm-ups compared (median req/s of one variant over another's, same measured length):")
    for stack in STACKS:
        for a in variants:
            for b in variants:
                if a[0] == b[0] and a < b:
                    ratio = statistics.median(values[(stack, a)]) / statistics.median(values[(stack, b)])
                    print(f"  {stack}: {a[0]} s, warm-up {a[1]} vs {b[1]}: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
