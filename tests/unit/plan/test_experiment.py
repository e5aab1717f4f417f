import copy
from pathlib import Path

import pytest
from conftest import yaml_text

from benchstack.kinds.loadtools.loadcmd import http_url
from benchstack.measure.runner import load_command
from benchstack.plan.experiment import (
    ExperimentError,
    cells,
    experiment_from_dict,
    load_experiment,
    paired,
    validate_experiment,
)
from benchstack.records.cellplan import CellPlan

ROOT = Path(__file__).resolve().parents[3]

EXAMPLE = """
name: sinatra-thin-nginx
description: Sinatra on thin, alone and behind nginx
stacks:
  - name: sinatra-thin-x1
    runtime: {kind: ruby}
    app: {kind: sinatra}
    server: {kind: thin, instances: 1, bind: tcp}
    front: {kind: none}
    port: 8001
  - name: sinatra-thin-x4-nginx
    runtime: {kind: ruby}
    app: {kind: sinatra}
    server: {kind: thin, instances: 4, bind: unix}
    front: {kind: nginx, profile: tuned}
    port: 8004
  - name: nginx-static
    app: {kind: static}
    front: {kind: nginx, profile: tuned}
    port: 8010
load:
  path: /hello/bar
  threshold_ms: 300
  warmup: {requests: 200}
  repetitions: 1
  plans:
    - {tool: ab, concurrency: [100], requests: 2000, keepalive: false}
    - {tool: wrk, concurrency: [32], threads: 2, duration_s: 10}
"""


def example() -> dict:
    return yaml_text(EXAMPLE)


def problems_with(mutate: object) -> list[str]:
    data = copy.deepcopy(example())
    mutate(data)  # type: ignore[operator]
    return validate_experiment(data)


def test_example_experiment_is_valid_and_expands_to_one_cell_per_stack_and_plan(tmp_path: Path) -> None:
    path = tmp_path / "exp.yml"
    path.write_text(EXAMPLE)
    exp = load_experiment(path)
    plans = cells(exp)
    assert [p.cell_id for p in plans] == [
        "sinatra-thin-x1__ab__c100__r1",
        "sinatra-thin-x1__wrk__c32__r1",
        "sinatra-thin-x4-nginx__ab__c100__r1",
        "sinatra-thin-x4-nginx__wrk__c32__r1",
        "nginx-static__ab__c100__r1",
        "nginx-static__wrk__c32__r1",
    ]
    first = plans[0]
    assert (first.stack, first.port, first.tool, first.concurrency, first.requests) == (
        "sinatra-thin-x1", 8001, "ab", 100, 2000,
    )  # fmt: skip
    assert (first.path, first.threshold_ms, first.warmup, first.keepalive) == (
        "/hello/bar",
        300,
        {"requests": 200},
        False,
    )
    assert plans[1].threads == 2 and plans[1].duration_s == 10 and plans[1].keepalive is True


def test_repetitions_are_the_outer_loop_and_rotate_the_stack_order() -> None:
    data = example()
    data["load"]["repetitions"] = 2
    data["load"]["plans"] = [{"tool": "ab", "concurrency": [1, 10], "requests": 100}]
    data["stacks"] = data["stacks"][:2]
    ids = [p.cell_id for p in cells(experiment_from_dict(data))]
    assert ids == [
        "sinatra-thin-x1__ab__c1__r1",
        "sinatra-thin-x1__ab__c10__r1",
        "sinatra-thin-x4-nginx__ab__c1__r1",
        "sinatra-thin-x4-nginx__ab__c10__r1",
        "sinatra-thin-x4-nginx__ab__c1__r2",
        "sinatra-thin-x4-nginx__ab__c10__r2",
        "sinatra-thin-x1__ab__c1__r2",
        "sinatra-thin-x1__ab__c10__r2",
    ]


def test_a_seeded_round_puts_each_load_points_baseline_cell_in_the_middle_of_its_others() -> None:
    # The default experiment: five stacks, one load point. Every other stack's cell is one or two cells from
    # the baseline's it is paired with (scripts/measure-pair-gap.py: a pair's spread grows with the cells
    # between its two cells), and the others come in each round's random order.
    exp = load_experiment(ROOT / "experiments" / "sinatra-thin-nginx.yml")
    base = exp.load.baseline
    rounds: dict[int, list[str]] = {}
    for plan in cells(exp, seed=11):
        rounds.setdefault(plan.repetition, []).append(plan.stack)
    assert all(order.index(base) == 2 for order in rounds.values())
    assert len({tuple(order) for order in rounds.values()}) > 5


