#!/usr/bin/env python3
"""How much closer in time must the two cells of a pair be for their ratio to repeat?

On the default local inventory, provisioned (a finished ``./run bench``): raw ``wrk -t2 -c32 -d<s>`` cells in
the container, alternating between two stacks (A B A B ...; ``--cells`` of each, bounded), then, per lag in
cells, the spread (standard deviation) of the log of the ratio of two cells that far apart: A against B at odd
lags (a pair of the comparison), A against A at even lags (the host's own drift). If the host's speed wanders
on a scale of seconds to minutes, the spread grows with the lag, and pairs of adjacent cells are what a
comparison should use; if it does not grow, the noise is per cell and the order within a round does not
matter.

It also prints, for the adjacent pairs' spread, the pairs a 95 % interval of the comparison would need to be
within +-3 % and +-5 % (Hodges-Lehmann interval: about 1.96 * 1.023 * sigma / sqrt(n)). ``--compare-lengths
2,4`` instead interleaves A/B pairs of each cell length and prints each length's spread and cost.

``.venv/bin/python scripts/measure-pair-gap.py [--cells 40] [--seconds 2] [--warmup 1000]``

"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import time

CONTAINER = "bench-local"
STACKS = {
    "sinatra-thin-x1": "http://127.0.0.1:8001/hello/bar",
    "sinatra-thin-x1-nginx": "http://127.0.0.1:8002/hello/bar",
    "sinatra-thin-x2-nginx": "http://127.0.0.1:8003/hello/bar",
    "sinatra-thin-x4-nginx": "http://127.0.0.1:8004/hello/bar",
    "nginx-static": "http://127.0.0.1:8010/index.html",
}


def warm(url: str, requests: int) -> None:
    """The harness's warm-up before a cell: ab with this many requests at the cell's 32 clients, not kept."""
    if requests:
        subprocess.run(
            ["docker", "exec", CONTAINER, "timeout", "60",
             "ab", "-q", "-k", "-n", str(requests), "-c", "32", url],
            capture_output=True, check=False, timeout=90,
        )  # fmt: skip


def wrk(url: str, seconds: int, warmup: int = 0) -> float:
    warm(url, warmup)
    out = subprocess.run(
        ["docker", "exec", CONTAINER, "timeout", str(seconds + 30),
         "wrk", "-t2", "-c32", f"-d{seconds}s", url],
        capture_output=True, text=True, check=True, timeout=seconds + 60,
    ).stdout  # fmt: skip
    line = next(x for x in out.splitlines() if x.startswith("Requests/sec:"))
    return float(line.split()[1])


def spread_at(series: list[tuple[str, float]], lag: int, same: bool) -> tuple[float, int] | None:
    """SD of log(x_i / x_{i+lag}) over the cells ``lag`` apart (``same``: of one stack; else of different
    ones, A over B so the sign is the comparison's), with the count."""
    diffs = []
    for i in range(len(series) - lag):
        (sa, a), (sb, b) = series[i], series[i + lag]
        if (sa == sb) != same:
            continue
        d = math.log(a / b)
        diffs.append(d if same or sa < sb else -d)
    if len(diffs) < 3:
        return None
    return statistics.stdev(diffs), len(diffs)


def compare_lengths(a: str, b: str, lengths: list[int], cycles: int, warmup: int) -> int:
    """Interleaved A/B pairs at each length, so that the host's moods fall on every length alike."""
    logs: dict[int, list[float]] = {n: [] for n in lengths}
    walls: dict[int, float] = dict.fromkeys(lengths, 0.0)
    for cycle in range(cycles):
        for n in lengths:
            start = time.monotonic()
            first, second = (a, b) if cycle % 2 == 0 else (b, a)  # AB, BA: neither always goes first
            x = {first: wrk(STACKS[first], n, warmup)}
            x[second] = wrk(STACKS[second], n, warmup)
            walls[n] += time.monotonic() - start
            logs[n].append(math.log(x[a] / x[b]))
    print(f"{cycles} interleaved A/B pairs at each cell length, {a} / {b}")
    print("length  pairs  ratio  SD of log ratio  wall s per pair  pairs for +-5 % at 99 %")
    for n in lengths:
        sd = statistics.stdev(logs[n])
        per_pair = walls[n] / cycles
        need = math.ceil((2.576 * 1.023 * sd / 0.05) ** 2)
        ratio = math.exp(statistics.median(logs[n]))
        print(f"  {n} s   {cycles:>4}  {ratio:.3f}  {100 * sd:5.1f} %          {per_pair:5.1f}            "
              f"{need} ({need * per_pair:.0f} s)")  # fmt: skip
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--a", default="sinatra-thin-x1", choices=sorted(STACKS))
    parser.add_argument("--b", default="sinatra-thin-x2-nginx", choices=sorted(STACKS))
    parser.add_argument("--cells", type=int, default=40, help="cells of each stack (at most 200)")
    parser.add_argument("--seconds", type=int, default=2, help="length of a cell")
    parser.add_argument("--warmup", type=int, default=1000, help="ab requests before each cell (0: none)")
    parser.add_argument(
        "--compare-lengths",
        metavar="S,S",
        help="instead: cycles of an A/B pair at each of these cell lengths (e.g. 2,4), interleaved, and the "
        "spread of each length's adjacent pairs; --cells cycles",
    )
    args = parser.parse_args()
    cells = min(args.cells, 200)
    for name in (args.a, args.b):  # one warm cell each, not kept
        wrk(STACKS[name], 1)
    if args.compare_lengths:
        lengths = [int(x) for x in args.compare_lengths.split(",")]
        return compare_lengths(args.a, args.b, lengths, cells, args.warmup)
    series: list[tuple[str, float]] = []
    start = time.monotonic()
    for _ in range(cells):
        for name in (args.a, args.b):
            series.append((name, wrk(STACKS[name], args.seconds, args.warmup)))
    took = time.monotonic() - start
    print(f"{2 * cells} cells of {args.seconds} s alternating {args.a} / {args.b} in {took:.0f} s")
    for name in (args.a, args.b):
        values = [v for s, v in series if s == name]
        cv = statistics.stdev(values) / statistics.fmean(values)
        print(f"  {name}: median {statistics.median(values):,.0f} req/s, CV {100 * cv:.1f} %")
    print("lag (cells)  pair            SD of log ratio  n")
    for lag in (1, 2, 3, 4, 5, 7, 9, 13, 17, 25):
        found = spread_at(series, lag, same=lag % 2 == 0)
        if found:
            kind = "A/A (drift)" if lag % 2 == 0 else "A/B (a pair)"
            print(f"  {lag:>3}        {kind:<15} {100 * found[0]:5.1f} %         {found[1]}")
    adjacent = spread_at(series, 1, same=False)
    if adjacent:
        sigma = adjacent[0]
        for margin in (0.03, 0.05):
            n = math.ceil((1.96 * 1.023 * sigma / margin) ** 2)
            print(f"adjacent pairs: about {n} pairs for a 95 % interval within +-{100 * margin:.0f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
