"""multi-host's side effect: an interrupted run and its resumes with loadgens whose warm-ups differ, then a
clean run the tests read. Records evidence (tests/sideeffect.py); the tests in tests/ say what must hold.

1. interrupted: the experiment with a 2 s warm-up; lg2's warm-ups are held 3 s longer (SIGSTOP, then
   SIGCONT), so only the barrier can start the loadgens together. Ctrl-C (SIGINT to the playbook's process
   group) while the second cell's measured run is under way; what is left on the loadgens afterwards; a
   resume; then lg2's cell of the first load point removed (a run interrupted between the two loadgens
   storing it) and a second resume.
2. the clean run of the experiment (no warm-up) into ``run``, nginx's access log emptied first.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

PROJECT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(PROJECT), str(PROJECT / "tests")]

from sideeffect import (  # noqa: E402
    ephemeral,
    fresh_evidence,
    interrupt,
    playbook,
    save,
    sh,
    start_playbook,
    wait_until,
)

from benchstack.plan.experiment import cells, experiment_from_dict  # noqa: E402

TARGET = "bench-mol-multi-target"
LOADGENS = ["bench-mol-multi-lg1", "bench-mol-multi-lg2"]
HOSTS = [TARGET, *LOADGENS]
# The interrupted run and its resumes measure the first target only (the second target, bench-mol-multi-t2,
# is its own loadgen and is left out with it): one target keeps the cell ids without a target prefix.
FIRST_TARGET_ONLY = ",".join([*HOSTS, "localhost"])
SCENARIO = Path(__file__).resolve().parent
# lg2 holds each warm-up this long: the measured runs start together only if the barrier holds lg1 back.
DELAY_S = 3
WARMUP_S = 2
DELAYER_PID = "/run/bench-warmup-delayer.pid"
DELAY_LOG = "/var/log/bench-stack-warmup-delay.log"
# What a loadgen runs for a cell, and where (benchstack.measure.remote): all of it must be gone after the
# cell.
LEFTOVERS = (
    "pgrep -a -x wrk; pgrep -a -x ab; pgrep -a -x vmstat; "
    "ls -d /tmp/bench-stack-run.* /tmp/bench-stack-vmstat.* /tmp/bench-stack-ab-g.* 2>/dev/null; true"
)


def leftovers() -> dict[str, str]:
    return {host: sh(host, LEFTOVERS).strip() for host in HOSTS}


def cell_ids(experiment: dict[str, Any]) -> list[str]:
    return [c.cell_id for c in cells(experiment_from_dict(experiment))]


def stored(run: Path) -> dict[str, Any]:
    """Every cell file of a run folder (merged and each loadgen's, superseded ones too) -> started_at."""
    found = {}
    for path in sorted(run.rglob("*.json")):
        if path.parent.name == "cells":
            found[str(path.relative_to(run))] = json.loads(path.read_text(encoding="utf-8"))["started_at"]
    return found


def start_delayer() -> None:
    # Each warm-up (wrk -d 2s; the measured runs are -d 3s or ab) is stopped once, DELAY_S long.
    script = (
        f"echo $$ > {DELAYER_PID}; : > {DELAY_LOG}; seen=' '; while :; do "
        f"for p in $(pgrep -f '^wrk .* -d {WARMUP_S}s '); do "
        'case "$seen" in *" $p "*) continue;; esac; seen="$seen$p "; '
        f'kill -STOP "$p" && echo "$(date +%s.%N) stopped $p" >> {DELAY_LOG}; sleep {DELAY_S}; '
        f'kill -CONT "$p"; echo "$(date +%s.%N) continued $p" >> {DELAY_LOG}; done; sleep 0.05; done'
    )
    subprocess.run(["docker", "exec", "-d", LOADGENS[1], "sh", "-c", script], check=True, timeout=60)


def stop_delayer() -> list[str]:
    sh(LOADGENS[1], f"kill $(cat {DELAYER_PID}); rm -f {DELAYER_PID}")
    return sh(LOADGENS[1], f"cat {DELAY_LOG}").splitlines()


def interrupted_run() -> None:
    base = yaml.safe_load((SCENARIO / "experiment.yml").read_text(encoding="utf-8"))
    experiment = {
        **base,
        "name": "mol-multi-host-warmup",
        "load": {**base["load"], "warmup": {"duration_s": WARMUP_S}},
    }
    exp_file = ephemeral() / "experiment-warmup.yml"
    exp_file.write_text(yaml.safe_dump(experiment), encoding="utf-8")
    first, second = cell_ids(experiment)
    run = ephemeral() / "interrupted"
    shutil.rmtree(run, ignore_errors=True)
    extra = {"experiment": str(exp_file), "bench_run_dir": str(run)}
    evidence: dict[str, Any] = {
        "cells": [first, second],
        "delay_s": DELAY_S,
        "warmup_s": WARMUP_S,
        "run_dir": str(run),
    }
    start_delayer()
    try:
        log = ephemeral() / "interrupted.log"
        proc = start_playbook("benchmark.yml", log=log, extra=extra, limit=FIRST_TARGET_ONLY)
        measuring = wait_until(
            lambda: (
                (run / "cells" / f"{first}.json").exists()
                and all(sh(lg, "pgrep -f '^wrk .* -s ' || true").strip() for lg in LOADGENS)
            ),
            timeout_s=300,
        )
        evidence["caught_mid_cell"] = measuring
        evidence["interrupt"] = interrupt(proc, signal.SIGINT)
        evidence["interrupted_at"] = time.time()
        evidence["left_at_once"] = leftovers()
        start = time.monotonic()
        evidence["loadgens_clean"] = wait_until(lambda: not any(leftovers()[lg] for lg in LOADGENS), 30)
        evidence["loadgens_clean_after_s"] = round(time.monotonic() - start, 1)
        evidence["left_after"] = leftovers()
        evidence["log_tail"] = log.read_text(encoding="utf-8", errors="replace")[-6000:]
        evidence["stored_after_interrupt"] = stored(run)
        resume_started = time.time()
        evidence["resume"] = playbook("benchmark.yml", extra=extra, limit=FIRST_TARGET_ONLY).to_dict()
        evidence["resume_started_at"] = resume_started
        evidence["stored_after_resume"] = stored(run)
        evidence["left_after_resume"] = leftovers()
        # One loadgen stored the first cell, the other did not (nothing merged yet).
        lone = run / "loadgens" / LOADGENS[1] / "cells" / f"{first}.json"
        if not lone.exists():
            raise SystemExit(
                f"{lone} missing after the resume; stored: {sorted(stored(run))}\n"
                + evidence["resume"]["output"][-4000:]
            )
        lone.unlink()
        (run / "cells" / f"{first}.json").unlink()
        lone_started = time.time()
        evidence["lone"] = playbook("benchmark.yml", extra=extra, limit=FIRST_TARGET_ONLY).to_dict()
        evidence["lone_started_at"] = lone_started
        evidence["stored_after_lone"] = stored(run)
        evidence["left_after_lone"] = leftovers()
    finally:
        evidence["delays"] = stop_delayer()
    save("interrupted", evidence)


def clean_run() -> None:
    run = ephemeral() / "run"
    shutil.rmtree(run, ignore_errors=True)
    # The tests count the requests nginx logged per loadgen in this run only.
    sh(TARGET, "truncate -s 0 /var/log/nginx/access.log")
    # The run's verdict is the tests' to read; its gate (docs/verdict.md, Exit codes) would fail the play.
    result = playbook(
        "benchmark.yml", "report.yml", extra={"bench_run_dir": str(run), "bench_fail_on": "never"}
    )
    save("clean-run", result.to_dict())
    if result.rc != 0:
        raise SystemExit(f"the clean run failed:\n{result.output[-6000:]}")


def main() -> None:
    fresh_evidence()
    interrupted_run()
    clean_run()


if __name__ == "__main__":
    main()
