#!/usr/bin/env python3
"""How precise and how repeatable is the default experiment on this machine, quiet and disturbed?

In one sitting, on the default local inventory (one container, loopback), already provisioned or not:

1. the floor: raw ``wrk -t2 -c32 -d<s>`` back to back in the container against nginx-static and thin
   x1 (``--floor`` runs of each), their req/s and CV: what the host itself gives without the harness;
2. ``--runs`` quiet runs of ``bench-stack.yml`` (a fresh run folder each): wall time, per load point the
   median req/s of the counted cells, its 95 % interval and precision (+-%), disturbed cells;
3. ``--disturbed`` runs with a bounded CPU hog beside the container: one busy process per CPU, switched on for
   ``--hog-on`` seconds and off for ``--hog-off`` seconds, for as long as the run lasts (it stops with it).

Then: the share of load points within +-5 %; the share of medians inside each other quiet run's interval;
whether every quiet run ranks the stacks the same per tool; for the disturbed runs, how many cells were
disturbed and how far each median moved from the quiet runs' median of medians.

Run from the project folder with ./run's tools:
``.venv/bin/python scripts/measure-precision.py [--runs 3] [--disturbed 1] [--floor 8]``; ``--analyse DIR``
prints the figures again for the runs an earlier call left in DIR, and the comparisons with the baseline.
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TypedDict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from benchruns import one_run  # noqa: E402

from benchstack.analysis.comparison import FASTER, SLOWER, Comparison, run_comparisons  # noqa: E402
from benchstack.analysis.loadpoints import by_load_point  # noqa: E402
from benchstack.analysis.stats import median_ci, relative_half_width  # noqa: E402
from benchstack.results.cell import counted, is_disturbed, load_cells  # noqa: E402
from benchstack.results.runfolder import read_run_info  # noqa: E402

CONTAINER = "bench-local"
EXPECTED_INSIDE = math.erf(1.959964 / 2)  # P(|Z| < 1.96 / sqrt(2)) = erf(1.96 / 2): 0.834
TARGET = 0.05
Point = tuple[str, str, bool, int]


class Stats(TypedDict):
    """A load point's counted cells in one run: their median and its 95 % interval, and its precision."""

    n: int
    disturbed: int
    median: float | None
    low: float | None
    high: float | None
    precision: float | None


def floor(runs: int, seconds: int) -> None:
    print(f"floor: raw wrk -t2 -c32 -d{seconds}s, {runs} runs back to back in {CONTAINER}")
    for name, url in (("nginx-static", "http://127.0.0.1:8010/index.html"),
                      ("sinatra-thin-x1", "http://127.0.0.1:8001/hello/bar")):  # fmt: skip
        values = []
        for _ in range(runs):
            out = subprocess.run(
                ["docker", "exec", CONTAINER, "timeout", str(seconds + 30), "wrk", "-t2", "-c32",
                 f"-d{seconds}s", url],
                capture_output=True, text=True, check=True, timeout=seconds + 60,
            ).stdout  # fmt: skip
            line = next(x for x in out.splitlines() if x.startswith("Requests/sec:"))
            values.append(float(line.split()[1]))
        cv = statistics.stdev(values) / statistics.fmean(values)
        middle = statistics.median(values)
        print(f"  {name}: {min(values):,.0f}-{max(values):,.0f} req/s, median {middle:,.0f}, "
              f"CV {100 * cv:.1f} %")  # fmt: skip


def points(run_dir: Path) -> dict[Point, Stats]:
    out: dict[Point, Stats] = {}
    for key, group in by_load_point(load_cells(run_dir)).items():
        good = [float(c.rps) for c in counted(group)]
        ci = median_ci(good)
        out[key] = {
            "n": len(good),
            "disturbed": sum(1 for c in group if is_disturbed(c)),
            "median": statistics.median(good) if good else None,
            "low": ci.low if ci else None,
            "high": ci.high if ci else None,
            "precision": relative_half_width(good),
        }
    return out


def ranking(run: dict[Point, Stats], tool: str) -> list[str]:
    rows = [(k[0], v["median"]) for k, v in run.items() if k[1] == tool and v["median"] is not None]
    return [stack for stack, _ in sorted(rows, key=lambda r: -float(r[1]))]


