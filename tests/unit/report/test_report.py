import csv
import json
from pathlib import Path

import pytest
from cell_records import records
from conftest import STORED_META, read_data, schema_file_errors

from benchstack.analysis.summary import RunData
from benchstack.kinds.loadtools import ab, wrk
from benchstack.report.build import (
    build_report,
    plot_cells,
    summary_rows,
    summary_table,
    target_precision_of,
    write_report,
)
from benchstack.report.csvfiles import write_csv
from benchstack.report.render import markdown
from benchstack.results.cell import cell_to_dict, make_cell, write_cell
from benchstack.results.runfolder import read_run_info


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
    table = summary_table(records(cells))
    assert table.splitlines()[0] == (
        "| stack | tool | load | n | req/s | min–max | 95% CI | ± | mean ms | p50 ms | p99 ms | errors "
        "| error rate |"
    )
    assert rows(table) == [
        # one cell: no spread to round to, three significant digits
        ["a-stack", "ab", "c50", "1", "19000", "-", "-", "-", "3.00", "3.00", "4.00", "0", "0.00%"],
        ["a-stack", "ab -k", "c100", "1", "98400", "-", "-", "-", "1.00", "1.00", "5.00", "0", "0.00%"],
        [
            "b-stack", "ab", "c10", "1", "21100", "-", "-", "-", "0.00", "0.00", "3.00",
            "503 (status 503, length 503)", "50.30%",
        ],
        # latency of one cell: three significant digits
        ["b-stack", "wrk", "c32", "1", "124000", "-", "-", "-", "0.970", "0.160", "9.98", "0", "0.00%"],
    ]  # fmt: skip


def reps(values: list[float], **changes: object) -> list[dict]:
    return [
        {**cell("ab", "normal.txt", "s", repetition=r), "rps": v, **changes} for r, v in enumerate(values, 1)
    ]


def test_summary_table_aggregates_repetitions_with_median_and_n() -> None:
    cells = reps([100.0, 300.0, 200.0])
    cells[2].update(error_count=4, error_rate=0.03, errors={**cells[2]["errors"], "status": 4})
    # three repetitions: no interval of the median (it needs 6), so no precision either
    assert rows(summary_table(records(cells))) == [
        [
            "s", "ab", "c50", "3", "200", "100–300", "-", "-",
            "3.00", "3.00", "4.00", "4 (status 4)", "1.00%",
        ],
    ]  # fmt: skip


def test_six_repetitions_show_the_interval_of_the_median_and_its_precision() -> None:
    cells = reps([990.0, 1010.0, 1000.0, 995.0, 1005.0, 1002.0])
    [row] = rows(summary_table(records(cells)))
    # n = 6: the range covers 96.9 %, the 2nd lowest and highest 78.1 %; the 95 % interval lies 0.357 of the
    # way from the range towards them (stats.median_ci); median 1001, +-8.21 / 1001 = 0.8 %
    # to the decade below the interval's half-width (8.2: tenths)
    assert row[3:8] == ["6", "1001.0", "990.0–1010.0", "991.8–1008.2", "0.8%"]


@pytest.mark.parametrize("n", [2, 5])
def test_fewer_than_six_repetitions_show_no_interval_of_the_median(n: int) -> None:
    [row] = rows(summary_table(records(reps([990.0, 1010.0, 1000.0, 995.0, 1005.0][:n]))))
    assert row[6:8] == ["-", "-"]


def test_a_precision_above_the_target_is_marked_noisy() -> None:
    cells = reps([900.0, 1100.0, 1000.0, 950.0, 1050.0, 1020.0])
    # median 1010, interval 917.86-1082.14: +-82.14 / 1010 = 8.1 %
    assert rows(summary_table(records(cells)))[0][7] == "8.1% noisy"
    assert rows(summary_table(records(cells), target_precision=0.082))[0][7] == "8.1%"
    assert rows(summary_table(records(cells), target_precision=0.081))[0][7] == "8.1% noisy"


