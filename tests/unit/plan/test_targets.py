"""Several targets in one run (benchstack.plan.targets): the plan holds every cell once per target, the runner
stores each target's cells apart, and the verdict, the extra repetitions, the report and compare keep the
targets apart. Cells are measured by the runner from real captures: ab -n 2000 -c 50 against nginx on one host
(tests/data/ab/normal.txt, ~19,000 req/s: the fast host type) and ab -n 3000 -c 50 from each of two loadgens
against Sinatra on thin behind nginx (tests/data/multi, ~760 req/s: the slow one)."""

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Helpers, cell_plan, read_data

from benchstack import cli
from benchstack.analysis.verdict import run_verdict
from benchstack.measure.merge import merge_stored
from benchstack.measure.repetitions import extra_cells
from benchstack.measure.runner import CellOptions, Target, measure_cell, write_run_info
from benchstack.plan.experiment import cells, experiment_from_dict
from benchstack.plan.resolved import compile_plan, experiment_of
from benchstack.plan.targets import target_cells
from benchstack.report.build import plot_cells, write_report
from benchstack.results.cell import cell_paths, load_cells, validate_cell
from benchstack.results.layout import loadgen_dir
from benchstack.results.runfolder import read_run_info

ROOT = Path(__file__).resolve().parents[3]
STACK = "sinatra-thin-x4-nginx"
FAST, SLOW = "bench-a", "bench-b"
LOADGEN = {FAST: "lg-a", SLOW: "lg-b"}
FAST_RUN = ("ab", "normal")  # ~18,967 req/s
SLOW_RUNS = (("multi", "ab-lg1"), ("multi", "ab-lg2"))  # 756 and 771 req/s
EXPERIMENT = {
    "name": "two-hosts",
    "stacks": [{"name": STACK, "port": 8004, "app": {"kind": "static"}, "front": {"kind": "nginx"}}],
    "load": {
        "repetitions": 2,
        "max_repetitions": 3,
        "plans": [{"tool": "ab", "concurrency": 50, "requests": 3000}],
    },
}


def fingerprint(cpu_model: str, cpus: int, distribution: str) -> dict[str, Any]:
    return {"hostname": "h", "cpu_model": cpu_model, "cpu_count": cpus, "distribution": distribution}


HOSTS = {
    FAST: fingerprint("AMD EPYC 7B13", 8, "Debian 12.11"),
    SLOW: fingerprint("Intel(R) Xeon(R) CPU @ 2.20GHz", 2, "Ubuntu 24.04"),
    "lg-a": fingerprint("AMD EPYC 7B13", 8, "Debian 12.11"),
    "lg-b": fingerprint("AMD EPYC 7B13", 8, "Debian 12.11"),
}


def planned(targets: list[str]) -> list[dict[str, Any]]:
    exp = experiment_from_dict(EXPERIMENT)
    return [dataclasses.asdict(c) for c in target_cells(cells(exp), targets)]


def measure(run: Path, plan: dict[str, Any], capture: tuple[str, str], loadgen: str | None = None) -> dict:
    """One cell of ``plan`` measured on its target by its loadgen, which printed ``capture``."""
    folder, name = capture
    output = read_data(folder, f"{name}.txt")
    tsv_path = Path(__file__).resolve().parents[2] / "data" / folder / f"{name}.tsv"
    helpers = Helpers(tsv=tsv_path.read_text(encoding="utf-8") if tsv_path.exists() else "")
    lg = loadgen or LOADGEN[plan["target"]]
    where = Target(host=plan["target"], target=plan["target"], loadgen=lg)
    store = loadgen_dir(run, lg) if loadgen else run
    cell, _ = measure_cell(
        cell_plan(plan),
        where,
        store,
        lambda c: helpers.run(c, output),
        "two-hosts",
        CellOptions(sleep=lambda s: None),
    )
    return cell.to_dict()


