import csv
import json
from pathlib import Path

import pytest
from conftest import STORED_META, read_data

from benchstack.cell import cell_to_dict, make_cell, write_cell
from benchstack.parsers import ab, wrk
from benchstack.report import max_cv_of, summary_rows, summary_table, write_report
from benchstack.verdict import limits_of


def cell(tool: str, name: str, stack: str, repetition: int = 1, **meta: object) -> dict:
    parser = ab if tool == "ab" else wrk
    base = {
        **STORED_META,
        "experiment": "demo",
        "stack": stack,
        "target": "t1",
        "loadgen": "l1",
        "mode": "loopback",
        "repetition": repetition,
        "started_at": "2025-01-02T03:04:05+00:00",
    }
    return cell_to_dict(make_cell(parser.parse(read_data(tool, name)), **{**base, **meta}))


def rows(table: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:]]


def test_summary_table_has_header_and_one_row_per_cell_sorted() -> None:
    cells = [
        cell("wrk", "latency.txt", "b-stack"),
        cell("ab", "mixed-status-length.txt", "b-stack"),
        cell("ab", "normal.txt", "a-stack"),
        cell("ab", "keepalive.txt", "a-stack"),
    ]
    table = summary_table(cells)
    assert table.splitlines()[0] == (
        "| stack | tool | load | n | req/s | min–max | 95% CI | CV | mean ms | p50 ms | p99 ms | errors "
        "| error rate |"
    )
    assert rows(table) == [
        ["a-stack", "ab", "c50", "1", "18967.23", "-", "-", "-", "2.64", "3.00", "4.00", "0", "0.00%"],
        ["a-stack", "ab -k", "c100", "1", "98386.46", "-", "-", "-", "1.02", "1.00", "5.00", "0", "0.00%"],
        [
            "b-stack", "ab", "c10", "1", "21117.09", "-", "-", "-", "0.47", "0.00", "3.00",
            "503 (status 503, length 503)", "50.30%",
        ],
        ["b-stack", "wrk", "c32", "1", "124440.66", "-", "-", "-", "0.97", "0.16", "9.98", "0", "0.00%"],
    ]  # fmt: skip


def test_summary_table_aggregates_repetitions_with_median_and_n() -> None:
    cells = [
        {**cell("ab", "normal.txt", "s", repetition=1), "rps": 100.0},
        {**cell("ab", "normal.txt", "s", repetition=2), "rps": 300.0},
        {**cell("ab", "normal.txt", "s", repetition=3), "rps": 200.0, "error_count": 4, "error_rate": 0.03},
    ]
    cells[2]["errors"] = {**cells[2]["errors"], "status": 4}
    # mean 200, stdev 100, t(0.975, 2) = 4.3027: 200 +- 248.41, whose lower bound (-48.41) is shown as 0
    assert rows(summary_table(cells)) == [
        [
            "s", "ab", "c50", "3", "200.00", "100.00–300.00", "0.00–448.41 (clamped)", "50.0% noisy",
            "2.64", "3.00", "4.00", "4 (status 4)", "1.00%",
        ],
    ]  # fmt: skip
    assert rows(summary_table(cells, max_cv=0.6))[0][7] == "50.0%"


def test_summary_table_of_quiet_repetitions() -> None:
    values = ((1, 990.0), (2, 1010.0), (3, 1000.0))
    cells = [{**cell("ab", "normal.txt", "s", repetition=r), "rps": v} for r, v in values]
    [row] = rows(summary_table(cells))
    # mean 1000, stdev 10, t(0.975, 2) = 4.3027: 1000 +- 24.84
    assert row[3:8] == ["3", "1000.00", "990.00–1010.00", "975.16–1024.84", "1.0%"]


def test_two_repetitions_show_no_confidence_interval() -> None:
    cells = [{**cell("ab", "normal.txt", "s", repetition=r), "rps": v} for r, v in ((1, 990.0), (2, 1010.0))]
    [row] = rows(summary_table(cells))
    # t(0.975, 1) = 12.71 would give 872.94-1127.06 from two values: shown as not available instead
    assert row[3:8] == ["2", "1000.00", "990.00–1010.00", "n/a (n=2)", "1.4%"]


def test_summary_table_shows_dashes_for_missing_latency() -> None:
    [row] = rows(summary_table([cell("wrk", "read-errors.txt", "s")]))
    assert row[8:11] == ["-", "-", "-"]
    assert row[11] == "49419 (read 49419)"
    assert row[12] == "100.00%"


def test_a_bar_in_a_value_does_not_split_its_markdown_cell() -> None:
    table = summary_table([cell("wrk", "latency.txt", "a|b")])
    assert table.splitlines()[2].startswith("| a\\|b | wrk | c32 | 1 |")


