"""The run's verdict, reason by reason, on cells the runner makes from real captured output.

tests/data/verdict: a loadgen saturated by wrk -t 8 on a 2-core host (its vmstat), an idle one, ab -g
against a server that kept its speed and one that slowed down 3 s into the run; ab/mixed-status-length.txt
is a 5xx run (503 for half the requests). See tests/data/README.md.
"""

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Helpers, cell_plan, read_data

from benchstack.analysis.checks.hosts import cpu_split_problem
from benchstack.analysis.checks.precision import rounds_needed
from benchstack.analysis.checks.steady import drift, starts_per_second
from benchstack.analysis.verdict import Verdict, run_verdict
from benchstack.measure.runner import CellOptions, Target, measure_cell, write_run_info
from benchstack.plan.experiment import cells, experiment_from_dict
from benchstack.report.build import verdict_section
from benchstack.report.render import section_markdown, verdict_text
from benchstack.results.cell import Cell, cell_id_of, json_cell_id, load_cells
from benchstack.results.runfolder import record_stop
from benchstack.results.sysstats import parse_vmstat

AB_STEADY = {"tool": "ab", "concurrency": 2, "requests": 2800}
AB_DRIFT = {"tool": "ab", "concurrency": 2, "requests": 2000}
AB_5XX = {"tool": "ab", "concurrency": 10, "requests": 1000}
WRK_SATURATED = {"tool": "wrk", "concurrency": 64, "threads": 8, "duration_s": 6}
WRK_WIDE = {"tool": "wrk", "concurrency": 500, "threads": 2, "duration_s": 3}

# As roles/host/tasks/fingerprint.yml records it, with this machine's values.
FINGERPRINT = {
    "hostname": "web1",
    "cpu_model": "AMD EPYC",
    "cpu_count": "2",
    "memory_mb": "24105",
    "kernel": "6.18.44-fc-v657",
    "architecture": "x86_64",
    "distribution": "Debian 12.11",
    "virtualization": "docker/guest",
    "sysctls": {"net.core.somaxconn": "4096", "net.ipv4.tcp_max_syn_backlog": "2048"},
    "nofile_limit": "20000",
    "tuning": {"profile": "stock", "sysctls": {}},
    "dns": None,
    "config_sha256": {
        "/etc/nginx/nginx.conf": "48c6a4ec1e1fd28ccf968490f07e34a1d7f755793b2108a3ed8670b1ee2a0aa2"
    },
    "packages": {"nginx": "1.22.1-9+deb12u11", "apache2-utils": "2.4.71-1~deb12u1", "wrk": "4.1.0-3+b2"},
}


class Run:
    """A run folder filled the way the playbooks fill it: cells measured by the runner, then run.json."""

    def __init__(self, path: Path, mode: str = "network") -> None:
        self.path = path
        self.mode = mode
        self.planned: list[dict[str, Any]] = []
        self.stacks: dict[str, dict[str, Any]] = {}
        self.load: dict[str, Any] = {"repetitions": 6, "max_repetitions": 6, "target_precision": 0.05}

    def plan(
        self, stack: str, load: dict[str, Any], repetition: int, threshold_ms: float | None = None
    ) -> dict[str, Any]:
        self.stacks.setdefault(
            stack,
            {
                "name": stack,
                "port": 8001 + len(self.stacks),
                "app": {"kind": "static"},
                "front": {"kind": "nginx"},
            },
        )
        data = {
            "name": "verdict",
            "stacks": [self.stacks[stack]],
            "load": {"plans": [load], "repetitions": repetition, "threshold_ms": threshold_ms},
        }
        one = dataclasses.asdict(cells(experiment_from_dict(data))[-1])
        if one["cell_id"] not in [p["cell_id"] for p in self.planned]:
            self.planned.append(one)
        return one

    def measure(
        self,
        stack: str,
        load: dict[str, Any],
        output: str,
        repetition: int = 1,
        vmstat: str | None = None,
        tsv: str = "",
        rps: float | None = None,
        threshold_ms: float | None = None,
    ) -> dict[str, Any]:
        """Measure one cell from captured output (``rps`` overrides the measured req/s, for spreads)."""
        helpers = Helpers(
            vmstat=vmstat if vmstat is not None else read_data("verdict", "vmstat-idle.txt"), tsv=tsv
        )

        def execute(command: str) -> tuple[int, str, str]:
            return helpers.run(command, output)

        loadgen = "web1" if self.mode == "loopback" else "gen1"
        where = Target(host="127.0.0.1", target="web1", loadgen=loadgen)
        plan = self.plan(stack, load, repetition, threshold_ms)
        record, _ = measure_cell(
            cell_plan(plan), where, self.path, execute, "verdict", CellOptions(sleep=lambda s: None)
        )
        cell = record.to_dict()
        if rps is not None:
            path = self.path / "cells" / f"{plan['cell_id']}.json"
            cell["rps"] = rps
            path.write_text(json.dumps(cell), encoding="utf-8")
        return cell

    def info(self, **changes: Any) -> dict[str, Any]:
        hosts = (
            {"web1": FINGERPRINT} if self.mode == "loopback" else {"web1": FINGERPRINT, "gen1": FINGERPRINT}
        )
        info: dict[str, Any] = {
            "experiment": {
                "name": "verdict",
                "stacks": list(self.stacks.values()),
                "load": self.load,
                "cells": self.planned,
            },
            "targets": ["web1"],
            "loadgens": ["web1" if self.mode == "loopback" else "gen1"],
            "mode": self.mode,
            "hosts": hosts,
            "verify": {"passed": True, "at": "2026-11-30T21:38:00Z", "stacks": list(self.stacks)},
        }
        info.update(changes)
        return info

    def write_info(self, **changes: Any) -> None:
        write_run_info(self.path, self.info(**changes))

    def verdict(self, **changes: Any) -> Verdict:

        return run_verdict(self.path, load_cells(self.path), self.info(**changes))


