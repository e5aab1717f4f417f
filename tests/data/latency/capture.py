"""Capture the latency/ files: real load runs through bench-stack's own runner on this host.

    python3 tests/data/latency/capture.py OUT_DIR [NAME...]

Needs, on 127.0.0.1, the throwaway nginx of tests/data/README.md (latency/) on ports 18280 and 18281, and
wrk and ab installed. Each capture is one ``runner.measure_cell`` with an executor that runs the runner's
commands in a local shell, exactly as the loadgen's connection would; the raw output (stdout, then stderr
with the BENCH-STACK-WINDOW line) and ab's -g file are copied to OUT_DIR. The ``pair`` captures run two
loadgens at once in two threads; ``late`` ones start the second loadgen's measured run 1.5 s after the
first's (through the runner's ``before_measure`` hook, where the barrier would be).
"""

import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from benchstack.measure.runner import CellOptions, Target, measure_cell  # noqa: E402
from benchstack.plan.experiment import cells, experiment_from_dict  # noqa: E402
from benchstack.records.cellplan import CellPlan  # noqa: E402


def local(command: str) -> tuple[int, str, str]:
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=120, check=False)
    return done.returncode, done.stdout, done.stderr


def plan(port: int, path: str, load: dict[str, Any], threshold_ms: int | None = None) -> CellPlan:
    data: dict[str, Any] = {
        "name": "latency-capture",
        "stacks": [{"name": "local", "port": port}],
        "load": {"path": path, "plans": [load]},
    }
    if threshold_ms:
        data["load"]["threshold_ms"] = threshold_ms
    [one] = cells(experiment_from_dict(data))
    return one


def measure(the_plan: CellPlan, loadgen: str, run: Path, delay_s: float = 0.0) -> dict[str, Any]:
    where = Target(host="127.0.0.1", target="local", loadgen=loadgen)
    cell, _ = measure_cell(
        the_plan,
        where,
        run / loadgen,
        local,
        "latency-capture",
        CellOptions(before_measure=(lambda: time.sleep(delay_s)) if delay_s else None),
    )
    return cell


def keep(run: Path, loadgen: str, cell: dict[str, Any], out: Path, name: str) -> None:
    raw = run / loadgen / cell["raw_output"]
    shutil.copyfile(raw, out / f"{name}.txt")
    tsv = raw.with_name(raw.name.replace(".txt", ".requests.tsv"))
    if tsv.exists():
        shutil.copyfile(tsv, out / f"{name}.tsv")
    print(f"{name}: {' '.join(cell['command'])}")


def pair(the_plan: CellPlan, out: Path, name: str, late_s: float = 0.0) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp)
        results: dict[str, dict[str, Any]] = {}

        def one(lg: str, delay: float) -> None:
            results[lg] = measure(the_plan, lg, run, delay)

        threads = [threading.Thread(target=one, args=(lg, d)) for lg, d in (("lg1", 0.0), ("lg2", late_s))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for lg in ("lg1", "lg2"):
            keep(run, lg, results[lg], out, f"{name}-{lg}")


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    only = set(sys.argv[2:])  # names to capture again (all when none)
    singles = [
        (
            "wrk-fast",
            plan(18280, "/hello/bar", {"tool": "wrk", "concurrency": 32, "threads": 2, "duration_s": 3}),
        ),
        (
            "wrk-slow",
            plan(18281, "/body.txt", {"tool": "wrk", "concurrency": 4, "threads": 1, "duration_s": 3}, 300),
        ),
        ("wrk-drop", plan(18280, "/drop", {"tool": "wrk", "concurrency": 8, "threads": 2, "duration_s": 2})),
        ("ab-slow", plan(18281, "/body.txt", {"tool": "ab", "concurrency": 20, "requests": 2000}, 300)),
        (
            "wrk-timeouts",
            plan(
                18281,
                "/body.txt",
                {"tool": "wrk", "concurrency": 4, "threads": 1, "duration_s": 3, "timeout_s": 1},
                300,
            ),
        ),
    ]
    for name, the_plan in singles:
        if only and name not in only:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            keep(Path(tmp), "lg1", measure(the_plan, "lg1", Path(tmp)), out, name)
    if only:
        return
    ab = plan(18280, "/hello/bar", {"tool": "ab", "concurrency": 10, "requests": 12000})
    wrk = plan(18280, "/hello/bar", {"tool": "wrk", "concurrency": 16, "threads": 1, "duration_s": 4})
    pair(ab, out, "ab-pair")
    pair(ab, out, "ab-late", late_s=1.5)
    pair(wrk, out, "wrk-pair")
    pair(wrk, out, "wrk-late", late_s=1.5)


if __name__ == "__main__":
    main()
