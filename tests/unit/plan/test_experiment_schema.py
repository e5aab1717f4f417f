"""The published experiment schema (benchstack/schemas/experiment.schema.json): it accepts every experiment
the project ships, refuses the bad ones with one clear line each, and cannot drift from the Python tables
(kinds, tools, limits) or from the typed load section (benchstack.plan.loadplan)."""

import copy
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import read_yaml, schema_file_errors

from benchstack.common.inputs import InputError, load_yaml
from benchstack.kinds.apps import REGISTRY as APPS
from benchstack.kinds.apps.fields import MAX_CHECKS, MAX_ENV_VARS
from benchstack.kinds.fronts import REGISTRY as FRONTS
from benchstack.kinds.fronts import apache, nginx
from benchstack.kinds.loadtools import TOOLS
from benchstack.kinds.loadtools.base import MAX_DURATION_S, MAX_REQUESTS
from benchstack.kinds.loadtools.wrk import MAX_THREADS
from benchstack.kinds.servers import BINDS, REGISTRY
from benchstack.kinds.stackfields import MAX_URL_PATH
from benchstack.plan import stacks as S
from benchstack.plan.experiment import (
    LOAD_KEYS,
    MAX_CONCURRENCY,
    MAX_NAME,
    MAX_PAUSE_S,
    MAX_RATE,
    MAX_REPETITIONS,
    MAX_SECONDS,
    MAX_STACKS,
    MAX_THRESHOLD_MS,
    PLAN_KEYS,
    TOP_KEYS,
    WARMUP_KEYS,
    experiment_from_dict,
    validate_experiment,
)
from benchstack.plan.experiment_schema import experiment_schema, schema_problems
from benchstack.plan.loadplan import Load, LoadPlan, Warmup
from benchstack.results.formats import first_error_validator

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = experiment_schema()
STACK = SCHEMA["$defs"]["stack"]["properties"]
LOAD = SCHEMA["$defs"]["load"]["properties"]
PLAN = LOAD["plans"]["items"]["properties"]
# Every experiment the project ships or runs: the catalogue, the e2e test's, the Molecule scenarios'.
SHIPPED = sorted(
    [
        *(ROOT / "experiments").glob("*.yml"),
        ROOT / "tests" / "e2e" / "experiment.yml",
        *(ROOT / "molecule").glob("*/experiment.yml"),
    ]
)
BAD = sorted((ROOT / "tests" / "bad-inputs").glob("*.yml"))


def read(path: Path) -> Any:
    return read_yaml(path)


def branches(node: dict[str, Any], field: str) -> dict[str, dict[str, Any]]:
    """The ``then`` schemas of ``node``'s ``allOf``, by the value of ``field`` their ``if`` names."""
    return {b["if"]["properties"][field]["const"]: b["then"] for b in node["allOf"]}


# ---------------------------------------------------------------- the schema and the Python tables


def test_the_schema_names_the_kinds_and_tools_the_code_knows() -> None:
    app, server, front = STACK["app"]["properties"], STACK["server"], STACK["front"]
    assert app["kind"]["enum"] == list(APPS)
    assert server["properties"]["kind"]["enum"] == list(REGISTRY)
    assert server["properties"]["bind"]["enum"] == list(BINDS)
    assert front["properties"]["kind"]["enum"] == list(FRONTS)
    assert sorted(STACK["runtime"]["properties"]["kind"]["enum"]) == sorted(
        {kind.runtime for kind in APPS.values()}
    )
    assert PLAN["tool"]["enum"] == list(TOOLS)
    fronts = branches(front, "kind")
    assert set(fronts) == set(FRONTS)
    assert fronts["nginx"]["properties"]["profile"]["enum"] == list(nginx.PROFILES)
    assert fronts["apache"]["properties"]["mpm"]["enum"] == list(apache.MPMS)


def test_each_server_kind_has_exactly_its_typed_options() -> None:
    kinds = branches(STACK["server"], "kind")
    assert list(kinds) == list(REGISTRY)
    for kind, spec in REGISTRY.items():
        props = kinds[kind]["properties"]
        assert set(props) == S.SERVER_COMMON_KEYS | set(spec.options), kind
        assert kinds[kind]["additionalProperties"] is False
        for option, (typ, low, high, _default) in spec.options.items():
            if typ is bool:
                assert props[option]["type"] == "boolean", (kind, option)
            else:
                assert (props[option]["minimum"], props[option]["maximum"]) == (low, high), (kind, option)
        if spec.binds != BINDS:
            assert props["bind"]["enum"] == list(spec.binds), kind