def codes(v: Verdict, precision: bool = False) -> list[str]:
    """The reasons' codes; ``precision`` reasons only when asked for (a test of another check measures a
    load point once or twice, too few rounds for the median's interval)."""
    return [r.code for r in v.reasons if precision or r.code != "precision"]


def others(v: Verdict) -> list[Any]:
    """The reasons but the precision ones (see :func:`codes`)."""
    return [r for r in v.reasons if r.code != "precision"]


def steady(run: Run, stack: str = "s", reps: int = 8) -> list[dict[str, Any]]:
    """``reps`` rounds of one capture: the same req/s each time, so the median is known exactly (and two such
    stacks are equivalent: 8 pairs give an interval at 99 %)."""
    tsv = read_data("verdict", "ab-steady.tsv")
    return [
        run.measure(stack, AB_STEADY, read_data("verdict", "ab-steady.txt"), r, tsv=tsv)
        for r in range(1, reps + 1)
    ]


# ---------------------------------------------------------------- a clean run


def test_a_verified_complete_quiet_run_on_an_idle_loadgen_is_valid(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run)
    v = run.verdict()
    assert (v.status, v.reasons) == ("valid", [])
    [point] = v.load_points
    assert (point.stack, point.tool, point.level, point.status) == ("s", "ab", 2, "valid")
    assert "No reason to doubt" in section_markdown(verdict_section(v))


# ---------------------------------------------------------------- verification before load


def test_a_run_without_a_verification_record_is_noisy(tmp_path: Path) -> None:
    run = Run(tmp_path)
    measured = steady(run)
    info = run.info()
    del info["verify"]

    v = run_verdict(tmp_path, load_cells(tmp_path), info)
    assert v.status == "noisy" and codes(v) == ["not_verified"]
    assert v.reasons[0].cells == [json_cell_id(c) for c in measured]


def test_a_failed_verification_makes_the_run_invalid(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run)
    v = run.verdict(verify={"passed": False, "at": "2026-11-30T21:38:00Z", "message": "s answered 502"})
    assert v.status == "invalid" and codes(v) == ["verify_failed"]
    assert v.reasons[0].message == "verification before load failed: s answered 502"


def test_only_the_stacks_left_out_of_the_verification_are_named(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run, "checked")
    late = steady(run, "unchecked")
    v = run.verdict(verify={"passed": True, "at": "2026-11-30T21:38:00Z", "stacks": ["checked"]})
    [reason] = v.reasons
    assert reason.code == "not_verified" and "unchecked" in reason.message
    assert reason.cells == [json_cell_id(c) for c in late]
    assert [p.status for p in v.load_points] == ["valid", "noisy"]


# ---------------------------------------------------------------- errors


def test_a_5xx_run_is_invalid_and_names_its_cells_and_error_kinds(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run, "fine")
    bad = run.measure("busy", AB_5XX, read_data("ab", "mixed-status-length.txt"))
    v = run.verdict()
    [reason] = others(v)
    assert (reason.code, reason.status, reason.cells) == ("error_rate", "invalid", [json_cell_id(bad)])
    assert reason.message == (
        "busy ab c10: failed requests up to 50.3 % in 1 of 1 cells, above load.max_error_rate 1.0 % "
        "(status 503, length 503)"
    )
    assert v.status == "invalid"
    assert {p.stack: p.status for p in v.load_points} == {"busy": "invalid", "fine": "valid"}