def test_with_one_other_stack_a_seeded_round_alternates_which_goes_first() -> None:
    data = example()
    data["stacks"] = data["stacks"][:2]
    data["load"]["repetitions"] = 4
    data["load"]["plans"] = [{"tool": "ab", "concurrency": [1, 10], "requests": 100}]
    exp = experiment_from_dict(data)
    firsts = []
    for rep in range(1, 5):
        order = [(p.stack, p.concurrency) for p in cells(exp, seed=5) if p.repetition == rep]
        for level in (1, 10):
            stacks = [s for s, c in order if c == level]
            firsts.append(stacks[0] == exp.load.baseline)
    # per load point: other stack first in odd rounds, the baseline first in even ones
    assert firsts == [False, False, True, True, False, False, True, True]


def test_paired_keeps_every_item_once_whatever_the_groups() -> None:
    items = [("B", p) for p in "pqr"] + [(s, p) for s in ("X", "Y", "Z") for p in "pq"]
    for rep in range(1, 7):
        order = paired(items, 3, rep, "B", lambda i: i[0], lambda i: i[1])
        assert sorted(order) == sorted(items)
        for point in "pq":
            group = [i[0] for i in order if i[1] == point]
            assert group.index("B") == (1 if rep % 2 == 0 else 2)  # 3 others: after 1 or 2 of them


def test_each_repetition_starts_with_the_next_stack() -> None:
    data = example()
    data["load"]["repetitions"] = 4
    data["load"]["plans"] = [{"tool": "ab", "concurrency": 1, "requests": 100}]
    order = [(p.repetition, p.stack) for p in cells(experiment_from_dict(data))]
    a, b, c = "sinatra-thin-x1", "sinatra-thin-x4-nginx", "nginx-static"
    assert order == [
        (1, a), (1, b), (1, c),
        (2, b), (2, c), (2, a),
        (3, c), (3, a), (3, b),
        (4, a), (4, b), (4, c),
    ]  # fmt: skip


def test_max_cv_and_max_repetitions_default_to_five_percent_and_no_extra_repetitions() -> None:
    data = example()
    data["load"]["repetitions"] = 3
    load = experiment_from_dict(data).load
    assert (load.max_cv, load.max_repetitions) == (0.05, 3)
    data["load"].update(max_cv=0.02, max_repetitions=7)
    load = experiment_from_dict(data).load
    assert (load.max_cv, load.max_repetitions) == (0.02, 7)


def test_max_error_rate_defaults_to_one_percent() -> None:
    data = example()
    assert experiment_from_dict(data).load.max_error_rate == 0.01
    data["load"]["max_error_rate"] = 1
    assert experiment_from_dict(data).load.max_error_rate == 1


def test_defaults_path_repetitions_and_wrk_threads() -> None:
    data = example()
    del (
        data["load"]["path"],
        data["load"]["repetitions"],
        data["load"]["warmup"],
        data["load"]["threshold_ms"],
    )
    data["load"]["plans"] = [{"tool": "wrk", "concurrency": 1, "duration_s": 5}]
    plan = cells(experiment_from_dict(data))[0]
    assert (plan.path, plan.repetition, plan.warmup, plan.threshold_ms, plan.threads) == (
        "/",
        1,
        None,
        None,
        1,
    )


def runner_command(plan: CellPlan, host: str) -> list[str]:
    """The runner's command for ``plan`` against ``host`` (without ab's -g file or wrk's script)."""
    return load_command(plan, http_url(host, plan.port, plan.path))


def test_each_cell_plan_becomes_the_exact_command_the_runner_runs() -> None:
    plans = cells(experiment_from_dict(example()))
    assert runner_command(plans[0], "10.0.0.5") == [
        "ab",
        "-n",
        "2000",
        "-c",
        "100",
        "http://10.0.0.5:8001/hello/bar",
    ]
    # The 300 ms threshold gives wrk a --timeout above it, so slow responses are measured, not dropped.
    assert runner_command(plans[1], "127.0.0.1") == [
        "wrk", "-t", "2", "-c", "32", "-d", "10s", "--latency", "--timeout", "2s",
        "http://127.0.0.1:8001/hello/bar",
    ]  # fmt: skip
    assert runner_command(plans[1], "fd00::2")[-1] == "http://[fd00::2]:8001/hello/bar"