def test_each_apache_mpm_has_exactly_its_tuning_keys() -> None:
    mpms = branches(branches(STACK["front"], "kind")["apache"], "mpm")
    assert list(mpms) == list(apache.MPMS)
    for mpm, options in apache.MPM_OPTIONS.items():
        props = mpms[mpm]["properties"]
        assert set(props) == {"kind", "mpm", *options}, mpm
        for key, bounded in options.items():
            assert (props[key]["minimum"], props[key]["maximum"]) == (bounded.low, bounded.high), (mpm, key)


@pytest.mark.parametrize("name", list(FRONTS))
def test_each_front_kind_has_exactly_its_declared_keys(name: str) -> None:
    kind = FRONTS[name]
    then = branches(STACK["front"], "kind")[name]
    for key, choice in kind.choices.items():
        assert then["properties"][key]["enum"] == list(choice.values), (name, key)
    # Without a variant its keys are one set; with one, each value of it has its own.
    keyed = branches(then, kind.variant) if kind.variant else {"": then}
    assert set(keyed) == set(kind.choices[kind.variant].values if kind.variant else [""])
    for value, keys in keyed.items():
        assert set(keys["properties"]) == {"kind", *kind.choices, *kind.integers.get(value, {})}, value
        assert keys["additionalProperties"] is False
        assert keys["errorMessage"]["additionalProperties"] == f"unknown {kind.key_of(value)}"


def test_the_schemas_limits_are_the_codes() -> None:
    assert LOAD["repetitions"]["maximum"] == LOAD["max_repetitions"]["maximum"] == MAX_REPETITIONS
    assert LOAD["max_seconds"]["maximum"] == MAX_SECONDS
    assert SCHEMA["properties"]["stacks"]["maxItems"] == MAX_STACKS
    assert LOAD["pause_s"]["maximum"] == MAX_PAUSE_S
    assert LOAD["threshold_ms"]["maximum"] == MAX_THRESHOLD_MS
    assert LOAD["warmup"]["properties"]["requests"]["maximum"] == PLAN["requests"]["maximum"] == MAX_REQUESTS
    assert PLAN["duration_s"]["maximum"] == PLAN["timeout_s"]["maximum"] == MAX_DURATION_S
    assert LOAD["warmup"]["properties"]["duration_s"]["maximum"] == MAX_DURATION_S
    assert PLAN["threads"]["maximum"] == MAX_THREADS
    assert PLAN["concurrency"]["anyOf"][0]["maximum"] == MAX_CONCURRENCY
    assert PLAN["rate"]["anyOf"][0]["maximum"] == MAX_RATE
    assert STACK["server"]["properties"]["instances"]["maximum"] == S.MAX_INSTANCES
    assert STACK["app"]["properties"]["checks"]["maxItems"] == MAX_CHECKS
    assert STACK["app"]["properties"]["env"]["maxProperties"] == MAX_ENV_VARS
    assert STACK["path"]["maxLength"] == MAX_URL_PATH
    assert f"{{0,{MAX_NAME - 1}}}" in SCHEMA["properties"]["name"]["pattern"]


def test_the_typed_load_section_has_the_schemas_fields() -> None:
    assert {f.name for f in dataclasses.fields(Load)} == LOAD_KEYS
    assert {f.name for f in dataclasses.fields(LoadPlan)} == PLAN_KEYS
    assert {f.name for f in dataclasses.fields(Warmup)} == WARMUP_KEYS
    assert set(SCHEMA["properties"]) == TOP_KEYS


# ---------------------------------------------------------------- what it accepts and refuses


@pytest.mark.parametrize("path", SHIPPED, ids=[str(p.relative_to(ROOT)) for p in SHIPPED])
def test_every_shipped_experiment_fits_the_schema_as_an_editor_checks_it(path: Path) -> None:
    data = read(path)
    assert schema_file_errors("experiment.schema.json", data) == []
    assert schema_problems(data) == []


