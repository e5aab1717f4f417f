"""bench-stack history, import and trend: tables of the recorded runs, read from the database given with
--db (or BENCH_STACK_DB)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import bench_stack
from history_cases import db_url, run_copy


def recorded(tmp_path: Path) -> str:
    """Two runs of the captured experiment, a day apart, the second with sinatra-thin-x2-nginx slower."""
    url = db_url(tmp_path)
    day0 = run_copy(tmp_path, "day0")
    day1 = run_copy(tmp_path, "day1", 1, slower={"sinatra-thin-x2-nginx": 0.8})
    done = bench_stack("import", day0, day1, "--db", url)
    assert done.returncode == 0, done.stderr
    assert [line.split(":")[0] for line in done.stdout.splitlines()] == ["added", "added"]
    return url


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> str:
    """:func:`recorded` once for the module's tests that only read the database (nine imported the same two
    runs each)."""
    return recorded(tmp_path_factory.mktemp("recorded"))


def test_import_twice_says_unchanged(tmp_path: Path) -> None:
    url = recorded(tmp_path)
    done = bench_stack("import", tmp_path / "day0", "--db", url)
    assert done.stdout.startswith(f"unchanged: {tmp_path / 'day0'} (")


def test_import_names_a_folder_that_is_no_run_and_records_the_others(tmp_path: Path) -> None:
    url = db_url(tmp_path)
    done = bench_stack("import", tmp_path, run_copy(tmp_path, "day0"), "--db", url)
    assert done.returncode == 1
    assert done.stderr == f"bench-stack: {tmp_path}: no cells (not a run folder?)\n"
    assert done.stdout.startswith("added: ")


def test_history_lists_the_runs_oldest_first(shared: str) -> None:
    done = bench_stack("history", "--db", shared)
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "| started (UTC) | run | experiment | verdict | mode | hosts | cells | load points | uid |"
    )
    assert [line.split(" | ")[1] for line in lines[2:]] == ["day0", "day1"]
    assert lines[2].startswith(
        "| 2026-12-04 19:39 | day0 | sinatra-thin-nginx | valid | loopback "
        "| bench-local (2x AMD EPYC) | 54 | 5 |"
    )


@pytest.mark.parametrize(
    ("options", "runs"),
    [
        (["--experiment", "sinatra-thin-nginx"], 2),
        (["--experiment", "other"], 0),
        (["--stack", "nginx-static"], 2),
        (["--stack", "puma"], 0),
        (["--host", "bench-local"], 2),
        (["--host", "elsewhere"], 0),
        (["--limit", "1"], 1),
    ],
)
def test_history_filters_by_experiment_stack_and_host(shared: str, options: list[str], runs: int) -> None:
    done = bench_stack("history", *options, "--db", shared)
    assert done.returncode == 0
    if runs:
        assert len(done.stdout.splitlines()) == 2 + runs
    else:
        assert done.stdout == "no runs recorded that match\n"


def test_trend_shows_a_load_point_and_its_comparison_over_time(shared: str) -> None:
    done = bench_stack("trend", "sinatra-thin-nginx", "--stack", "sinatra-thin-x2-nginx", "--db", shared)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split(" | ")[7:9] == ["req/s", "95% CI"]
    day0, day1 = (line.split(" | ") for line in lines[2:])
    # The captured run's figures (report.md: 11540, 10750–11810; faster, 1.227x, 1.051-1.302, 10 pairs) ...
    assert day0[1:3] + day0[6:] == [
        "day0", "valid", "10", "11540", "10750–11810",
        "faster (sinatra-thin-x1)", "1.227", "1.051–1.302", "10 |",
    ]  # fmt: skip
    # ... and a day later at 80 % of its req/s: the comparison tells it too.
    assert day1[7] == "9230" and float(day1[10]) == pytest.approx(0.98, abs=0.01)


def test_trend_of_a_stack_never_measured_is_bad_input(shared: str) -> None:
    done = bench_stack("trend", "sinatra-thin-nginx", "--stack", "puma", "--db", shared)
    assert done.returncode == 1
    assert "no recorded run of sinatra-thin-nginx measured puma" in done.stderr


def test_a_database_that_cannot_be_opened_is_one_line_without_its_password(tmp_path: Path) -> None:
    done = bench_stack("history", "--db", "nosuchdialect://bench:s3cret@db.example/bench")
    assert done.returncode == 1
    assert done.stderr.startswith("bench-stack: cannot open the history database nosuchdialect://bench:***@")
    assert "s3cret" not in done.stderr and len(done.stderr.splitlines()) == 1
