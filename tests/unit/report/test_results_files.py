"""Results files people can load (issue 41): cells.csv flat (dotted columns, JSON for lists and objects,
true/false, every cell's id), loadpoints.csv with the report's own figures, and ``bench-stack hist`` taking
cell files by path and leaving disturbed cells out of a pool as the report does."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from cell_records import records
from test_report import RUN_JSON
from test_report import cell as report_cell
from test_report_golden import build_comparisons, build_mixed, build_targets
from test_report_latency import cell

from benchstack.analysis.summary import RunData
from benchstack.cli import main
from benchstack.report.build import summary_rows, write_report
from benchstack.report.csvfiles import CSV_COLUMNS, LOADPOINT_COLUMNS, write_csv
from benchstack.results.cell import load_cells, write_cell
from benchstack.results.runfolder import read_run_info

DOCS = Path(__file__).resolve().parents[3] / "docs" / "results-format.md"


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


T1_CPU = {
    "boot_id": "b1", "seconds": 2.3, "cpu_s": 4.6, "busy_s": 1.2, "steal_s": 0.0, "ours_s": 1.1,
    "ours_from": "container", "tool_s": None,
}  # fmt: skip


def nested_cell() -> dict[str, Any]:
    """A real cell with every nested field a user found as a Python repr in cells.csv."""
    one = cell("ab", "ab-slow", "s", 1, requests=2000)
    vmstat = {"samples": 3, "cpu_user": 40.0, "cpu_idle": 55.5, "cpu_idle_median": 56.0, "run_queue": 1.0}
    return {
        **one,
        "system": {"loadgen": vmstat, "target": None},
        "window": {"start": "2025-01-02T03:04:05.123Z", "end": "2025-01-02T03:04:07.456Z"},
        "interference": {"foreign": 0.02, "steal": 0.0, "limit": 0.1, "hosts": {"t1": T1_CPU}},
        "disturbed": ["interference: foreign CPU 23 %"],
    }


def test_cells_csv_holds_no_python_reprs_and_flattens_nested_fields(tmp_path: Path) -> None:
    write_csv(tmp_path / "cells.csv", records([nested_cell()]))
    [row] = read_csv(tmp_path / "cells.csv")
    assert tuple(row) == CSV_COLUMNS
    for column, value in row.items():
        assert not value.startswith(("{'", "['")), (column, value)
        assert value not in ("True", "False", "None"), (column, value)
    assert row["keepalive"] == "false"
    assert row["cell_id"] == "s__ab__c20__r1"  # filled in a run with one target too
    assert row["system.loadgen.cpu_idle"] == "55.5" and row["system.loadgen.cpu_steal"] == ""
    assert row["system.target.cpu_idle"] == ""
    assert row["window.start"] == "2025-01-02T03:04:05.123Z"
    assert row["interference.foreign"] == "0.02"
    assert json.loads(row["interference.hosts"]) == {"t1": T1_CPU}
    assert json.loads(row["disturbed"]) == ["interference: foreign CPU 23 %"]
    assert json.loads(row["command"]) == nested_cell()["command"]
    assert row["latency_ms.p50"] != "" and "latency_dist" not in row


@pytest.mark.parametrize("build", [build_mixed, build_targets, build_comparisons])
def test_cells_csv_of_real_runs_reads_back_with_the_csv_module(
    build: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [path] = build(tmp_path)
    write_report(path, html_report=False)
    rows = read_csv(path / "cells.csv")
    stored = load_cells(path)
    assert len(rows) == len(stored) and all(r["cell_id"] for r in rows)
    assert sorted(r["cell_id"] for r in rows) == sorted(p.stem for p in (path / "cells").glob("*.json"))
    for row in rows:
        for value in row.values():
            assert not value.startswith(("{'", "['")) and value not in ("True", "False", "None")
        for column in ("notes", "disturbed"):
            assert isinstance(json.loads(row[column]), list)


def test_the_cells_csv_columns_are_the_documented_ones() -> None:
    documented = DOCS.read_text(encoding="utf-8").split("<!-- cells.csv columns -->")[1].split("<!--")[0]
    assert " ".join(f"`{c}`" for c in CSV_COLUMNS) in " ".join(documented.split())
    listed = DOCS.read_text(encoding="utf-8").split("<!-- loadpoints.csv columns -->")[1].split("<!--")[0]
    assert [line.split("|")[1].strip(" `") for line in listed.strip().splitlines()[2:]] == list(
        LOADPOINT_COLUMNS
    )


def _number(text: str) -> float | None:
    return float(text) if text else None


def uneven_rounds(run_dir: Path) -> None:
    """Two stacks over ten rounds whose figures tell a median from a mean and a ratio from its interval's
    ends: a's req/s and errors vary from round to round, b's do not, and a disturbed cell of a (slow, with
    errors) that no figure may count."""
    for rep in range(1, 11):
        errors = rep % 3 * 10
        a = report_cell("ab", "normal.txt", "a-stack", rep, requests=2000)
        a["rps"] = 1000.0 + 37.0 * rep * (-1) ** rep
        a["latency_ms"] = {**a["latency_ms"], "p50": float(rep), "mean": 2.0 * rep}
        a["errors"] = {**a["errors"], "status": errors}
        a["error_count"], a["error_rate"] = errors, errors / 2000
        write_cell(run_dir, a)
        write_cell(run_dir, {**report_cell("ab", "normal.txt", "b-stack", rep, requests=2000), "rps": 2000.0})
    bad = report_cell("ab", "normal.txt", "a-stack", 11, requests=2000)
    bad["latency_ms"] = {**bad["latency_ms"], "p50": 900.0, "mean": 900.0, "p99": 990.0}
    bad["errors"] = {**bad["errors"], "status": 1500}
    bad["error_count"], bad["error_rate"] = 1500, 0.75
    write_cell(run_dir, {**bad, "rps": 5000.0, "disturbed": ["interference: foreign CPU 31.0 %"]})
    (run_dir / "run.json").write_text(json.dumps(RUN_JSON), encoding="utf-8")


def test_loadpoints_csv_holds_the_reports_figures(tmp_path: Path) -> None:
    uneven_rounds(tmp_path)
    write_report(tmp_path, html_report=False)
    rows = read_csv(tmp_path / "loadpoints.csv")
    assert tuple(rows[0]) == LOADPOINT_COLUMNS
    info = read_run_info(tmp_path)
    assert info is not None
    points = info["verdict"]["load_points"]
    assert len(rows) == len(points) == 2
    for row, point in zip(rows, points, strict=True):
        assert (row["stack"], row["tool"], row["keepalive"], int(row["level"])) == (
            point["stack"],
            point["tool"],
            "true" if point["keepalive"] else "false",
            point["level"],
        )
        assert (row["target"] or None) == point["target"] and row["status"] == point["status"]
        assert (int(row["counted"]), int(row["disturbed"])) == (point["counted"], point["disturbed"])
        for key in ("median_rps", "ci_low", "ci_high", "precision"):
            assert _number(row[key]) == point[key], key
    a, b = rows
    assert (a["counted"], a["disturbed"]) == ("10", "1")
    [found] = info["comparisons"]
    assert (a["baseline"], a["state"], int(a["pairs"])) == (found["baseline"], found["state"], found["pairs"])
    for key in ("ratio", "low", "high"):
        assert _number(a[key]) == found[key], key
    assert found["low"] < found["ratio"] < found["high"]
    assert b["baseline"] == b["state"] == b["ratio"] == b["pairs"] == ""  # the baseline's own row
    table = summary_rows(RunData(tmp_path, load_cells(tmp_path), info).cells, baseline="b-stack")
    assert [r["stack"] for r in table] == [a["stack"], b["stack"]]
    for shown, row in zip(table, rows, strict=True):
        for key in ("mean", "p50", "p99"):
            # the table rounds to what the repetitions support, the CSV keeps the figure: the same to the
            # table's last digit
            figure, last = shown[f"{key} ms"], 10.0 ** -len(shown[f"{key} ms"].partition(".")[2])
            assert float(figure) == pytest.approx(_number(row[f"latency_{key}_ms"]), abs=last / 2), key
        assert shown["error rate"] == f"{100 * float(row['error_rate']):.2f}%"
        assert shown["errors"].split()[0] == row["error_count"]
    assert (a["latency_p50_ms"], a["error_count"]) == ("5.5", "100")  # the counted cells' median, sum
    assert float(a["error_rate"]) == pytest.approx(0.005)  # their mean, not the disturbed cell's


# ---------------------------------------------------------------- hist


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """Three repetitions of one load point with 2,000 requests each; the second disturbed."""
    folder = tmp_path / "run"
    for n in (1, 2, 3):
        one = cell("ab", "ab-slow", "s", n, requests=2000)
        if n == 2:
            one["disturbed"] = ["interference: foreign CPU 23 %"]
        write_cell(folder, one)
    return folder


def test_hist_takes_a_cell_file_as_given_absolute_or_from_here(
    run: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(run.parent)
    for name in (f"{run.name}/cells/s__ab__c20__r1.json", str(run / "cells" / "s__ab__c20__r1.json")):
        assert main(["hist", run.name, name]) == 0, capsys.readouterr().err
        assert "2,000 samples" in capsys.readouterr().out
    assert main(["hist", run.name, "s__ab__c20__r1"]) == 0  # an id as before
    assert main(["hist", run.name, f"{run.name}/cells/nothing.json"]) == 1
    assert "no cell file 'run/cells/nothing.json'" in capsys.readouterr().err


def test_hist_pool_leaves_out_disturbed_cells_and_says_so(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [f"s__ab__c20__r{n}" for n in (1, 2, 3)]
    assert main(["hist", str(run), *ids, "--pool"]) == 0
    out = capsys.readouterr().out
    assert "4,000 samples" in out
    assert (
        "left out 1 disturbed or collapsed cell(s), as the report does (--all pools them): s__ab__c20__r2"
        in out
    )
    assert main(["hist", str(run), *ids, "--pool", "--csv", "-"]) == 0
    printed = capsys.readouterr()
    assert sum(int(r["count"]) for r in csv.DictReader(printed.out.splitlines())) == 4000
    assert "left out 1 disturbed" in printed.err
    assert main(["hist", str(run), *ids, "--pool", "--all"]) == 0
    out = capsys.readouterr().out
    assert "6,000 samples" in out and "left out" not in out
    assert main(["hist", str(run), "s__ab__c20__r2", "--pool"]) == 1
    assert "every cell named is disturbed or collapsed (1)" in capsys.readouterr().err


def test_hist_pool_leaves_out_a_collapsed_cell_as_the_report_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for n in (1, 2, 3):
        one = cell("ab", "ab-slow", "s", n, requests=2000)
        if n == 3:
            one["rps"] = one["rps"] / 10  # below a quarter of the load point's median: collapsed
        write_cell(tmp_path, one)
    assert main(["hist", str(tmp_path), *(f"s__ab__c20__r{n}" for n in (1, 2, 3)), "--pool"]) == 0
    out = capsys.readouterr().out
    assert "4,000 samples" in out and "left out 1 disturbed or collapsed cell(s)" in out