def order(run: dict[Point, Stats], tool: str, a: str, b: str) -> str | None:
    """'>' or '<' when the two stacks' intervals at this tool do not overlap, '~' when they do; None when one
    has no interval. Slower level changes between runs move both, so this is the ranking a run can defend."""
    pa = next((v for k, v in run.items() if k[0] == a and k[1] == tool), None)
    pb = next((v for k, v in run.items() if k[0] == b and k[1] == tool), None)
    if not pa or not pb or pa["low"] is None or pb["low"] is None:
        return None
    if float(pa["low"]) > float(pb["high"]):  # type: ignore[arg-type]
        return ">"
    if float(pb["low"]) > float(pa["high"]):  # type: ignore[arg-type]
        return "<"
    return "~"


def comparisons_report(compared: list[tuple[str, list[Comparison]]]) -> None:
    """Each stack against the baseline in every run: the ratio and its interval, whether each quiet run's
    ratio lies inside the other quiet runs' intervals, and whether a difference one run calls (faster or
    slower) is called the other way by another."""
    table: dict[tuple[str, str, int], list[tuple[str, Comparison]]] = {}
    for kind, found in compared:
        for c in found:
            table.setdefault((c.stack, c.tool, c.level), []).append((kind, c))
    print("\ncomparisons with the baseline: ratio [95 % interval] per run")
    inside = total = flips = 0
    for (stack, tool, level), row in sorted(table.items()):
        shown = []
        for kind, c in row:
            ratio = f"{c.ratio:.3f}" if c.ratio is not None else "-"
            interval = f"[{c.low:.3f}-{c.high:.3f}]" if c.low is not None else "[-]"
            shown.append(f"{ratio} {interval}{' (disturbed run)' if kind == 'disturbed' else ''}")
        print(f"  {stack} {tool} c{level}: " + " | ".join(shown))
        quiet = [c for kind, c in row if kind == "quiet"]
        for a in quiet:
            for b in quiet:
                if a is b or a.ratio is None or b.low is None or b.high is None:
                    continue
                total += 1
                inside += b.low <= a.ratio <= b.high
        called = {c.state for c in quiet if c.state in (FASTER, SLOWER)}
        flips += len(called) > 1
    if total:
        share = 100 * inside / total
        print(f"  quiet ratios inside the other quiet runs' intervals: {inside} of {total} ({share:.0f} %)")
    print(f"  differences called faster in one quiet run and slower in another: {flips}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=3, help="quiet runs (default 3)")
    parser.add_argument("--disturbed", type=int, default=1, help="runs with the CPU hog (default 1)")
    parser.add_argument("--floor", type=int, default=8, help="raw wrk runs per stack (0: none)")
    parser.add_argument("--floor-seconds", type=int, default=5)
    parser.add_argument("--hog-on", type=float, default=4.0)
    parser.add_argument("--hog-off", type=float, default=6.0)
    parser.add_argument("--experiment", help="an experiment name or file instead of the default one")
    parser.add_argument(
        "--analyse",
        metavar="DIR",
        type=Path,
        help="only analyse the NN-quiet / NN-disturbed runs an earlier call left in DIR",
    )
    args = parser.parse_args()

    runs: list[tuple[str, dict[Point, Stats], float]] = []
    compared: list[tuple[str, list[Comparison]]] = []
    if args.analyse:
        for run_dir in sorted(
            d for d in args.analyse.iterdir() if not d.is_symlink() and (d / "run.json").exists()
        ):
            kind = run_dir.name.split("-", 1)[-1]
            runs.append((kind, points(run_dir), float("nan")))
            compared.append((kind, run_comparisons(load_cells(run_dir), read_run_info(run_dir))))
        args.floor = 0
    results = args.analyse or Path(tempfile.mkdtemp(prefix="bench-precision-"))
    print(f"results and logs under {results}", flush=True)
    plan = [("quiet", None)] * args.runs + [("disturbed", (args.hog_on, args.hog_off))] * args.disturbed
    for i, (kind, disturb) in enumerate([] if args.analyse else plan, 1):
        label = f"{i:02d}-{kind}"
        run_dir, took = one_run(results, label, results / f"{label}.log", disturb, args.experiment)
        runs.append((kind, points(run_dir), took))
        compared.append((kind, run_comparisons(load_cells(run_dir), read_run_info(run_dir))))
        print(f"{label}: {took:.0f} s", flush=True)
    if args.floor:
        floor(args.floor, args.floor_seconds)

    quiet = [r for kind, r, _ in runs if kind == "quiet"]
    keys = sorted({k for _, r, _ in runs for k in r})
    print("\nper load point: median req/s [95 % interval] +-precision (n counted, +disturbed)")
    for key in keys:
        cells = []
        for _, r, _ in runs:
            p = r.get(key)
            if not p or p["median"] is None:
                cells.append("-")
                continue
            interval = f"[{p['low']:,.0f}-{p['high']:,.0f}]" if p["low"] is not None else "[-]"
            prec = f"+-{100 * p['precision']:.1f}%" if p["precision"] is not None else "+-?"
            cells.append(f"{p['median']:,.0f} {interval} {prec} ({p['n']}+{p['disturbed']})")
        print(f"  {key[0]} {key[1]} c{key[3]}: " + " | ".join(cells))

    print("\nquiet runs:")
    for i, r in enumerate(quiet, 1):
        within = [p for p in r.values() if p["precision"] is not None and p["precision"] <= TARGET]
        print(f"  run {i}: {len(within)} of {len(r)} load points within +-{100 * TARGET:.0f} %")
    inside = total = 0
    for i, r in enumerate(quiet):
        for j, other in enumerate(quiet):
            if i == j:
                continue
            for key, p in r.items():
                o = other.get(key)
                if o is None or o["low"] is None or p["median"] is None:
                    continue
                total += 1
                inside += float(o["low"]) <= float(p["median"]) <= float(o["high"])  # type: ignore[arg-type]
    if total:
        share = 100 * inside / total
        print(f"  medians inside the other quiet runs' intervals: {inside} of {total} ({share:.0f} %)")
        # Two runs' medians, each with the same standard error, differ by sqrt(2) times that: a calibrated
        # 95 % interval holds the other run's median with P(|Z| < 1.96 / sqrt(2)), not 95 %.
        expected = f"{100 * EXPECTED_INSIDE:.0f} %"
        print(f"    (calibrated 95 % intervals and no drift between runs: {expected} expected)")
    for tool in sorted({k[1] for k in keys}):
        orders = [ranking(r, tool) for r in quiet]
        same = all(o == orders[0] for o in orders)
        print(f"  {tool} ranking {'the same in every run' if same else 'differs'}: " + " / ".join(
            " > ".join(o) for o in orders))  # fmt: skip
    for tool in sorted({k[1] for k in keys}):
        stacks = sorted({k[0] for k in keys if k[1] == tool})
        told = contradicted = 0
        shown = []
        for i, a in enumerate(stacks):
            for b in stacks[i + 1 :]:
                seen = [order(r, tool, a, b) for r in quiet]
                called = {o for o in seen if o in (">", "<")}
                told += bool(called)
                contradicted += len(called) > 1
                shown.append(f"{a} {'/'.join(o or '-' for o in seen)} {b}")
        print(f"  {tool}: of {len(shown)} pairs, {told} told apart by a run (intervals apart), "
              f"{contradicted} ordered both ways: " + "; ".join(shown))  # fmt: skip
    comparisons_report(compared)
    for kind, r, took in runs:
        if kind != "disturbed":
            continue
        moved = []
        for key, p in r.items():
            ref = [quiet_median for q in quiet if key in q and (quiet_median := q[key]["median"]) is not None]
            if ref and p["median"] is not None:
                base = statistics.median(ref)
                moved.append(abs(float(p["median"]) - base) / base)
        disturbed = sum(int(p["disturbed"]) for p in r.values())
        print(f"\ndisturbed run ({took:.0f} s): {disturbed} cells disturbed; medians moved from the quiet "
              "runs' "
              f"by {100 * statistics.median(moved):.1f} % (median), {100 * max(moved):.1f} % (most); "
              f"{sum(1 for m in moved if m <= TARGET)} of {len(moved)} within 5 %")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
