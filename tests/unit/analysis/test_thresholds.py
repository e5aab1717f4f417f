"""load.thresholds checked at report time on the counted cells, and the run's gate: one exit code scheme for
validate --strict, the report play and ./run bench (benchstack.common.exitcodes)."""

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import read_data
from test_verdict import AB_STEADY, Run, steady

from benchstack.analysis.comparison import run_comparisons
from benchstack.analysis.summary import analysed_run
from benchstack.analysis.thresholds import check_thresholds, thresholds_of
from benchstack.cli import main
from benchstack.common.exitcodes import (
    INVALID,
    NOISY,
    OK,
    THRESHOLD_FAILED,
    gate_code,
)
from benchstack.plan.loadplan import Threshold
from benchstack.report.build import write_report
from benchstack.results import runfolder
from benchstack.results.cell import load_cells
from benchstack.results.formats import validate_run_info

# ab-steady.txt's figures, as the runner stores them (every repetition the same capture).
STEADY_RPS = 361.52


def judged(run: Run, *thresholds: dict[str, Any]) -> list[dict[str, Any]]:
    """The checks of ``thresholds`` on the run folder, as run.json stores them."""
    run.load["thresholds"] = list(thresholds)
    run.write_info()
    cells, info = load_cells(run.path), json.loads((run.path / "run.json").read_text())
    found = check_thresholds(cells, thresholds_of(info), run_comparisons(cells, info))
    return [c.to_dict() for c in found]


def validate(run: Run, *flags: str) -> int:
    return main(["validate", str(run.path), *flags])


# ---------------------------------------------------------------- the exit code of a gate


@pytest.mark.parametrize(
    ("status", "failed", "fail_on", "code"),
    [
        ("valid", 0, "noisy", OK),
        ("noisy", 0, "noisy", NOISY),
        ("noisy", 0, "invalid", OK),
        ("invalid", 0, "invalid", INVALID),
        ("valid", 1, "noisy", THRESHOLD_FAILED),
        ("valid", 1, "invalid", THRESHOLD_FAILED),
        ("noisy", 2, "noisy", THRESHOLD_FAILED),  # a threshold's answer is definite: before noisy
        ("invalid", 2, "noisy", INVALID),  # numbers that do not measure the stacks: before any threshold
        ("invalid", 2, "never", OK),
        ("noisy", 0, "never", OK),
    ],
)
def test_the_gate_code_follows_the_verdict_then_the_thresholds(
    status: str, failed: int, fail_on: str, code: int
) -> None:
    assert gate_code(status, failed, fail_on) == code


def test_the_codes_are_distinct_and_an_unknown_fail_on_is_refused() -> None:
    from benchstack.common import exitcodes

    codes = [exitcodes.OK, exitcodes.ERROR, exitcodes.USAGE, INVALID, NOISY, THRESHOLD_FAILED]
    assert len(set([*codes, exitcodes.REGRESSION, exitcodes.STORE_FAILED])) == 8
    # The history's regress and publish (issue 42) found 4 and 5 first: a regression and a store failure.
    assert (exitcodes.REGRESSION, exitcodes.STORE_FAILED) == (4, 5)
    with pytest.raises(ValueError, match="fail_on: must be one of noisy, invalid, never, not 'sometimes'"):
        gate_code("valid", 0, "sometimes")


# ---------------------------------------------------------------- each metric on the counted cells


def test_a_req_s_threshold_passes_at_or_above_its_min_and_fails_below(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run)
    at, above = judged(run, {"metric": "rps", "min": STEADY_RPS}, {"metric": "rps", "min": 362})
    assert (at["passed"], at["value"], at["basis"]) == (True, STEADY_RPS, "median of 8 cells")
    assert (above["passed"], above["value"]) == (False, STEADY_RPS)
    assert above["text"] == "rps >= 362" and (above["stack"], above["tool"], above["level"]) == ("s", "ab", 2)


def test_latency_is_judged_on_the_pooled_requests_and_error_rate_on_the_cells_mean(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run)
    p99, errors, mean = judged(
        run,
        {"metric": "p99_ms", "max": 1},
        {"metric": "error_rate", "max": 0},
        {"metric": "mean_ms", "min": 1, "max": 1000},
    )
    assert p99["basis"] == "pooled, 8 cells" and p99["value"] is not None and p99["value"] > 1
    assert p99["passed"] is False
    assert (errors["passed"], errors["value"]) == (True, 0.0)
    assert mean["passed"] is True


def test_a_disturbed_cell_is_never_judged(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run)
    path = next((tmp_path / "cells").glob("*r1.json"))
    cell = json.loads(path.read_text())
    path.write_text(json.dumps({**cell, "rps": 1.0, "disturbed": ["steal 40 %"]}))
    [check] = judged(run, {"metric": "rps", "min": 300})
    assert (check["passed"], check["value"], check["basis"]) == (True, STEADY_RPS, "median of 7 cells")


def test_a_ratio_threshold_holds_each_other_stack_to_the_baseline(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run, "s")
    steady(run, "t")
    low, high = judged(run, {"metric": "ratio", "min": 0.9}, {"metric": "ratio", "min": 1.1})
    assert (low["stack"], low["value"], low["passed"]) == ("t", 1.0, True)
    assert low["basis"] == "ratio to s, 8 pairs"
    assert (high["value"], high["passed"]) == (1.0, False)


