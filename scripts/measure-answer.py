#!/usr/bin/env python3
"""Is a run's answer resolved and repeatable, and how long does it take to get it?

Runs an experiment (the default one unless ``--experiment``) ``--runs`` times on the default local inventory
(provisioned or not), ``--disturbed`` of them with a bounded CPU hog beside the container (one busy process
per CPU, ``--hog-on`` s on, ``--hog-off`` s off). With ``--old-tree DIR`` (a checkout of an older revision:
``git worktree add DIR REV``) each run of this checkout is followed by one of that one, in the same sitting.
Then, per run:

* every comparison's state and interval as the run's own code reported it (run.json), and, for both
  checkouts alike, as this checkout judges the same cells (so old and new are read by one rule);
* the whole run's wall time, and the **time to a resolved answer**: the seconds from the run's first cell to
  the end of the first round after which this checkout's rule finds every comparison resolved (none: the run
  never got there);
* the duty cycle (measured seconds over wall seconds from the first cell's start to the last's end) and the
  median gap between two cells; the median seconds between a pair's cells; the host-speed drift;

and over the runs of this checkout: unresolved comparisons, whether each comparison had the same state in
every run, any comparison called faster in one run and slower in another, each run's ratio against the median
of the runs' ratios. For an A/A experiment (``--experiment aa-thin``) the number of runs calling a difference
is the figure that matters (at most 1 in 10 is what 95 % allows).

``.venv/bin/python scripts/measure-answer.py --runs 3 --disturbed 1 [--old-tree /tmp/old --old-runs 2]``
``.venv/bin/python scripts/measure-answer.py --experiment aa-thin --runs 10 --disturbed 0``
``--analyse DIR`` prints the figures again for the runs an earlier call left in DIR.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from benchruns import one_run  # noqa: E402

from benchstack.analysis.comparison import FASTER, SLOWER, UNRESOLVED, Comparison, run_comparisons  # noqa: E402
from benchstack.analysis.drift import host_drift  # noqa: E402
from benchstack.results.cell import Cell, load_cells, window_start  # noqa: E402

GOAL_SECONDS = 300
GOAL_DUTY = 0.85
GOAL_RATIO_SPREAD = 0.03


@dataclass
class RunFigures:
    label: str
    tree: str  # "new" or "old"
    kind: str  # "quiet" or "disturbed"
    wall_s: float
    comparisons: list[Comparison]  # this checkout's rule on the run's cells
    reported: list[dict[str, Any]]  # run.json's comparisons, as the run's own code wrote them
    verdict: str
    resolved_after_s: float | None
    duty: float | None
    gap_s: float | None
    cells: int
    disturbed: int
    drift: list[str] = field(default_factory=list)


def _window_end(cell: Cell) -> float | None:
    return None if cell.window is None else cell.window.span()[1]


def figures(run_dir: Path, label: str, tree: str, kind: str, wall_s: float) -> RunFigures:
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    cells = load_cells(run_dir)
    timed = sorted(
        (s, e, c) for c in cells if (s := window_start(c)) is not None and (e := _window_end(c)) is not None
    )
    duty = gap = None
    if len(timed) > 1:
        measured = sum(e - s for s, e, _ in timed)
        duty = measured / (max(e for _, e, _ in timed) - timed[0][0])
        gap = statistics.median(b[0] - a[1] for a, b in zip(timed, timed[1:], strict=False))
    resolved_after = None
    reps = sorted({int(c.repetition or 0) for c in cells})
    for r in reps:
        upto = [c for c in cells if int(c.repetition or 0) <= r]
        found = run_comparisons(upto, info)
        if found and all(c.resolved for c in found):
            ends = [e for _, e, c in timed if int(c.repetition or 0) <= r]
            resolved_after = max(ends) - timed[0][0] if ends and timed else None
            break
    baseline = (info.get("experiment") or {}).get("load", {}).get("baseline")
    return RunFigures(
        label=label,
        tree=tree,
        kind=kind,
        wall_s=wall_s,
        comparisons=run_comparisons(cells, info),
        reported=list(info.get("comparisons") or []),
        verdict=str((info.get("verdict") or {}).get("status")),
        resolved_after_s=resolved_after,
        duty=duty,
        gap_s=gap,
        cells=len(cells),
        disturbed=sum(1 for c in cells if c.disturbed),
        drift=[d.sentence for d in host_drift(cells, baseline) if d.ratio is not None],
    )


def _shown(c: Comparison) -> str:
    ratio = f"{c.ratio:.3f}" if c.ratio is not None else "-"
    interval = f"{c.low:.3f}-{c.high:.3f}" if c.low is not None and c.high is not None else "-"
    return f"{c.state} {ratio} [{interval}] {c.pairs}p"


def report(runs: list[RunFigures]) -> None:
    print(
        "\nper run: wall, time to a resolved answer (this checkout's rule), duty cycle, gap, cells, verdict"
    )
    for r in runs:
        resolved = f"{r.resolved_after_s:.0f} s" if r.resolved_after_s is not None else "never"
        duty = f"{100 * r.duty:.0f} %" if r.duty is not None else "-"
        gap = f"{r.gap_s:.2f} s" if r.gap_s is not None else "-"
        print(
            f"  {r.label} ({r.tree}, {r.kind}): {r.wall_s:.0f} s, resolved after {resolved}, duty {duty}, "
            f"gap {gap}, {r.cells} cells ({r.disturbed} disturbed), verdict {r.verdict}"
        )
        for line in r.drift:
            print(f"    drift: {line}")
    stacks = sorted({(c.stack, c.tool, c.level) for r in runs for c in r.comparisons})
    print("\nper comparison, per run (this checkout's rule; run.json's own where it differs):")
    for key in stacks:
        print(f"  {key[0]} {key[1]} c{key[2]}:")
        for r in runs:
            found = [c for c in r.comparisons if (c.stack, c.tool, c.level) == key]
            own = [d for d in r.reported if (d.get("stack"), d.get("tool"), d.get("level")) == key]
            told = own[0].get("state") or own[0].get("verdict") if own else None
            gap = f", pairs {found[0].gap_s:.1f} s apart" if found and found[0].gap_s is not None else ""
            mine = _shown(found[0]) if found else "-"
            print(
                f"    {r.label} ({r.tree}, {r.kind}): {mine}{gap}" + (f" | run.json: {told}" if told else "")
            )
    new = [r for r in runs if r.tree == "new"]
    if not new:
        return
    print(f"\nthis checkout's {len(new)} runs:")
    unresolved = sum(1 for r in new for c in r.comparisons if c.state == UNRESOLVED)
    print(f"  unresolved comparisons: {unresolved} of {sum(len(r.comparisons) for r in new)}")
    for key in stacks:
        found = [c for r in new for c in r.comparisons if (c.stack, c.tool, c.level) == key]
        states = [c.state for c in found]
        ratios = [c.ratio for c in found if c.ratio is not None]
        flipped = {FASTER, SLOWER} <= set(states)
        middle = statistics.median(ratios) if ratios else None
        worst = max((abs(x / middle - 1) for x in ratios), default=0.0) if middle else 0.0
        print(
            f"  {key[0]}: states {'/'.join(states)} ({'the same' if len(set(states)) == 1 else 'differ'}"
            f"{'; FASTER AND SLOWER' if flipped else ''}), ratios within {100 * worst:.1f} % of their median "
            f"{middle if middle is None else round(middle, 3)} (goal {100 * GOAL_RATIO_SPREAD:.0f} %)"
        )
    called = sum(1 for r in new if any(c.state in (FASTER, SLOWER) for c in r.comparisons))
    print(f"  runs calling a difference (faster or slower) in any comparison: {called} of {len(new)}")
    walls = [r.wall_s for r in new]
    duties = [r.duty for r in new if r.duty is not None]
    print(
        f"  wall: median {statistics.median(walls):.0f} s (goal {GOAL_SECONDS} s), duty cycle median "
        f"{100 * statistics.median(duties):.0f} % (goal {100 * GOAL_DUTY:.0f} %)"
        if duties
        else f"  wall: median {statistics.median(walls):.0f} s"
    )
    old = [r for r in runs if r.tree == "old"]
    resolved_new = [r.resolved_after_s for r in new if r.resolved_after_s is not None]
    resolved_old = [r.resolved_after_s for r in old if r.resolved_after_s is not None]
    if old:
        print(
            f"  old checkout: {len(old)} runs, wall median {statistics.median(r.wall_s for r in old):.0f} s; "
            f"resolved in {len(resolved_old)} of {len(old)} (median "
            f"{statistics.median(resolved_old) if resolved_old else float('nan'):.0f} s), this checkout in "
            f"{len(resolved_new)} of {len(new)} (median "
            f"{statistics.median(resolved_new) if resolved_new else float('nan'):.0f} s)"
        )


def restart_stacks(container: str) -> None:
    """Every bench-stack unit (bench-*) and nginx restarted, as a fresh provisioning would leave them."""
    command = ["docker", "exec", container, "systemctl", "restart", "bench-*.service", "nginx.service"]
    subprocess.run(command, check=True, timeout=120)
    time.sleep(3)  # the run's own checks ask each stack before measuring; this only lets them start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=3, help="quiet runs (default 3)")
    parser.add_argument("--disturbed", type=int, default=1, help="runs with the CPU hog (default 1)")
    parser.add_argument("--hog-on", type=float, default=4.0)
    parser.add_argument("--hog-off", type=float, default=6.0)
    parser.add_argument("--experiment", help="an experiment name or file instead of the default one")
    parser.add_argument("--old-tree", type=Path, help="a checkout of an older revision, run after each run")
    parser.add_argument(
        "--old-runs",
        type=int,
        help="run the older checkout after only the first N runs (default: after each)",
    )
    parser.add_argument("--analyse", metavar="DIR", type=Path, help="only analyse the runs left in DIR")
    parser.add_argument(
        "--restart-stacks",
        metavar="CONTAINER",
        help="before each run, restart every stack's units and nginx in this container (a provisioned "
        "bench-local): whether a difference between identical stacks belongs to their processes",
    )
    args = parser.parse_args()
    runs: list[RunFigures] = []
    if args.analyse:
        for meta in sorted(args.analyse.glob("*.meta.json")):
            m = json.loads(meta.read_text(encoding="utf-8"))
            runs.append(figures(args.analyse / m["label"], m["label"], m["tree"], m["kind"], m["wall_s"]))
        report(runs)
        return 0
    results = Path(tempfile.mkdtemp(prefix="bench-answer-"))
    print(f"results and logs under {results}", flush=True)
    plan = [("quiet", None)] * args.runs + [("disturbed", (args.hog_on, args.hog_off))] * args.disturbed
    trees = [("new", ROOT)] + ([("old", args.old_tree.resolve())] if args.old_tree else [])
    n = 0
    for i, (kind, disturb) in enumerate(plan):
        for tree, path in trees:
            if tree == "old" and args.old_runs is not None and i >= args.old_runs:
                continue
            n += 1
            label = f"{n:02d}-{tree}-{kind}"
            if args.restart_stacks:
                restart_stacks(args.restart_stacks)
            run_dir, took = one_run(results, label, results / f"{label}.log", disturb, args.experiment, path)
            meta = {"label": label, "tree": tree, "kind": kind, "wall_s": took}
            (results / f"{label}.meta.json").write_text(json.dumps(meta), encoding="utf-8")
            runs.append(figures(run_dir, label, tree, kind, took))
            print(f"{label}: {took:.0f} s", flush=True)
    report(runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