def test_ab_with_and_without_keepalive_at_one_level_are_distinct_cells() -> None:
    data = example()
    data["load"]["plans"] = [
        {"tool": "ab", "concurrency": [10], "requests": 100},
        {"tool": "ab", "concurrency": [10], "requests": 100, "keepalive": True},
    ]
    ids = [p.cell_id for p in cells(experiment_from_dict(data))][:2]
    assert ids == ["sinatra-thin-x1__ab__c10__r1", "sinatra-thin-x1__ab-k__c10__r1"]


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (
            lambda d: d["stacks"][1].update(name="sinatra-thin-x1"),
            "stack 'sinatra-thin-x1': name: used by two stacks",
        ),
        (
            lambda d: d["stacks"][2].update(port=8001),
            "stack 'nginx-static': port: 8001 is also used by stack 'sinatra-thin-x1'",
        ),
        (lambda d: d["stacks"][0].update(port=70000), "stack 'sinatra-thin-x1': port: must be an integer"),
        (lambda d: d["stacks"][0].pop("port"), "stack 'sinatra-thin-x1': port: must be an integer"),
        (lambda d: d["stacks"][0].update(name="a b"), "stack 'a b': name: must be 1-48 lowercase letters"),
        (lambda d: d["stacks"][0].update(name="My_Stack"), "stack 'My_Stack': name: must be 1-48 lowercase"),
        (
            lambda d: d["stacks"][1]["front"].update(kind="caddy"),
            "stack 'sinatra-thin-x4-nginx': front.kind: must be one of none, nginx, apache",
        ),
        (
            lambda d: d["stacks"][1]["server"].update(bind="pipe"),
            "stack 'sinatra-thin-x4-nginx': server.bind: must be one of unix, tcp",
        ),
        (
            lambda d: d["stacks"][1]["server"].update(workers=4),
            "stack 'sinatra-thin-x4-nginx': server.workers: unknown option of thin",
        ),
        (lambda d: d["stacks"][0].update(prot=9000), "stack 'sinatra-thin-x1': prot: unknown field"),
        (lambda d: d["stacks"][0]["app"].update(dri="/x"), "stack 'sinatra-thin-x1': app.dri: unknown field"),
        (lambda d: d["stacks"][0].update(path="/a b"), "stack 'sinatra-thin-x1': path: must be a URL path"),
        (lambda d: d["stacks"][0].update(path="/a\nb"), "stack 'sinatra-thin-x1': path: must be a URL path"),
        (lambda d: d["load"]["plans"][0].update(tool="vegeta"), "load.plans[0].tool: must be one of ab, wrk"),
        (
            lambda d: d["load"]["plans"][0].update(concurrency=[0]),
            "load.plans[0].concurrency: must be a positive",
        ),
        (
            lambda d: d["load"]["plans"][0].update(concurrency="10"),
            "load.plans[0].concurrency: must be a positive",
        ),
        (
            lambda d: d["load"]["plans"][0].pop("requests"),
            "load.plans[0].requests: ab needs a number of requests",
        ),
        (lambda d: d["load"]["plans"][1].pop("duration_s"), "load.plans[1].duration_s: wrk needs a duration"),
        (
            lambda d: d["load"]["plans"][0].update(requests=2_000_000),
            "load.plans[0].requests: must be an integer",
        ),
        (
            lambda d: d["load"]["plans"][1].update(duration_s=601),
            "load.plans[1].duration_s: must be an integer",
        ),
        (
            lambda d: d["load"]["plans"][0].update(requests=50),
            "at concurrency 100: ab needs requests >= concurrency",
        ),
        (
            lambda d: d["load"]["plans"][1].update(threads=64),
            "at concurrency 32: wrk needs threads <= connections",
        ),
        (
            lambda d: d["load"]["plans"][1].update(keepalive=False),
            "load.plans[1].keepalive: wrk always keeps",
        ),
        (lambda d: d["load"]["plans"][0].update(threads=2), "load.plans[0].threads: ab is single-threaded"),
        (lambda d: d["load"]["plans"][0].update(rate=5), "load.plans[0].rate: ab is closed loop"),
        (lambda d: d["load"]["plans"][0].update(speed=5), "load.plans[0].speed: unknown field"),
        (lambda d: d["load"].update(path="hello"), "load.path: must be a URL path starting with '/'"),
        (lambda d: d["load"].update(threshold_ms=0), "load.threshold_ms: must be a positive number"),
        (lambda d: d["load"].update(threshold_ms=600_001), "load.threshold_ms: must be a positive number"),
        (lambda d: d["load"]["plans"][0].update(concurrency=20_001), "at most 20_000), not 20001"),
        (lambda d: d["load"].update(warmup={"seconds": 3}), "load.warmup.seconds: unknown field"),
        (
            lambda d: d["load"].update(warmup={"requests": 3, "duration_s": 3}),
            "load.warmup: must be a mapping with one of requests or duration_s",
        ),
        (lambda d: d["load"].update(repetitions=0), "load.repetitions: must be an integer from 1"),
        (
            lambda d: d["load"].update(repetitions=3, max_repetitions=2),
            "load.max_repetitions: must be at least load.repetitions (3), not 2",
        ),
        (lambda d: d["load"].update(max_repetitions=101), "load.max_repetitions: must be an integer from 1"),
        (lambda d: d["load"].update(max_cv=0), "load.max_cv: must be a coefficient of variation above 0"),
        (lambda d: d["load"].update(max_cv="5%"), "load.max_cv: must be a coefficient of variation"),
        (lambda d: d["load"].update(max_error_rate=1.5), "load.max_error_rate: must be a share from 0 to 1"),
        (lambda d: d["load"].update(max_error_rate="1%"), "load.max_error_rate: must be a share from 0 to 1"),
        (lambda d: d["load"].update(plans=[]), "load.plans: must be a non-empty list"),
        (lambda d: d.pop("stacks"), "stacks: must be a non-empty list"),
        (lambda d: d.update(name=None), "name: must be a word"),
        (lambda d: d.update(stacks_extra=1), "stacks_extra: unknown field"),
        (
            lambda d: d["load"]["plans"].append({"tool": "ab", "concurrency": 100, "requests": 500}),
            "load.plans[2]: ab at concurrency 100 (keep-alive off) is already measured by load.plans[0]",
        ),
    ],
)
def test_invalid_experiments_name_the_field(mutate: object, problem: str) -> None:
    problems = problems_with(mutate)
    assert any(problem in p for p in problems), problems


