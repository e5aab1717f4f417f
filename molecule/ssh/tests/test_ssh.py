"""bench-stack.yml over SSH as a sudo user (converge.py), checked from outside: the run it wrote, the
stack on the target run by the benchmark user, sshd's own record of who logged in, and the re-run."""

import json
import os
from pathlib import Path
from typing import Any

from sideeffect import load
from stack_contract import (  # noqa: F401  (run here, parametrized from STACKS)
    test_every_instance_answers_on_its_own,
    test_every_instance_is_an_active_unit_whose_processes_all_run_as_the_benchmark_user,
    test_every_stack_answers_through_its_front,
)

from benchstack.plan.experiment import load_experiment

testinfra_hosts = ["bench-mol-ssh-target"]
EXPERIMENT = load_experiment(Path(__file__).resolve().parents[1] / "experiment.yml")
STACKS = EXPERIMENT.stacks
RUN = Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "run"
# A cell's notes when the loadgen's output came through a terminal (CRLF, stderr merged): its marker lines
# were not found. (A cell shorter than vmstat's 1 s interval is noted too, rightly: not this.)
LOST_OVER_A_TERMINAL = ("vmstat printed nothing", "no CPU snapshots", "ab wrote no -g file")


def cells() -> dict[str, dict[str, Any]]:
    """The stored cells by id (their file names)."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((RUN / "cells").glob("*.json"))}


def test_the_first_run_measured_every_planned_cell_over_the_network_and_reported() -> None:
    first = load("first")
    assert (first["rc"], first["failed"]) == (0, [])
    run = json.loads((RUN / "run.json").read_text(encoding="utf-8"))
    planned = [c["cell_id"] for c in run["experiment"]["cells"]]
    stored = cells()
    assert sorted(stored) == sorted(planned) and planned
    for cell in stored.values():
        assert (cell["status"], cell["mode"], cell["target"], cell["loadgen"]) == (
            "ok",
            "network",
            "target-1",
            "loadgen-1",
        )
        assert cell["requests_completed"] > 0
    assert (run["targets"], run["loadgens"]) == (["target-1"], ["loadgen-1"])
    report = (RUN / "report.md").read_text(encoding="utf-8")
    assert "sinatra-thin-x2-nginx" in report and "| wrk |" in report and "| ab |" in report
    assert "| siege |" in report


def test_siege_kept_every_requests_time_and_counted_its_slow_ones() -> None:
    [siege] = [c for c in cells().values() if c["tool"] == "siege"]
    assert (siege["requests_completed"], siege["error_count"], siege["keepalive"]) == (400, 0, False)
    assert siege["tool_version"].startswith("4.")  # its output's "** SIEGE 4.0.7"
    dist = siege["latency_dist"]
    assert (dist["source"], dist["unit_us"], dist["requests"], dist["samples"]) == ("siege", 10_000, 400, 400)
    assert siege["errors"]["over_threshold"] is not None  # the experiment's threshold_ms, from every request
    assert siege["command"][:2] == ["sh", "-c"]
    assert 'HOME="$PWD" exec siege -R siegerc -b -c 4 -r 100 http' in siege["command"][2]


def test_over_ssh_every_cell_kept_the_loadgens_and_the_targets_samples() -> None:
    """Without a terminal (benchstack.measure.remote.without_tty): with one, the loadgen's vmstat, CPU
    snapshots and ab's -g file were lost in every cell, and the noise probe found none of its runs."""
    for cell_id, cell in cells().items():
        lost = [n for n in cell["notes"] if any(w in n for w in LOST_OVER_A_TERMINAL)]
        assert lost == [], cell_id
        assert set(cell["interference"]["hosts"]) == {"loadgen-1", "target-1"}
        assert all(cell["interference"]["hosts"].values()), cell_id
    floor = json.loads((RUN / "run.json").read_text(encoding="utf-8"))["noise_floor"]["loadgen-1"]
    assert floor["problem"] is None and len(floor["rps"]) == 5


def test_the_rerun_over_ssh_changed_nothing_on_the_hosts_and_measured_nothing() -> None:
    first, again = load("first"), load("again")
    assert (again["rc"], again["failed"], again["changed_on_hosts"]) == (0, [], [])
    # The provisioning markers skip every role: a re-run costs a fraction of the first run.
    assert again["roles_provisioned"] == {"target-1": [], "loadgen-1": []}
    assert "loadgen" in first["roles_provisioned"]["loadgen-1"]
    assert again["seconds"] < first["seconds"]
