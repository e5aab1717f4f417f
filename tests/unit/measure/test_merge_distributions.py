"""Merging loadgens from their whole distributions, on real captures of two loadgens at once
(tests/data/latency: ab-pair/wrk-pair started together, ab-late/wrk-late with lg2 1.5 s late), each measured
here by the runner from its raw output and ab -g file as the loadgen returned them."""

import gzip
import json
from collections import Counter
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from cell_records import merged_json
from conftest import DATA, Helpers, cell_plan, read_data

from benchstack.kinds.loadtools import ab
from benchstack.kinds.loadtools.perrequest import ab_requests
from benchstack.measure.merge import latency_from_times, merge_stored
from benchstack.measure.runner import CellOptions, Target, measure_cell
from benchstack.plan.experiment import cells, experiment_from_dict
from benchstack.records.distribution import from_dict, from_values
from benchstack.results.cell import validate_cell
from benchstack.results.layout import loadgen_dir

LOADGENS = ["lg1", "lg2"]
LOADS = {
    "ab": {"tool": "ab", "concurrency": 10, "requests": 12000},
    "wrk": {"tool": "wrk", "concurrency": 16, "threads": 1, "duration_s": 4},
}


def plan(tool: str) -> dict[str, Any]:
    data = {
        "name": "latency-capture",
        "stacks": [{"name": "local", "port": 18280, "app": {"kind": "static"}, "front": {"kind": "nginx"}}],
        "load": {"path": "/hello/bar", "plans": [LOADS[tool]]},
    }
    [one] = cells(experiment_from_dict(data))
    return asdict(one)


def tsv_of(capture: str) -> str:
    path = DATA / "latency" / f"{capture}.tsv.gz"
    return gzip.decompress(path.read_bytes()).decode("utf-8") if path.exists() else ""


def measure(run: Path, capture: str, loadgen: str) -> dict[str, Any]:
    """One loadgen's cell, measured by the runner from that loadgen's captured output."""
    tool = capture.split("-")[0]
    helpers = Helpers(tsv=tsv_of(capture))
    output = read_data("latency", f"{capture}.txt")

    def execute(command: str) -> tuple[int, str, str]:
        return helpers.run(command, output)

    where = Target(host="127.0.0.1", target="local", loadgen=loadgen)
    cell, _ = measure_cell(
        cell_plan(plan(tool)),
        where,
        loadgen_dir(run, loadgen),
        execute,
        "latency-capture",
        CellOptions(sleep=lambda seconds: None),
    )
    return cell.to_dict()


def pair(run: Path, name: str) -> list[dict[str, Any]]:
    return [measure(run, f"{name}-{lg}", lg) for lg in LOADGENS]


def requests_of(name: str) -> dict[str, list[tuple[int, int]]]:
    return {lg: ab_requests(tsv_of(f"{name}-{lg}")) for lg in LOADGENS}