FIELD = re.compile(
    r"^(the experiment|stack '[a-z0-9_A-Z -]*'|stacks\[\d+\]|[a-z_]+(\.[a-z_]+|\[\d+\])*|[a-z0-9]+): "
)


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_each_bad_experiment_is_refused_with_one_line_per_problem_naming_its_field(path: Path) -> None:
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (InputError, UnicodeDecodeError):
        return  # refused as a file before any field is read (test_bad_inputs holds its message)
    if not isinstance(data, dict) or not set(data) & TOP_KEYS:
        return  # refused as a whole (test_bad_inputs)
    problems = validate_experiment(data)
    if not problems:
        # Refused later, by a limit of the whole plan (its length, its processes): benchstack.plan.resolved.
        assert "say yes" in path.read_text(encoding="utf-8"), path.name
        return
    for problem in problems:
        assert "\n" not in problem and FIELD.match(problem), problem
    assert len(problems) == len(set(problems)), problems


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        # Checked by the schema alone: no Python check is left for these.
        (lambda d: d["load"].update(seed=-1), "load.seed: must be an integer from 0 to 4294967295, not -1"),
        (
            lambda d: d["load"].update(pause_s=61),
            "load.pause_s: must be a number of seconds from 0 to 60, not 61",
        ),
        (
            lambda d: d["load"].update(max_interference=0),
            "load.max_interference: must be a share of the host",
        ),
        (
            lambda d: d["load"].update(restart_stacks="always"),
            "load.restart_stacks: must be 'run' (restart the stacks before a run's first cell) or 'never'",
        ),
        (lambda d: d.update(description=5), "description: must be a string, not 5"),
        # A final newline: Python's $ let it through the URL path and name checks.
        (lambda d: d["load"].update(path="/a\n"), "load.path: must be a URL path starting with '/'"),
        (lambda d: d.update(name="run\n"), "name: must be a word of 1 to 64 letters"),
        (lambda d: d["stacks"][0].update(name="a\n"), "stack 'a\\n': name: must be 1-48 lowercase letters"),
        (
            lambda d: d["load"]["plans"][0].update(concurrency=[5, 1, 5]),
            "load.plans[0].concurrency: lists a level twice: [5]",
        ),
        (
            lambda d: d["stacks"][0]["server"].update(kind="puma", workers=65),
            "stack 'a': server.workers: must be an integer from 0 to 64, not 65",
        ),
        (
            lambda d: d["stacks"][0].update(
                front={"kind": "apache", "mpm": "prefork", "threads_per_child": 5}
            ),
            "stack 'a': front.threads_per_child: unknown key of an apache front with mpm prefork",
        ),
        (lambda d: d["stacks"][0]["app"].update(env={"A": True}), "stack 'a': app.env.A: must be a string"),
        (lambda d: d["stacks"].append(7), "stacks[1]: a stack must be a mapping, not 7"),
    ],
)
def test_the_schema_refuses_with_the_field_and_the_value(mutate: Any, problem: str) -> None:
    data = {
        "name": "x",
        "stacks": [{"name": "a", "port": 8001, "app": {"kind": "sinatra"}, "server": {"kind": "thin"}}],
        "load": {"plans": [{"tool": "ab", "concurrency": 5, "requests": 10}]},
    }
    mutate(data)
    problems = validate_experiment(data)
    assert any(p.startswith(problem) for p in problems), problems


def test_a_long_list_of_wrong_levels_is_one_error_not_one_per_level() -> None:
    # Told one by one, 90,000 wrong levels took 3 s to become the one line they are.
    plan = {"tool": "wrk", "concurrency": list(range(1, 90_001)), "duration_s": 1}
    data = {"name": "x", "stacks": [], "load": {"plans": [plan]}}
    checker = first_error_validator("experiment.schema.json")
    [levels] = [e for e in checker.iter_errors(data) if list(e.absolute_path)[:3] == ["load", "plans", 0]]
    assert len([c for c in levels.context if c.validator == "maximum"]) == 1
    assert [p.message for p in schema_problems(data) if p.path[:1] == ("load",)] == [
        "load.plans[0].concurrency: must be a positive integer or a list of them (at most 20_000), "
        "not [1, 2, 3, 4, ...]"
    ]


