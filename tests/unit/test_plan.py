"""The resolved plan (benchstack.plan): compiled once per run, alike for the command line and the playbook."""

from pathlib import Path

import pytest

from benchstack.experiment import ExperimentError
from benchstack.plan import compile_plan, experiment_path, progress, run_dir_for
from benchstack.stacks import Roots

ROOT = Path(__file__).resolve().parents[2]


def test_each_cell_line_says_which_of_how_many_and_the_least_time_left(tmp_path: Path) -> None:
    source = tmp_path / "progress.yml"
    source.write_text(
        "name: progress\n"
        "stacks: [{name: s, port: 8001, app: {kind: static}, front: {kind: nginx}}]\n"
        "load: {repetitions: 3, pause_s: 1, plans: [{tool: wrk, concurrency: 8, duration_s: 5},"
        " {tool: ab, concurrency: 8, requests: 100}]}\n",
        encoding="utf-8",
    )
    plan = compile_plan(source)  # no seed: rotated, each stack's plans in order
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
    plan = compile_plan(ROOT / "experiments" / "perf-one-stack.yml", Roots(run="/run/x"))
    [stack] = plan["stacks"]
    assert [ep["address"] for ep in stack["endpoints"]] == [
        "unix:/run/x/sinatra-thin-x2-nginx-1/server.sock",
        "unix:/run/x/sinatra-thin-x2-nginx-2/server.sock",
    ]
    assert plan["needs"]["servers"] == ["thin"]
    assert len(plan["instance_checks"]) == 4


def test_a_new_run_folder_is_named_by_time_and_experiment_and_not_made(tmp_path: Path) -> None:
    plan = compile_plan(ROOT / "experiments" / "perf-one-stack.yml")
    run = run_dir_for(plan, tmp_path)
    assert Path(run).parent == tmp_path and run.endswith("-perf-one-stack")
    assert not Path(run).exists()


def test_an_unknown_experiment_name_lists_the_known_ones() -> None:
    with pytest.raises(ExperimentError, match="no experiment named 'nope'.*sinatra-thin-nginx"):
        experiment_path("nope", ROOT)
