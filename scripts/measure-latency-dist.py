#!/usr/bin/env python3
"""What keeping every cell's latency distribution costs (issue 15), measured on this machine.

    python3 scripts/measure-latency-dist.py [--loadgens 8] [--requests 1000000] [--repeat 20]

Prints three figures:

1. bytes added per cell: the stored cell file (cells/<id>.json) with its distribution, window and tail
   percentiles minus the same cell without them, for the real captures in tests/data (each measured by the
   runner from its raw output, as a run would), plus what the wrk script adds to the raw output, and a wrk
   cell whose histogram fills every bucket up to wrk's default 2 s timeout (the largest a wrk cell gets);
2. ms added per cell (parse + store): parsing the output (and ab's -g file) and writing the cell, with the
   distribution minus without it (median of ``--repeat`` runs), and reading the -g file of an ab cell of
   ``--requests`` requests (generated in ab's format, one line per request);
3. the time to merge ``--loadgens`` loadgens x ``--requests`` requests: by summing their histograms
   (wrk, httperf: ``merge.merge_cells`` on the stored cells) and from every request of their ab -g files
   (read, cut to the common window, distribution built: what ``merge.merge_stored`` does).

Synthetic latencies (the 1,000,000-request figures) are log-normal around 2 ms, from a fixed seed.
"""

from __future__ import annotations

import argparse
import gzip
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchstack.kinds.loadtools import (  # noqa: E402
    ab,
    parse,  # noqa: E402
    wrk,
)
from benchstack.kinds.loadtools.perrequest import ab_requests  # noqa: E402
from benchstack.measure.merge import merge_cells  # noqa: E402
from benchstack.measure.runner import (  # noqa: E402
    CellOptions,  # noqa: E402
    Target,
    measure_cell,
)
from benchstack.plan.experiment import cells, experiment_from_dict  # noqa: E402
from benchstack.records import distribution  # noqa: E402
from benchstack.records.cellplan import CellPlan  # noqa: E402
from benchstack.results.cell import (  # noqa: E402
    Cell,  # noqa: E402
    dumps_cell,
    write_cell,
)

DATA = ROOT / "tests" / "data"
START_S = 1_796_000_000  # 2026-11-30T00:53:20Z: the synthetic -g files' first second
WINDOW_60S = {"start": "2026-11-30T00:53:20.000Z", "end": "2026-11-30T00:54:20.000Z"}


class Capture(NamedTuple):
    label: str
    tool: str
    load: dict[str, Any]
    raw: str
    tsv: str | None = None


CAPTURES = [
    Capture(
        "wrk c32 3 s, 111,330 requests", "wrk", {"concurrency": 32, "duration_s": 3}, "latency/wrk-fast.txt"
    ),
    Capture(
        "wrk c16 4 s, 65,535 requests",
        "wrk",
        {"concurrency": 16, "threads": 1, "duration_s": 4},
        "latency/wrk-pair-lg1.txt",
    ),
    Capture(
        "wrk c4 3 s, slow (0-1 s), 266 requests",
        "wrk",
        {"concurrency": 4, "threads": 1, "duration_s": 3},
        "latency/wrk-slow.txt",
    ),
    Capture(
        "ab c10, 12,000 requests",
        "ab",
        {"concurrency": 10, "requests": 12000},
        "latency/ab-pair-lg1.txt",
        "latency/ab-pair-lg1.tsv.gz",
    ),
    Capture(
        "ab c20, slow (0-1 s), 2,000 requests",
        "ab",
        {"concurrency": 20, "requests": 2000},
        "latency/ab-slow.txt",
        "latency/ab-slow.tsv",
    ),
    Capture(
        "httperf 500/s, 2,500 requests", "httperf", {"rate": 500, "duration_s": 5}, "httperf/hist-ok.txt"
    ),
    Capture(
        "httperf 100/s, slow (0-330 ms), 500 requests",
        "httperf",
        {"rate": 100, "duration_s": 5},
        "httperf/hist-slow.txt",
    ),
]


def read(rel: str | None) -> str:
    if rel is None:
        return ""
    path = DATA / rel
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")