def test_a_stack_the_schema_refused_is_not_told_twice_but_the_others_cross_field_problems_are() -> None:
    data = read(ROOT / "experiments" / "sinatra-thin-nginx.yml")
    data["stacks"][0]["port"] = "8001"  # the schema's
    data["stacks"][1]["server"]["bind"] = "pipe"  # the schema's
    data["stacks"][4]["server"] = {"kind": "thin"}  # Python's: a static app has no server
    data["stacks"][1]["front"] = {"kind": "none"}  # Python's, of a stack the schema refused: left out
    problems = validate_experiment(data)
    names = [data["stacks"][i]["name"] for i in (0, 1, 4)]
    assert [p.split(":")[0] for p in problems] == [f"stack '{n}'" for n in names], problems
    assert problems[2].endswith("app static is served by its front, not by an app server")


# ---------------------------------------------------------------- the typed load section


def old_defaults(data: dict[str, Any]) -> dict[str, Any]:
    """The load section as run.json recorded it before it was typed: as written, then each default."""
    load = dict(data["load"])
    defaults = {
        "path": "/", "threshold_ms": None, "warmup": None, "pause_s": 1, "repetitions": 1,
        "max_cv": 0.05, "max_error_rate": 0.01, "target_precision": 0.05, "max_interference": 0.10,
        "max_seconds": None, "baseline": data["stacks"][0]["name"],
        # run.json v4: the comparisons' margin and each look's confidence (benchstack.analysis.comparison)
        "equivalence": 0.05, "confidence": 0.99,
        # run.json v5: each run starts its stacks afresh
        "restart_stacks": "run",
    }  # fmt: skip
    for key, value in defaults.items():
        load.setdefault(key, value)
    load.setdefault("max_repetitions", load["repetitions"])
    return load


@pytest.mark.parametrize("path", SHIPPED, ids=[str(p.relative_to(ROOT)) for p in SHIPPED])
def test_the_typed_load_section_records_what_run_json_always_held_and_reads_it_back(path: Path) -> None:
    data = read(path)
    written = copy.deepcopy(data)
    load = experiment_from_dict(data, str(path)).load
    assert data == written  # validation and typing leave the input as it was
    assert load.as_dict() == old_defaults(data)
    assert Load.from_dict(load.as_dict()) == load


def test_a_load_section_with_every_field_round_trips() -> None:
    written = {
        "path": "/x", "threshold_ms": 250.5, "warmup": {"duration_s": 3}, "pause_s": 0.5, "repetitions": 3,
        "max_repetitions": 9, "max_cv": 0.1, "max_error_rate": 1, "target_precision": 0.02,
        "equivalence": 0.05, "confidence": 0.95,
        "max_interference": 0.5, "max_seconds": 600, "restart_stacks": "never", "seed": 7, "baseline": "b",
        "plans": [
            {"tool": "ab", "concurrency": [1, 8], "requests": 100, "keepalive": True, "timeout_s": 5},
            {"tool": "wrk", "concurrency": 4, "duration_s": 2, "threads": 2},
            {"tool": "httperf", "rate": [10, 20], "duration_s": 2},
        ],
    }  # fmt: skip
    load = Load.from_dict(written)
    assert load.as_dict() == written
    assert [p.levels for p in load.plans] == [(1, 8), (4,), (10, 20)]
    assert [p.keeps_alive for p in load.plans] == [True, True, False]
    assert load.tools() == ["ab", "httperf", "wrk"]


# ---------------------------------------------------------------- the documentation


def docs_table(marker: str) -> list[str]:
    """The first cells of the first table after ``marker`` in docs/experiment.md, header row left out."""
    text = (ROOT / "docs" / "experiment.md").read_text(encoding="utf-8").split(marker, 1)[1]
    rows = re.search(r"^\|.*?(?=^[^|])", text, re.MULTILINE | re.DOTALL)
    assert rows is not None, marker
    return [line.split("|")[1].strip() for line in rows[0].splitlines()[2:]]


def test_docs_experiment_names_every_load_field_of_the_schema_file_and_no_other() -> None:
    # The published file, as a user reads it (issue 41: the table lacked load.max_error_rate).
    published = json.loads((ROOT / "benchstack" / "schemas" / "experiment.schema.json").read_text("utf-8"))
    load = published["$defs"]["load"]["properties"]
    assert sorted(docs_table("\n## Load\n")) == sorted(f"`load.{name}`" for name in load)
    plan = load["plans"]["items"]["properties"]
    assert sorted(docs_table("\nA plan:\n")) == sorted(f"`{name}`" for name in plan)