def test_a_load_point_without_a_counted_cell_fails_its_threshold(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run)
    for path in (tmp_path / "cells").glob("*.json"):
        path.write_text(json.dumps({**json.loads(path.read_text()), "disturbed": ["steal 40 %"]}))
    [check] = judged(run, {"metric": "rps", "max": 1e9})
    assert (check["passed"], check["value"], check["basis"]) == (False, None, "no counted cell")


def test_a_threshold_without_a_value_or_a_load_point_fails() -> None:
    none = check_thresholds([], [Threshold("rps", min=1)], [])
    assert [(c.passed, c.value, c.basis) for c in none] == [(False, None, "no load point matches")]


def test_a_threshold_scoped_to_one_load_point_judges_it_alone(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run, "s")
    steady(run, "t")
    checks = judged(run, {"metric": "rps", "min": 1, "stack": "t", "tool": "ab", "level": 2})
    assert [(c["stack"], c["passed"]) for c in checks] == [("t", True)]
    assert checks[0]["text"] == "rps >= 1 (stack t, tool ab, level 2)"


# ---------------------------------------------------------------- run.json, report.md, validate --strict


def test_the_report_writes_the_checks_into_run_json_and_a_thresholds_section(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run)
    run.load["thresholds"] = [{"metric": "rps", "min": 300}, {"metric": "p99_ms", "max": 1}]
    run.write_info()
    text = write_report(tmp_path).read_text(encoding="utf-8")
    stored = json.loads((tmp_path / "run.json").read_text())
    assert validate_run_info(stored) == []
    assert stored["schema"] == "bench-stack/run/v6"
    assert [(c["text"], c["passed"]) for c in stored["thresholds"]] == [
        ("rps >= 300", True),
        ("p99_ms <= 1", False),
    ]
    section = text.split("## Thresholds\n", 1)[1].split("\n## ", 1)[0]
    assert "1 of 2 passed; 1 failed." in section
    assert "| rps >= 300 | s ab c2 | 361.5 | passed | median of 8 cells |" in section
    assert "| p99_ms <= 1 | s ab c2 |" in section and "| FAILED | pooled, 8 cells |" in section


def test_the_analysis_stores_all_it_decided_in_run_json_with_one_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = Run(tmp_path)
    steady(run)
    run.load["thresholds"] = [{"metric": "rps", "min": 300}]
    run.write_info()
    writes: list[set[str]] = []
    real = runfolder.write_json

    def counted(path: Path, data: Any) -> None:
        writes.append(set(data))
        real(path, data)

    monkeypatch.setattr(runfolder, "write_json", counted)
    analysed_run(tmp_path)
    assert len(writes) == 1
    assert {"verdict", "comparisons", "drift", "thresholds"} <= writes[0]


def test_without_thresholds_run_json_and_the_report_have_none(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run)
    run.write_info()
    text = write_report(tmp_path).read_text(encoding="utf-8")
    assert "## Thresholds" not in text
    assert "thresholds" not in json.loads((tmp_path / "run.json").read_text())


def test_validate_strict_exits_with_the_threshold_code_on_a_valid_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = Run(tmp_path)
    steady(run)
    run.load["thresholds"] = [{"metric": "rps", "min": 300}]
    run.write_info()
    assert validate(run, "--strict") == OK
    run.load["thresholds"] = [{"metric": "rps", "min": 400}]
    run.write_info()
    capsys.readouterr()
    assert validate(run, "--strict") == THRESHOLD_FAILED
    captured = capsys.readouterr()
    assert "Thresholds: 0 of 1 passed, FAILED" in captured.out
    assert "- FAILED rps >= 400: s ab c2: 361.5 (median of 8 cells)" in captured.out
    assert "--strict: 1 threshold check(s) failed: rps >= 400 s ab c2" in captured.err
    assert validate(run, "--strict", "--fail-on", "invalid") == THRESHOLD_FAILED
    assert validate(run, "--strict", "--fail-on", "never") == OK


def test_validate_strict_fails_a_noisy_run_with_its_own_code_unless_fail_on_invalid(tmp_path: Path) -> None:
    run = Run(tmp_path)
    output = read_data("verdict", "ab-steady.txt")
    for rep, rps in ((1, 361.52), (2, 300.0), (3, 420.0)):
        run.measure("s", AB_STEADY, output, rep, rps=rps)
    run.write_info()
    assert validate(run, "--strict") == NOISY
    assert validate(run, "--fail-on-noisy") == NOISY
    assert validate(run, "--strict", "--fail-on", "invalid") == OK
    run.load["thresholds"] = [{"metric": "rps", "min": 1000}]
    run.write_info()
    assert validate(run, "--strict") == THRESHOLD_FAILED


def test_a_check_without_a_load_point_is_stored_without_one_and_run_json_accepts_it(tmp_path: Path) -> None:
    [check] = check_thresholds([], [Threshold("p99_ms", max=300)], [])
    stored = check.to_dict()
    assert "tool" not in stored and "stack" not in stored
    assert validate_run_info({"schema": "bench-stack/run/v6", "thresholds": [stored]}) == []
    assert validate_run_info({"schema": "bench-stack/run/v6", "thresholds": [{**stored, "tool": None}]}) != []
