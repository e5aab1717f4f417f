"""load.thresholds in an experiment: the published schema refuses a bad one with its own message, the rules
across fields (stack, tool, level, ratio, min <= max) in Python, and the typed plan keeps them as written."""

from typing import Any

import pytest

from benchstack.plan.experiment import experiment_from_dict, validate_experiment
from benchstack.plan.loadplan import Load, Threshold
from benchstack.results.runfolder import experiment_hash


def experiment(thresholds: object, stacks: tuple[str, ...] = ("a", "b")) -> dict[str, Any]:
    return {
        "name": "gates",
        "stacks": [
            {"name": name, "port": 8001 + i, "app": {"kind": "static"}, "front": {"kind": "nginx"}}
            for i, name in enumerate(stacks)
        ],
        "load": {
            "plans": [
                {"tool": "ab", "concurrency": [1, 8], "requests": 100},
                {"tool": "wrk", "concurrency": 16, "duration_s": 2},
            ],
            "thresholds": thresholds,
        },
    }


GOOD = [
    {"metric": "p99_ms", "max": 300},
    {"metric": "rps", "min": 1000, "stack": "b", "tool": "ab", "level": 8},
    {"metric": "error_rate", "max": 0.01},
    {"metric": "ratio", "min": 0.9, "max": 1.1, "stack": "b"},
    {"metric": "p99.9_ms", "max": 1000, "tool": "wrk"},
]


def test_every_metric_and_scope_is_accepted_and_typed_as_written() -> None:
    assert validate_experiment(experiment(GOOD)) == []
    load = experiment_from_dict(experiment(GOOD)).load
    assert load.thresholds[1] == Threshold("rps", min=1000, stack="b", tool="ab", level=8)
    assert load.as_dict()["thresholds"] == GOOD
    assert Load.from_dict(load.as_dict()).thresholds == load.thresholds
    assert [t.text for t in load.thresholds] == [
        "p99_ms <= 300",
        "rps >= 1000 (stack b, tool ab, level 8)",
        "error_rate <= 0.01",
        "0.9 <= ratio <= 1.1 (stack b)",
        "p99.9_ms <= 1000 (tool wrk)",
    ]


def test_an_experiment_without_thresholds_records_none_and_keeps_its_hash() -> None:
    with_none = experiment([])
    without = experiment(None)
    del without["load"]["thresholds"]
    a, b = experiment_from_dict(with_none).load, experiment_from_dict(without).load
    assert "thresholds" not in a.as_dict() and a == b
    assert experiment_hash({**without, "load": a.as_dict()}) == experiment_hash(
        {**without, "load": b.as_dict()}
    )


@pytest.mark.parametrize(
    ("thresholds", "problem"),
    [
        (
            "p99<300",
            "load.thresholds: must be a list of thresholds ({metric, min and/or max, stack, tool, level}), "
            "not 'p99<300'",
        ),
        (
            [{"metric": "p(99)", "max": 300}],
            "load.thresholds[0].metric: must be one of rps, error_rate, mean_ms, "
            "p50_ms, p90_ms, p99_ms, p99.9_ms, ratio, not 'p(99)'",
        ),
        (
            [{"max": 300}],
            "load.thresholds[0].metric: must be one of rps, error_rate, mean_ms, p50_ms, p90_ms, "
            "p99_ms, p99.9_ms, ratio",
        ),
        ([{"metric": "rps"}], "load.thresholds[0]: must give min, max or both, not {'metric': 'rps'}"),
        (
            [{"metric": "rps", "min": -1}],
            "load.thresholds[0].min: must be a number from 0 to 1_000_000_000, not -1",
        ),
        (
            [{"metric": "rps", "max": "fast"}],
            "load.thresholds[0].max: must be a number from 0 to 1_000_000_000, not 'fast'",
        ),
        (
            [{"metric": "rps", "min": 1, "when": "x"}],
            "load.thresholds[0].when: unknown field (allowed: level, max, metric, min, stack, tool)",
        ),
        (
            [{"metric": "rps", "min": 1, "tool": "vegeta"}],
            "load.thresholds[0].tool: must be one of ab, wrk, httperf, siege, not 'vegeta'",
        ),
        (
            [{"metric": "rps", "min": 1, "level": 0}],
            "load.thresholds[0].level: must be an integer from 1 to 20_000, not 0",
        ),
        ([{"metric": "rps", "min": 5, "max": 2}], "load.thresholds[0]: min (5) must not be above max (2)"),
        (
            [{"metric": "rps", "min": 1, "stack": "c"}],
            "load.thresholds[0].stack: must name one of the stacks (a, b), not 'c'",
        ),
        (
            [{"metric": "rps", "min": 1, "tool": "httperf"}],
            "load.thresholds[0].tool: no load plan uses 'httperf' (the plans' tools: ab, wrk)",
        ),
        (
            [{"metric": "rps", "min": 1, "tool": "wrk", "level": 8}],
            "load.thresholds[0].level: no load plan of wrk measures level 8 (its levels: 16)",
        ),
        (
            [{"metric": "rps", "min": 1, "level": 4}],
            "load.thresholds[0].level: no load plan measures level 4 (its levels: 1, 8, 16)",
        ),
        (
            [{"metric": "ratio", "min": 0.9, "stack": "a"}],
            "load.thresholds[0].stack: 'a' is the baseline: a ratio holds another stack to it",
        ),
        (
            [{"metric": "rps", "min": 1}] * 101,
            "load.thresholds: must be a list of at most 100 thresholds, not 101",
        ),
    ],
)
def test_a_bad_threshold_is_refused_naming_its_field(thresholds: object, problem: str) -> None:
    assert validate_experiment(experiment(thresholds)) == [problem]


def test_a_ratio_needs_a_second_stack() -> None:
    assert validate_experiment(experiment([{"metric": "ratio", "min": 1}], stacks=("a",))) == [
        "load.thresholds[0]: a ratio needs a stack besides the baseline; there is one stack"
    ]