def test_max_error_rate_1_lets_a_breaking_point_experiment_through(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.measure("busy", AB_5XX, read_data("ab", "mixed-status-length.txt"))
    run.load["max_error_rate"] = 1
    run.load["repetitions"] = run.load["max_repetitions"] = 1
    assert "error_rate" not in codes(run.verdict())


def failing(run: Run, limit: float, name: str = "length-failures.txt") -> list[str]:
    """The error_rate reasons' cells with ``load.max_error_rate`` at ``limit``."""
    run.load["max_error_rate"] = limit
    return [c for r in run.verdict().reasons if r.code == "error_rate" for c in r.cells]


def test_a_cells_failed_share_at_max_error_rate_is_within_it_and_just_above_it_is_not(tmp_path: Path) -> None:
    run = Run(tmp_path)
    bad = run.measure("varying", AB_5XX, read_data("ab", "length-failures.txt"))  # 248 of 1000 failed
    assert failing(run, 0.248) == []
    assert failing(run, 0.247) == [json_cell_id(bad)]


def test_max_error_rate_0_lets_no_failed_request_through(tmp_path: Path) -> None:
    run = Run(tmp_path)
    [cell] = steady(run, reps=1)
    assert failing(run, 0) == []  # 0 failed requests are not above 0
    # One non-2xx response among its 2800: 0.04 %, above 0 and within the default 1 %.
    cell.update(error_count=1, error_rate=1 / 2800)
    cell["errors"]["status"] = 1
    (tmp_path / "cells" / f"{json_cell_id(cell)}.json").write_text(json.dumps(cell), encoding="utf-8")
    assert failing(run, 0) == [json_cell_id(cell)]
    assert failing(run, 0.01) == []


def test_max_error_rate_1_lets_even_a_run_where_every_request_failed_through(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.measure("missing", AB_5XX, read_data("ab", "non2xx.txt"))  # 1000 of 1000 answered 404
    assert failing(run, 1) == []
    assert failing(run, 0.999) != []


AB_SLOW = {"tool": "ab", "concurrency": 20, "requests": 400}


def slow_run(run: Run, stack: str = "s", repetition: int = 1) -> dict[str, Any]:
    """31 of 400 responses slower than 300 ms (7.75 %), no failed request."""
    output, tsv = read_data("ab", "gnuplot-slow.txt"), read_data("ab", "gnuplot-slow.tsv")
    return run.measure(stack, AB_SLOW, output, repetition, tsv=tsv, threshold_ms=300)


def test_slow_responses_alone_never_make_a_run_invalid_and_are_reported_by_load_point(tmp_path: Path) -> None:
    run = Run(tmp_path)
    cell = slow_run(run)
    assert cell["error_rate"] == 31 / 400  # the stored rate counts them, as the original posts did
    for limit in (0, 0.01, 1):
        run.load["max_error_rate"] = limit
        v = run.verdict()
        assert "error_rate" not in codes(v) and v.status != "invalid"
    run.load["max_error_rate"] = 0.01
    [slow] = run.verdict().slow
    assert (slow.stack, slow.tool, slow.level, slow.target, slow.threshold_ms) == ("s", "ab", 20, "web1", 300)
    assert (slow.over_threshold, slow.requests, slow.highest_rate) == (31, 400, 31 / 400)
    assert slow.cells == [json_cell_id(cell)]
    assert slow.message == (
        "s ab c20: 31 of 400 responses slower than 300 ms (7.8 %), above load.max_error_rate 1.0 %"
    )
    run.load["max_error_rate"] = 0.1
    assert run.verdict().slow[0].message == "s ab c20: 31 of 400 responses slower than 300 ms (7.8 %)"


def test_slow_responses_are_added_up_over_a_load_points_cells(tmp_path: Path) -> None:
    run = Run(tmp_path)
    slow_run(run, repetition=1)
    slow_run(run, repetition=2)
    steady(run, "quick", reps=1)
    [slow] = run.verdict().slow
    assert (slow.stack, slow.over_threshold, slow.requests, len(slow.cells)) == ("s", 62, 800, 2)
    assert slow.message.endswith("(7.8 %), up to 7.8 % in one of 2 cells, above load.max_error_rate 1.0 %")


def test_a_cell_that_failed_and_was_slow_is_judged_on_its_failed_requests(tmp_path: Path) -> None:
    run = Run(tmp_path)
    # /mixed under ab -k: 516 non-2xx (484 also length failures); 600 of the 1000 slowed past 300 ms.
    tsv = read_data("ab", "gnuplot-mixed.tsv").splitlines()
    slowed = [tsv[0]] + [
        "\t".join([*line.split("\t")[:4], "900", "900"]) if i < 600 else line
        for i, line in enumerate(tsv[1:])
    ]
    plan = {"tool": "ab", "concurrency": 10, "requests": 1000, "keepalive": True}
    output = read_data("ab", "gnuplot-mixed.txt")
    cell = run.measure("mixed", plan, output, tsv="\n".join(slowed) + "\n", threshold_ms=300)
    assert cell["error_rate"] == 0.6
    [reason] = [r for r in run.verdict().reasons if r.code == "error_rate"]
    assert reason.message == (
        "mixed ab -k c10: failed requests up to 51.6 % in 1 of 1 cells, above load.max_error_rate 1.0 % "
        "(status 516, length 484)"
    )
    run.load["max_error_rate"] = 0.55  # between the failed share and the stored error_rate
    assert "error_rate" not in codes(run.verdict())
    assert run.verdict().slow[0].over_threshold == 600


def test_a_disturbed_cells_failures_and_slow_responses_are_evidence_not_the_result(tmp_path: Path) -> None:
    run = Run(tmp_path)
    bad = run.measure("busy", AB_5XX, read_data("ab", "mixed-status-length.txt"))
    slow = slow_run(run)
    info = run.info()
    disturbed = [Cell.from_dict({**c, "disturbed": ["foreign CPU 31 %"]}) for c in (bad, slow)]
    v = run_verdict(tmp_path, disturbed, info)
    assert "error_rate" not in codes(v) and v.slow == []
    # Beside a counted repetition the disturbed one is left out of "N of M cells" too.
    again = run.measure("busy", AB_5XX, read_data("ab", "mixed-status-length.txt"), repetition=2)
    v = run_verdict(tmp_path, [*disturbed, Cell.from_dict(again)], info)
    [reason] = [r for r in v.reasons if r.code == "error_rate"]
    assert reason.cells == [json_cell_id(again)] and "in 1 of 1 cells" in reason.message


def test_slow_responses_nothing_counted_are_listed_as_not_checked(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.measure("s", AB_SLOW, read_data("ab", "gnuplot-slow.txt"), threshold_ms=300)  # no -g file
    v = run.verdict()
    assert v.slow == []
    assert (
        "slow responses: 1 ab cells with a threshold kept no per-request data (over_threshold not measured)"
        in v.not_checked
    )


# ---------------------------------------------------------------- spread


def spread(run: Run, values: list[float], stack: str = "s") -> list[dict[str, Any]]:
    output = read_data("verdict", "ab-steady.txt")
    return [run.measure(stack, AB_STEADY, output, rep, rps=rps) for rep, rps in enumerate(values, 1)]


# Around the median 361.52: the 95 % interval of 9 rounds lies just inside their 2nd to 8th values, 330 to
# 380 (interpolated towards the 3rd and 7th, stats.median_ci): 332.28 to 377.72.
WIDE = [361.52, 330.0, 400.0, 350.0, 370.0, 340.0, 380.0, 300.0, 365.0]


def test_a_median_known_to_less_than_the_target_precision_is_noisy(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.load.update(repetitions=9, max_repetitions=9)
    spread(run, WIDE)
    v = run.verdict()
    assert codes(v, precision=True) == ["precision"] and v.status == "noisy"
    assert v.reasons[0].message == (
        "s ab c2: median req/s known to +-6.3 % over 9 rounds, short of load.target_precision +-5.0 % "
        "(load.max_repetitions 9 reached; at this spread about 15 counted rounds would reach it, 6 more)"
    )
    [point] = v.load_points
    assert (point.counted, point.disturbed, point.median_rps) == (9, 0, 361.52)
    assert (point.ci_low, point.ci_high) == (332.28, 377.72)
    assert point.precision == round((377.72 - 332.28) / 2 / 361.52, 4)
    # What ended the rounds short of the cap: the time budget, the bound on all cells, or neither.
    run.load.update(max_repetitions=20, max_seconds=600)
    assert "(the time budget, load.max_seconds 600, ended the rounds; " in run.verdict().reasons[0].message
    run.load.update(max_repetitions=10, max_seconds=None)
    ended = "(the run ended its rounds early (stopped, or resumed without them); "
    assert ended in run.verdict().reasons[0].message
    run.load["max_repetitions"] = 4
    assert "(load.max_repetitions 4 reached; " in run.verdict().reasons[0].message
    # 11 disturbed cells beside the 9: 20 in all, the bound for max_repetitions 10.
    output = read_data("verdict", "ab-steady.txt")
    for rep in range(10, 21):
        cell = run.measure("s", AB_STEADY, output, rep, rps=361.0)
        cell["disturbed"] = ["interference: foreign CPU 30.0 % of the host's CPU time during the cell"]
        (run.path / "cells" / f"s__ab__c2__r{rep}.json").write_text(json.dumps(cell), encoding="utf-8")
    run.load.update(max_repetitions=10, max_seconds=600)
    assert "(20 cells in all, the bound of 2 x load.max_repetitions; " in run.verdict().reasons[0].message


def test_a_compared_load_points_precision_is_information_not_a_reason(tmp_path: Path) -> None:
    # The same wide spread as above, but beside a baseline it is faster than in every round: the comparison
    # is resolved, so the run is valid, and the load point's interval is still reported.
    run = Run(tmp_path)
    run.load.update(repetitions=9, max_repetitions=9)
    spread(run, [100.0 + i for i in range(9)], stack="base")
    spread(run, WIDE)
    v = run.verdict()
    assert (v.status, codes(v, precision=True)) == ("valid", [])
    point = next(p for p in v.load_points if p.stack == "s")
    assert point.precision == round((377.72 - 332.28) / 2 / 361.52, 4) and point.status == "valid"


def test_an_unresolved_comparison_makes_the_run_noisy_and_says_what_would_resolve_it(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.load.update(repetitions=9, max_repetitions=9, max_seconds=600)
    spread(run, [350.0] * 9, stack="base")
    spread(run, WIDE)  # 0.86x to 1.14x the baseline: holds 1, and reaches past +-5 %
    v = run.verdict()
    [reason] = [r for r in v.reasons if r.code == "unresolved"]
    assert (v.status, reason.status) == ("noisy", "noisy")
    assert reason.message.startswith("s ab c2: unresolved against base: 1.0")
    assert "over 9 pairs: neither a difference nor within +-5 %; about " in reason.message
    assert reason.message.endswith("(load.max_repetitions 9 reached)")
    assert set(reason.cells) == {cell_id_of(c) for c in load_cells(run.path)}  # both load points' cells
    assert {p.stack: p.status for p in v.load_points} == {"base": "noisy", "s": "noisy"}
    assert "precision" not in codes(v, precision=True)  # the comparison is the reason, not the medians
    # A wider margin makes the same pairs equivalent, and the run valid.
    run.load["equivalence"] = 0.2
    assert (run.verdict().status, codes(run.verdict(), precision=True)) == ("valid", [])


def test_a_comparison_too_short_for_an_interval_is_unresolved(tmp_path: Path) -> None:
    run = Run(tmp_path)
    spread(run, [350.0] * 6, stack="base")
    spread(run, WIDE[:6])
    [reason] = [r for r in run.verdict().reasons if r.code == "unresolved"]
    assert (
        "6 pairs with base, too few for an interval; about 8 pairs would resolve it, 2 more" in reason.message
    )


def test_the_rounds_a_target_needs_grow_with_the_square_of_the_precision_gap() -> None:
    assert rounds_needed(0.10, 0.05, 9) == 36  # twice as wide: four times the rounds
    assert rounds_needed(0.05, 0.05, 9) == 9
    assert rounds_needed(0.0501, 0.05, 9) == 10  # any gap costs a round more


def test_precision_at_the_target_is_reached_and_just_beyond_it_is_not(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.load.update(repetitions=9, max_repetitions=9)
    spread(run, WIDE)
    reached = (377.7209302 - 332.2790698) / 2 / 361.52  # the interval of WIDE over its median
    run.load["target_precision"] = round(reached, 6) + 1e-6
    assert codes(run.verdict(), precision=True) == []
    run.load["target_precision"] = round(reached, 6) - 1e-6
    assert codes(run.verdict(), precision=True) == ["precision"]


def test_fewer_than_six_counted_rounds_leave_the_precision_unknown(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run, reps=5)
    run.load.update(repetitions=5, max_repetitions=5)
    v = run.verdict()
    assert v.status == "noisy" and codes(v, precision=True) == ["precision"]
    assert v.reasons[0].message == (
        "s ab c2: precision unknown: 5 counted rounds, 6 needed for a 95 % interval of the median req/s "
        "(raise load.max_repetitions from 5 to 6 or more)"
    )
    steady(run, reps=6)
    run.load.update(repetitions=6, max_repetitions=6)
    assert run.verdict().status == "valid"


def disturb(run: Run, cell: dict[str, Any], why: str = "interference: foreign CPU 31.0 %") -> None:
    cell["disturbed"] = [why]
    (run.path / "cells" / f"{json_cell_id(cell)}.json").write_text(json.dumps(cell), encoding="utf-8")


def test_a_disturbed_cell_is_left_out_of_the_precision_and_counted_in_the_notes(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.load.update(repetitions=6, max_repetitions=7)
    cells = steady(run, reps=6)
    # 100 req/s widens the interval (above a quarter of the median 361.52: not a collapse, counted)
    outlier = run.measure("s", AB_STEADY, read_data("verdict", "ab-steady.txt"), 7, rps=100.0)
    assert codes(run.verdict(), precision=True) == ["precision"]
    disturb(run, outlier)
    v = run.verdict()
    assert (v.status, codes(v, precision=True)) == ("valid", [])
    assert v.not_checked == [
        "disturbed: 1 cells were disturbed or collapsed, kept as evidence, left out of the statistics and "
        f"measured again (first: {json_cell_id(outlier)}: interference: foreign CPU 31.0 %)"
    ]
    # Fewer counted rounds than planned: the disturbed ones were not all replaced.
    disturb(run, cells[0])
    v = run.verdict()
    assert "disturbed" in codes(v) and v.status == "noisy"


def test_a_collapsed_cell_is_left_out_of_the_precision_and_named_in_the_notes(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.load.update(repetitions=6, max_repetitions=7)
    steady(run, reps=6)
    # 30 req/s beside 361.52: below a quarter of the median, a collapse (counted, it would widen the interval)
    fallen = run.measure("s", AB_STEADY, read_data("verdict", "ab-steady.txt"), 7, rps=30.0)
    v = run.verdict()
    assert (v.status, codes(v, precision=True)) == ("valid", [])
    [note] = v.not_checked
    assert note.endswith(
        f"(first: {json_cell_id(fallen)}: collapse: 30.0 req/s, below 25 % of the median 361.5 req/s of the "
        "load point's 7 counted cells)"
    )


# ---------------------------------------------------------------- the loadgen


def test_a_saturated_loadgen_makes_its_cells_invalid(tmp_path: Path) -> None:
    run = Run(tmp_path)
    saturated = read_data("verdict", "vmstat-saturated.txt")
    cell = run.measure("s", WRK_SATURATED, read_data("verdict", "wrk-saturated.txt"), vmstat=saturated)
    run.load["repetitions"] = run.load["max_repetitions"] = 1
    assert cell["system"]["loadgen"]["cpu_idle_median"] == 1.5  # idle 19, 2, 2, 0, 1, 1
    v = run.verdict()
    [reason] = [r for r in v.reasons if r.code == "loadgen_saturated"]
    assert reason.status == "invalid" and reason.cells == ["s__wrk__c64__r1"]
    assert "median CPU idle as low as 1.5 % in 1 of 1 cells (below 10 %)" in reason.message
    assert v.status == "invalid"


def test_an_idle_loadgen_is_not_saturated(tmp_path: Path) -> None:
    run = Run(tmp_path)
    cell = run.measure("s", WRK_SATURATED, read_data("verdict", "wrk-saturated.txt"))
    assert cell["system"]["loadgen"]["cpu_idle_median"] == 31.0
    assert "loadgen_saturated" not in codes(run.verdict())


def test_cells_stored_before_the_median_existed_are_judged_from_their_raw_vmstat(tmp_path: Path) -> None:
    run = Run(tmp_path)
    saturated = read_data("verdict", "vmstat-saturated.txt")
    cell = run.measure("s", WRK_SATURATED, read_data("verdict", "wrk-saturated.txt"), vmstat=saturated)
    del cell["system"]["loadgen"]["cpu_idle_median"]
    (tmp_path / "cells" / "s__wrk__c64__r1.json").write_text(json.dumps(cell), encoding="utf-8")
    assert "loadgen_saturated" in codes(run.verdict())
    (tmp_path / "raw" / "s__wrk__c64__r1.vmstat.txt").unlink()
    v = run.verdict()
    assert "loadgen_saturated" not in codes(v)
    assert "loadgen saturation: 1 network-mode cells kept no vmstat sample" in v.not_checked


def test_merged_cells_are_judged_by_each_loadgens_vmstat(tmp_path: Path) -> None:
    from benchstack.measure.merge import merge_cells

    run = Run(tmp_path / "lg1")
    a = run.measure("s", WRK_SATURATED, read_data("verdict", "wrk-saturated.txt"))
    run_b = Run(tmp_path / "lg2")
    saturated = read_data("verdict", "vmstat-saturated.txt")
    b = run_b.measure("s", WRK_SATURATED, read_data("verdict", "wrk-saturated.txt"), vmstat=saturated)
    b["loadgen"] = "gen2"
    merged = merge_cells([Cell.from_dict(a), Cell.from_dict(b)])
    v = run_verdict(tmp_path, [merged], None)
    [reason] = [r for r in v.reasons if r.code == "loadgen_saturated"]
    assert "the loadgen (gen2) had a median CPU idle as low as 1.5 %" in reason.message


# ---------------------------------------------------------------- loopback


def test_loopback_without_a_cpu_split_is_a_note_that_says_the_host_was_busy(tmp_path: Path) -> None:
    # How the original setups measured (ab beside the server): said with the figures, not called noisy.
    run = Run(tmp_path, mode="loopback")
    saturated = read_data("verdict", "vmstat-saturated.txt")
    run.measure("s", WRK_SATURATED, read_data("verdict", "wrk-saturated.txt"), vmstat=saturated)
    run.load["repetitions"] = run.load["max_repetitions"] = 1
    v = run.verdict()
    assert codes(v) == []  # the precision reason (one round) is the only one
    assert (
        "stacks apart from the load tool: loopback mode on shared CPUs on web1 (no CPU split recorded), so "
        "each figure measures the stacks and the load tool together (less than 10 % CPU idle in 1 cells); "
        "network mode, or -e bench_cpu_split=auto, measures the stacks alone"
    ) in v.not_checked
    # vmstat there measures the whole host: not a saturated *loadgen*
    assert any(n.startswith("loadgen saturation: 1 loopback cells") for n in v.not_checked)
    one_cpu = {**FINGERPRINT, "cpu_count": "1"}
    assert codes(run.verdict(hosts={"web1": one_cpu})) == []


def test_loopback_with_a_disjoint_cpu_split_is_not_a_reason(tmp_path: Path) -> None:
    run = Run(tmp_path, mode="loopback")
    run.measure("s", WRK_SATURATED, read_data("verdict", "wrk-saturated.txt"))
    run.load["repetitions"] = run.load["max_repetitions"] = 1
    split = {**FINGERPRINT, "cpu_split": {"loadgen_cpus": "0", "stack_cpus": "1"}}
    assert codes(run.verdict(hosts={"web1": split})) == []
    overlapping = {**FINGERPRINT, "cpu_split": {"loadgen_cpus": "0-1", "stack_cpus": "1"}}
    v = run.verdict(hosts={"web1": overlapping})
    assert codes(v) == ["loopback_shared_cores"]  # a split that fails its promise: noisy
    assert others(v)[0].status == "noisy" and others(v)[0].message == (
        "loopback mode on shared CPUs: the load tool and the stacks competed for the same cores on web1 "
        "(the CPU split overlaps (load tool [0, 1], stacks [1]))"
    )


def test_cpu_split_problems() -> None:
    assert cpu_split_problem({"cpu_count": "1"}) == "1 CPU: no split is possible"
    assert cpu_split_problem({"cpu_count": "2"}) == "no CPU split recorded"
    assert cpu_split_problem({"cpu_split": {"loadgen_cpus": "0,1", "stack_cpus": "2-3"}}) is None
    assert cpu_split_problem({"cpu_split": {"loadgen_cpus": "0", "stack_cpus": "x"}}).startswith("unreadable")


# ---------------------------------------------------------------- capacity


def test_capacity_warnings_from_the_fingerprints_name_their_cells(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.measure("s", WRK_WIDE, read_data("wrk", "report-wide-spread.txt"))
    run.load["repetitions"] = run.load["max_repetitions"] = 1
    run.load["max_error_rate"] = 1  # the capture is an overloaded stack (502s)
    small = {**FINGERPRINT, "sysctls": {"net.core.somaxconn": "128"}}
    v = run.verdict(hosts={"web1": small, "gen1": FINGERPRINT})
    [reason] = others(v)
    assert (reason.code, reason.status, reason.cells) == ("capacity", "noisy", ["s__wrk__c500__r1"])
    assert reason.message.startswith("concurrency 500 exceeds the target's net.core.somaxconn 128")
    assert codes(run.verdict()) == []  # somaxconn 4096, 20000 open files


# ---------------------------------------------------------------- stops and completeness


def test_a_run_stopped_on_a_hung_stack_is_invalid(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run, "fine")
    run.plan("stuck", AB_STEADY, 1)
    run.write_info()
    record_stop(tmp_path, "stuck__ab__c2__r1", "hung", "ab completed no request and counted no error")
    stopped = json.loads((tmp_path / "run.json").read_text())["stopped"]
    v = run.verdict(stopped=stopped)
    assert codes(v) == ["hung_stack", "incomplete"] and v.status == "invalid"
    assert others(v)[0].message.startswith("the run stopped at stuck__ab__c2__r1 at ")
    assert others(v)[0].message.endswith(": the stack hung (ab completed no request and counted no error)")
    assert others(v)[1].cells == ["stuck__ab__c2__r1"]
    assert {p.stack: p.status for p in v.load_points} == {"fine": "valid", "stuck": "invalid"}


def test_a_resumed_run_keeps_the_stop_and_calls_it_noisy_once_the_cell_is_measured(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.load["repetitions"] = run.load["max_repetitions"] = 1
    run.plan("s", AB_STEADY, 1)
    run.write_info()
    record_stop(tmp_path, "s__ab__c2__r1", "hung", "nothing answered")
    run.write_info()  # the resumed run rewrites run.json
    stopped = json.loads((tmp_path / "run.json").read_text())["stopped"]
    assert [s["cell"] for s in stopped] == ["s__ab__c2__r1"]
    steady(run, reps=1)
    [reason] = others(run.verdict(stopped=stopped))
    assert (reason.code, reason.status) == ("hung_stack", "noisy")
    assert "the stack may hang again under this load" in reason.message


def test_a_storage_stop_is_invalid_until_the_resume_stores_the_cell_then_no_reason_at_all(
    tmp_path: Path,
) -> None:
    """Issue 44: the run folder could not be written. The controller's disk says nothing of the stack: once
    a resume stored the cell, the stop stays in run.json and the verdict has nothing to say of it."""
    run = Run(tmp_path)
    run.load["repetitions"] = run.load["max_repetitions"] = 1
    run.plan("s", AB_STEADY, 1)
    run.write_info()
    record_stop(tmp_path, "s__ab__c2__r1", "storage", "ENOSPC (No space left on device): cells/x.json")
    stopped = json.loads((tmp_path / "run.json").read_text())["stopped"]
    v = run.verdict(stopped=stopped)
    assert codes(v) == ["stopped", "incomplete"] and v.status == "invalid"
    assert others(v)[0].message.endswith(
        ": the run folder could not be written (ENOSPC (No space left on device): cells/x.json)"
    )
    steady(run, reps=1)
    assert codes(run.verdict(stopped=stopped)) == []


def test_cells_planned_but_not_stored_make_the_run_incomplete(tmp_path: Path) -> None:
    run = Run(tmp_path)
    steady(run, reps=2)
    run.plan("s", AB_STEADY, 3)
    v = run.verdict()
    [reason] = [r for r in v.reasons if r.code == "incomplete"]
    assert reason.cells == ["s__ab__c2__r3"] and reason.status == "invalid"
    assert reason.message.startswith("1 of 3 planned cells were not measured")


# ---------------------------------------------------------------- steady state


def test_a_cell_that_slowed_down_mid_run_is_not_at_steady_state(tmp_path: Path) -> None:
    run = Run(tmp_path)
    tsv = read_data("verdict", "ab-drift.tsv")
    run.measure("s", AB_DRIFT, read_data("verdict", "ab-drift.txt"), tsv=tsv)
    run.load["repetitions"] = run.load["max_repetitions"] = 1
    v = run.verdict()
    assert codes(v) == ["not_steady"] and v.status == "noisy"
    assert others(v)[0].message == (
        "s ab c2: requests started per second changed -48 % from the first half of the cell to the second "
        "(277 -> 144, 8 whole seconds) in 1 of 1 cells (more than 20 %): not at steady state"
    )


def test_per_second_starts_of_the_captures() -> None:
    # cut -f2 drift.tsv | uniq -c: 235 356 380 226 | 145 146 139 142 | 147 84 (first and last partial)
    d = drift(starts_per_second(read_data("verdict", "ab-drift.tsv")))
    assert d is not None and (d.first, d.second, d.seconds) == (276.75, 143.5, 8)
    s = drift(starts_per_second(read_data("verdict", "ab-steady.tsv")))
    assert s is not None and abs(s.change) < 0.01
    assert drift({100: 5, 101: 9, 102: 9, 103: 2}) is None  # two whole seconds: too short


def test_tools_without_per_second_data_are_listed_as_not_checked(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.measure("s", WRK_SATURATED, read_data("verdict", "wrk-saturated.txt"))
    run.measure("s", AB_STEADY, read_data("verdict", "ab-steady.txt"))
    run.load["repetitions"] = run.load["max_repetitions"] = 1
    notes = run.verdict().not_checked
    assert "steady state: 1 wrk cells: wrk keeps no per-second data" in notes
    assert "steady state: 1 ab cells ran without -g (the runner asks for it with load.threshold_ms)" in notes


# ---------------------------------------------------------------- rendering and run.json


def test_the_printed_verdict_gives_each_reason_and_its_cell_count(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.measure("busy", AB_5XX, read_data("ab", "mixed-status-length.txt"))
    run.load["repetitions"] = run.load["max_repetitions"] = 1
    text = verdict_text(run.verdict())
    assert text.splitlines()[0] == "Verdict: INVALID (load points: 1 invalid)"
    assert text.splitlines()[1].startswith("- invalid error_rate: busy ab c10: failed requests up to 50.3 %")
    assert text.splitlines()[1].endswith("(1 cell)")


def test_record_stop_adds_to_the_stops_already_recorded(tmp_path: Path) -> None:
    record_stop(tmp_path, "a__ab__c1__r1", "hung", "m1", at="2026-01-01T00:00:00Z")
    record_stop(tmp_path, "b__ab__c1__r1", "timeout", "m2", at="2026-01-01T00:01:00Z")
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
    data = json.loads((tmp_path / "run.json").read_text())
    assert [(s["cell"], s["reason"]) for s in data["stopped"]] == [
        ("a__ab__c1__r1", "hung"),
        ("b__ab__c1__r1", "timeout"),
    ]


def test_vmstat_median_idle_of_the_saturated_capture() -> None:
    stats = parse_vmstat(read_data("verdict", "vmstat-saturated.txt"))
    assert stats is not None
    assert stats["cpu_idle_median"] == 1.5 and stats["cpu_idle"] == pytest.approx(
        (19 + 2 + 2 + 0 + 1 + 1) / 6, abs=0.01
    )


# ---------------------------------------------------------------- report, run.json and the CI gate


def test_the_report_opens_with_the_verdict_and_stores_it_in_run_json(tmp_path: Path) -> None:
    from benchstack.report.build import write_report

    run = Run(tmp_path)
    steady(run, "fine")
    run.measure("busy", AB_5XX, read_data("ab", "mixed-status-length.txt"))
    run.write_info()
    text = write_report(tmp_path).read_text(encoding="utf-8")
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections[:2] == ["## Verdict: invalid", "## Results"]
    assert "- **invalid** `error_rate`: busy ab c10: failed requests up to 50.3 %" in text
    assert "Load points: 1 valid, 1 invalid." in text
    stored = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))["verdict"]
    assert stored["status"] == "invalid"
    assert [r["code"] for r in stored["reasons"] if r["code"] != "precision"] == ["error_rate"]
    assert stored["reasons"][0]["cells"] == ["busy__ab__c10__r1"]
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert '<h2 class="verdict-invalid">Verdict: invalid</h2>' in page
    assert page.index("Verdict: invalid") < page.index("<h2>Results</h2>")


def gate(tmp_path: Path, *flags: str) -> int:
    from benchstack.cli import main

    return main(["validate", str(tmp_path), *flags])


def test_validate_strict_fails_an_invalid_run_only_with_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = Run(tmp_path)
    run.measure("busy", AB_5XX, read_data("ab", "mixed-status-length.txt"))
    run.load["repetitions"] = run.load["max_repetitions"] = 1
    run.write_info()
    assert gate(tmp_path) == 0
    assert "Verdict" not in capsys.readouterr().out
    assert gate(tmp_path, "--strict") == 3
    captured = capsys.readouterr()
    assert "Verdict: INVALID" in captured.out
    assert "--strict: the run's verdict is invalid" in captured.err


def test_validate_strict_fails_a_noisy_run_with_code_6_unless_fail_on_invalid(tmp_path: Path) -> None:
    # Issue 41: --strict passed a noisy run; it now gates as the run does (bench_fail_on's default, noisy).
    run = Run(tmp_path)
    output = read_data("verdict", "ab-steady.txt")
    for rep, rps in ((1, 361.52), (2, 300.0), (3, 420.0)):
        run.measure("s", AB_STEADY, output, rep, rps=rps)
    run.write_info()
    assert gate(tmp_path, "--strict") == 6
    assert gate(tmp_path, "--strict", "--fail-on-noisy") == 6
    assert gate(tmp_path, "--fail-on-noisy") == 6
    assert gate(tmp_path, "--strict", "--fail-on", "invalid") == 0
    assert gate(tmp_path, "--fail-on", "never") == 0
    assert gate(tmp_path, "--fail-on-noisy", "--fail-on", "invalid") == 2  # they contradict


def test_validate_strict_passes_a_valid_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = Run(tmp_path)
    steady(run)
    run.write_info()
    assert gate(tmp_path, "--strict", "--fail-on-noisy") == 0
    assert "Verdict: VALID (load points: 1 valid)" in capsys.readouterr().out


def test_stops_recorded_at_once_by_several_processes_are_all_kept(tmp_path: Path) -> None:
    from concurrent.futures import ProcessPoolExecutor

    ids = [f"s{i}__ab__c1__r1" for i in range(40)]
    with ProcessPoolExecutor(8) as pool:
        list(pool.map(record_stop, [tmp_path] * 40, ids, ["hung"] * 40, ["m"] * 40))
    stopped = json.loads((tmp_path / "run.json").read_text())["stopped"]
    assert sorted(s["cell"] for s in stopped) == sorted(ids)


def test_validate_fail_on_slow_fails_slow_responses_above_max_error_rate_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = Run(tmp_path)
    slow_run(run)  # 7.75 % slow
    run.load["repetitions"] = run.load["max_repetitions"] = 1
    run.write_info()
    assert gate(tmp_path, "--strict", "--fail-on", "invalid") == 0  # noisy (one cell), not invalid
    capsys.readouterr()
    assert (
        gate(tmp_path, "--fail-on-slow", "--fail-on", "invalid") == 7
    )  # implies --strict; a threshold's code
    captured = capsys.readouterr()
    assert "- slow: s ab c20: 31 of 400 responses slower than 300 ms" in captured.out
    assert captured.err.strip() == (
        "bench-stack: --fail-on-slow: responses slower than load.threshold_ms above load.max_error_rate "
        "1.0 % in 1 load points: s ab c20 on web1"
    )
    run.load["max_error_rate"] = 0.0775  # at the limit: within it
    run.write_info()
    assert gate(tmp_path, "--strict", "--fail-on-slow", "--fail-on", "invalid") == 0
    assert gate(tmp_path, "--strict", "--fail-on-slow") == 6  # still noisy


def test_validate_fail_on_slow_still_fails_an_invalid_run(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.measure("busy", AB_5XX, read_data("ab", "mixed-status-length.txt"))
    run.load["repetitions"] = run.load["max_repetitions"] = 1
    run.write_info()
    assert gate(tmp_path, "--fail-on-slow") == 3


def test_the_report_lists_slow_responses_apart_and_run_json_keeps_them(tmp_path: Path) -> None:
    from benchstack.report.build import write_report
    from benchstack.results.formats import validate_run_info

    run = Run(tmp_path)
    cell = slow_run(run)
    run.write_info()
    write_report(tmp_path)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert (
        "Slow responses (over load.threshold_ms: a result, not a reason to doubt the numbers):\n\n"
        "- s ab c20: 31 of 400 responses slower than 300 ms (7.8 %), above load.max_error_rate 1.0 % "
        f"(cell {json_cell_id(cell)})"
    ) in text
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<p>Slow responses (over load.threshold_ms" in page
    stored = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert validate_run_info(stored) == []
    assert stored["verdict"]["slow"][0]["over_threshold"] == 31
    old = {**stored, "verdict": {k: v for k, v in stored["verdict"].items() if k != "slow"}}
    assert validate_run_info(old) == []  # a verdict stored before slow responses were reported