def measure_run(run: Path, slow_runs: tuple[tuple[str, str], ...] = SLOW_RUNS) -> list[dict[str, Any]]:
    """Both targets' cells, as the playbook measures them (one target after the other), and run.json."""
    plans = planned([FAST, SLOW])
    for plan in plans:
        capture = FAST_RUN if plan["target"] == FAST else slow_runs[plan["repetition"] - 1]
        measure(run, plan, capture)
    write_run_info(
        run,
        {
            "experiment": {**compile_plan_like(), "cells": plans},
            "targets": [FAST, SLOW],
            "loadgens": ["lg-a", "lg-b"],
            "mode": "network",
            "target_order": "sequential",
            "hosts": HOSTS,
            "verify": {"passed": True, "at": "2025-01-02T03:04:05", "stacks": [STACK]},
        },
    )
    return plans


def compile_plan_like() -> dict[str, Any]:
    exp = experiment_from_dict(EXPERIMENT)
    load = exp.load.as_dict()
    return {"name": exp.name, "description": exp.description, "stacks": exp.stacks, "load": load}


# ---------------------------------------------------------------- the plan


def test_one_target_keeps_the_cell_ids_cells_always_had() -> None:
    source = ROOT / "experiments" / "multi-host.yml"
    alone = compile_plan(source).to_dict()
    on_one = compile_plan(source, targets=["bench-multi-target"]).to_dict()
    assert [c["cell_id"] for c in on_one["cells"]] == [c["cell_id"] for c in alone["cells"]]
    assert {c["target"] for c in on_one["cells"]} == {"bench-multi-target"}
    assert on_one["progress"] == alone["progress"]


def test_two_targets_plan_every_cell_on_each_one_target_after_the_other() -> None:
    ids = [(c["target"], c["cell_id"]) for c in planned([FAST, SLOW])]
    assert ids == [
        (FAST, "bench-a__sinatra-thin-x4-nginx__ab__c50__r1"),
        (FAST, "bench-a__sinatra-thin-x4-nginx__ab__c50__r2"),
        (SLOW, "bench-b__sinatra-thin-x4-nginx__ab__c50__r1"),
        (SLOW, "bench-b__sinatra-thin-x4-nginx__ab__c50__r2"),
    ]


def test_targets_in_parallel_measure_the_ith_cell_of_each_together_and_count_the_time_left_once() -> None:
    plan = compile_plan(
        ROOT / "experiments" / "multi-host.yml", targets=["t1", "t2"], parallel=True
    ).to_dict()
    assert plan["target_order"] == "parallel"
    assert [c["target"] for c in plan["cells"][:4]] == ["t1", "t2", "t1", "t2"]
    alone = compile_plan(ROOT / "experiments" / "multi-host.yml").to_dict()
    first_left = alone["progress"][alone["cells"][0]["cell_id"]].split(", ")[1]
    n = len(plan["cells"])
    assert plan["progress"][plan["cells"][0]["cell_id"]] == f"1/{n}, {first_left}"
    assert plan["progress"][plan["cells"][1]["cell_id"]] == f"2/{n}, {first_left}"
    assert plan["progress"][plan["cells"][-1]["cell_id"]] == f"{n}/{n}, at least 0 s left after it"


# ---------------------------------------------------------------- measuring and storing


def test_each_targets_cells_and_raw_files_are_stored_apart_named_by_the_target(tmp_path: Path) -> None:
    plans = measure_run(tmp_path)
    assert [p.stem for p in cell_paths(tmp_path)] == sorted(p["cell_id"] for p in plans)
    stored = {c.cell_id: c for c in load_cells(tmp_path)}
    for plan in plans:
        cell = stored[plan["cell_id"]]
        assert (cell.target, cell.loadgen) == (plan["target"], LOADGEN[plan["target"]])
        assert cell.raw_output == f"raw/{plan['cell_id']}.txt"
        assert validate_cell(cell.to_dict(), require_meta=True) == []
    # The same load point, measured on each host type: one fast, one slow.
    by_target = {c.target: c.rps for c in stored.values() if c.repetition == 1}
    assert by_target == {FAST: 18967.23, SLOW: 756.1}
    slow = stored["bench-b__sinatra-thin-x4-nginx__ab__c50__r1"]
    assert (tmp_path / "raw" / "bench-b__sinatra-thin-x4-nginx__ab__c50__r1.requests.tsv").is_file()
    assert slow.latency_dist is not None
    assert slow.latency_dist["requests"] == 3000  # from that target's own ab -g data