def seconds(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def test_every_cell_records_its_window_on_the_loadgens_clock(tmp_path: Path) -> None:
    a, b = pair(tmp_path, "ab-late")
    # BENCH-STACK-WINDOW 1796075389.694224357 1796075392.401827631 in ab-late-lg1.txt
    assert a["window"] == {"start": "2026-11-30T21:49:49.694Z", "end": "2026-11-30T21:49:52.401Z"}
    assert seconds(b["window"]["start"]) - seconds(a["window"]["start"]) == pytest.approx(1.511, abs=0.001)


def test_two_ab_loadgens_merge_into_the_distribution_of_all_their_requests(tmp_path: Path) -> None:
    a, b = pair(tmp_path, "ab-pair")
    requests = requests_of("ab-pair")
    merged = merged_json([a, b], requests)
    union = [ms for lg in LOADGENS for _, ms in requests[lg]]
    assert merged["merged"]["latency"] == "requests"
    assert merged["merged"]["cut"] == {"requests": 24000, "kept": 24000}  # they ran together throughout
    assert from_dict(merged["latency_dist"]) == from_values(ab.RESOLUTION, (ms * 1000 for ms in union))
    # the percentiles of the union, not of either loadgen and not an average of theirs
    assert merged["latency_ms"]["p99.99"] == sorted(union)[24000 - 3 - 1]  # rank ceil(0.9999 * 24000)
    assert merged["latency_ms"]["p99"] == sorted(union)[23760 - 1]
    direct = latency_from_times(union)  # mean and population stdev of every request
    assert {k: merged["latency_ms"][k] for k in ("mean", "stdev", "min", "max")} == {
        k: direct[k] for k in ("mean", "stdev", "min", "max")
    }
    assert validate_cell(merged) == []


def test_a_loadgen_that_started_late_is_cut_to_the_window_all_ran_in(tmp_path: Path) -> None:
    a, b = pair(tmp_path, "ab-late")
    requests = requests_of("ab-late")
    merged = merged_json([a, b], requests)
    # lg1 ran 23:49:49.694-52.402, lg2 51.206-54.108 (loadgen clocks): together from 51.206 to 52.402
    assert merged["window"] == {"start": b["window"]["start"], "end": a["window"]["end"]}
    first, last = int(seconds(b["window"]["start"])), int(seconds(a["window"]["end"]))
    kept = [ms for lg in LOADGENS for start, ms in requests[lg] if first <= start <= last]
    assert 0 < len(kept) < 24000
    assert merged["merged"]["cut"] == {"requests": 24000, "kept": len(kept)}
    assert from_dict(merged["latency_dist"]) == from_values(ab.RESOLUTION, (ms * 1000 for ms in kept))
    # lg1's first seconds, before lg2 started, are gone; so are lg2's last ones, after lg1 stopped
    assert Counter(start < first for start, _ in requests["lg1"])[True] > 0
    assert Counter(start > last for start, _ in requests["lg2"])[True] > 0
    assert any("requests that started in the 1.196 s in which all loadgens ran" in n for n in merged["notes"])
    assert [p["window"] for p in merged["merged"]["per_loadgen"]] == [a["window"], b["window"]]
    assert merged["merged"]["start_skew_s"] == 1.511


def test_merge_stored_reads_each_loadgens_g_file_and_cuts_it(tmp_path: Path) -> None:
    pair(tmp_path, "ab-late")
    merged, written = merge_stored(tmp_path, plan("ab")["cell_id"], LOADGENS)
    merged = merged.to_dict()
    assert written and merged["merged"]["latency"] == "requests"
    assert merged["merged"]["cut"]["kept"] < merged["merged"]["cut"]["requests"] == 24000
    stored = json.loads((tmp_path / "cells" / f"{plan('ab')['cell_id']}.json").read_text(encoding="utf-8"))
    assert stored == merged and validate_cell(stored, require_meta=True) == []


def test_two_wrk_loadgens_merge_by_summing_their_histograms(tmp_path: Path) -> None:
    a, b = pair(tmp_path, "wrk-pair")
    merged = merged_json([a, b])
    assert merged["merged"]["latency"] == "histograms"
    da, db, dm = (from_dict(c["latency_dist"]) for c in (a, b, merged))
    counts = Counter(dict(da.counts)) + Counter(dict(db.counts))
    assert dm.counts == tuple(sorted(counts.items()))
    assert (dm.samples, dm.requests) == (da.samples + db.samples, da.requests + db.requests)
    assert dm.corrected  # still wrk's coordinated-omission-corrected samples
    for key in ("p50", "p90", "p99", "p99.9"):
        low, high = sorted((a["latency_ms"][key], b["latency_ms"][key]))
        assert low <= merged["latency_ms"][key] <= high, key
    assert merged["latency_ms"]["max"] == max(a["latency_ms"]["max"], b["latency_ms"]["max"])
    # started 21 ms apart, ended 105 ms apart: 2.6 % of lg1's run outside the common window, under 5 %
    assert not any("outside the window" in n for n in merged["notes"])
    assert validate_cell(merged) == []


def test_wrk_loadgens_that_did_not_run_together_get_a_note_their_histogram_is_not_cut(tmp_path: Path) -> None:
    a, b = pair(tmp_path, "wrk-late")
    merged = merged_json([a, b])
    outside = [n for n in merged["notes"] if "outside the window in which all loadgens ran" in n]
    # lg1 4.074 s, lg2 4.038 s, together 2.583 s
    assert [n.split(" of ")[0] for n in outside] == ["36.6 %", "36.0 %"]
    assert all("wrk keeps no time per request" in n for n in outside)
    assert from_dict(merged["latency_dist"]).samples == sum(
        from_dict(c["latency_dist"]).samples for c in (a, b)
    )


def test_cells_without_distributions_still_merge_per_loadgen(tmp_path: Path) -> None:
    a, b = pair(tmp_path, "wrk-pair")
    old = [{k: v for k, v in c.items() if k != "latency_dist"} for c in (a, b)]
    merged = merged_json(old)
    assert merged["merged"]["latency"] == "per-loadgen" and merged["latency_dist"] is None
    assert merged["latency_ms"]["p99"] is None


def test_per_request_data_that_is_not_what_the_cell_was_made_from_is_not_used(tmp_path: Path) -> None:
    a, b = pair(tmp_path, "ab-pair")
    requests = requests_of("ab-pair")
    requests["lg2"] = requests["lg2"][:-100]  # a -g file the runner would have refused for lg2's cell
    merged = merged_json([a, b], requests)
    assert merged["merged"]["latency"] == "histograms" and merged["merged"]["cut"] is None
    assert from_dict(merged["latency_dist"]).samples == 24000
