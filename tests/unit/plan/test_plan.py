"""The resolved plan (benchstack.plan.resolved): compiled once per run, alike for the command line and the
playbook."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import bench_stack

from benchstack.kinds.stackfields import Roots
from benchstack.plan.experiment import ExperimentError
from benchstack.plan.readers import InstanceCheck
from benchstack.plan.resolved import (
    MAX_PROCESSES,
    YES_HINT,
    compile_plan,
    duration_text,
    experiment_path,
    progress,
    reseeded,
    run_dir_for,
    with_hosts,
)
from benchstack.plan.stacks import Stack

ROOT = Path(__file__).resolve().parents[3]


def test_each_cell_line_says_which_of_how_many_and_the_least_time_left(tmp_path: Path) -> None:
    source = tmp_path / "progress.yml"
    source.write_text(
        "name: progress\n"
        "stacks: [{name: s, port: 8001, app: {kind: static}, front: {kind: nginx}}]\n"
        "load: {repetitions: 3, pause_s: 1, plans: [{tool: wrk, concurrency: 8, duration_s: 5},"
        " {tool: ab, concurrency: 8, requests: 100}]}\n",
        encoding="utf-8",
    )
    plan = compile_plan(source).to_dict()  # no seed: rotated, each stack's plans in order
    labels = [plan["progress"][c["cell_id"]] for c in plan["cells"]]
    assert labels[0].startswith("1/6, ") and labels[-1] == "6/6, at least 0 s left after it"
    # wrk cells: 1 s pause + 5 s; ab cells: the pause only (their length is a number of requests).
    lefts = [int(label.split("at least ")[1].split(" s")[0]) for label in labels]
    assert lefts[0] - lefts[1] == 1  # the second cell is an ab cell
    assert lefts[1] - lefts[2] == 6  # the third, a wrk cell
    assert lefts == sorted(lefts, reverse=True)


def test_progress_of_no_cells_is_empty() -> None:
    assert progress([]) == {}


def test_a_plan_resolves_its_stacks_once_and_carries_every_derived_value() -> None:
    plan = compile_plan(ROOT / "experiments" / "perf-one-stack.yml", Roots(run="/run/bench-x"))
    [stack] = plan.stacks
    assert [ep.address for ep in stack.endpoints] == [
        "unix:/run/bench-x/sinatra-thin-x2-nginx-1/server.sock",
        "unix:/run/bench-x/sinatra-thin-x2-nginx-2/server.sock",
    ]
    assert plan.needs.servers == ("thin",)
    assert len(plan.instance_checks) == 4
    fact = plan.to_dict()
    assert [ep["address"] for ep in fact["stacks"][0]["endpoints"]] == [ep.address for ep in stack.endpoints]
    assert fact["needs"]["servers"] == ["thin"]


def test_the_plan_keeps_its_stacks_typed_and_makes_a_fact_of_plain_json() -> None:
    plan = compile_plan(ROOT / "experiments" / "apache-vs-nginx.yml")
    assert plan.stacks and all(isinstance(s, Stack) for s in plan.stacks)
    assert plan.experiment.resolved and all(isinstance(s, Stack) for s in plan.experiment.resolved)
    assert all(isinstance(c, InstanceCheck) for c in plan.instance_checks)
    assert plan.to_dict()["needs"]["fronts"] == list(plan.needs.fronts) == ["apache", "nginx"]
    # Ansible sets the fact and run.json keeps part of it: lists and mappings only, no tuple or dataclass
    # (JSON would print a tuple as a list, so the golden plan cannot tell).
    for path in [*(ROOT / "experiments").glob("*.yml"), *(ROOT / "molecule").glob("*/experiment.yml")]:
        placed = with_hosts(compile_plan(path, allow_large=True), ["t"], ["t"], {}, str).to_dict()
        assert json.loads(json.dumps(placed)) == placed, path


def test_hosts_and_a_new_seed_make_new_plans_and_leave_the_one_given() -> None:
    plan = compile_plan(ROOT / "experiments" / "perf-one-stack.yml", targets=["t1"])
    placed = with_hosts(plan, ["t1"], ["lg"], {}, lambda t: f"{t}.lan")
    assert (plan.hosts, plan.mode) == ({}, None)
    assert placed.mode == "network" and placed.hosts["lg"].address == "t1.lan"
    assert [c.url for c in placed.hosts["lg"].front_checks][:1] == ["http://t1.lan:8003/"]
    again = reseeded(placed, 12345)
    assert (again.seed, placed.seed) == (12345, None)
    assert again.hosts == placed.hosts and len(again.cells) == len(placed.cells)


def test_the_plan_names_every_load_tool_its_warmups_included() -> None:
    # The default experiment measures with wrk and warms up with ab (1,000 requests): both get installed.
    plan = compile_plan(ROOT / "experiments" / "sinatra-thin-nginx.yml").to_dict()
    assert plan["experiment"]["load"]["warmup"] == {"requests": 1000}
    assert plan["tools"] == ["ab", "wrk"]


def test_a_new_run_folder_is_named_by_time_and_experiment_and_not_made(tmp_path: Path) -> None:
    plan = compile_plan(ROOT / "experiments" / "perf-one-stack.yml")
    run = run_dir_for(plan, tmp_path)
    assert Path(run).parent == tmp_path and run.endswith("-perf-one-stack")
    assert not Path(run).exists()


def test_an_unknown_experiment_name_lists_the_known_ones() -> None:
    with pytest.raises(ExperimentError, match="no experiment named 'nope'.*sinatra-thin-nginx"):
        experiment_path("nope", ROOT)


# ---------------------------------------------------------------- limits a user may lift

LONG = """name: long
stacks:
  - {name: thin, app: {kind: sinatra}, server: {kind: thin}, port: 8001}
