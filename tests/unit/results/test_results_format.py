"""The published results format (benchstack/schemas, docs/results-format.md): the schema files read with plain
jsonschema accept every cell the runner makes from real captures and every run.json the run writes, they say
what the code says, and a bad cell or run.json is refused naming its field."""

import dataclasses
import gzip
import json
import math
import tomllib
from pathlib import Path
from typing import Any

import pytest
from conftest import BUSY_CPU, DATA, SCHEMAS, Helpers, cell_plan, read_data, schema_file_errors

from benchstack.analysis import comparison, verdict
from benchstack.analysis.checks.base import Limits, Reason
from benchstack.analysis.checks.errors import SlowLoadPoint
from benchstack.analysis.drift import Drift
from benchstack.kinds.loadtools import REGISTRY, TOOLS, ab, parse, wrk
from benchstack.kinds.loadtools.perrequest import WRK_REPORT_MARKER
from benchstack.measure.merge import merge_stored
from benchstack.measure.runner import CellFailed, CellOptions, Target, measure_cell, write_run_info
from benchstack.plan.cpusplit import cpu_split
from benchstack.plan.experiment import (
    LOAD_KEYS,
    PLAN_KEYS,
    WARMUP_KEYS,
    cells,
    experiment_from_dict,
)
from benchstack.plan.resolved import compile_plan
from benchstack.records import distribution
from benchstack.records.cellplan import CellPlan
from benchstack.records.model import ERROR_KINDS, LATENCY_KEYS, TAIL_KEYS
from benchstack.results import formats, runfolder
from benchstack.results.cell import (
    FIELDS,
    MODES,
    OPTIONAL_FIELDS,
    READ_SCHEMAS,
    SCHEMA,
    STATUSES,
    Cell,
    cell_paths,
    cell_to_dict,
    dumps_cell,
    load_cells,
    make_cell,
    qualified_cell_id,
    validate_cell,
)
from benchstack.results.layout import loadgen_dir
from benchstack.results.runfolder import read_run_info
from benchstack.results.sysstats import parse_vmstat

ROOT = Path(__file__).resolve().parents[3]
CELL_FILE = "cell.schema.json"
RUN_FILE = "run.schema.json"