@pytest.mark.parametrize(
    ("run_info", "max_cv"),
    [
        (None, 0.05),
        ({"experiment": "demo"}, 0.05),
        ({"experiment": {"load": ["max_cv", 0.2]}}, 0.05),
        ({"experiment": {"load": {"max_cv": True}}}, 0.05),
        ({"experiment": {"load": {"max_cv": "0.2"}}}, 0.05),
        ({"experiment": {"load": {"max_cv": 0.2}}}, 0.2),
        ({"experiment": {"load": {"max_cv": 1}}}, 1.0),
    ],
)
def test_the_table_marks_noisy_rows_by_the_max_cv_the_verdict_reads(
    run_info: dict | None, max_cv: float
) -> None:
    assert max_cv_of(run_info) == limits_of(run_info).max_cv == max_cv


def test_write_report_writes_markdown_and_csv(tmp_path: Path) -> None:
    write_cell(tmp_path, cell("ab", "normal.txt", "a-stack", requests=2000))
    write_cell(tmp_path, cell("wrk", "timeouts.txt", "a-stack", duration_s=3))
    (tmp_path / "run.json").write_text(
        json.dumps(
            {
                "schema": "bench-stack/run/v1",
                "experiment": {"name": "demo-exp"},
                "hosts": {"target": {"name": "web1"}, "loadgen": {"name": "gen1"}},
                "mode": "network",
            }
        )
    )
    path = write_report(tmp_path)
    text = path.read_text()
    assert path == tmp_path / "report.md"
    assert text.startswith("# bench-stack report: demo-exp\n")
    assert "- hosts: target: web1, loadgen: gen1" in text
    assert "- mode: network" in text
    assert "| a-stack | ab | c50 | 1 | 18967.23 |" in text
    assert "| a-stack | wrk | c4 | 1 | 3.99 | - | - | - | - | - | - | 12 (timeout 12) | 100.00% |" in text
    assert "## Notes from the parsers" in text

    with (tmp_path / "cells.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert [r["tool"] for r in table] == ["ab", "wrk"]
    assert table[0]["latency_p99_ms"] == "4.0"
    assert table[1]["errors_timeout"] == "12"
    assert table[1]["errors_over_threshold"] == ""


def test_write_report_without_run_json_uses_cell_metadata(tmp_path: Path) -> None:
    write_cell(tmp_path, cell("ab", "normal.txt", "a-stack", requests=2000))
    text = write_report(tmp_path).read_text()
    assert text.startswith("# bench-stack report: demo\n")
    assert "- hosts: target: t1, loadgen: l1" in text
    assert "- mode: loopback" in text


def test_write_report_writes_a_self_contained_html_with_png_plots(tmp_path: Path) -> None:
    for stack, base in (("a-stack", 1000.0), ("b-stack", 2000.0)):
        for rep, factor in ((1, 1.0), (2, 1.3)):
            write_cell(
                tmp_path, {**cell("ab", "normal.txt", stack, rep, requests=2000), "rps": base * factor}
            )
            wrk_cell = cell("wrk", "latency.txt", stack, rep, duration_s=3)
            write_cell(tmp_path, {**wrk_cell, "rps": base * 2})
    write_report(tmp_path)
    plots = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert plots == [
        "error-rate.png", "latency-ab.png", "latency-wrk.png", "throughput-ab.png", "throughput-wrk.png",
    ]  # fmt: skip
    for name in plots:
        assert (tmp_path / "plots" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert page.count('src="data:image/png;base64,') == 5
    assert 'src="http' not in page and "<link" not in page  # nothing to fetch
    assert page.count('<tr class="noisy">') == 2  # the ab rows: 1000 vs 1300 req/s, CV 18.9 %
    assert "<td>a-stack</td><td>wrk</td>" in page


def test_throughput_plot_draws_lines_over_several_concurrency_levels(tmp_path: Path) -> None:
    from benchstack.plots import throughput_plots

    cells = [
        {**cell("ab", "normal.txt", "a-stack", 1, requests=2000), "concurrency": level, "rps": 100.0 * level}
        for level in (10, 50)
    ]
    [path] = throughput_plots(cells, tmp_path)
    assert path.name == "throughput-ab.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_open_loop_rows_are_labelled_with_their_offered_rate(tmp_path: Path) -> None:
    from benchstack.cell import cell_to_dict, make_cell
    from benchstack.parsers import parse

    parsed = parse("httperf", read_data("httperf", "ok.txt"))
    cell = {**cell_to_dict(make_cell(parsed, stack="s", repetition=1, rate=200))}
    [row] = summary_rows([cell])
    assert (row["tool"], row["load"]) == ("httperf (open loop)", "200/s")
    assert row["p50 ms"] == "0.50" and row["p99 ms"] == "-"