load: {plans: [{tool: wrk, duration_s: 600, concurrency: LEVELS}]}
"""


def long_experiment(tmp_path: Path, levels: int = 5000) -> Path:
    path = tmp_path / "long.yml"
    path.write_text(LONG.replace("LEVELS", str(list(range(1, levels + 1)))), encoding="utf-8")
    return path


def test_a_plan_of_days_is_refused_unless_the_user_says_yes(tmp_path: Path) -> None:
    path = long_experiment(tmp_path)  # 5,000 levels of 600 s
    with pytest.raises(ExperimentError) as err:
        compile_plan(path)
    assert err.value.problems == [
        "load: the 5_000 cells take at least 34.8 days (durations, warm-ups and pauses; requests at 50_000/s "
        f"at most, 20_000/s a connection), more than 2 h ({YES_HINT})"
    ]
    plan = compile_plan(path, allow_large=True)
    assert len(plan.cells) == 5000
    assert plan.warnings == (f"{err.value.problems[0].split(' (if you')[0]} (said yes)",)


def test_a_plan_just_under_the_time_limit_needs_no_yes(tmp_path: Path) -> None:
    # 11 cells of 600 s and a 1 s pause: 110 min.
    assert compile_plan(long_experiment(tmp_path, levels=11)).warnings == ()
    with pytest.raises(ExperimentError, match="more than 2 h"):
        compile_plan(long_experiment(tmp_path, levels=12))  # 120.2 min


def requests_experiment(tmp_path: Path, concurrency: int = 1, warmup: str = "") -> Path:
    path = tmp_path / "requests.yml"
    path.write_text(
        "name: reqs\nstacks:\n  - {name: thin, app: {kind: sinatra}, server: {kind: thin}, port: 8001}\n"
        f"load: {{repetitions: 100, {warmup}plans: [{{tool: ab, concurrency: {concurrency}, "
        "requests: 1000000}]}\n",
        encoding="utf-8",
    )
    return path


def test_a_request_count_counts_at_the_rate_no_stack_beats(tmp_path: Path) -> None:
    """Issue 44, finding 8: ab cells of a million requests were days of load that no limit saw. 100 cells
    of 1,000,000 requests at c=1 are at least 100 x 50 s (1.4 h); with as large a warm-up, 2.8 h."""
    assert compile_plan(requests_experiment(tmp_path)).warnings == ()
    with pytest.raises(ExperimentError, match=r"the 100 cells take at least 2.8 h .*\(if you mean it"):
        compile_plan(requests_experiment(tmp_path, warmup="warmup: {requests: 1000000}, "))
    # At c=100, 50,000/s in all: 100 x (20 s + 20 s + a pause), 1.1 h.
    assert compile_plan(requests_experiment(tmp_path, 100, "warmup: {requests: 1000000}, ")).warnings == ()
    plan = compile_plan(
        requests_experiment(tmp_path, warmup="warmup: {requests: 1000000}, "), allow_large=True
    )
    assert plan.warnings[0].startswith("load: the 100 cells take at least 2.8 h")
    assert plan.warnings[0].endswith("(said yes)")


def test_targets_in_parallel_count_their_time_once(tmp_path: Path) -> None:
    path = long_experiment(tmp_path, levels=11)
    assert compile_plan(path, targets=["a", "b"], parallel=True).warnings == ()
    with pytest.raises(ExperimentError, match="the 22 cells take at least 3.7 h"):
        compile_plan(path, targets=["a", "b"])


def test_more_app_server_processes_than_a_host_holds_need_a_yes(tmp_path: Path) -> None:
    path = tmp_path / "procs.yml"
    path.write_text(
        "name: procs\nstacks:\n"
        "  - {name: u, app: {kind: sinatra}, server: {kind: unicorn, instances: 64, workers: 64}, "
        "front: {kind: nginx}, port: 8001}\n"
        "load: {plans: [{tool: ab, concurrency: 1, requests: 10}]}\n",
        encoding="utf-8",
    )
    with pytest.raises(ExperimentError, match=r"stacks: 4_160 app server processes on each target") as err:
        compile_plan(path)
    assert f"more than {MAX_PROCESSES}" in str(err.value)
    assert compile_plan(path, allow_large=True).warnings[0].endswith("(said yes)")


def test_more_cells_than_the_hard_limit_are_refused_even_with_a_yes(tmp_path: Path) -> None:
    path = long_experiment(tmp_path, levels=5001)
    path.write_text(path.read_text().replace("duration_s: 600", "duration_s: 1"), encoding="utf-8")
    with pytest.raises(ExperimentError, match="load: 10_002 cells planned, more than 10_000"):
        compile_plan(path, targets=["a", "b"], allow_large=True)


def says_yes(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """``python -m benchstack experiment LONG --yes`` for real: the other tests call its main() in-process
    (started with the session: conftest's early_commands)."""
    path = long_experiment(folder, levels=13)
    return {
        "yes": (
            [sys.executable, "-m", "benchstack", "experiment", str(path), "--yes"],
            dict(os.environ),
            ROOT,
        )
    }


@pytest.mark.early.with_args(says_yes)
def test_the_command_line_says_yes_with_yes(
    tmp_path: Path, early_results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    path = long_experiment(tmp_path, levels=13)
    refused = bench_stack("experiment", path)
    assert refused.returncode == 1 and "--yes" in refused.stderr
    accepted = early_results["yes"]
    assert accepted.returncode == 0, accepted.stderr
    assert "warning: load: the 13 cells take at least 2.2 h" in accepted.stderr


def test_duration_text_reads_as_minutes_hours_or_days() -> None:
    assert [duration_text(s) for s in (600, 3600, 5400, 7200, 9000, 3 * 86400)] == [
        "10 min",
        "1 h",
        "1.5 h",
        "2 h",
        "2.5 h",
        "3 days",
    ]
