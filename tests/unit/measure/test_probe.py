"""The noise-floor probe (benchstack.measure.probe) on its real output (tests/data/probe)."""

from __future__ import annotations

import statistics

import pytest
from conftest import read_data

from benchstack.measure.probe import (
    RUNS,
    busy_warning,
    floor_text,
    noise_floor,
    probe_script,
    probe_stack,
    probe_tool,
)

STATIC = {"name": "nginx-static", "port": 8010, "path": "/index.html", "app": {"kind": "static"}}
RUBY = {"name": "sinatra-thin-x1", "port": 8001, "path": None, "app": {"kind": "sinatra"}}


def replay(name: str) -> tuple[list[str], object]:
    sent: list[str] = []

    def execute(command: str) -> tuple[int, str, str]:
        sent.append(command)
        return 0, read_data("probe", name), ""

    return sent, execute


@pytest.mark.parametrize("tool", ["wrk", "ab"])
def test_the_probe_gives_the_spread_of_five_runs_and_the_foreign_cpu(tool: str) -> None:
    sent, execute = replay(f"{tool}-probe.txt")
    floor = noise_floor(execute, "127.0.0.1", STATIC, "/hello/bar", tool)  # type: ignore[arg-type]
    assert len(floor["rps"]) == RUNS and all(r > 1000 for r in floor["rps"])
    assert floor["cv"] == round(statistics.stdev(floor["rps"]) / statistics.fmean(floor["rps"]), 4)
    assert floor["foreign"] is not None and 0 <= floor["foreign"] <= 1
    assert floor["problem"] is None and floor["url"] == "http://127.0.0.1:8010/index.html"
    assert sent == [probe_script("http://127.0.0.1:8010/index.html", tool)]
    [line] = floor_text({"bench-local": floor})
    assert line.startswith(f"bench-local: {tool} ") and f"CV {100 * floor['cv']:.1f} %" in line


def test_the_wrk_capture_gives_these_req_s() -> None:
    _, execute = replay("wrk-probe.txt")
    rps = noise_floor(execute, "127.0.0.1", STATIC, "/", "wrk")["rps"]  # type: ignore[arg-type]
    assert rps[-1] == 46826.65
    floor = noise_floor(execute, "127.0.0.1", STATIC, "/", "wrk")  # type: ignore[arg-type]
    assert floor["requests"] == 194_673  # the five runs' "N requests in 1.00s"


def test_a_probe_whose_tool_failed_says_why() -> None:
    def execute(command: str) -> tuple[int, str, str]:
        return 127, "BENCH-STACK-PROBE\nsh: wrk: not found\n" * RUNS, ""

    floor = noise_floor(execute, "127.0.0.1", STATIC, "/", "wrk")
    assert floor["rps"] == [] and floor["cv"] is None
    assert floor["problem"].startswith("0 of 5 wrk runs printed req/s (exit code 127)")
    assert floor_text({"lg": floor})[0].startswith("lg: the probe did not run (0 of 5")


def test_the_probe_loads_the_first_static_stack_with_wrk_if_the_plan_has_it() -> None:
    assert probe_stack([RUBY, STATIC])["name"] == "nginx-static"
    assert probe_stack([RUBY])["name"] == "sinatra-thin-x1"
    assert probe_stack([]) is None
    assert (probe_tool(["ab", "wrk"]), probe_tool(["ab"]), probe_tool(["httperf"])) == ("wrk", "ab", None)


@pytest.mark.parametrize(
    ("foreign", "steal", "busy"), [(0.1, 0.0, False), (0.06, 0.0401, True), (None, None, False)]
)
def test_a_host_busier_than_a_cell_may_be_is_named_before_the_cells(
    foreign: float | None, steal: float | None, busy: bool
) -> None:
    # At exactly load.max_interference a cell still counts, so the host is not called busy.
    warning = busy_warning("bench-local", {"foreign": foreign, "steal": steal}, 0.10)
    assert (warning is not None) is busy
    if busy:
        assert (
            warning.startswith("bench-local is busy now: 10.0 % of its CPU")
            and "max_interference 10 %" in warning
        )