def test_disturbed_cells_are_listed_in_n_and_counted_by_no_figure() -> None:
    quiet = reps([990.0, 1010.0, 1000.0, 995.0, 1005.0, 1002.0])
    slow = {"mean": 99.0, "p50": 99.0, "p99": 99.0}
    disturbed = [
        {**c, "error_count": 9, "error_rate": 0.9, "errors": {**c["errors"], "status": 9},
         "latency_ms": {**c["latency_ms"], **slow}, "disturbed": ["steal 30 %"]}
        for c in reps([1.0] * 8)
    ]  # fmt: skip
    # more disturbed cells than counted ones: counted, they would move even the medians
    [row] = rows(summary_table(records(quiet + disturbed)))
    [alone] = rows(summary_table(records(quiet)))
    assert row[3] == "6 (+8 disturbed)"
    assert row[4:] == alone[4:]


def test_a_load_point_whose_every_cell_was_disturbed_still_has_its_row() -> None:
    [row] = rows(summary_table(records(reps([1.0, 2.0, 3.0], disturbed=["foreign CPU 40 %"]))))
    assert row[:8] == ["s", "ab", "c50", "0 (+3 disturbed)", "-", "-", "-", "-"]
    assert row[11:] == ["0", "-"]


def test_outliers_among_the_counted_req_s_are_counted_in_n() -> None:
    values = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0, 998.0, 600.0]
    assert rows(summary_table(records(reps(values))))[0][3] == "8, 1 outlier"
    # 300 req/s: an outlier, not a collapse (above a quarter of the median)
    assert rows(summary_table(records(reps([*values, 300.0]))))[0][3] == "9, 2 outliers"
    mixed = reps(values) + reps([1.0], disturbed=["steal 30 %"])
    assert rows(summary_table(records(mixed)))[0][3] == "8, 1 outlier (+1 disturbed)"


def test_summary_table_shows_dashes_for_missing_latency() -> None:
    [row] = rows(summary_table(records([cell("wrk", "read-errors.txt", "s")])))
    assert row[8:11] == ["-", "-", "-"]
    assert row[11] == "49419 (read 49419)"
    assert row[12] == "100.00%"


def test_a_bar_in_a_value_does_not_split_its_markdown_cell() -> None:
    table = summary_table(records([cell("wrk", "latency.txt", "a|b")]))
    assert table.splitlines()[2].startswith("| a\\|b | wrk | c32 | 1 |")


