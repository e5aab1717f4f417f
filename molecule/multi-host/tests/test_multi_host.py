"""Network mode with two loadgens, checked from outside: the stack on the target, the run the side effect
wrote (cells naming both hosts, merged and per loadgen), nginx's own count of the requests each loadgen
sent, and the target's vmstat during the cells. The same run measured a second target, its own loadgen,
after the first: its cells are named by it and the report has a table per target."""

import json
import os
import re
import subprocess
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from stack_contract import (  # noqa: F401  (run here, parametrized from STACKS)
    test_every_instance_answers_on_its_own,
    test_every_instance_is_an_active_unit_whose_processes_all_run_as_the_benchmark_user,
    test_every_stack_answers_through_its_front,
    test_on_a_loopback_host_every_instance_runs_on_the_stacks_cpus_only,
)
from testinfra.host import Host

from benchstack.plan.experiment import load_experiment

testinfra_hosts = ["bench-mol-multi-target"]
TARGET = "bench-mol-multi-target"
LOADGENS = ["bench-mol-multi-lg1", "bench-mol-multi-lg2"]
SECOND = "bench-mol-multi-t2"  # a second target, its own loadgen (loopback)
EXPERIMENT = load_experiment(Path(__file__).resolve().parents[1] / "experiment.yml")
STACKS = EXPERIMENT.stacks
RUN = Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "run"
# combined log format: remote_addr - user [time] "request" status bytes "referer" "user agent"
LOG_LINE = re.compile(r'^(\S+) \S+ \S+ \[[^]]+\] "GET (\S+) [^"]*" (\d{3}) \S+ "[^"]*" "([^"]*)"$')


def cells_in(folder: Path, target: str = TARGET) -> list[dict[str, Any]]:
    every = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((folder / "cells").glob("*.json"))]
    return [c for c in every if c["target"] == target]


def merged_cell(tool: str) -> dict[str, Any]:
    [cell] = [c for c in cells_in(RUN) if c["tool"] == tool]
    return cell


def window(cell: dict[str, Any]) -> tuple[datetime, datetime]:
    return datetime.fromisoformat(cell["window"]["start"]), datetime.fromisoformat(cell["window"]["end"])


def address_of(container: str) -> str:
    out = subprocess.check_output(
        ["docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", container],
        text=True,
    )
    return out.split()[0]


def test_every_cell_is_network_mode_and_names_the_target_and_both_loadgens() -> None:
    merged = cells_in(RUN)
    assert sorted(c["tool"] for c in merged) == ["ab", "wrk"]
    for cell in merged:
        assert (cell["mode"], cell["target"]) == ("network", TARGET)
        assert cell["loadgen"] == "+".join(LOADGENS)
        assert cell["merged"]["loadgens"] == LOADGENS
        assert cell["url"] == f"http://{TARGET}:8004/hello/bar"  # the target by name
    for lg in LOADGENS:
        own = cells_in(RUN / "loadgens" / lg)
        assert sorted(c["tool"] for c in own) == ["ab", "wrk"]
        assert {(c["mode"], c["target"], c["loadgen"]) for c in own} == {("network", TARGET, lg)}


def test_merged_throughput_is_the_sum_of_the_loadgens_cells() -> None:
    for tool in ("ab", "wrk"):
        cell = merged_cell(tool)
        own = [json.loads((RUN / f).read_text(encoding="utf-8")) for f in cell["merged"]["cells"]]
        assert cell["requests_completed"] == sum(c["requests_completed"] for c in own)
        assert cell["rps"] == pytest.approx(sum(c["rps"] for c in own), abs=0.01)
        for kind, count in cell["errors"].items():
            assert count == sum(c["errors"][kind] for c in own), kind
            # no functional errors; slow responses (over_threshold) depend on how busy the machine is
            assert kind == "over_threshold" or count == 0, kind


def test_loadgens_started_together() -> None:
    for tool in ("ab", "wrk"):
        assert merged_cell(tool)["merged"]["start_skew_s"] <= 1  # whole seconds


def test_nginx_logged_exactly_the_requests_each_loadgen_reports(host: Host) -> None:
    log = host.file("/var/log/nginx/access.log").content_string.splitlines()
    per: Counter[tuple[str, str]] = Counter()
    for line in log:
        m = LOG_LINE.match(line)
        assert m, line
        addr, path, _, agent = m.groups()
        if path == "/hello/bar":
            per[(addr, "ab" if agent.startswith("ApacheBench/") else agent)] += 1
    for lg in LOADGENS:
        addr = address_of(lg)
        [ab] = [c for c in cells_in(RUN / "loadgens" / lg) if c["tool"] == "ab"]
        [wrk] = [c for c in cells_in(RUN / "loadgens" / lg) if c["tool"] == "wrk"]
        assert per[(addr, "ab")] == ab["requests_completed"] == 1500
        # Before the cells each loadgen probed the noise floor on the stack with wrk (run.json noise_floor).
        probe = json.loads((RUN / "run.json").read_text(encoding="utf-8"))["noise_floor"][lg]["requests"]
        # wrk sends no User-Agent; at the end of its run it drops requests still in flight, which nginx
        # logs too (status 499), so nginx saw at least what wrk counted and at most one more per connection.
        sent = per[(addr, "-")] - probe
        assert wrk["requests_completed"] <= sent <= wrk["requests_completed"] + wrk["concurrency"] + 5 * 8