def schema(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


def props(node: dict[str, Any]) -> list[str]:
    return list(node["properties"])


# ---------------------------------------------------------------- the files


@pytest.mark.parametrize("name", [CELL_FILE, RUN_FILE])
def test_each_schema_file_is_a_draft_2020_12_schema_and_the_one_the_package_uses(name: str) -> None:
    data = schema(name)
    assert data["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    formats.Draft202012Validator.check_schema(data)
    assert formats.schema_text(name) == (SCHEMAS / name).read_text(encoding="utf-8")


def test_the_schema_files_ship_in_the_package() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = pyproject["tool"]["setuptools"]["package-data"]["benchstack"]
    names = {p.name for pattern in shipped for p in (ROOT / "benchstack").glob(pattern)}
    assert {CELL_FILE, RUN_FILE} <= names
    assert "jsonschema>=4.18" in pyproject["project"]["dependencies"]


# ---------------------------------------------------------------- the schemas say what the code says


def test_the_cell_schema_has_every_field_of_a_cell_and_requires_all_but_the_later_additions() -> None:
    cell = schema(CELL_FILE)
    assert props(cell) == list(FIELDS)
    assert cell["required"] == [f for f in FIELDS if f not in OPTIONAL_FIELDS]
    assert cell["properties"]["schema"]["enum"] == list(READ_SCHEMAS) and READ_SCHEMAS[0] == SCHEMA
    assert cell["then"]["required"] == ["interference", "disturbed"]
    assert cell["properties"]["tool"]["enum"] == list(TOOLS)
    assert cell["properties"]["mode"]["enum"] == [*MODES, None]
    assert cell["properties"]["status"]["enum"] == list(STATUSES)
    latency = cell["$defs"]["latency_ms"]
    assert props(latency) == list(LATENCY_KEYS + TAIL_KEYS) and latency["required"] == list(LATENCY_KEYS)
    errors = cell["properties"]["errors"]
    assert props(errors) == errors["required"] == list(ERROR_KINDS)


def test_the_distribution_schema_is_what_a_distribution_stores_source_by_source() -> None:
    dist = schema(CELL_FILE)["$defs"]["latency_dist"]
    stored = distribution.from_counts(wrk.RESOLUTION, [(1200, 3)]).to_dict()
    assert props(dist) == dist["required"] == list(stored)
    assert dist["properties"]["source"]["enum"] == list(TOOLS)
    assert dist["properties"]["unsupported"]["propertyNames"]["enum"] == list(TAIL_KEYS)
    by_source = {
        rule["if"]["properties"]["source"]["const"]: {
            key: value["const"] for key, value in rule["then"]["properties"].items()
        }
        for rule in dist["allOf"]
    }
    assert by_source == {
        name: {"unit_us": r.unit_us, "significant_bits": r.bits, "corrected": r.corrected}
        for name, r in ((t.name, t.resolution) for t in REGISTRY.values())
    }


def test_the_vmstat_schema_has_every_figure_sysstats_takes() -> None:
    taken = parse_vmstat(read_data("vmstat", "vmstat-during-wrk.txt"))
    assert taken is not None
    assert set(taken) <= set(props(schema(CELL_FILE)["$defs"]["vmstat"]))


# What a load point's verdict carries since v2 (a v1 verdict lacks it and still fits).
LOAD_POINT_V2 = ["counted", "disturbed", "median_rps", "ci_low", "ci_high", "precision"]


def test_the_run_schema_has_what_the_experiment_plan_and_verdict_write() -> None:
    run = schema(RUN_FILE)["$defs"]
    plan = compile_plan(ROOT / "experiments" / "sinatra-thin-nginx.yml").to_dict()
    # logs only where the experiment ships its access logs.
    shipping = compile_plan(ROOT / "molecule" / "log-shipper" / "experiment.yml").to_dict()
    assert set(props(run["experiment"])) == {*plan["experiment"], *shipping["experiment"], "cells"}
    assert set(props(run["load"])) == LOAD_KEYS
    assert set(props(run["load_plan"])) == PLAN_KEYS
    assert set(props(run["warmup"])) == WARMUP_KEYS
    assert props(run["cell_plan"]) == [f.name for f in dataclasses.fields(CellPlan)]
    v = run["verdict"]
    # A verdict stored before slow responses were reported (issue 25) has no slow list, and still fits.
    assert props(v) == [f.name for f in dataclasses.fields(verdict.Verdict)]
    assert v["required"] == [n for n in props(v) if n != "slow"]
    for node, cls, optional in (
        (v["properties"]["reasons"]["items"], Reason, []),
        # A verdict stored before several targets names no target, and still fits.
        (v["properties"]["load_points"]["items"], verdict.LoadPointVerdict, ["target", *LOAD_POINT_V2]),
        # Limits stored before v2 (the precision target, the load tool's own CPU) lack those, and still fit.
        (
            v["properties"]["limits"],
            Limits,
            ["target_precision", "max_interference", "max_tool_busy", "equivalence", "confidence"],
        ),
        (v["properties"]["slow"]["items"], SlowLoadPoint, ["target"]),
    ):
        names = [f.name for f in dataclasses.fields(cls)]
        assert props(node) == names
        assert node["required"] == [n for n in names if n not in optional]
    assert v["properties"]["status"] == {"$ref": "#/$defs/status"}
    assert run["status"]["enum"] == list(verdict.STATUSES)


def test_the_run_schema_has_what_a_comparison_and_the_drift_store() -> None:
    run = schema(RUN_FILE)
    assert run["properties"]["comparisons"]["items"] == {"$ref": "#/$defs/comparison"}
    assert run["$defs"]["comparison"]["anyOf"] == [
        {"$ref": "#/$defs/comparison_v4"},
        {"$ref": "#/$defs/comparison_v3"},  # what v1-v3 records hold: read, never written
    ]
    node = run["$defs"]["comparison_v4"]
    stored = comparison.Comparison(
        "x2", "x1", "web1", "wrk", True, 32, 8, 1.21, 1.12, 1.3, "faster"
    ).to_dict()
    assert props(node) == node["required"] == list(stored)
    assert node["properties"]["state"]["enum"] == list(comparison.STATES)
    assert node["properties"]["tool"]["enum"] == list(TOOLS)
    assert run["properties"]["drift"]["items"] == {"$ref": "#/$defs/drift"}
    drift_node = run["$defs"]["drift"]
    record = Drift("x1", "web1", "wrk", True, 32, 12, 1000.0, 950.0, 0.95, -0.3, 0.04).to_dict()
    assert props(drift_node) == drift_node["required"] == list(record)
    assert drift_node["properties"]["tool"]["enum"] == list(TOOLS)


# ---------------------------------------------------------------- cells the runner makes from real captures

PLANS = {
    "ab": {"tool": "ab", "concurrency": 10, "requests": 1000},
    "wrk": {"tool": "wrk", "concurrency": 4, "threads": 1, "duration_s": 3},
    "httperf": {"tool": "httperf", "rate": 200, "duration_s": 2},
}
CAPTURE_DIRS = ("ab", "wrk", "httperf", "latency", "multi", "verdict")
# Captures of runs that measured nothing a cell can hold: the tool printed no results (nothing listened, it
# died, it was misused) or the stack hung.
NOT_CELLS = {
    "ab/connect-refused",
    "ab/receive-reset-fatal",
    "ab/timeout-fatal",
    "wrk/connect-refused",
    "wrk/hung-server",
    "wrk/usage-error",
}


def captures() -> list[tuple[str, str]]:
    """(tool, capture) of every load tool output under tests/data, e.g. ("ab", "latency/ab-pair-lg1")."""
    found = []
    for folder in CAPTURE_DIRS:
        for path in sorted((DATA / folder).glob("*.txt")):
            tool = folder if folder in PLANS else path.name.split("-")[0]
            if tool in PLANS:
                found.append((tool, f"{folder}/{path.stem}"))
    return found


def tsv_of(capture: str) -> str:
    for suffix, read in ((".tsv", Path.read_text), (".tsv.gz", None)):
        path = DATA / f"{capture}{suffix}"
        if path.exists():
            return read(path, encoding="utf-8") if read else gzip.decompress(path.read_bytes()).decode()
    return ""


def planned_cell(tool: str, stack: str, output: str) -> dict[str, Any]:
    """The plan of a cell of ``stack`` at the concurrency the captured ``output`` ran with (the cell's id is
    made from what the tool printed)."""
    load = dict(PLANS[tool])
    if "concurrency" in load:
        try:
            load["concurrency"] = parse(tool, output).concurrency
        except ValueError:  # a capture the runner refuses: any plan will do
            pass
    data = {
        "name": "results-format",
        "stacks": [{"name": stack, "port": 18080, "app": {"kind": "static"}, "front": {"kind": "nginx"}}],
        "load": {"path": "/hello/bar", "threshold_ms": 300, "plans": [load]},
    }
    [one] = cells(experiment_from_dict(data))
    return dataclasses.asdict(one)


def measure_capture(run: Path, tool: str, capture: str, loadgen: str, target_vmstat: bool) -> None:
    """Let the runner measure a cell from ``capture`` as a loadgen would return it; wrk output without the
    report script's line is measured as from a loadgen where the script could not be written."""
    output = (DATA / f"{capture}.txt").read_text(encoding="utf-8")
    fail = frozenset({"wrk-script"}) if tool == "wrk" and WRK_REPORT_MARKER not in output else frozenset()
    # The network-mode copies carry CPU snapshots (busy: their cells are disturbed), so the schema's
    # interference parts are filled too.
    cpu = BUSY_CPU if target_vmstat else None
    helpers = Helpers(tsv=tsv_of(capture), fail=fail, cpu=cpu)

    def execute(command: str) -> tuple[int, str, str]:
        return helpers.run(command, output)

    target = Helpers(vmstat=read_data("multi", "vmstat-target-during-wrk.txt"), cpu=cpu)

    def on_target(command: str) -> tuple[int, str, str]:
        return target.reply(command) or (1, "", "unexpected")

    stack = capture.replace("/", "-")
    where = Target(host="127.0.0.1", target="web1", loadgen=loadgen)
    measure_cell(
        cell_plan(planned_cell(tool, stack, output)),
        where,
        run,
        execute,
        "results-format",
        CellOptions(target_execute=on_target if target_vmstat else None, sleep=lambda seconds: None),
    )


@pytest.fixture(scope="module")
def runner_cells(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A run folder holding a cell of every capture (loopback), each again from a second loadgen in
    network mode with the target's vmstat, and the merged cells of the two loadgens' captures taken
    together (tests/data/latency, tests/data/multi). Returns it and the captures that made no cell."""
    run = tmp_path_factory.mktemp("results-format")
    refused = []
    for tool, capture in captures():
        try:
            measure_capture(run, tool, capture, "web1", target_vmstat=False)
        except CellFailed:
            refused.append(capture)
            continue
        measure_capture(loadgen_dir(run, "gen1"), tool, capture, "gen1", target_vmstat=True)
    for name, tool in (("latency/ab-pair", "ab"), ("latency/wrk-late", "wrk"), ("multi/ab", "ab")):
        stack = f"merged-{name.replace('/', '-')}"
        plan = planned_cell(tool, stack, (DATA / f"{name}-lg1.txt").read_text(encoding="utf-8"))
        for lg in ("lg1", "lg2"):
            capture = f"{name}-{lg}"
            helpers = Helpers(tsv=tsv_of(capture))
            output = (DATA / f"{capture}.txt").read_text(encoding="utf-8")

            def execute(
                command: str, helpers: Helpers = helpers, output: str = output
            ) -> tuple[int, str, str]:
                return helpers.run(command, output)

            where = Target(host="127.0.0.1", target="web1", loadgen=lg)
            measure_cell(
                cell_plan(plan),
                where,
                loadgen_dir(run, lg),
                execute,
                "results-format",
                CellOptions(sleep=lambda s: None),
            )
        merge_stored(run, plan["cell_id"], ["lg1", "lg2"])
    # A run with several targets: a second target's cell, whose id starts with its target.
    output = read_data("ab", "normal.txt")
    plan = {**planned_cell("ab", "second-target", output), "target": "web2"}
    plan["cell_id"] = qualified_cell_id("web2", plan["cell_id"])
    helpers = Helpers(tsv=tsv_of("ab/normal"))
    where = Target(host="127.0.0.1", target="web2", loadgen="gen2")
    measure_cell(
        cell_plan(plan),
        where,
        run,
        lambda c: helpers.reply(c) or (0, output, ""),
        "results-format",
        CellOptions(sleep=lambda s: None),
    )
    return run, refused


def stored_cells(run: Path) -> list[Path]:
    return cell_paths(run) + [p for lg in ("gen1", "lg1", "lg2") for p in cell_paths(loadgen_dir(run, lg))]


def test_the_runner_makes_a_cell_of_every_real_capture_but_the_runs_that_measured_nothing(
    runner_cells: tuple[Path, list[str]],
) -> None:
    run, refused = runner_cells
    assert set(refused) == NOT_CELLS
    # + the three merged cells and the second target's
    assert len(cell_paths(run)) == len(captures()) - len(NOT_CELLS) + 3 + 1


def test_every_cell_the_runner_stores_fits_the_schema_file(runner_cells: tuple[Path, list[str]]) -> None:
    run, _ = runner_cells
    paths = stored_cells(run)
    assert len(paths) > 100
    for path in paths:
        cell = json.loads(path.read_text(encoding="utf-8"))
        assert schema_file_errors(CELL_FILE, cell) == [], path.name
        assert validate_cell(cell, require_meta=True) == [], path.name


def test_the_runners_cells_fill_every_optional_part_of_the_schema(
    runner_cells: tuple[Path, list[str]],
) -> None:
    """So the test above checks the later additions too, not only cells that leave them null."""
    run, _ = runner_cells
    stored = [json.loads(p.read_text(encoding="utf-8")) for p in stored_cells(run)]
    for key in OPTIONAL_FIELDS:
        assert any(c.get(key) for c in stored), key
    for key in TAIL_KEYS:
        assert any(c["latency_ms"].get(key) is not None for c in stored), key
    assert any(c["system"]["target"] and c["mode"] == "network" for c in stored)
    assert {c["merged"]["latency"] for c in stored if c.get("merged")} == {"requests", "histograms"}


def fixture_cells() -> list[Path]:
    """The stored cells the tests keep under tests/data (the history's runs)."""
    found = sorted(p for p in DATA.rglob("cells/*.json") if not p.name.startswith("."))
    assert len(found) >= 50
    return found


def test_every_stored_cell_is_read_into_its_record_and_written_back_to_the_same_text(
    runner_cells: tuple[Path, list[str]],
) -> None:
    """Cell.from_dict, then Cell.to_dict, gives the JSON text it was read from: the runner's cells of every
    capture (loopback, network, merged, several targets, the loadgens' own) and the stored cells in
    tests/data. A record that reordered, added or dropped a key, or turned an absent one into null, would
    change the files a run writes."""
    run, _ = runner_cells
    for path in stored_cells(run) + fixture_cells():
        text = path.read_text(encoding="utf-8")
        assert dumps_cell(Cell.from_dict(json.loads(text)).to_dict()) == text, path


def first_v1_cell() -> dict[str, Any]:
    """A cell as the first v1 cells were: none of the later additions, no tail percentiles."""
    first = ab_cell()
    first["schema"] = "bench-stack/cell/v1"
    for key in OPTIONAL_FIELDS:
        del first[key]
    for key in TAIL_KEYS:
        del first["latency_ms"][key]
    return first


def test_a_v1_cell_from_before_every_later_addition_is_read_as_the_schema_documents() -> None:
    """Absent later additions read as none (no system, interference, window, merge, distribution; not
    disturbed), and are left out again when the record is written."""
    first = first_v1_cell()
    cell = Cell.from_dict(first)
    assert (cell.system, cell.interference, cell.window, cell.merged, cell.latency_dist) == (None,) * 5
    assert (cell.rate, cell.cell_id, cell.disturbed) == (None, None, [])
    assert cell.latency_ms.p99 == first["latency_ms"]["p99"] and cell.latency_ms.value("p99.9") is None
    assert json.dumps(cell.to_dict()) == json.dumps(first)
    with pytest.raises(ValueError, match="unknown keys colour"):
        Cell.from_dict({**first, "colour": "red"})


def test_a_v1_cell_from_before_every_later_addition_still_fits_the_schema_file() -> None:
    """Additive within v1: a cell without system, rate, merged, latency_dist, window and the tail
    percentiles (the first v1 cells) still validates."""
    first = first_v1_cell()
    assert schema_file_errors(CELL_FILE, first) == []
    assert validate_cell(first, require_meta=False) == []


def test_a_cell_printed_without_run_metadata_fits_the_schema_file() -> None:
    cell = cell_to_dict(make_cell(wrk.parse(read_data("wrk", "latency.txt"))))
    assert schema_file_errors(CELL_FILE, cell) == []


# ---------------------------------------------------------------- run.json as a run writes it

FINGERPRINT = {
    "hostname": "web1",
    "cpu_model": "AMD EPYC",
    "cpu_count": 2,
    "memory_mb": 24105,
    "kernel": "6.18.44-fc-v657",
    "architecture": "x86_64",
    "distribution": "Debian 12.11",
    "virtualization": "docker/guest",
    "sysctls": {"net.core.somaxconn": "4096", "net.ipv4.ip_local_port_range": "32768\t60999"},
    "nofile_limit": "20000",
    "tuning": {"profile": "stock", "sysctls": {}},
    "dns": None,
    "config_sha256": {
        "/etc/nginx/nginx.conf": "48c6a4ec1e1fd28ccf968490f07e34a1d7f755793b2108a3ed8670b1ee2a0aa2"
    },
    "packages": {"nginx": "1.22.1-9+deb12u11", "wrk": "4.1.0-3+b2"},
    "cpu_split": cpu_split(2, "auto", loopback=True),
}


def write_a_run(run: Path) -> dict[str, Any]:
    """What benchmark.yml's "Write run.json" passes (plan experiment + cells, inventory, groups, mode,
    fingerprints, verify.yml's record with Ansible's naive UTC time), two cells measured from captures, a
    cell that hung (record_stop) and the verdict as the report stores it (store_analysis)."""
    plan = compile_plan(ROOT / "experiments" / "sinatra-thin-nginx.yml").to_dict()
    info = {
        "experiment": {**plan["experiment"], "cells": plan["cells"]},
        "inventory": str(ROOT / "inventories" / "local"),
        "targets": ["web1"],
        "loadgens": ["web1"],
        "mode": "loopback",
        "hosts": {"web1": FINGERPRINT},
        "verify": {"passed": True, "at": "2026-11-30T21:38:00.123456", "stacks": ["sinatra-thin-x1"]},
        "dns_probe": None,
    }
    write_run_info(run, info)
    for plan_cell, capture in zip(plan["cells"], ("ab/gnuplot-mixed", "wrk/report-fast"), strict=False):
        tool = capture.split("/")[0]
        if plan_cell["tool"] != tool:
            continue
        measure_capture(run, tool, capture, "web1", target_vmstat=False)
    runfolder.record_stop(run, plan["cells"][-1]["cell_id"], "hung", "wrk completed no request")
    stored = load_cells(run)
    runfolder.store_analysis(run, verdict.run_verdict(run, stored, read_run_info(run)), [], [])
    return json.loads((run / "run.json").read_text(encoding="utf-8"))


def test_a_run_json_as_a_run_writes_it_fits_the_schema_file(tmp_path: Path) -> None:
    data = write_a_run(tmp_path)
    assert {"experiment", "experiment_sha256", "hosts", "verify", "stopped", "verdict"} <= set(data)
    assert data["verdict"]["status"] == "invalid" and data["stopped"][0]["reason"] == "hung"
    assert schema_file_errors(RUN_FILE, data) == []
    assert read_run_info(tmp_path) == data


def test_a_fingerprint_names_its_runtimes_built_from_source_by_their_build_markers(tmp_path: Path) -> None:
    """The markers the ruby (rbenv) and python (pyenv) roles write, as fingerprint.yml records them."""
    data = write_a_run(tmp_path)
    marker = {
        "version": "3.11.2",
        "options_sha256": "1f" * 32,
        "configure_opts": "CFLAGS=-O1",
        "origin": "archive",
        "archive": "python-3.11.2-debian-12-x86_64-1f1f1f1f1f1f1f1f.tar.gz",
        "seconds": 9.5,
    }
    data["hosts"]["web1"]["runtimes"] = {"python-3.11.2": marker}
    assert schema_file_errors(RUN_FILE, data) == []
    data["hosts"]["web1"]["runtimes"] = {"python-3.11.2": "3.11.2"}
    assert schema_file_errors(RUN_FILE, data) == [
        "hosts/web1/runtimes/python-3.11.2: '3.11.2' is not of type 'object'"
    ]


def test_a_stop_recorded_before_run_json_was_written_makes_a_valid_record(tmp_path: Path) -> None:
    runfolder.record_stop(tmp_path, "s__ab__c1__r1", "timeout", "ab did not finish")
    data = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert data["schema"] == "bench-stack/run/v6"
    assert schema_file_errors(RUN_FILE, data) == []


# ---------------------------------------------------------------- bad cells, named by field


def ab_cell() -> dict[str, Any]:
    meta = {"experiment": "e", "stack": "s", "repetition": 1, "requests": 2000, "raw_output": "raw/s.txt"}
    return cell_to_dict(make_cell(ab.parse(read_data("ab", "mixed-status-length.txt")), **meta))


def wrk_cell() -> dict[str, Any]:
    return cell_to_dict(make_cell(wrk.parse(read_data("latency", "wrk-fast.txt")), stack="s", repetition=1))


def changed(cell: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``cell`` with the value at ``path`` (dots, and [i] for list items) replaced; ``...`` deletes it."""
    data = json.loads(json.dumps(cell))
    *parents, last = path.replace("[", ".[").split(".")
    node = data
    for part in parents:
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    key: Any = int(last[1:-1]) if last.startswith("[") else last
    if value is ...:
        del node[key]
    else:
        node[key] = value
    return data


# (field, new value, the message): the schema file refuses each as well.
SCHEMA_RULES = [
    ("tool", "vegeta", "tool must be one of ab, wrk, httperf, siege, not 'vegeta'"),
    ("concurrency", 0, "concurrency must be an integer >= 1, not 0"),
    ("requests", "2000", "requests must be an integer >= 1 or null, not '2000'"),
    ("keepalive", "yes", "keepalive must be true, false or null, not 'yes'"),
    ("command", [], "command must be a non-empty string or list of strings, not []"),
    ("started_at", "2025-01-02 03:04", "started_at must be an ISO 8601 time in UTC, ending in Z or +00:00"),
    ("raw_output", "raw/../../etc/passwd", "raw_output must be a relative path inside the run folder"),
    ("latency_ms.p99", -1, "latency_ms.p99 must be a non-negative number or null, not -1"),
    ("errors.timeout", 1.5, "errors.timeout must be a non-negative integer or null, not 1.5"),
    ("errors.over_threshold", ..., "errors lacks over_threshold"),
    ("notes", ["ok", 3], "notes[1] must be a string, not 3"),
    ("system", {"loadgen": None, "client": {}}, "system has unexpected keys client"),
    ("system", {"loadgen": {"cpu_idle": 140.0}}, "system.loadgen.cpu_idle must be a number from 0 to 100"),
    ("window", {"start": "2025-01-02T03:04:05Z"}, "window lacks end"),
    (
        "merged",
        {"loadgens": ["lg1"], "latency": "requests"},
        "merged.loadgens must name two or more loadgens",
    ),
    (
        "merged",
        {"loadgens": ["a", "b"], "latency": "mean"},
        "merged.latency must be one of requests, histograms",
    ),
    ("rate", 0, "rate must be an integer >= 1 or null, not 0"),
    ("cell_id", "../web2__s", "cell_id must be a cell id starting with its target"),
]


@pytest.mark.parametrize(("path", "value", "message"), SCHEMA_RULES, ids=[r[0] for r in SCHEMA_RULES])
def test_a_bad_field_is_refused_by_the_schema_file_and_named_by_validate_cell(
    path: str, value: Any, message: str
) -> None:
    bad = changed(ab_cell(), path, value)
    assert schema_file_errors(CELL_FILE, bad) != []
    problems = validate_cell(bad)
    assert any(p.startswith(message) for p in problems), problems


def test_a_cell_id_is_the_targets_name_before_the_id_of_the_cells_own_fields() -> None:
    cell = {**ab_cell(), "target": "web2"}
    assert validate_cell({**cell, "cell_id": "web2__s__ab__c10__r1"}) == []
    other = {**cell, "cell_id": "web2__s__ab__c50__r1"}  # another load point's name
    assert schema_file_errors(CELL_FILE, other) == []  # the schema alone lets it through
    assert validate_cell(other) == [
        "cell_id must be 'web2__s__ab__c10__r1' (the target, then the id of the cell's fields), "
        "not 'web2__s__ab__c50__r1'"
    ]
    assert validate_cell({**cell, "cell_id": "web9__s__ab__c10__r1"}) != []  # another target's


# (field, new value, the message): JSON Schema cannot say these; validate_cell does.
BEYOND_THE_SCHEMA = [
    ("started_at", "2025-02-30T00:00:00Z", "started_at is not a real date and time: '2025-02-30T00:00:00Z'"),
    (
        "window",
        {"start": "2025-01-02T03:04:06Z", "end": "2025-01-02T03:04:05Z"},
        "window.end must not be before window.start",
    ),
    (
        "error_count",
        10,
        "error_count must be from 503 (the largest counter in errors) to 1006 (their sum), not 10",
    ),
    ("error_count", 2000, "error_count must be from 503"),
    ("error_rate", 0.0, "error_rate must be 0 exactly when error_count is 0, not 0.0 with error_count 503"),
]


@pytest.mark.parametrize(
    ("path", "value", "message"), BEYOND_THE_SCHEMA, ids=[r[2][:24] for r in BEYOND_THE_SCHEMA]
)
def test_what_a_schema_cannot_say_validate_cell_checks_across_fields(
    path: str, value: Any, message: str
) -> None:
    good = ab_cell()
    assert validate_cell(good) == [] and (good["errors"]["status"], good["errors"]["length"]) == (503, 503)
    bad = changed(good, path, value)
    assert schema_file_errors(CELL_FILE, bad) == []  # the schema alone lets it through
    problems = validate_cell(bad)
    assert any(p.startswith(message) for p in problems), problems


def test_a_distribution_out_of_order_or_off_its_buckets_is_refused_beyond_the_schema() -> None:
    cell = wrk_cell()
    counts = cell["latency_dist"]["counts"]
    swapped = changed(cell, "latency_dist.counts", [counts[1], counts[0], *counts[2:]])
    off_bucket = changed(cell, "latency_dist.counts[1500]", [counts[1500][0] + 1, counts[1500][1]])
    assert schema_file_errors(CELL_FILE, swapped) == schema_file_errors(CELL_FILE, off_bucket) == []
    assert "latency_dist.counts must be sorted by value, each value once" in validate_cell(swapped)
    assert any("is not a bucket of wrk's resolution" in p for p in validate_cell(off_bucket))


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ([1200, 0], "latency_dist.counts[7][1] must be an integer >= 1 (a count), not 0"),
        ([1200.0, 3], "latency_dist.counts[7][0] must be an integer >= 0 (a value in µs), not 1200.0"),
        ([1200, 3, 1], "latency_dist.counts[7] must be a [value_us, count] pair, not [1200, 3, 1]"),
        ([1200, True], "latency_dist.counts[7][1] must be an integer >= 1 (a count), not True"),
        ([1200, math.inf], "latency_dist.counts[7][1] must be an integer >= 1 (a count), not inf"),
    ],
)
def test_a_bad_pair_in_a_long_distribution_is_found_and_named(pair: list[Any], message: str) -> None:
    """validate_cell checks a distribution's pairs with a quick predicate; one that fails is named exactly as
    jsonschema names it."""
    bad = changed(wrk_cell(), "latency_dist.counts[7]", pair)
    assert message in validate_cell(bad)


def test_the_same_problem_down_a_list_is_told_once_with_a_count() -> None:
    cell = wrk_cell()
    bad = changed(cell, "latency_dist.counts", [[v, 0] for v, _ in cell["latency_dist"]["counts"]])
    problems = [p for p in validate_cell(bad) if "counts" in p]
    n = len(cell["latency_dist"]["counts"])
    assert problems == [
        f"latency_dist.counts[0][1] must be an integer >= 1 (a count), not 0 (and {n - 1} more like it)"
    ]


def test_json_numbers_python_reads_but_the_format_never_holds_are_refused() -> None:
    """JSON Schema counts 2.0 as an integer and Python's json reads NaN; bench-stack refuses both."""
    assert "concurrency must be an integer >= 1, not 10.0" in validate_cell(
        changed(ab_cell(), "concurrency", 10.0)
    )
    assert "rps must be a non-negative number, not nan" in validate_cell(changed(ab_cell(), "rps", math.nan))
    assert "elapsed_s must be a non-negative number or null, not inf" in validate_cell(
        changed(ab_cell(), "elapsed_s", math.inf)
    )


def test_the_quick_types_are_the_validators_types() -> None:
    samples = [0, 1, -1, 2.0, 2.5, True, False, None, "1", [], [1], {}, {"a": 1}]
    for name, exact in formats.QUICK_TYPES.items():
        for value in samples:
            if type(value) in exact:
                assert formats.TYPES.is_type(value, name), (name, value)


# ---------------------------------------------------------------- bad run.json, named by field


def run_record(**changes: Any) -> dict[str, Any]:
    return {"schema": "bench-stack/run/v1", "experiment": {"name": "e"}, "mode": "loopback", **changes}


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ([], "run.json must be a JSON object, not list"),
        ({"experiment": {"name": "e"}}, "missing keys: schema"),
        (
            run_record(schema="bench-stack/run/v7"),
            "schema must be 'bench-stack/run/v6', 'bench-stack/run/v5', 'bench-stack/run/v4', "
            "'bench-stack/run/v3', 'bench-stack/run/v2' or 'bench-stack/run/v1', not 'bench-stack/run/v7'",
        ),
        (run_record(mode="lan"), "mode must be one of loopback, network, not 'lan'"),
        (run_record(colour="red"), "unexpected keys: colour"),
        (
            run_record(experiment={"name": "e", "load": {"max_cv": -1}}),
            "experiment.load.max_cv must be a non-negative",
        ),
        (run_record(hosts={"web1": {"cpu_count": "two"}}), "hosts.web1.cpu_count must be an integer"),
        (
            run_record(stopped=[{"cell": "c", "reason": "tired"}]),
            "stopped[0].reason must be one of hung, timeout",
        ),
        (run_record(verify={"at": "now"}), "verify lacks passed"),
        (run_record(experiment_sha256="abc"), "experiment_sha256 must be 64 lowercase hex digits, not 'abc'"),
    ],
)
def test_a_bad_run_json_is_refused_naming_the_field(record: Any, message: str) -> None:
    problems = formats.validate_run_info(record)
    assert problems and problems[0].startswith(message), problems
    if isinstance(record, dict):
        assert schema_file_errors(RUN_FILE, record) != []


def test_reading_a_bad_run_json_is_one_line_naming_the_file_and_the_field(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps(run_record(mode="lan", targets="web1")), encoding="utf-8")
    with pytest.raises(ValueError) as err:
        read_run_info(tmp_path)
    assert str(err.value) == (
        f"{tmp_path / 'run.json'}: not a valid run record: targets must be a list of names, not 'web1' "
        "(and 1 more; see bench-stack validate)"
    )


def test_run_json_that_would_not_fit_is_not_written(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match="not writing an invalid run record: verify.passed must be true or false"
    ):
        write_run_info(tmp_path, {"verify": {"passed": "yes"}})
    assert not (tmp_path / "run.json").exists()


# ---------------------------------------------------------------- the documentation


def all_property_names(node: Any) -> set[str]:
    names: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties":
                names |= set(value)
            names |= all_property_names(value)
    elif isinstance(node, list):
        for value in node:
            names |= all_property_names(value)
    return names


@pytest.mark.parametrize("name", [CELL_FILE, RUN_FILE])
def test_docs_results_format_names_every_field_of_the_schema(name: str) -> None:
    text = (ROOT / "docs" / "results-format.md").read_text(encoding="utf-8")
    missing = sorted(f for f in all_property_names(schema(name)) if f"`{f}`" not in text)
    assert missing == []
