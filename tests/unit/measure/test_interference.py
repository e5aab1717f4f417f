"""Interference: CPU snapshots around a cell, foreign CPU per machine, disturbed cells, overruns, and the
load tool's own CPU (benchstack.measure.interference, benchstack.measure.runner, benchstack.measure.merge,
benchstack.analysis.checks.hosts).

The snapshot lines in conftest (BUSY_CPU) were printed by the real snapshot function in the default container
on this machine; the others below are the same format with chosen counters, to drive each limit."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cell_records import record
from conftest import BUSY_CPU, CPU_AFTER, CPU_BEFORE, Helpers, cell_plan, read_data
from test_runner import AB_PLAN, FakeLoadgen, measure, one_plan

from benchstack.analysis.checks.base import MAX_TOOL_BUSY
from benchstack.analysis.checks.hosts import tool_busy
from benchstack.measure.interference import (
    SNAPSHOT_FUNCTION,
    children_cpu_s,
    disturbed_reasons,
    host_usage,
    parse_snapshot,
    summarize,
    usage_from_text,
)
from benchstack.measure.merge import _merged_interference
from benchstack.measure.runner import OVERRUN_SHARE, OVERRUN_SLACK_S, overrun_reasons
from benchstack.records.cellparts import Window
from benchstack.results.cell import Cell, json_cell_id

BOOT = "e77ee28f-3095-49a9-9e29-491284ece4ff"


def snap(at: float, ours_usec: int, busy: int, idle: int, steal: int = 0, boot: str = BOOT) -> str:
    """A snapshot line: ``busy`` jiffies of user time, ``idle`` of idle, ``steal`` of steal."""
    return f"{at} 100 {boot} container-usec {ours_usec} cpu {busy} 0 0 {idle} 0 0 0 {steal} 0 0"


def usage(
    ours_s: float, busy_s: float, idle_s: float, steal_s: float = 0, boot: str = BOOT
) -> dict[str, Any]:
    before = parse_snapshot(snap(1000.0, 0, 0, 0, 0, boot))
    after = parse_snapshot(
        snap(1005.0, int(ours_s * 1e6), int(busy_s * 100), int(idle_s * 100), int(steal_s * 100), boot)
    )
    assert before and after
    result = host_usage(before, after, tool_s=None)
    assert result
    return result


def test_the_captured_snapshots_give_the_containers_and_the_machines_cpu() -> None:
    before = parse_snapshot(CPU_BEFORE.split(" ", 2)[2])
    after = parse_snapshot(CPU_AFTER.split(" ", 2)[2])
    assert before and after and before.ours_kind == "container-usec"
    u = host_usage(before, after, tool_s=0.94)
    assert u is not None and u.to_dict() == {
        "boot_id": BOOT,
        "seconds": 3.044,
        "cpu_s": 6.07,  # (375 + 198 + 1 + 33) jiffies at 100 Hz: 2 CPUs x ~3 s
        "busy_s": 6.06,
        "steal_s": 0.0,
        "ours_s": 2.607,  # 24,885,333 - 22,278,124 us
        "ours_from": "container",
        "tool_s": 0.94,
    }
    assert summarize({"bench-local": u}).foreign == pytest.approx((6.06 - 2.607) / 6.07, abs=1e-4)


def test_the_snapshot_function_runs_under_sh_and_prints_a_line_the_parser_reads() -> None:
    out = subprocess.run(
        ["sh", "-c", f"{SNAPSHOT_FUNCTION}; bench_snap"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    parsed = parse_snapshot(out)
    assert parsed is not None and len(parsed.cpu) >= 8 and parsed.hz > 0


def test_on_a_cgroup_v2_host_every_unit_of_ours_counts_apache_instances_included(tmp_path: Path) -> None:
    # usage_usec per cgroup; systemd puts apache2@NAME.service (one per Apache stack) in system-apache2.slice.
    ours = {
        "system.slice/system-bench\\x2dthin.slice": 1_000_000,
        "system.slice/nginx.service": 200_000,
        "system.slice/system-apache2.slice": 30_000,
        "system.slice/system-httpd.slice": 4_000,
        "system.slice/php8.2-fpm.service": 500,
    }
    for path, usec in {**ours, "system.slice/cron.service": 7_777_777}.items():
        (tmp_path / path).mkdir(parents=True)
        (tmp_path / path / "cpu.stat").write_text(f"usage_usec {usec}\nuser_usec 1\nsystem_usec 2\n")
    (tmp_path / "cgroup.controllers").write_text("cpu memory\n")
    # A host, not a container (where the snapshot reads the container's own cgroup), whatever runs the test.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "systemd-detect-virt").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "systemd-detect-virt").chmod(0o755)
    out = subprocess.run(
        ["sh", "-c", f"{SNAPSHOT_FUNCTION}; bench_snap"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
        env={
            **os.environ,
            "BENCH_STACK_CGROUP_ROOT": str(tmp_path),
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
        },
    ).stdout
    parsed = parse_snapshot(out)
    assert parsed is not None and parsed.ours_kind == "units-usec"
    assert parsed.ours_s == pytest.approx(sum(ours.values()) / 1e6)


def test_times_of_dash_and_bash_give_the_childrens_cpu() -> None:
    assert children_cpu_s("0m0.010000s 0m0.000000s\n0m0.130000s 0m0.810000s\n") == pytest.approx(0.94)
    assert children_cpu_s("0m0.003s 0m0.000s\n1m2.500s 0m0.500s") == pytest.approx(63.0)
    assert children_cpu_s("") is None


def test_snapshots_of_another_boot_or_a_counter_that_went_back_do_not_pair() -> None:
    before = parse_snapshot(snap(1.0, 0, 100, 100))
    assert before
    other = parse_snapshot(snap(2.0, 0, 200, 200, boot="another"))
    back = parse_snapshot(snap(2.0, 0, 50, 200))
    assert other and back
    assert host_usage(before, other) is None and host_usage(before, back) is None
    assert usage_from_text("no snapshot")[0] is None


def test_hosts_on_one_machine_share_their_cpu_as_ours() -> None:
    # A target and a loadgen container on one machine: each alone sees the other's CPU as foreign.
    target, loadgen = usage(3.0, 8.0, 2.0), usage(4.0, 8.0, 2.0)
    alone = summarize({"lg": loadgen}).foreign
    together = summarize({"lg": loadgen, "web": target}).foreign
    assert (alone, together) == (pytest.approx(0.4), pytest.approx(0.1))
    # On two machines each is judged on its own, and the cell gets the worse.
    far = usage(3.0, 8.0, 2.0, boot="other-machine")
    assert summarize({"lg": loadgen, "web": far}).foreign == pytest.approx(0.5)


def test_a_host_whose_cpu_could_not_be_read_leaves_foreign_unknown() -> None:
    unknown = parse_snapshot(f"1.0 100 {BOOT} none cpu 0 0 0 0 0 0 0 0")
    assert unknown is not None and unknown.ours_s is None
    assert summarize({"lg": None}).foreign is None


@pytest.mark.parametrize("limit", [0.1, 0.25])
def test_interference_at_the_limit_is_not_disturbed_and_just_above_it_is(limit: float) -> None:
    # 10 CPU seconds, all busy, (1 - limit) of them ours: foreign exactly at the limit.
    at = summarize({"lg": usage(10 * (1 - limit), 10.0, 0)}, limit)
    assert at.foreign == pytest.approx(limit)
    assert disturbed_reasons(at, limit) == []
    above = dataclasses.replace(at, foreign=limit + 0.0001)
    [reason] = disturbed_reasons(above, limit)
    assert reason.startswith("interference: foreign CPU") and f"max_interference {100 * limit:g} %" in reason
    # Steal counts too: foreign at the limit plus 2 % steal is above it.
    assert disturbed_reasons(dataclasses.replace(at, steal=0.02), limit) != []
    assert disturbed_reasons(above, 1) == []  # 1 turns the check off


def overrun(duration: int, took: float) -> list[str]:
    window = {"start": "2027-01-15T08:00:00.000Z", "end": f"2027-01-15T08:00:{took:06.3f}Z"}
    return overrun_reasons(cell_plan({"tool": "wrk", "duration_s": duration}), Window.from_dict(window))


def test_a_run_that_overran_its_duration_is_disturbed_and_one_at_the_bound_is_not() -> None:
    bound = 3 * (1 + OVERRUN_SHARE) + OVERRUN_SLACK_S  # 4.75 s for a 3 s wrk run
    assert overrun(3, bound) == []
    [reason] = overrun(3, bound + 0.01)
    assert reason.startswith("overrun: the wrk run took 4.8 s for 3 s")
    assert overrun_reasons(cell_plan({"tool": "ab", "duration_s": None}), None) == []


def test_the_runner_marks_a_cell_measured_beside_a_busy_neighbour_disturbed(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN)
    fake = FakeLoadgen(read_data("ab", "normal.txt"), helpers=Helpers(cpu=BUSY_CPU)).expect(1)
    cell, _ = measure(plan, tmp_path, fake)
    assert cell["interference"]["foreign"] == pytest.approx(0.5689, abs=1e-4)
    assert cell["interference"]["limit"] == 0.1
    assert cell["interference"]["hosts"]["target1"]["tool_s"] == 0.94
    [reason] = cell["disturbed"]
    assert reason.startswith("interference: foreign CPU 56.9 % of the host's CPU time during the cell")
    # The same snapshots under a limit of 60 %: not disturbed.
    quiet_plan = {**one_plan(AB_PLAN), "max_interference": 0.6}
    other = tmp_path / "other"
    cell, _ = measure(
        quiet_plan, other, FakeLoadgen(read_data("ab", "normal.txt"), helpers=Helpers(cpu=BUSY_CPU))
    )
    assert cell["disturbed"] == []


def test_a_cell_without_snapshots_says_so_and_is_not_disturbed(tmp_path: Path) -> None:
    cell, _ = measure(one_plan(AB_PLAN), tmp_path, FakeLoadgen(read_data("ab", "normal.txt")))
    assert cell["interference"] is None and cell["disturbed"] == []
    assert (
        "interference not measured on the loadgen: no CPU snapshots around the measured command"
        in cell["notes"]
    )


def loadgen_cell(name: str, own: dict[str, Any], foreign: float, limit: float = 0.1) -> Cell:
    reasons = [f"interference: foreign CPU {100 * foreign:.1f} %"] if foreign > limit else []
    hosts = {host: None if u is None else u.to_dict() for host, u in own.items()}
    return record({"loadgen": name, "interference": {"foreign": foreign, "steal": 0.0, "limit": limit,
                   "hosts": hosts}, "disturbed": reasons})  # fmt: skip


def test_a_merge_counts_every_loadgen_on_the_machine_as_ours() -> None:
    target, lg1, lg2 = usage(3.0, 9.0, 1.0), usage(2.5, 9.0, 1.0), usage(2.5, 9.0, 1.0)
    # Each loadgen alone counts the other's CPU as foreign and calls its cell disturbed.
    first = loadgen_cell("lg1", {"web": target, "lg1": lg1}, 0.35)
    # Only the first loadgen reads the target: the second's cell names it unknown.
    second = loadgen_cell("lg2", {"lg2": lg2, "web": None}, 0.65)
    merged, disturbed = _merged_interference([first, second])
    assert merged is not None and merged.foreign == pytest.approx(0.1) and disturbed == []
    assert merged.hosts["web"] == target
    # What disturbed a loadgen's own run (an overrun) stays, named by the loadgen.
    second.disturbed = ["overrun: the wrk run took 9.0 s for 3 s"]
    assert _merged_interference([first, second])[1] == ["lg2: overrun: the wrk run took 9.0 s for 3 s"]


def tool_cell(tool: str, command: list[str], tool_s: float, seconds: float = 5.0, cpus: float = 2.0) -> dict:
    host = {"boot_id": BOOT, "seconds": seconds, "cpu_s": cpus * seconds, "busy_s": 1.0, "steal_s": 0.0,
            "ours_s": 1.0, "ours_from": "container", "tool_s": tool_s}  # fmt: skip
    interference = {"foreign": None, "steal": None, "limit": None, "hosts": {"lg": host}}
    return {"tool": tool, "command": command, "interference": interference}


def test_the_load_tools_own_cpu_over_what_it_could_use() -> None:
    # ab is single-threaded: 4.75 s of CPU in 5 s is 95 % of its one core.
    assert tool_busy(record(tool_cell("ab", ["ab", "-n", "5000"], 4.75))) == {"lg": pytest.approx(0.95)}
    # wrk -t2 on 2 CPUs could use both; pinned to one CPU, one.
    assert tool_busy(record(tool_cell("wrk", ["wrk", "-t", "2"], 5.0))) == {"lg": pytest.approx(0.5)}
    pinned = ["taskset", "-c", "0", "wrk", "-t", "2"]
    assert tool_busy(record(tool_cell("wrk", pinned, 5.0))) == {"lg": pytest.approx(1.0)}
    assert tool_busy(record({"tool": "ab", "command": ["ab"], "interference": None})) == {}


def test_a_load_tool_at_its_limit_makes_its_cells_invalid_and_just_below_does_not(tmp_path: Path) -> None:
    from test_verdict import AB_STEADY, Run, codes  # the verdict's own run helper

    run = Run(tmp_path, mode="loopback")
    run.load.update(repetitions=1, max_repetitions=1)
    cell = run.measure("s", AB_STEADY, read_data("verdict", "ab-steady.txt"))
    path = tmp_path / "cells" / f"{json_cell_id(cell)}.json"
    for tool_s, invalid in ((MAX_TOOL_BUSY * 5.0, True), (MAX_TOOL_BUSY * 5.0 - 0.01, False)):
        cell["interference"] = tool_cell("ab", cell["command"], tool_s)["interference"]
        cell["interference"].update(foreign=0.0, steal=0.0, limit=0.1)
        path.write_text(json.dumps(cell), encoding="utf-8")
        assert ("loadgen_saturated" in codes(run.verdict())) is invalid
    v = run.verdict()
    assert not any("loopback cells" in n for n in v.not_checked)  # judged by the tool's own CPU


def test_the_tools_cpu_is_what_the_shells_children_used_between_the_two_times() -> None:
    text = "\n".join(
        [
            CPU_BEFORE,
            CPU_AFTER,
            "BENCH-STACK-CPU times0 0m0.010000s 0m0.020000s",
            "BENCH-STACK-CPU times 0m0.130000s 0m0.810000s",
        ]
    )
    usage, problem = usage_from_text(text)
    assert problem is None and usage is not None and usage.tool_s == pytest.approx(0.91)


def test_httperf_keeps_its_core_busy_by_design_and_is_not_judged_by_it() -> None:
    assert tool_busy(record(tool_cell("httperf", ["httperf", "--rate", "200"], 5.0))) == {}


def test_the_tools_busy_share_is_over_its_own_window_when_the_cell_has_one() -> None:
    cell = tool_cell("ab", ["ab", "-n", "3000"], 0.19, seconds=0.6)
    cell["window"] = {"start": "2027-01-15T08:00:00.000Z", "end": "2027-01-15T08:00:00.344Z"}
    assert tool_busy(record(cell)) == {"lg": pytest.approx(0.19 / 0.344)}
