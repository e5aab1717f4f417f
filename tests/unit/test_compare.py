from pathlib import Path

import pytest
from conftest import read_data

from benchstack.cell import cell_to_dict, make_cell, write_cell
from benchstack.cli import main
from benchstack.compare import compare_rows, compare_table, significance
from benchstack.parsers import parse


def cell(stack: str, repetition: int, rps: float, p99: float = 4.0, name: str = "normal.txt") -> dict:
    d = cell_to_dict(
        make_cell(
            parse("ab", read_data("ab", name)),
            experiment="cmp", stack=stack, target="t", loadgen="t", mode="loopback", command="ab",
            url="http://127.0.0.1/", requests=2000, repetition=repetition,
            started_at="2025-01-02T03:04:05Z", raw_output=f"raw/{stack}-{repetition}.txt",
        )
    )  # fmt: skip
    d["rps"] = rps
    d["latency_ms"] = {**d["latency_ms"], "p99": p99}
    return d


def test_a_clear_improvement_over_three_repetitions_is_significant() -> None:
    a = [cell("s", r, v, p99=10.0) for r, v in enumerate([5120.5, 5210.3, 5098.7], 1)]
    b = [cell("s", r, v, p99=8.0) for r, v in enumerate([5402.1, 5388.0, 5450.9], 1)]
    [row] = compare_rows(a, b)
    assert row["req/s A"] == "5120.50" and row["req/s B"] == "5402.10"
    assert row["req/s change"] == "+5.5%"
    assert row["p99 change"] == "-20.0%"
    assert row["significant"] == "yes (p=0.00536)"  # scipy.stats.ttest_ind(equal_var=False): 0.005364


def test_a_change_inside_the_noise_is_not_significant() -> None:
    a = [cell("s", r, v) for r, v in enumerate([1000.0, 1300.0, 900.0], 1)]
    b = [cell("s", r, v) for r, v in enumerate([1100.0, 950.0, 1250.0], 1)]
    assert compare_rows(a, b)[0]["significant"].startswith("no (p=")


def test_significance_needs_two_repetitions_on_each_side() -> None:
    assert significance([cell("s", 1, 1.0)], [cell("s", 1, 2.0), cell("s", 2, 3.0)]) == "n/a"


def test_only_load_points_in_both_runs_are_compared_and_the_rest_is_named() -> None:
    a = [cell("s", 1, 100.0), cell("only-a", 1, 5.0)]
    b = [cell("s", 1, 90.0), cell("only-b", 1, 7.0, name="keepalive.txt")]
    text = compare_table(a, b, "runA", "runB")
    lines = text.splitlines()
    assert lines[:2] == ["A: runA", "B: runB"]
    assert lines[3].startswith("| stack | tool | load | n A | n B | req/s A | req/s B | req/s change |")
    assert lines[5] == "| s | ab | c50 | 1 | 1 | 100.00 | 90.00 | -10.0% | 4.00 | 4.00 | +0.0% | n/a |"
    assert "Only in A: only-a ab c50." in lines
    assert "Only in B: only-b ab -k c100." in lines


def test_cli_compare_prints_the_table_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for run, values in (("a", [100.0, 102.0]), ("b", [150.0, 151.0])):
        for rep, v in enumerate(values, 1):
            write_cell(tmp_path / run, cell("s", rep, v))
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "| s | ab | c50 | 2 | 2 | 101.00 | 150.50 | +49.0% |" in out
    assert "| yes (p=" in out
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "missing")]) == 1
