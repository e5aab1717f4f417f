#!/usr/bin/env python3
"""Does the loopback CPU split make the numbers steadier? The default experiment with and without it.

Runs ``bench-stack.yml`` (the default local inventory: one container, loopback) ``--runs`` times with
``bench_cpu_split=auto`` and as often with ``off``, alternating (auto, off, auto, off, ...) so slow drift on
the machine spreads over both, each into a fresh run folder under a temporary results folder. Prints, per run
and setting, the coefficient of variation of req/s of every load point over its planned repetitions (the extra
adaptive rounds left out, so both settings compare the same number of repetitions), then per setting the
median CV over all load points and runs and how many load points were above ``load.max_cv``. The runs
measure a copy of the experiment without extra rounds (``max_repetitions`` = ``repetitions``): only the
planned repetitions are compared, and the extra ones would only make each run longer.

Run from the project folder with ./run's tools, on a machine doing nothing else:
``.venv/bin/python scripts/measure-cpu-split.py [--runs 3] [--experiment sinatra-thin-nginx]``.
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
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchstack.analysis.loadpoints import by_load_point  # noqa: E402
from benchstack.analysis.stats import coefficient_of_variation  # noqa: E402
from benchstack.plan.resolved import experiment_path  # noqa: E402
from benchstack.results.cell import load_cells  # noqa: E402


def one_run(setting: str, results: Path, experiment: str, log: Path) -> Path:
    run_dir = results / f"{len(list(results.iterdir())):02d}-{setting}"
    # This checkout's package, whatever the venv's editable install names (./run does the same).
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), PYTHONPATH=str(ROOT))
    command = [
        str(Path(sys.executable).with_name("ansible-playbook")),
        "bench-stack.yml",
        "-e", f"experiment={experiment}",
        "-e", f"bench_cpu_split={setting}",
        "-e", f"bench_results_dir={results}",
        "-e", f"bench_run_dir={run_dir}",
        "-e", "bench_fail_on=never",  # the verdict is read from run.json: the gate must not fail the run
    ]  # fmt: skip
    start = time.monotonic()
    proc = subprocess.run(command, cwd=ROOT, env=env, text=True, capture_output=True, check=False)
    log.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"{setting}: bench-stack.yml failed (log: {log})")
    print(f"  {setting}: {time.monotonic() - start:.0f} s, {run_dir}", flush=True)
    return run_dir


def cvs(run_dir: Path) -> dict[str, float]:
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    planned = int(info["experiment"]["load"]["repetitions"])
    cells = [c for c in load_cells(run_dir) if int(c.repetition or 0) <= planned]
    out = {}
    for key, group in sorted(by_load_point(cells).items()):
        cv = coefficient_of_variation([c.rps for c in group])
        if cv is not None:
            out["/".join(str(k) for k in key)] = cv
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--experiment", default="sinatra-thin-nginx")
    args = parser.parse_args()
    results = Path(tempfile.mkdtemp(prefix="bench-stack-cpu-split-"))
    logs = results.with_name(results.name + "-logs")
    logs.mkdir()
    source = experiment_path(args.experiment, ROOT)
    document = yaml.safe_load(source.read_text(encoding="utf-8"))
    document["load"]["max_repetitions"] = document["load"].get("repetitions", 1)
    experiment = logs / source.name
    experiment.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    found: dict[str, list[dict[str, float]]] = {"auto": [], "off": []}
    max_cv = 0.05
    for i in range(args.runs):
        for setting in ("auto", "off"):
            run_dir = one_run(setting, results, str(experiment), logs / f"{i}-{setting}.log")
            found[setting].append(cvs(run_dir))
            info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
            max_cv = float(info["experiment"]["load"].get("max_cv", max_cv))
    print(f"\nCV of req/s per load point over the planned repetitions (max_cv {max_cv:.0%}); {results}")
    points = sorted({p for runs in found.values() for run in runs for p in run})
    for setting, runs in found.items():
        print(f"\nbench_cpu_split={setting}")
        for point in points:
            print(f"  {point:40} " + " ".join(f"{run.get(point, float('nan')):7.1%}" for run in runs))
    print()
    for setting, runs in found.items():
        values = [v for run in runs for v in run.values()]
        noisy = sum(v > max_cv for v in values)
        print(
            f"bench_cpu_split={setting}: median CV {statistics.median(values):.1%} over {len(values)} "
            f"load points x runs; {noisy} above max_cv"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