def test_a_cell_of_a_one_target_run_records_no_cell_id(tmp_path: Path) -> None:
    [plan, _] = planned([SLOW])
    cell = measure(tmp_path, plan, SLOW_RUNS[0])
    assert cell["cell_id"] is None
    assert [p.name for p in cell_paths(tmp_path)] == ["sinatra-thin-x4-nginx__ab__c50__r1.json"]


def test_two_loadgens_on_one_of_two_targets_merge_into_that_targets_cell(tmp_path: Path) -> None:
    plan = next(p for p in planned([FAST, SLOW]) if p["target"] == SLOW)
    for lg, capture in zip(("lg-b1", "lg-b2"), SLOW_RUNS, strict=True):
        measure(tmp_path, plan, capture, loadgen=lg)
    merged, written = merge_stored(tmp_path, plan["cell_id"], ["lg-b1", "lg-b2"])
    merged = merged.to_dict()
    assert written and merged["cell_id"] == plan["cell_id"] == "bench-b__sinatra-thin-x4-nginx__ab__c50__r1"
    assert merged["requests_completed"] == 6000
    assert [p.stem for p in cell_paths(tmp_path)] == [plan["cell_id"]]


# ---------------------------------------------------------------- judging, repeating, reporting


def test_the_verdict_judges_the_same_load_point_on_each_target_on_its_own(tmp_path: Path) -> None:
    measure_run(tmp_path)
    verdict = run_verdict(tmp_path, load_cells(tmp_path), read_run_info(tmp_path))
    # Together, 19,000 and 760 req/s would be one wildly noisy load point; apart, each is steady.
    assert not [r for r in verdict.reasons if r.code == "cv"]
    assert [(p.target, p.stack, p.level) for p in verdict.load_points] == [
        (FAST, STACK, 50),
        (SLOW, STACK, 50),
    ]


def test_each_target_gets_its_own_extra_round_and_its_own_precision_reason(
    tmp_path: Path,
) -> None:
    # bench-b: one repetition at 19,000 req/s, one at 760; bench-a: 19,000 twice. Two rounds give no
    # interval of the median on either: each target asks for its own third round.
    measure_run(tmp_path, slow_runs=(FAST_RUN, SLOW_RUNS[0]))
    plan = {"experiment": compile_plan_like(), "stacks": []}
    exp = experiment_of({**plan, "experiment": {**plan["experiment"], "source": None}})
    for target in (FAST, SLOW):
        [extra] = extra_cells(tmp_path, exp, target, [FAST, SLOW])
        assert (extra.target, extra.repetition, extra.cell_id) == (
            target,
            3,
            f"{target}__sinatra-thin-x4-nginx__ab__c50__r3",
        )
    verdict = run_verdict(tmp_path, load_cells(tmp_path), read_run_info(tmp_path))
    messages = sorted(r.message for r in verdict.reasons if r.code == "precision")
    assert [m.split(":")[0] for m in messages] == [f"{STACK} ab c50 on {FAST}", f"{STACK} ab c50 on {SLOW}"]


