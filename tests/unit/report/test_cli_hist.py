"""``bench-stack hist``: a cell's distribution printed and exported as CSV, for a merged cell the same way,
on cells the runner measured from real captures (tests/data/latency: ab-late, two loadgens, one late)."""

import csv
import json
from pathlib import Path

import pytest
from test_merge_distributions import LOADGENS, pair, plan

from benchstack.cli import main
from benchstack.measure.merge import merge_stored
from benchstack.records.distribution import from_dict

CELL = plan("ab")["cell_id"]


@pytest.fixture
def run(tmp_path: Path) -> Path:
    pair(tmp_path, "ab-late")
    merge_stored(tmp_path, CELL, LOADGENS)
    return tmp_path


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_hist_exports_a_merged_cell_and_a_loadgens_own_cell_as_csv(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own = f"loadgens/lg1/cells/{CELL}.json"
    out = tmp_path / "csv"
    assert main(["hist", str(run), CELL, own, "--csv", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "merged from lg1, lg2: every request, 11,211 of 24,000 requests in the common window" in printed
    assert sorted(p.name for p in out.iterdir()) == [f"loadgens-lg1-cells-{CELL}.csv", f"{CELL}.csv"]
    rows = read_csv(out / f"{CELL}.csv")
    assert list(rows[0]) == ["value_us", "count", "percentile"]
    stored = from_dict(json.loads((run / "cells" / f"{CELL}.json").read_text())["latency_dist"])
    assert [(int(r["value_us"]), int(r["count"])) for r in rows] == list(stored.counts)
    assert float(rows[-1]["percentile"]) == 100.0
    cumulative = [float(r["percentile"]) for r in rows]
    assert cumulative == sorted(cumulative)
    assert sum(int(r["count"]) for r in read_csv(out / f"loadgens-lg1-cells-{CELL}.csv")) == 12000


def test_hist_prints_the_percentile_ladder_with_the_tail_rule(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["hist", str(run), f"loadgens/lg2/cells/{CELL}.json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "  ab: every request, closed loop, 1 ms"
    p99 = next(line for line in lines if line.strip().startswith("99%"))
    assert p99.split()[1] == "7.000"


def test_hist_csv_to_stdout_pools_repetitions(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one, two = (f"loadgens/{lg}/cells/{CELL}.json" for lg in LOADGENS)
    assert main(["hist", str(run), one, two, "--pool", "--csv", "-"]) == 0
    rows = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    assert sum(int(r["count"]) for r in rows) == 24000
    assert main(["hist", str(run), one, two, "--csv", "-"]) == 1
    assert "give one cell, or --pool" in capsys.readouterr().err


def test_hist_names_a_missing_cell_and_a_cell_without_distribution(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["hist", str(run), "no-such-cell"]) == 1
    assert "no cell 'no-such-cell'" in capsys.readouterr().err
    # only files inside the run folder: a real cell file next to it is not read through ../
    outside = run.parent / f"{run.name}-outside.json"
    outside.write_text((run / "cells" / f"{CELL}.json").read_text())
    assert main(["hist", str(run), f"../{outside.name}"]) == 1
    assert "no cell" in capsys.readouterr().err
    cell = run / "cells" / f"{CELL}.json"
    data = json.loads(cell.read_text())
    cell.write_text(json.dumps({**data, "latency_dist": None}))
    assert main(["hist", str(run), CELL]) == 1
    assert "no latency distribution in this cell" in capsys.readouterr().err


def test_hist_leaves_out_percentiles_the_requests_do_not_support(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_report_latency import cell

    from benchstack.results.cell import write_cell

    write_cell(tmp_path, cell("ab", "ab-slow", "s", 1, requests=2000))  # 2,000 requests
    assert main(["hist", str(tmp_path), "s__ab__c20__r1"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if "%" in line}
    assert rows["99.95%"].split()[1] != "-"  # 1 / (1 - 0.9995) = 2,000 requests: enough
    assert rows["99.99%"].split()[1:] == [
        "-",
        "(2,000",
        "requests;",
        "p99.99",
        "needs",
        "at",
        "least",
        "10,000)",
    ]
