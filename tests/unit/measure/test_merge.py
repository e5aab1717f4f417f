"""Merging the cells of two loadgens that loaded one target at once, on real output captured from
inventories/local-multi (tests/data/multi: each loadgen's ab -n 3000 -c 50 with its -g file, and wrk -t1
-c16 -d5s, against sinatra-thin-x4-nginx on bench-multi-target)."""

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from cell_records import merged_json, records
from conftest import Helpers, cell_plan, read_data

from benchstack.analysis.compare import compare_rows
from benchstack.kinds.loadtools.perrequest import ab_requests
from benchstack.measure.merge import MergeError, latency_from_times, merge_stored
from benchstack.measure.runner import CellOptions, Target, measure_cell
from benchstack.plan.experiment import cells, experiment_from_dict
from benchstack.report.build import summary_rows
from benchstack.results.cell import validate_cell
from benchstack.results.layout import loadgen_dir

STACK = "sinatra-thin-x4-nginx"
LOADGENS = ["bench-multi-lg1", "bench-multi-lg2"]


def plan(tool: str) -> dict[str, Any]:
    load = {"tool": "ab", "concurrency": 50, "requests": 3000}
    if tool == "wrk":
        load = {"tool": "wrk", "concurrency": 16, "threads": 1, "duration_s": 5}
    if tool == "httperf":
        load = {"tool": "httperf", "rate": 200, "duration_s": 2}
    data = {
        "name": "multi-host",
        "stacks": [{"name": STACK, "port": 8004, "app": {"kind": "static"}, "front": {"kind": "nginx"}}],
        "load": {"plans": [load]},
    }
    [one] = [dataclasses.asdict(c) for c in cells(experiment_from_dict(data))]
    return one


def measure_on(
    run: Path, lg: str, tool: str, n: int, target_vmstat: bool = False, output: str | None = None
) -> dict[str, Any]:
    """One loadgen's cell, measured by the runner from that loadgen's captured output."""
    helpers = Helpers(tsv=read_data("multi", f"ab-lg{n}.tsv"))

    def execute(command: str) -> tuple[int, str, str]:
        return helpers.run(command, output or read_data("multi", f"{tool}-lg{n}.txt"))

    on_target = None
    if target_vmstat:
        target = Helpers(vmstat=read_data("multi", "vmstat-target-during-wrk.txt"))

        def on_target(command: str) -> tuple[int, str, str]:
            return target.reply(command) or (1, "", "unexpected")

    where = Target(host="bench-multi-target", target="bench-multi-target", loadgen=lg)
    cell, _ = measure_cell(
        cell_plan(plan(tool)),
        where,
        loadgen_dir(run, lg),
        execute,
        "multi-host",
        CellOptions(target_execute=on_target, sleep=lambda seconds: None),
    )
    return cell.to_dict()


def measured_pair(run: Path, tool: str) -> list[dict[str, Any]]:
    return [measure_on(run, lg, tool, n, target_vmstat=n == 1) for n, lg in enumerate(LOADGENS, start=1)]


def test_merged_throughput_is_the_sum_of_the_loadgens(tmp_path: Path) -> None:
    a, b = measured_pair(tmp_path, "ab")
    merged = merged_json([a, b])
    assert (a["rps"], b["rps"]) == (756.1, 771.33)
    assert merged["rps"] == pytest.approx(756.1 + 771.33)
    assert merged["requests_completed"] == 6000 and merged["requests"] == 6000
    assert merged["transfer_bytes"] == a["transfer_bytes"] + b["transfer_bytes"]
    assert merged["loadgen"] == "bench-multi-lg1+bench-multi-lg2"
    assert merged["merged"]["loadgens"] == LOADGENS
    assert merged["concurrency"] == 50 and merged["merged"]["total_concurrency"] == 100
    assert merged["mode"] == "network" and merged["target"] == "bench-multi-target"


def test_ab_latency_is_computed_from_every_request_of_both_loadgens(tmp_path: Path) -> None:
    a, b = measured_pair(tmp_path, "ab")
    requests = {lg: ab_requests(read_data("multi", f"ab-lg{n}.tsv")) for n, lg in enumerate(LOADGENS, 1)}
    merged = merged_json([a, b], requests)
    assert merged["merged"]["latency"] == "requests"
    # nearest rank over the 6000 ttime values of both -g files (awk -F'\t' 'NR>1{print $5}' | sort -n)
    lat = merged["latency_ms"]
    assert (lat["p50"], lat["p75"], lat["p90"], lat["p99"]) == (51, 93, 144, 258)
    assert (lat["min"], lat["max"]) == (0, 364)
    # not the mean of the two loadgens' p99s: a distribution's percentile is not an average of percentiles
    assert lat["p99"] != (a["latency_ms"]["p99"] + b["latency_ms"]["p99"]) / 2


