"""The regression check: a run against the previous runs of its experiment on a comparable host, with an
interval, and its exit code for CI (4 when a load point is slower by more than the margin)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import bench_stack
from history_cases import db_url, new_engine, run_copy
from sqlalchemy import Engine

from benchstack.history.defaults import FASTER, SLOWER, UNRESOLVED, WITHIN, state_of
from benchstack.history.queries import find_run, regression
from benchstack.history.record import import_run


def history(engine: Engine, root: Path) -> None:
    """Two earlier runs on the captured run's host, a day apart."""
    for days, name in ((0, "day0"), (1, "day1")):
        import_run(engine, run_copy(root, name, days))


@pytest.fixture(scope="module")
def earlier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The database file of :func:`history`, imported once for the module (~0.1 s a test before): each test
    copies it and adds its own runs."""
    root = tmp_path_factory.mktemp("earlier")
    engine = new_engine(root)
    history(engine, root)
    engine.dispose()
    return root / "results" / "history.sqlite"


def with_history(tmp_path: Path, earlier: Path) -> Engine:
    """A database of the two earlier runs where db_url(tmp_path) names it."""
    (tmp_path / "results").mkdir()
    shutil.copyfile(earlier, tmp_path / "results" / "history.sqlite")
    return new_engine(tmp_path)


def test_a_stack_a_third_slower_than_before_is_a_regression(tmp_path: Path, earlier: Path) -> None:
    engine = with_history(tmp_path, earlier)
    import_run(engine, run_copy(tmp_path, "day2", 2, slower={"sinatra-thin-x2-nginx": 0.67}))
    found = regression(engine, find_run(engine, "day2"), margin=0.10)
    assert [r.name for r in found.previous] == ["day0", "day1"]
    assert [c.key[1] for c in found.slower] == ["sinatra-thin-x2-nginx"]
    (check,) = found.slower
    assert check.ratio == pytest.approx(0.67, abs=0.01)
    assert check.low is not None and check.high is not None and check.low < check.ratio < check.high < 0.9
    # The others measured as before: none slower (within the margin, or an interval too wide to say).
    assert {c.state for c in found.checks if c not in found.slower} <= {WITHIN, UNRESOLVED}


def test_the_same_figures_again_are_no_regression(tmp_path: Path, earlier: Path) -> None:
    engine = with_history(tmp_path, earlier)
    import_run(engine, run_copy(tmp_path, "day2", 2))
    found = regression(engine, find_run(engine, "day2"), margin=0.10)
    assert found.slower == [] and len(found.checks) == 5


@pytest.mark.parametrize(
    "changed",
    [
        {"cpu_model": "Intel Xeon"},
        {"cpu_count": 4},
        {"kernel": "5.10.0-28-amd64"},
    ],
)
def test_a_run_on_another_kind_of_host_has_no_previous_runs(
    tmp_path: Path, changed: dict[str, object], earlier: Path
) -> None:
    engine = with_history(tmp_path, earlier)
    import_run(engine, run_copy(tmp_path, "day2", 2, slower={"nginx-static": 0.5}, fingerprint=changed))
    assert regression(engine, find_run(engine, "day2")).previous == []


def test_a_newer_kernel_of_the_same_major_version_is_comparable(tmp_path: Path, earlier: Path) -> None:
    engine = with_history(tmp_path, earlier)
    import_run(engine, run_copy(tmp_path, "day2", 2, fingerprint={"kernel": "6.19.1"}))
    assert len(regression(engine, find_run(engine, "day2")).previous) == 2


def test_only_earlier_runs_count(tmp_path: Path, earlier: Path) -> None:
    engine = with_history(tmp_path, earlier)
    assert [r.name for r in regression(engine, find_run(engine, "day0")).previous] == []


@pytest.mark.parametrize(
    ("low", "high", "state"),
    [
        (0.80, 0.89, SLOWER),
        (0.85, 0.95, UNRESOLVED),
        (0.92, 1.08, WITHIN),
        (1.11, 1.30, FASTER),
        (None, None, UNRESOLVED),
    ],
)
def test_a_ratios_interval_decides_its_state(low: float | None, high: float | None, state: str) -> None:
    assert state_of(low, high, 0.10) == state


def test_regress_exits_4_for_ci_when_a_load_point_is_slower(tmp_path: Path, earlier: Path) -> None:
    url = db_url(tmp_path)
    with_history(tmp_path, earlier)
    slow = run_copy(tmp_path, "day2", 2, slower={"sinatra-thin-x2-nginx": 0.67})
    done = bench_stack("regress", slow, "--db", url)
    assert done.returncode == 4, done.stderr
    assert (
        "REGRESSION: 1 load point(s) slower than before by more than 10 %: sinatra-thin-x2-nginx"
        in done.stdout
    )
    assert "against 2 previous comparable run(s): day0, day1" in done.stdout


def test_regress_exits_0_when_nothing_is_slower(tmp_path: Path, earlier: Path) -> None:
    url = db_url(tmp_path)
    with_history(tmp_path, earlier)
    done = bench_stack("regress", run_copy(tmp_path, "day2", 2), "--db", url)
    assert done.returncode == 0, done.stderr
    assert "no load point slower than before by more than 10 %" in done.stdout


def test_regress_with_a_wider_margin_lets_a_smaller_slowdown_pass(tmp_path: Path, earlier: Path) -> None:
    url = db_url(tmp_path)
    with_history(tmp_path, earlier)
    slow = run_copy(tmp_path, "day2", 2, slower={"sinatra-thin-x2-nginx": 0.67})
    assert bench_stack("regress", slow, "--db", url, "--margin", "0.5").returncode == 0


def test_regress_of_a_run_the_history_lacks_is_bad_input(tmp_path: Path) -> None:
    done = bench_stack("regress", "no-such-run", "--db", db_url(tmp_path))
    assert done.returncode == 1
    assert "no-such-run: no such run in the history" in done.stderr
