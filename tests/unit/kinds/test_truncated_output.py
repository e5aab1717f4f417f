"""Tool output cut short (a lost connection, a full disk) is refused, never parsed as a result (issue 18:
an ab output cut at 50 % gave an ok cell with null percentiles; cut inside its 99% row, a p99 of 2 ms below
its p50). Every prefix of a real capture either raises ParseError or parses exactly like the whole."""

import os
import subprocess
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from conftest import Helpers, cell_plan, in_child, printed_json, read_data

from benchstack.kinds.loadtools import parse
from benchstack.measure.runner import CellFailed, CellOptions, Target, measure_cell
from benchstack.plan.experiment import cells, experiment_from_dict
from benchstack.records.model import ParseError

ROOT = Path(__file__).resolve().parents[3]


def prefixes(text: str, step: int = 1) -> list[str]:
    """Every prefix of ``text`` (every ``step``-th inside lines longer than 200 characters)."""
    cuts: set[int] = set()
    offset = 0
    for line in text.splitlines(keepends=True):
        stride = step if len(line) > 200 else 1
        cuts.update(range(offset, offset + len(line), stride))
        offset += len(line)
    return [text[:n] for n in sorted(cuts)]


def outcome(tool: str, text: str) -> dict | None:
    try:
        parsed = parse(tool, text)
    except ParseError:
        return None
    return asdict(parsed)


CAPTURES = [
    ("ab", "ab", "normal.txt"),
    ("ab", "ab", "keepalive.txt"),
    ("ab", "ab", "mixed-status-length.txt"),
    ("ab", "latency", "ab-slow.txt"),
    ("ab", "latency", "ab-pair-lg1.txt"),
    ("httperf", "httperf", "hist-ok.txt"),
    ("httperf", "httperf", "hist-reset.txt"),
    ("httperf", "httperf", "hist-timeouts.txt"),
    ("httperf", "httperf", "hist-addrunavail.txt"),
    ("httperf", "httperf", "client-timeouts.txt"),
]


def cuts_read(captures: list[list[str]]) -> dict[str, dict[str, Any]]:
    """For each capture (tool, folder, name): whether the whole parses, and the length of every prefix that
    parses but not like the whole."""
    found: dict[str, dict[str, Any]] = {}
    for tool, folder, name in captures:
        text = read_data(folder, name)
        try:
            whole = outcome(tool, text)
            differ = [len(cut) for cut in prefixes(text) if outcome(tool, cut) not in (None, whole)]
        except Exception:  # noqa: BLE001 - a crash fails this capture's test only, with its traceback
            found[f"{folder}/{name}"] = {"crash": traceback.format_exc()}
            continue
        found[f"{folder}/{name}"] = {"parsed": whole is not None, "differ": differ}
    return found