def test_the_targets_vmstat_was_taken_during_the_cells() -> None:
    wrk = merged_cell("wrk")
    assert wrk["system"]["target"]["samples"] >= 2
    assert wrk["system"]["target"] != wrk["merged"]["per_loadgen"][0]["system"]  # another host's numbers
    for tool in ("ab", "wrk"):
        cell_id = Path(merged_cell(tool)["raw_output"]).stem
        raw = RUN / "loadgens" / LOADGENS[0] / "raw" / f"{cell_id}.target.vmstat.txt"
        assert raw.read_text(encoding="utf-8").startswith("procs")


def test_the_merged_interference_counts_every_container_on_the_machine_as_ours() -> None:
    """Target and loadgens are containers on one kernel (one boot id): a loadgen alone counts the others'
    CPU as foreign, the merged cell counts all three as ours."""
    for tool in ("ab", "wrk"):
        cell = merged_cell(tool)
        hosts = cell["interference"]["hosts"]
        assert set(hosts) == {TARGET, *LOADGENS}
        assert len({h["boot_id"] for h in hosts.values()}) == 1
        assert all(h["ours_from"] == "container" and h["ours_s"] > 0 for h in hosts.values())
        own = [json.loads((RUN / f).read_text(encoding="utf-8")) for f in cell["merged"]["cells"]]
        alone = min(c["interference"]["foreign"] for c in own)
        assert cell["interference"]["foreign"] < alone
        widest = max(hosts.values(), key=lambda h: h["cpu_s"])  # the window all three snapshots cover
        ours = sum(h["ours_s"] for h in hosts.values())
        expected = max(0.0, widest["busy_s"] - ours) / widest["cpu_s"]
        assert cell["interference"]["foreign"] == pytest.approx(expected, abs=1e-3)


def test_the_report_labels_the_rows_with_both_loadgens() -> None:
    report = (RUN / "report.md").read_text(encoding="utf-8")
    assert "| sinatra-thin-x4-nginx | ab x2 loadgens | c10 |" in report
    assert "| sinatra-thin-x4-nginx | wrk x2 loadgens | c8 |" in report


def test_a_second_target_is_measured_in_the_same_run_after_the_first_its_cells_named_by_it() -> None:
    info = json.loads((RUN / "run.json").read_text(encoding="utf-8"))
    assert (sorted(info["targets"]), info["target_order"]) == (sorted([TARGET, SECOND]), "sequential")
    first, second = cells_in(RUN), cells_in(RUN, SECOND)
    assert sorted(c["cell_id"] for c in first) == [
        f"{TARGET}__sinatra-thin-x4-nginx__ab__c10__r1",
        f"{TARGET}__sinatra-thin-x4-nginx__wrk__c8__r1",
    ]
    assert sorted(c["cell_id"] for c in second) == [
        f"{SECOND}__sinatra-thin-x4-nginx__ab__c10__r1",
        f"{SECOND}__sinatra-thin-x4-nginx__wrk__c8__r1",
    ]
    for cell in second:
        assert (cell["mode"], cell["loadgen"], cell["merged"]) == ("loopback", SECOND, None)
        assert (RUN / "cells" / f"{cell['cell_id']}.json").is_file()
        assert (RUN / cell["raw_output"]).is_file()
    # One target after the other (in run.json's order): the first had finished before the second started.
    earlier, later = (first, second) if info["targets"][0] == TARGET else (second, first)
    assert max(window(c)[1] for c in earlier) < min(window(c)[0] for c in later)


def test_the_report_has_a_table_per_target_under_its_host_type() -> None:
    report = (RUN / "report.md").read_text(encoding="utf-8")
    info = json.loads((RUN / "run.json").read_text(encoding="utf-8"))
    headings = [line for line in report.splitlines() if line.startswith(("### bench-mol", "## "))]
    results = headings.index("## Results")
    for i, target in enumerate(info["targets"], 1):
        fp = info["hosts"][target]
        assert (
            headings[results + i]
            == f"### {target}: {fp['cpu_model']}, {fp['cpu_count']} CPUs, {fp['distribution']}"
        )
    assert "## Targets side by side" in headings
    assert "| sinatra-thin-x4-nginx | ab | c10 |" in report.split(f"### {SECOND}")[1]
