import json
from pathlib import Path

import pytest
from conftest import DATA

from benchstack import cli
from benchstack.analysis import summary
from benchstack.analysis.verdict import run_verdict
from benchstack.cli import main
from benchstack.results.cell import FIELDS, validate_cell


def parse_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_parse_ab_prints_cell_with_null_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    cell = parse_json(capsys, ["parse", "--tool", "ab", str(DATA / "ab" / "non2xx.txt")])
    assert list(cell) == list(FIELDS)
    assert cell["schema"] == "bench-stack/cell/v2"
    assert cell["experiment"] is None and cell["stack"] is None and cell["repetition"] is None
    assert cell["requests_completed"] == 1000
    assert cell["errors"]["status"] == 1000
    assert cell["error_rate"] == 1.0
    assert validate_cell(cell) == []


def test_cli_parse_wrk_with_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    cell = parse_json(
        capsys,
        [
            "parse", "--tool", "wrk", str(DATA / "wrk" / "latency.txt"),
            "--experiment", "demo", "--stack", "nginx-static", "--target", "t1", "--loadgen", "l1",
            "--mode", "loopback", "--duration-s", "3", "--repetition", "2",
            "--started-at", "2025-01-02T03:04:05Z", "--threshold-ms", "300",
            "--raw-output", "raw/nginx-static__wrk__c32__r2.txt",
            "--command", "wrk -t 2 -c 32 -d 3s --latency http://127.0.0.1:18080/hello/bar",
        ],
    )  # fmt: skip
    assert cell["stack"] == "nginx-static"
    assert cell["repetition"] == 2
    assert cell["threshold_ms"] == 300.0
    assert cell["latency_ms"]["p99"] == 9.98
    assert validate_cell(cell, require_meta=True) == []


def test_cli_parse_fails_with_tool_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "--tool", "ab", str(DATA / "ab" / "connect-refused.txt")]) == 1
    err = capsys.readouterr().err
    assert "apr_socket_recv: Connection refused (111)" in err


def test_cli_parse_wrong_tool_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "--tool", "wrk", str(DATA / "ab" / "normal.txt")]) == 1
    assert "not wrk output" in capsys.readouterr().err


def test_cli_parse_unknown_tool_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as info:
        main(["parse", "--tool", "vegeta", "x.txt"])
    assert info.value.code == 2


def store(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, stack: str, rep: int) -> None:
    cell = parse_json(
        capsys,
        [
            "parse", "--tool", "ab", str(DATA / "ab" / name), "--experiment", "demo", "--stack", stack,
            "--target", "t1", "--loadgen", "l1", "--mode", "network", "--requests", "1000",
            "--repetition", str(rep), "--started-at", "2025-01-02T03:04:05Z", "--raw-output", "raw/x.txt",
            "--command", "ab ...",
        ],
    )  # fmt: skip
    from benchstack.results.cell import write_cell

    write_cell(tmp_path, cell)


def test_cli_validate_and_report_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store(tmp_path, capsys, "length-failures.txt", "s1", 1)
    store(tmp_path, capsys, "non2xx.txt", "s2", 1)
    assert main(["validate", str(tmp_path)]) == 0
    assert "2 of 2 cells valid" in capsys.readouterr().out

    assert main(["report", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| s1 | ab | c10 | 1 | 21300 |" in out
    assert "| s2 | ab | c10 | 1 | 20400 |" in out
    assert "1000 (status 1000)" in out
    # one round each: a ratio, but no interval; printed after the table, before the verdict
    comparison = "  s2: unresolved, 0.96x the req/s of s1: too few pairs for an interval (1, 8 needed)"
    assert out.index("| s2 | ab |") < out.index(f"Comparisons (baseline s1):\nab c10:\n{comparison}\n")
    assert out.index(comparison) < out.index("Verdict: ")
    assert (tmp_path / "report.md").is_file() and (tmp_path / "cells.csv").is_file()


def test_report_computes_the_verdict_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The report, run.json and the printed end of the run all show the verdict computed once.
    store(tmp_path, capsys, "length-failures.txt", "s1", 1)
    calls = []

    def counted(*args: object) -> object:
        calls.append(args)
        return run_verdict(*args)

    monkeypatch.setattr(summary, "run_verdict", counted)
    monkeypatch.setattr(cli, "run_verdict", counted)
    assert main(["report", str(tmp_path)]) == 0
    assert len(calls) == 1


def test_cli_validate_flags_bad_cells_and_misnamed_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store(tmp_path, capsys, "normal.txt", "s1", 1)
    [path] = (tmp_path / "cells").glob("*.json")
    data = json.loads(path.read_text())
    path.rename(path.with_name("other.json"))
    data["rps"] = -1
    (tmp_path / "cells" / "s1__ab__c50__r9.json").write_text(json.dumps({**data, "repetition": 9}))
    assert main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "other.json: file name should be s1__ab__c50__r1.json" in out
    assert "s1__ab__c50__r9.json: rps must be a non-negative number" in out
    assert "0 of 2 cells valid" in out


def test_cli_validate_and_report_fail_without_cells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(tmp_path)]) == 1
    assert main(["report", str(tmp_path)]) == 1
    assert capsys.readouterr().err.count("no cells") == 2
    assert not (tmp_path / "report.md").exists()


def test_cli_experiment_prints_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exp = tmp_path / "e.yml"
    exp.write_text(
        "name: e\nstacks:\n  - {name: s, port: 8001, app: {kind: static}, front: {kind: nginx}}\n"
        "load:\n  plans:\n    - {tool: ab, concurrency: [1, 10], requests: 100, keepalive: true}\n"
    )
    plan = parse_json(capsys, ["experiment", str(exp)])
    assert plan["name"] == "e"
    assert [c["cell_id"] for c in plan["cells"]] == ["s__ab-k__c1__r1", "s__ab-k__c10__r1"]


def test_cli_experiment_reports_problems(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exp = tmp_path / "e.yml"
    exp.write_text(
        "name: e\nstacks:\n  - {name: s, port: 8001}\nload:\n  plans:\n    - {tool: wrk, concurrency: 4}\n"
    )
    assert main(["experiment", str(exp)]) == 1
    assert "load.plans[0].duration_s: wrk needs a duration in seconds" in capsys.readouterr().err