def every_cut(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """:func:`cuts_read` on every capture, in a new interpreter (~0.7 s of CPU, started with the session
    beside the other tests: conftest's early_commands)."""
    cuts = in_child("test_truncated_output", "cuts_read", CAPTURES, pure=True)
    return {"cuts": (cuts, dict(os.environ), ROOT)}


@pytest.mark.early.with_args(every_cut)
@pytest.mark.parametrize(("tool", "folder", "name"), CAPTURES)
def test_every_cut_of_a_real_output_is_refused_or_reads_like_the_whole(
    tool: str, folder: str, name: str, early_results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    found = printed_json(early_results["cuts"])[f"{folder}/{name}"]
    assert "crash" not in found, found["crash"]
    assert found["parsed"]
    # only cuts after the last line that carries a result (ab: its stderr progress lines, httperf: nothing)
    text = read_data(folder, name)
    assert found["differ"] == [], [text[n - 80 : n] for n in found["differ"][:3]]


def test_wrk_output_cut_anywhere_is_refused_or_reads_like_the_whole_or_lacks_only_the_report_line() -> None:
    # A cut just before the report script's line leaves a complete wrk report without it: the parser cannot
    # tell, the runner refuses it because it ran the script (test below).
    text = read_data("latency", "wrk-slow.txt")
    whole = outcome("wrk", text)
    assert whole is not None and whole["latency_dist"] is not None
    # up to the end of the marker, the cut line is not recognisable as the script's
    report_at = text.index("BENCH-STACK-WRK-REPORT") + len("BENCH-STACK-WRK-REPORT")
    for cut in prefixes(text, step=7):
        result = outcome("wrk", cut)
        if result is None:
            continue
        if len(cut) < report_at:
            assert result["latency_dist"] is None
            assert {k: v for k, v in result.items() if k not in ("latency_dist", "latency_ms", "notes")} == {
                k: v for k, v in whole.items() if k not in ("latency_dist", "latency_ms", "notes")
            }
        else:
            assert result == whole


@pytest.mark.parametrize("share", [0.5, 0.6, 0.7, 0.8, 0.9])
def test_ab_output_cut_at_a_share_of_its_length_is_a_parse_error(share: float) -> None:
    text = read_data("ab", "normal.txt")  # ab's progress lines first, its results after
    with pytest.raises(ParseError):
        parse("ab", text[: int(len(text) * share)])


def test_ab_output_cut_after_its_rates_is_a_parse_error_not_an_ok_cell_without_percentiles() -> None:
    text = read_data("ab", "normal.txt")
    cut = text[: text.index("Connection Times (ms)")]
    with pytest.raises(ParseError, match="cut short: 2000 complete requests but no 'Connection Times' table"):
        parse("ab", cut)
    cut = text[: text.index("Percentage of the requests")]
    with pytest.raises(ParseError, match="cut short: 2000 complete requests but no percentile table"):
        parse("ab", cut)


def test_ab_output_cut_inside_the_99_percent_row_is_a_parse_error_not_a_tiny_p99() -> None:
    text = read_data("latency", "ab-slow.txt")
    row = text.index("  99%")
    cut = text[: text.index("\n", row) - 1]  # "  99%   1005" -> "  99%   100"
    assert cut.endswith("100")
    with pytest.raises(ParseError, match="cut short inside its percentile table, at the 100% row"):
        parse("ab", cut)


def test_ab_percentile_rows_that_go_down_are_refused() -> None:
    text = read_data("ab", "normal.txt").replace("  99%      4\n", "  99%      2\n")
    with pytest.raises(ParseError, match="goes down"):
        parse("ab", text)


def test_httperf_output_cut_inside_its_last_count_is_refused() -> None:
    text = read_data("httperf", "hist-addrunavail.txt").rstrip("\n")
    assert text.endswith("other 90")
    with pytest.raises(ParseError, match="'Errors: total 90' is not the sum of its kinds"):
        parse("httperf", text[:-1])


def test_the_runner_refuses_wrk_output_that_ends_before_the_report_line(tmp_path: Path) -> None:
    data = {
        "name": "cut",
        "stacks": [{"name": "local", "port": 18281, "app": {"kind": "static"}, "front": {"kind": "nginx"}}],
        "load": {
            "path": "/body.txt",
            "plans": [{"tool": "wrk", "concurrency": 4, "threads": 1, "duration_s": 3}],
        },
    }
    [plan] = [asdict(c) for c in cells(experiment_from_dict(data))]
    text = read_data("latency", "wrk-slow.txt")
    cut = text[: text.index("BENCH-STACK-WRK-REPORT")]
    helpers = Helpers()

    def execute(command: str) -> tuple[int, str, str]:
        return helpers.run(command, cut)

    where = Target(host="127.0.0.1", target="local", loadgen="local")
    with pytest.raises(CellFailed, match="printed no BENCH-STACK-WRK-REPORT line: its output is incomplete"):
        measure_cell(cell_plan(plan), where, tmp_path, execute, "cut", CellOptions(sleep=lambda s: None))
    assert not (tmp_path / "cells").exists()