def plan_for(tool: str, load: dict[str, Any]) -> CellPlan:
    stacks = [{"name": "s", "port": 8080}]
    exp = {"name": "measure", "stacks": stacks, "load": {"plans": [{"tool": tool, **load}]}}
    [one] = cells(experiment_from_dict(exp))
    return one


def executor(output: str, tsv: str) -> Callable[[str], tuple[int, str, str]]:
    """A loadgen that replays a capture, answering the runner's helper commands like a real one."""

    def execute(command: str) -> tuple[int, str, str]:
        if command.startswith("mktemp /tmp/bench-stack-ab-g"):
            return 0, "/tmp/bench-stack-ab-g.x\n", ""
        if command.startswith("cat /tmp/bench-stack-ab-g.x"):
            return 0, tsv, ""
        if "bench-stack-wrk-report" in command and "base64 -d" in command:
            return 0, "/tmp/wrk_report.lua\n", ""
        if "vmstat" in command or command.startswith("kill "):
            return 1, "", "no vmstat here"
        return 0, output, ""

    return execute


def measure(capture: Capture, run: Path) -> dict[str, Any]:
    where = Target(host="127.0.0.1", target="t", loadgen="t")
    execute = executor(read(capture.raw), read(capture.tsv))
    plan = plan_for(capture.tool, capture.load)
    cell, _ = measure_cell(plan, where, run, execute, "measure", CellOptions(sleep=lambda s: None))
    return cell.to_dict()  # the stored JSON: what the figures below measure


def without_distribution(cell: dict[str, Any]) -> dict[str, Any]:
    latency = {k: v for k, v in cell["latency_ms"].items() if k not in ("p99.9", "p99.99")}
    kept = {k: v for k, v in cell.items() if k not in ("latency_dist", "window")}
    return {**kept, "latency_ms": latency}


def wrk_output_without_histogram(output: str) -> str:
    start = output.index(',"histogram":')
    return output[:start] + output[output.index("}\n", start) :]


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def bytes_added() -> None:
    print("1. bytes added per cell (the stored cell file with its distribution - without)")
    for capture in CAPTURES:
        output, tsv = read(capture.raw), read(capture.tsv)
        with tempfile.TemporaryDirectory() as tmp:
            cell = measure(capture, Path(tmp))
        with_dist = len(dumps_cell(cell).encode())
        without = len(dumps_cell(without_distribution(cell)).encode())
        pairs = len(cell["latency_dist"]["counts"])
        extra = ""
        if capture.tool == "wrk":
            added = len(output) - len(wrk_output_without_histogram(output))
            extra = f"; raw output +{added:,} B (the script's histogram line)"
        if capture.tool == "ab":
            per_request = len(tsv.encode()) / (len(tsv.splitlines()) - 1)
            extra = f"; ab -g file {per_request:.1f} B per request (kept as raw/<cell>.requests.tsv)"
        growth = f"cell {without:,} -> {with_dist:,} B (+{with_dist - without:,} B)"
        print(f"   {capture.label}: {pairs:,} pairs, {growth}{extra}")
    # every 9-bit bucket from 1 us to 2 s filled: the largest wrk histogram
    full = distribution.from_counts(wrk.RESOLUTION, {v: 1 for v in range(1, 2_000_001)})
    size = len(dumps_cell({"latency_dist": full.to_dict()}).encode())
    print(f"   wrk, every bucket up to its 2 s timeout filled: {len(full.counts):,} pairs, +{size:,} B")


def timed_pair(capture: Capture, cell: dict[str, Any], run: Path, repeat: int) -> tuple[float, float]:
    """(ms without the distribution, ms with it): parse the output (and ab's -g file), store the cell."""
    tool, output, tsv = capture.tool, read(capture.raw), read(capture.tsv)
    stored = [0]

    def store(c: dict[str, Any]) -> None:
        stored[0] += 1
        write_cell(run / str(stored[0]), c)

    old_cell = without_distribution(cell)
    old_output = output
    if tool == "wrk":
        old_output = wrk_output_without_histogram(output)
    elif tool == "httperf":
        skip = ("     ", "Connection lifetime")
        old_output = "\n".join(line for line in output.splitlines() if not line.startswith(skip))

    def new() -> None:
        parsed = parse(tool, output)
        if tool == "ab":
            times = [ms * 1000 for _, ms in ab_requests(tsv)]
            distribution.attach(parsed, distribution.from_values(ab.RESOLUTION, times), True)
        store(cell)

    def old() -> None:
        parse(tool, old_output)
        store(old_cell)

    return median_ms(old, repeat), median_ms(new, repeat)