def test_the_largest_threshold_and_concurrency_are_accepted() -> None:
    def largest(d: dict) -> None:
        d["load"]["threshold_ms"] = 600_000
        d["load"]["plans"][0].update(concurrency=20_000, requests=20_000)

    assert problems_with(largest) == []


def test_all_problems_are_reported_at_once() -> None:
    data = example()
    data["stacks"][1]["port"] = 8001
    data["load"]["plans"][1]["duration_s"] = 0
    with pytest.raises(ExperimentError) as info:
        experiment_from_dict(data, "exp.yml")
    assert len(info.value.problems) == 2
    assert str(info.value).startswith("exp.yml: invalid experiment:")


def test_load_experiment_reports_bad_yaml_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ExperimentError, match="not valid YAML"):
        load_experiment(bad)
    with pytest.raises(ExperimentError, match="cannot read the file"):
        load_experiment(tmp_path / "missing.yml")
    scalar = tmp_path / "scalar.yml"
    scalar.write_text("just text\n")
    with pytest.raises(ExperimentError, match="must be a mapping"):
        load_experiment(scalar)


def open_loop(plan: dict) -> dict:
    return {
        "name": "open",
        "stacks": [{"name": "s", "port": 8000, "app": {"kind": "static"}, "front": {"kind": "nginx"}}],
        "load": {"plans": [plan]},
    }


def test_httperf_plans_are_measured_per_offered_rate() -> None:
    exp = experiment_from_dict(open_loop({"tool": "httperf", "rate": [100, 500], "duration_s": 5}))
    plans = cells(exp)
    assert [p.cell_id for p in plans] == ["s__httperf__rate100__r1", "s__httperf__rate500__r1"]
    assert [(p.rate, p.concurrency) for p in plans] == [(100, None), (500, None)]
    assert runner_command(plans[1], "10.0.0.5")[-8:] == [
        "--rate", "500", "--num-conns", "2500", "--num-calls", "1", "--timeout", "5",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("plan", "problem"),
    [
        ({"tool": "httperf", "concurrency": 10, "rate": 5, "duration_s": 5}, "concurrency: not for httperf"),
        ({"tool": "httperf", "rate": 5}, "duration_s: httperf needs a duration"),
        ({"tool": "httperf", "rate": 5, "duration_s": 5, "keepalive": True}, "one request per connection"),
        ({"tool": "httperf", "duration_s": 5}, "rate: must be a positive integer"),
        ({"tool": "httperf", "rate": 5000, "duration_s": 600}, "more than 1_000_000 requests"),
    ],
)
def test_invalid_httperf_plans_name_the_field(plan: dict, problem: str) -> None:
    problems = validate_experiment(open_loop(plan))
    assert any(problem in p for p in problems), problems