def test_wrk_latency_percentiles_stay_per_loadgen_and_say_so(tmp_path: Path) -> None:
    a, b = measured_pair(tmp_path, "wrk")
    merged = merged_json([a, b])
    assert merged["merged"]["latency"] == "per-loadgen"
    assert all(merged["latency_ms"][k] is None for k in ("mean", "stdev", "p50", "p75", "p90", "p99"))
    assert merged["latency_ms"]["max"] == max(a["latency_ms"]["max"], b["latency_ms"]["max"])
    assert a["latency_ms"]["min"] is None and merged["latency_ms"]["min"] is None  # wrk prints no minimum
    assert [p["latency_ms"]["p99"] for p in merged["merged"]["per_loadgen"]] == [
        a["latency_ms"]["p99"],
        b["latency_ms"]["p99"],
    ]
    assert any("per loadgen" in n for n in merged["notes"])


def test_the_merged_cell_keeps_the_targets_vmstat_taken_by_the_first_loadgen(tmp_path: Path) -> None:
    a, b = measured_pair(tmp_path, "wrk")
    assert a["system"]["target"]["samples"] == 6 and b["system"]["target"] is None
    merged = merged_json([a, b])
    assert merged["system"]["target"] == a["system"]["target"]
    assert merged["system"]["target"]["cpu_idle"] == pytest.approx(round((1 + 0 + 0 + 0 + 0 + 2) / 6, 2))


def test_cells_of_different_load_points_are_not_merged(tmp_path: Path) -> None:
    a, _ = measured_pair(tmp_path, "ab")
    other = measure_on(tmp_path / "other", LOADGENS[1], "wrk", 2)
    with pytest.raises(MergeError, match="cells differ in tool"):
        merged_json([a, other])
    with pytest.raises(MergeError, match="at least two"):
        merged_json([a])
    with pytest.raises(MergeError, match="appears twice"):
        merged_json([a, a])


def test_loadgens_that_started_apart_get_a_note(tmp_path: Path) -> None:
    a, b = measured_pair(tmp_path, "wrk")
    assert not any("apart" in n for n in merged_json([a, b])["notes"])
    late = {**b, "started_at": "2099-01-01T00:00:09Z"}
    early = {**a, "started_at": "2099-01-01T00:00:00Z"}
    merged = merged_json([early, late])
    assert merged["merged"]["start_skew_s"] == 9
    assert any("started 9 s apart" in n for n in merged["notes"])


def test_merge_stored_writes_the_run_cell_beside_each_loadgens_cell(tmp_path: Path) -> None:
    a, _ = measured_pair(tmp_path, "ab")
    cell_id = plan("ab")["cell_id"]
    merged, written = merge_stored(tmp_path, cell_id, LOADGENS)
    merged = merged.to_dict()
    assert written and validate_cell(merged, require_meta=True) == []
    assert merged["merged"]["latency"] == "requests"  # read back from each loadgen's requests.tsv
    stored = json.loads((tmp_path / "cells" / f"{cell_id}.json").read_text(encoding="utf-8"))
    assert stored == merged
    assert merged["merged"]["cells"] == [f"loadgens/{lg}/cells/{cell_id}.json" for lg in LOADGENS]
    raw = (tmp_path / merged["raw_output"]).read_text(encoding="utf-8")
    assert raw.count("Complete requests:      3000") == 2 and f"==> loadgens/{LOADGENS[1]}/raw/" in raw
    assert json.loads((loadgen_dir(tmp_path, LOADGENS[0]) / "cells" / f"{cell_id}.json").read_text()) == a
    again, written = merge_stored(tmp_path, cell_id, LOADGENS)
    again = again.to_dict()
    assert not written and again == merged


def test_merge_stored_names_a_loadgen_that_stored_nothing(tmp_path: Path) -> None:
    measure_on(tmp_path, LOADGENS[0], "ab", 1)
    with pytest.raises(MergeError, match="loadgen bench-multi-lg2 stored no cell"):
        merge_stored(tmp_path, plan("ab")["cell_id"], LOADGENS)