@pytest.mark.parametrize(
    ("run_info", "precision"),
    [
        (None, 0.05),
        ({"experiment": "demo"}, 0.05),
        ({"experiment": {"load": ["target_precision", 0.2]}}, 0.05),
        ({"experiment": {"load": {"target_precision": True}}}, 0.05),
        ({"experiment": {"load": {"target_precision": "0.2"}}}, 0.05),
        ({"experiment": {"load": {"max_cv": 0.2}}}, 0.05),
        ({"experiment": {"load": {"target_precision": 0.2}}}, 0.2),
    ],
)
def test_the_table_marks_noisy_rows_by_the_recorded_target_precision(
    run_info: dict | None, precision: float
) -> None:
    assert target_precision_of(run_info) == precision


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
    path = write_report(tmp_path, html_report=False)  # report.html and its plots: the test after the next
    text = path.read_text()
    assert path == tmp_path / "report.md"
    assert text.startswith("# bench-stack report: demo-exp\n")
    assert "- hosts: target: web1, loadgen: gen1" in text
    assert "- mode: network" in text
    assert "| a-stack | ab | c50 | 1 | 19000 |" in text
    assert "| a-stack | wrk | c4 | 1 | 3.99 | - | - | - | - | - | - | 12 (timeout 12) | 100.00% |" in text
    assert "## Notes from the parsers" in text
    assert "Comparisons" not in text  # one stack: nothing to compare

    with (tmp_path / "cells.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert [r["tool"] for r in table] == ["ab", "wrk"]
    assert table[0]["latency_ms.p99"] == "4.0"
    assert table[1]["errors.timeout"] == "12"
    assert table[1]["errors.over_threshold"] == ""


def test_write_report_without_run_json_uses_cell_metadata(tmp_path: Path) -> None:
    write_cell(tmp_path, cell("ab", "normal.txt", "a-stack", requests=2000))
    text = write_report(tmp_path, html_report=False).read_text()
    assert text.startswith("# bench-stack report: demo\n")
    assert "- hosts: target: t1, loadgen: l1" in text
    assert "- mode: loopback" in text


def six_rounds(run_dir: Path) -> None:
    """Two stacks, b twice a's req/s in every round; ab swings 1.0 / 1.3 from round to round, wrk does not.
    Ten rounds: enough pairs for both comparisons' intervals at 99 % after Holm's adjustment (10 needed)."""
    for stack, base in (("a-stack", 1000.0), ("b-stack", 2000.0)):
        for rep in range(1, 11):
            factor = 1.3 if rep % 2 else 1.0
            write_cell(run_dir, {**cell("ab", "normal.txt", stack, rep, requests=2000), "rps": base * factor})
            wrk_cell = cell("wrk", "latency.txt", stack, rep, duration_s=3)
            write_cell(run_dir, {**wrk_cell, "rps": base * 2})


@pytest.mark.drawn
def test_write_report_writes_a_self_contained_html_with_png_plots(tmp_path: Path) -> None:
    six_rounds(tmp_path)
    write_report(tmp_path)
    plots = sorted(p.name for p in (tmp_path / "plots").iterdir())
    # no error-rate plot: no cell had an error
    assert plots == [
        "comparisons.png", "latency-ab.png", "latency-wrk.png", "throughput-ab.png", "throughput-wrk.png",
    ]  # fmt: skip
    for name in plots:
        assert (tmp_path / "plots" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert page.count('src="data:image/png;base64,') == 5
    assert 'src="http' not in page and "<link" not in page and "url(" not in page  # nothing to fetch
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page
    assert "<p>No errors: every request of the 40 counted cells succeeded.</p>" in page
    assert "`" not in page  # code is <code>, not Markdown's backticks
    # each plot in its section: the comparisons chart under Comparisons, throughput under Results
    comparisons = page.index("<h2>Comparisons</h2>")
    assert comparisons < page.index('<figure data-plot="comparisons">') < page.index("<h3>ab c50</h3>")
    results = page.index("<h2>Results</h2>")
    assert results < page.index('<figure data-plot="throughput">') < page.index("<table>", results)
    # report.md links the same files where report.html shows them
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Comparisons\n\n![Each stack's req/s against the baseline's" in text
    assert "](plots/comparisons.png)\n" in text and "](plots/throughput-wrk.png)\n" in text
    # The ab rows spread 1000 vs 1300 req/s (+-13.0 %), but both stacks are compared: their precision is
    # information, and no row is marked.
    assert page.count('<tr class="noisy">') == 0
    assert "<td>a-stack</td><td>wrk</td>" in page
    # the verdict, then the answer, as in report.md
    assert (
        page.index('<h2 class="verdict-')
        < page.index("<h2>Comparisons</h2>")
        < page.index("<h2>Results</h2>")
    )
    faster = "b-stack: faster, 2.00x the req/s of a-stack (2.00-2.00; 10 pairs 0.0 s apart)"
    assert f"<h3>ab c50</h3><ul><li>{faster}</li></ul>" in page
    assert f"<h3>wrk c32</h3><ul><li>{faster}</li></ul>" in page


RUN_JSON = {
    "schema": "bench-stack/run/v1",
    "experiment": {
        "name": "demo-exp",
        "stacks": [{"name": "b-stack"}, {"name": "a-stack"}],
        "load": {"baseline": "b-stack", "target_precision": 0.2},
    },
}


SLOWER_SENTENCE = "a-stack: slower, 0.50x the req/s of b-stack (0.50-0.50; 10 pairs 0.0 s apart)"


def test_the_report_leads_with_the_verdict_and_the_comparisons_and_stores_them_in_run_json(
    tmp_path: Path,
) -> None:
    six_rounds(tmp_path)
    (tmp_path / "run.json").write_text(json.dumps(RUN_JSON))
    text = write_report(tmp_path, html_report=False).read_text()
    assert text.index("## Verdict") < text.index("## Comparisons") < text.index("## Results")
    section = text[text.index("## Comparisons") : text.index("## Results")]
    assert section.splitlines()[:10] == [
        "## Comparisons",
        "",
        "### ab c50",
        "",
        f"- {SLOWER_SENTENCE}",
        "",
        "### wrk c32",
        "",
        f"- {SLOWER_SENTENCE}",
        "",
    ]
    assert section.splitlines()[10].startswith("Each stack against the baseline, b-stack, over pairs")
    # the host's speed through the run, after the results, with the noise
    noise = text[text.index("## Noise and drift") :]
    head = "## Noise and drift\n\n### Host speed through the run\n\n- b-stack (ab c50 on t1): 1.30x"
    assert noise.startswith(head)
    assert "- b-stack (wrk c32 on t1): 1.00x in the last third of its cells against the first" in noise
    # Rounded to the decade below the interval's half-width (150 req/s: tens)
    assert "| a-stack | ab | c50 | 10 | 1150 | 1000–1300 | 1000–1300 | 13.0% |" in text
    assert "above load.target_precision, 20.0 %" in text
    info = read_run_info(tmp_path)
    assert info is not None and schema_file_errors("run.schema.json", info) == []
    assert [(c["stack"], c["tool"], c["state"], c["sentence"]) for c in info["comparisons"]] == [
        ("a-stack", "ab", "slower", SLOWER_SENTENCE),
        ("a-stack", "wrk", "slower", SLOWER_SENTENCE),
    ]


def test_a_baseline_without_cells_is_named_where_the_comparisons_would_be(tmp_path: Path) -> None:
    six_rounds(tmp_path)
    load = {**RUN_JSON["experiment"]["load"], "baseline": "gone"}
    (tmp_path / "run.json").write_text(
        json.dumps({**RUN_JSON, "experiment": {**RUN_JSON["experiment"], "load": load}})
    )
    text = write_report(tmp_path).read_text()
    why = "No comparisons: the baseline, gone, has no cells in this run."
    assert f"## Comparisons\n\n{why}\n" in text
    assert f"<h2>Comparisons</h2><p>{why}</p>" in (tmp_path / "report.html").read_text()
    assert read_run_info(tmp_path)["comparisons"] == []


def test_cells_csv_lists_every_cell_with_why_it_was_disturbed(tmp_path: Path) -> None:
    cells = reps([1000.0, 1.0])
    cells[1]["disturbed"] = ["foreign CPU 23 %", "steal 12 %"]
    write_csv(tmp_path / "cells.csv", records(cells))
    with (tmp_path / "cells.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert [(r["repetition"], r["rps"], r["disturbed"]) for r in table] == [
        ("1", "1000.0", "[]"),
        ("2", "1.0", '["foreign CPU 23 %","steal 12 %"]'),
    ]


@pytest.mark.drawn
def test_throughput_plot_draws_lines_over_several_concurrency_levels(tmp_path: Path) -> None:
    from benchstack.report.plots import throughput_plots

    cells = [
        {**cell("ab", "normal.txt", "a-stack", 1, requests=2000), "concurrency": level, "rps": 100.0 * level}
        for level in (10, 50)
    ]
    [path] = throughput_plots(records(cells), tmp_path)
    assert path.name == "throughput-ab.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_open_loop_rows_are_labelled_with_their_offered_rate(tmp_path: Path) -> None:
    from benchstack.kinds.loadtools import parse
    from benchstack.results.cell import cell_to_dict, make_cell

    parsed = parse("httperf", read_data("httperf", "ok.txt"))
    cell = {**cell_to_dict(make_cell(parsed, stack="s", repetition=1, rate=200))}
    [row] = summary_rows(records([cell]))
    assert (row["tool"], row["load"]) == ("httperf (open loop)", "200/s")
    assert row["p50 ms"] == "0.500" and row["p99 ms"] == "-"  # one cell: three significant digits


def test_the_plots_and_the_run_summary_leave_disturbed_cells_out_of_the_figures() -> None:
    cells = reps([1000.0, 1.0])
    cells[1]["disturbed"] = ["steal 30 %"]
    run = RunData(Path("run"), records(cells), None)
    assert plot_cells(run) == run.cells[:1]
    assert "- cells: 2 (1 disturbed or collapsed: kept, not counted)" in markdown(build_report(run))


def test_report_html_escapes_every_value_and_its_template_ships_in_the_package(tmp_path: Path) -> None:
    import tomllib

    from benchstack.report.render import html

    run = RunData(tmp_path / "run", records([cell("ab", "normal.txt", "<b>&stack")]), None)
    page = html(build_report(run))
    assert "<b>&stack" not in page
    assert "<td>&lt;b&gt;&amp;stack</td>" in page and "<li>cells: 1</li>" in page
    root = Path(__file__).resolve().parents[3]
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = pyproject["tool"]["setuptools"]["package-data"]["benchstack"]
    assert "report.html.j2" in {p.name for pattern in shipped for p in (root / "benchstack").glob(pattern)}
    assert "jinja2>=3.1" in pyproject["project"]["dependencies"]