def test_the_report_has_a_table_per_target_headed_by_its_host_type_and_sets_them_side_by_side(
    tmp_path: Path,
) -> None:
    measure_run(tmp_path)
    report = write_report(tmp_path, html_report=False).read_text(encoding="utf-8")
    fast = "### bench-a: AMD EPYC 7B13, 8 CPUs, Debian 12.11"
    slow = "### bench-b: Intel(R) Xeon(R) CPU @ 2.20GHz, 2 CPUs, Ubuntu 24.04"
    assert report.index(fast) < report.index(slow) < report.index("## Targets side by side")
    results = report.split("## Results")[1].split("## Targets side by side")[0]
    assert "| sinatra-thin-x4-nginx | ab | c50 | 2 | 19000 |" in results.split(slow)[0]
    assert "| sinatra-thin-x4-nginx | ab | c50 | 2 | 763.7 |" in results.split(slow)[1]  # +-7.6: tenths
    side = report.split("## Targets side by side")[1]
    assert "- target bench-a -> bench-b: CPU model: AMD EPYC 7B13 -> Intel(R) Xeon(R) CPU @ 2.20GHz" in side
    assert "- target bench-a -> bench-b: CPU count: 8 -> 2" in side
    assert "| sinatra-thin-x4-nginx | ab | c50 | 2 | 2 | 18967.23 | 763.72 | -96.0% |" in side
    assert "- targets: 2, measured one after the other" in report
    csv_targets = [line.split(",")[3] for line in (tmp_path / "cells.csv").read_text().splitlines()[1:]]
    assert csv_targets == [FAST, FAST, SLOW, SLOW]


def test_the_plots_draw_each_target_as_its_own_line(tmp_path: Path) -> None:
    measure_run(tmp_path)
    from benchstack.analysis.summary import RunData

    run = RunData(tmp_path, load_cells(tmp_path), read_run_info(tmp_path))
    assert sorted({c.stack for c in plot_cells(run)}) == [f"{STACK} @ {FAST}", f"{STACK} @ {SLOW}"]


def test_compare_two_targets_of_one_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    measure_run(tmp_path)
    assert cli.main(["compare", str(tmp_path), "--targets", FAST, SLOW]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"A: {tmp_path} target {FAST}\nB: {tmp_path} target {SLOW}\n")
    assert "- target bench-a -> bench-b: distribution: Debian 12.11 -> Ubuntu 24.04" in out
    assert "| sinatra-thin-x4-nginx | ab | c50 | 2 | 2 | 18967.23 | 763.72 | -96.0% |" in out
    assert cli.main(["compare", str(tmp_path), "--targets", FAST, SLOW, "--strict"]) == cli.STRICT_FAILED
    assert cli.main(["compare", str(tmp_path), "--targets", FAST, "bench-z"]) == 1
    assert "no cells of target bench-z (its targets: bench-a, bench-b)" in capsys.readouterr().err


def test_compare_of_two_runs_with_two_targets_pairs_them_target_by_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    measure_run(tmp_path / "a")
    measure_run(tmp_path / "b", slow_runs=(FAST_RUN, FAST_RUN))  # bench-b got as fast as bench-a
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    fast, slow = out.split("### target bench-b -> bench-b")
    assert "### target bench-a -> bench-a" in fast
    assert "| 18967.23 | 18967.23 | +0.0% |" in fast
    assert "| 763.72 | 18967.23 | +2383.5% |" in slow


def test_compare_of_two_one_target_runs_is_one_table_whatever_the_targets_are_called(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, target in (("a", FAST), ("b", SLOW)):
        for plan in planned([target]):
            measure(tmp_path / name, plan, SLOW_RUNS[plan["repetition"] - 1])
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "### target" not in out
    assert "| sinatra-thin-x4-nginx | ab | c50 | 2 | 2 | 763.72 | 763.72 | +0.0% |" in out


def test_run_json_of_two_targets_fits_its_schema(tmp_path: Path) -> None:
    measure_run(tmp_path)
    info = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert read_run_info(tmp_path) == info
    assert {c["target"] for c in info["experiment"]["cells"]} == {FAST, SLOW}


def test_the_table_a_run_prints_at_its_end_is_one_per_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    measure_run(tmp_path)
    assert cli.main(["report", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    fast, slow = out.split("### bench-b: Intel(R) Xeon(R) CPU @ 2.20GHz, 2 CPUs, Ubuntu 24.04")
    assert "### bench-a: AMD EPYC 7B13, 8 CPUs, Debian 12.11" in fast
    assert "| sinatra-thin-x4-nginx | ab | c50 | 2 | 19000 |" in fast
    assert "| sinatra-thin-x4-nginx | ab | c50 | 2 | 763.7 |" in slow.split("Verdict:")[0]