def test_report_labels_merged_rows_and_lists_per_loadgen_latency(tmp_path: Path) -> None:
    for tool in ("ab", "wrk"):
        measured_pair(tmp_path, tool)
        merge_stored(tmp_path, plan(tool)["cell_id"], LOADGENS)
    merged = [json.loads(p.read_text()) for p in sorted((tmp_path / "cells").glob("*.json"))]
    rows = {r["tool"]: r for r in summary_rows(records(merged))}
    assert set(rows) == {"ab x2 loadgens", "wrk x2 loadgens"}
    # one merged cell each: three significant digits (benchstack.report.latency)
    assert rows["ab x2 loadgens"]["p99 ms"] == "258"
    assert rows["wrk x2 loadgens"]["p99 ms"] == "166 / 161 per loadgen"


def test_compare_refuses_to_call_one_loadgen_against_two_significant(tmp_path: Path) -> None:
    a, b = measured_pair(tmp_path, "wrk")
    merged = merged_json([a, b])
    [row] = compare_rows(records([a]), records([merged]))
    assert row["significant"] == "not comparable (1 vs 2 loadgens)"


def test_latency_from_no_times_is_all_null() -> None:
    assert set(latency_from_times([]).values()) == {None}


def test_open_loop_cells_merge_on_their_offered_rate_not_their_observed_concurrency(tmp_path: Path) -> None:
    # Two real httperf captures of the same offered rate that saw different peak connection counts.
    a = measure_on(tmp_path, LOADGENS[0], "httperf", 1, output=read_data("httperf", "ok.txt"))
    b = measure_on(tmp_path, LOADGENS[1], "httperf", 2, output=read_data("httperf", "client-timeouts.txt"))
    assert a["rate"] == b["rate"] == 200 and a["concurrency"] != b["concurrency"]
    merged = merged_json([a, b])
    assert merged["rate"] == 200 and merged["merged"]["total_rate"] == 400
    assert merged["concurrency"] == max(a["concurrency"], b["concurrency"])
    assert merged["merged"]["total_concurrency"] == a["concurrency"] + b["concurrency"]
    assert merged["requests_completed"] == a["requests_completed"] + b["requests_completed"]
    assert validate_cell(merged) == []


# A merged cell's keys, as merged cells have always been written (not the order of a loadgen's cell): an
# open-loop one has its rate after keepalive and merged.total_rate; cell_id comes last, in a run with several
# targets only.
MERGED_KEYS = [
    "schema", "experiment", "stack", "target", "loadgen", "mode", "tool", "tool_version", "command", "url",
    "concurrency", "keepalive", "requests", "duration_s", "repetition", "started_at", "elapsed_s",
    "requests_completed", "rps", "transfer_bytes", "latency_ms", "errors", "error_count", "error_rate",
    "keepalive_requests", "threshold_ms", "raw_output", "status", "notes", "system", "latency_dist", "window",
    "interference", "disturbed", "merged",
]  # fmt: skip
MERGE_KEYS = ["loadgens", "total_concurrency", "latency", "cut", "start_skew_s", "cells", "per_loadgen"]


def test_a_merged_cell_is_written_in_the_order_merged_cells_always_were(tmp_path: Path) -> None:
    closed = merged_json(measured_pair(tmp_path / "wrk", "wrk"))
    assert (list(closed), list(closed["merged"])) == (MERGED_KEYS, MERGE_KEYS)
    a = measure_on(tmp_path, LOADGENS[0], "httperf", 1, output=read_data("httperf", "ok.txt"))
    b = measure_on(tmp_path, LOADGENS[1], "httperf", 2, output=read_data("httperf", "client-timeouts.txt"))
    opened = merged_json([{**a, "cell_id": "web1__x"}, {**b, "cell_id": "web1__x"}])
    keys = MERGED_KEYS[:12] + ["rate"] + MERGED_KEYS[12:] + ["cell_id"]
    assert (list(opened), list(opened["merged"])) == (keys, MERGE_KEYS[:2] + ["total_rate"] + MERGE_KEYS[2:])


def test_open_loop_cells_of_different_rates_are_not_merged(tmp_path: Path) -> None:
    a = measure_on(tmp_path, LOADGENS[0], "httperf", 1, output=read_data("httperf", "ok.txt"))
    b = dict(measure_on(tmp_path, LOADGENS[1], "httperf", 2, output=read_data("httperf", "ok.txt")), rate=400)
    with pytest.raises(MergeError, match="differ in rate"):
        merged_json([a, b])