def ms_added(repeat: int, requests: int) -> None:
    print(f"2. ms added per cell, parse + store (median of {repeat})")
    for capture in CAPTURES:
        with tempfile.TemporaryDirectory() as tmp:
            cell = measure(capture, Path(tmp) / "measured")
            t_old, t_new = timed_pair(capture, cell, Path(tmp), repeat)
        print(f"   {capture.label}: {t_old:.2f} -> {t_new:.2f} ms (+{t_new - t_old:.2f} ms)")
    tsv = synthetic_tsv(random.Random(1), requests, 10)
    t0 = time.perf_counter()
    distribution.from_values(ab.RESOLUTION, (ms * 1000 for _, ms in ab_requests(tsv)))
    took = (time.perf_counter() - t0) * 1000
    size = f"{len(tsv) / 1e6:.1f} MB"
    print(f"   ab, {requests:,} requests: its -g file ({size}) read into a distribution in {took:.0f} ms")


def synthetic_tsv(rng: random.Random, n: int, duration_s: int) -> str:
    """An ab -g file of ``n`` requests over ``duration_s`` seconds from START_S."""
    lines = ["starttime\tseconds\tctime\tdtime\tttime\twait"]
    stamp = time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(START_S))
    for i in range(n):
        ms = max(0, round(rng.lognormvariate(0.7, 0.8)))
        lines.append(f"{stamp}\t{START_S + i * duration_s // n}\t0\t{ms}\t{ms}\t{ms}")
    return "\n".join(lines) + "\n"


def merge_time(loadgens: int, requests: int) -> None:
    print(f"3. merging {loadgens} loadgens x {requests:,} requests")
    rng = random.Random(15)
    with tempfile.TemporaryDirectory() as tmp:
        wrk_cell = measure(CAPTURES[0], Path(tmp) / "wrk")
        ab_cell = measure(CAPTURES[3], Path(tmp) / "ab")
    wrk_cells = []
    for lg in range(loadgens):
        us = [max(1, round(rng.lognormvariate(7.6, 0.8))) for _ in range(requests)]  # ~2 ms
        dist = distribution.from_values(wrk.RESOLUTION, us).to_dict()
        wrk_cells.append({**wrk_cell, "loadgen": f"lg{lg}", "window": WINDOW_60S, "latency_dist": dist})
    t0 = time.perf_counter()
    merged = merge_cells([Cell.from_dict(c) for c in wrk_cells]).to_dict()
    took = (time.perf_counter() - t0) * 1000
    dist = merged["latency_dist"]
    print(f"   summing histograms (wrk, httperf): {took:.0f} ms ({dist['samples']:,} samples, "
          f"{len(dist['counts']):,} pairs)")  # fmt: skip
    tsvs = [synthetic_tsv(rng, requests, 60) for _ in range(loadgens)]
    ab_cells = [
        {**ab_cell, "loadgen": f"lg{lg}", "window": WINDOW_60S, "requests_completed": requests}
        for lg in range(loadgens)
    ]
    t0 = time.perf_counter()
    per_request = {f"lg{lg}": ab_requests(tsv) for lg, tsv in enumerate(tsvs)}
    t_read = time.perf_counter() - t0
    t0 = time.perf_counter()
    merged = merge_cells([Cell.from_dict(c) for c in ab_cells], per_request).to_dict()
    t_merge = time.perf_counter() - t0
    size = sum(len(t) for t in tsvs) / 1e6
    kept = merged["merged"]["cut"]["kept"]
    print(f"   from every ab request ({size:.0f} MB of -g files): read {t_read:.1f} s, cut to the common "
          f"window and merged {t_merge:.1f} s ({kept:,} requests kept)")  # fmt: skip


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--loadgens", type=int, default=8)
    args.add_argument("--requests", type=int, default=1_000_000)
    args.add_argument("--repeat", type=int, default=20)
    opts = args.parse_args()
    bytes_added()
    ms_added(opts.repeat, opts.requests)
    merge_time(opts.loadgens, opts.requests)


if __name__ == "__main__":
    main()
