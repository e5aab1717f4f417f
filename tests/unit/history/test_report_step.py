"""The report step records every finished run in the history database (bench_report), best effort: a
database that cannot be written is a warning, and the run's report and results stand. Each test reports a run
of two cells a load point (history_cases.run_copy's ``repetitions``): the step does the same with 54."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest.mock import MagicMock

import pytest
from history_cases import new_engine, run_copy

from benchstack.history.queries import runs
from benchstack.plan.settings import project_problems

ROOT = Path(__file__).resolve().parents[3]


def _action() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_test_history_report", ROOT / "plugins/action/bench_report.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench_report = _action()


def report(args: dict[str, Any]) -> dict[str, Any]:
    task = MagicMock()
    task.args, task.check_mode, task.async_val, task.action = args, False, 0, "bench_report"
    return bench_report.ActionModule(task, MagicMock(), MagicMock(), MagicMock(), MagicMock()).run(
        task_vars={}
    )


def test_a_finished_run_is_recorded_beside_the_results(tmp_path: Path) -> None:
    run_dir = run_copy(tmp_path / "results", "01-new-quiet", repetitions=2)
    done = report({"run_dir": str(run_dir), "results_dir": str(tmp_path / "results")})
    assert done["history"]["outcome"] == "added" and "warnings" not in done
    assert [r.name for r in runs(new_engine(tmp_path))] == ["01-new-quiet"]
    # The report again (bench-stack report, or a resumed run with nothing left): the same record.
    again = report({"run_dir": str(run_dir), "results_dir": str(tmp_path / "results")})
    assert again["history"]["outcome"] == "unchanged"


def test_bench_history_false_records_nothing(tmp_path: Path) -> None:
    run_dir = run_copy(tmp_path / "results", "01-new-quiet", repetitions=2)
    done = report({"run_dir": str(run_dir), "results_dir": str(tmp_path / "results"), "history": False})
    assert done["history"] == {"outcome": "off"}
    assert not (tmp_path / "results" / "history.sqlite").exists()


def test_a_team_database_in_the_environment_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_STACK_DB", f"sqlite:///{tmp_path / 'team.sqlite'}")
    run_dir = run_copy(tmp_path / "results", "01-new-quiet", repetitions=2)
    assert (
        report({"run_dir": str(run_dir), "results_dir": str(tmp_path / "results")})["history"]["outcome"]
        == "added"
    )
    assert (tmp_path / "team.sqlite").is_file() and not (tmp_path / "results" / "history.sqlite").exists()


def test_a_database_that_cannot_be_written_is_a_warning_and_the_run_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("BENCH_STACK_DB", f"sqlite:///{tmp_path / 'a-file' / 'history.sqlite'}")
    run_dir = run_copy(tmp_path / "results", "01-new-quiet", repetitions=2)
    done = report({"run_dir": str(run_dir), "results_dir": str(tmp_path / "results")})
    assert done["changed"] is True and (run_dir / "report.md").is_file()
    assert done["history"]["outcome"] == "failed"
    (warning,) = done["warnings"]
    assert warning.startswith("bench_report: the run was not recorded in the history database sqlite:///")
    assert f"record it later with: bench-stack import {run_dir}" in warning


def test_without_sqlalchemy_the_run_stands_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m.startswith(("sqlalchemy", "alembic", "benchstack.history."))]:
        if name != "benchstack.history.finished" and name != "benchstack.history.defaults":
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)
    run_dir = run_copy(tmp_path / "results", "01-new-quiet", repetitions=2)
    done = report({"run_dir": str(run_dir), "results_dir": str(tmp_path / "results")})
    assert (run_dir / "report.md").is_file() and done["history"]["outcome"] == "failed"
    assert "ModuleNotFoundError" in done["warnings"][0] or "ImportError" in done["warnings"][0]


def test_bench_history_is_checked_with_the_plan_like_the_other_switches() -> None:
    assert project_problems({"bench_history": "false"}) == []
    assert project_problems({"bench_history": "sometimes"}) == [
        "bench_history: must be true or false, not 'sometimes'"
    ]
