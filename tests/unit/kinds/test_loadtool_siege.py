"""The siege adapter on captured siege 4.0.7 output (tests/data/siege/, tests/data/README.md): every response
and its time, its failed transactions split into 4xx/5xx responses and requests without a response, its
command and resource file, the plans it takes and refuses, and output cut short."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import cell_plan, in_child, printed_json, read_data

from benchstack.cli import main
from benchstack.kinds.loadtools import parse
from benchstack.kinds.loadtools.siege import SIEGE_MAX_USERS, siegerc
from benchstack.kinds.loadtools.siege import TOOL as SIEGE
from benchstack.records.model import ParseError

ROOT = Path(__file__).resolve().parents[3]
URL = "http://127.0.0.1:8002/hello/bar"
PLAN = {"tool": "siege", "concurrency": 4, "requests": 400, "keepalive": False}


def test_every_response_line_is_a_completed_request_and_its_time_the_distribution() -> None:
    p = parse("siege", read_data("siege", "ok.txt"))
    assert (p.tool_version, p.concurrency, p.keepalive, p.requests_completed) == ("4.0.7", 10, False, 500)
    assert (p.error_count, p.duration_s, p.transfer_bytes) == (0, 0.05, 500 * len("Hello bar\n"))
    assert p.latency_dist is not None and p.latency_dist.to_dict()["source"] == "siege"
    assert (p.latency_dist.unit_us, p.latency_dist.samples, p.latency_dist.requests) == (10_000, 500, 500)
    # 35 of the 500 printed 0.01 s, the rest 0.00: siege rounds to 10 ms.
    assert p.latency_dist.counts == ((0, 465), (10_000, 35))
    assert p.latency_ms["mean"] == 0.7 and p.latency_ms["p50"] == 0.0 and p.latency_ms["p99"] == 10.0
    assert p.rps == 10_000.0  # 500 in siege's 0.05 s (its clock ticks are 10 ms)


def test_a_duration_run_keeps_its_spread_of_slow_answers() -> None:
    p = parse("siege", read_data("siege", "duration.txt"))  # -t 2S: siege ended after 1.13 s
    assert (p.requests_completed, p.duration_s, p.rps) == (62, 1.13, 54.87)
    assert (p.latency_ms["min"], p.latency_ms["p50"], p.latency_ms["max"]) == (0.0, 40.0, 310.0)


def test_4xx_and_5xx_are_completed_status_errors_though_siege_counts_them_failed() -> None:
    p = parse("siege", read_data("siege", "mixed.txt"))  # "Transactions: 150", "Failed transactions: 150"
    assert (p.requests_completed, p.errors["status"], p.error_count, p.error_rate) == (300, 150, 150, 0.5)
    assert (p.extra["transactions"], p.extra["failed_transactions"]) == (150, 150)
    assert [p.errors[k] for k in ("connect", "read", "write", "timeout", "exceptions")] == [0] * 5
    assert p.rps == 10_000.0  # siege's 5,000.00 transactions/s are the 200s only
    assert p.latency_dist is not None and p.latency_dist.samples == 300  # 503s have their times too


@pytest.mark.parametrize(
    ("name", "kind", "failed", "completed"),
    [("refused.txt", "connect", 10, 0), ("reset.txt", "read", 10, 20), ("drop.txt", "exceptions", 20, 0)],
)
def test_requests_without_a_response_are_attempts_counted_once_by_kind(
    name: str, kind: str, failed: int, completed: int
) -> None:
    p = parse("siege", read_data("siege", name))
    assert p.requests_completed == completed and p.errors[kind] == failed
    assert SIEGE.failed_count(p.errors) == p.error_count == failed
    assert SIEGE.attempts(completed, p.errors) == completed + failed
    assert p.error_rate == failed / (completed + failed)
    said = [n for n in p.notes if "said nothing of why" in n]
    assert len(said) == (kind == "exceptions")  # nginx's 444 closes without a word from siege


def test_slow_requests_are_the_ones_printed_above_the_threshold() -> None:
    p = parse("siege", read_data("siege", "slow.txt"))  # 2 s answers, printed 2.00 or 2.01
    assert (p.latency_ms["min"], p.latency_ms["max"], p.duration_s) == (2000.0, 2010.0, 4.01)
    assert SIEGE.per_request(p, None, "", None, None) == [] and p.errors["over_threshold"] is None
    (note,) = SIEGE.per_request(p, 2005, "", None, None)
    assert p.errors["over_threshold"] == 4 and "to 10 ms" in note
    assert p.error_count == 4  # slow, not failed
    assert SIEGE.failed_count(p.errors) == 0


def test_the_command_writes_its_resource_file_and_runs_siege_in_its_own_folder_as_home() -> None:
    cmd = SIEGE.command(cell_plan(PLAN), URL)
    assert cmd[:2] == ["sh", "-c"]
    assert cmd[2].endswith(f'> siegerc && HOME="$PWD" exec siege -R siegerc -b -c 4 -r 100 {URL}')
    rc = siegerc(4)
    for line in ("verbose = true", "parser = false", "connection = close", "limit = 4", "benchmark = true"):
        assert f"{line}\n" in rc
    # The shell writes exactly that file.
    script = cmd[2].split(" > siegerc")[0]
    assert subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout == rc
    timed = SIEGE.command(cell_plan({**PLAN, "requests": None, "duration_s": 5}), URL)[2]
    assert timed.endswith(f"siege -R siegerc -b -c 4 -t 5S {URL}")
    assert SIEGE.cores(cmd) == 4  # a thread per user
    assert (SIEGE.bound_s(cell_plan(PLAN)), SIEGE.bound_s(cell_plan({**PLAN, "duration_s": 5}))) == (660, 65)


def test_a_warmup_runs_whole_repetitions_or_its_duration() -> None:
    by_requests = SIEGE.warmup_command(cell_plan({**PLAN, "warmup": {"requests": 10}}), URL)[2]
    assert by_requests.endswith(f"-c 4 -r 3 {URL}")  # 12: each user at least as many as asked
    timed = SIEGE.warmup_command(cell_plan({**PLAN, "warmup": {"duration_s": 2}}), URL)[2]
    assert timed.endswith(f"-t 2S {URL}")


@pytest.mark.parametrize(
    ("plan", "problem"),
    [
        (
            {"concurrency": [4], "requests": 400, "duration_s": 5},
            "siege needs requests or duration_s, not both",
        ),
        ({"concurrency": [4]}, "siege needs requests or duration_s, not both"),
        ({"concurrency": [3, 4], "requests": 400}, "400 is not a multiple of 3"),
        ({"concurrency": [SIEGE_MAX_USERS + 1], "duration_s": 5}, f"at most {SIEGE_MAX_USERS:,}, not 1,001"),
        ({"concurrency": [4], "duration_s": 5, "keepalive": True}, "a connection per request"),
        ({"concurrency": [4], "duration_s": 5, "threads": 2}, "a thread per user"),
        ({"concurrency": [4], "duration_s": 5, "timeout_s": 3}, "does not end a request"),
    ],
)
def test_a_plan_siege_cannot_run_as_written_is_refused_saying_why(plan: dict, problem: str) -> None:
    problems: list[str] = []
    assert SIEGE.check_plan("load.plans[0]", {"tool": "siege", **plan}, problems) is False
    assert len(problems) == 1 and problem in problems[0] and problems[0].startswith("load.plans[0]")
    assert SIEGE.check_plan("p", {"tool": "siege", "concurrency": [4, 6], "requests": 400}, []) is False
    assert SIEGE.check_plan("p", {"tool": "siege", "concurrency": [4, 8], "requests": 400}, []) is True


@pytest.mark.parametrize(
    ("plan", "problem"),
    [
        (
            "{tool: siege, concurrency: 2000, requests: 4000}",
            "load.plans[0].concurrency: siege runs a thread per user: at most 1,000, not 2,000",
        ),
        (
            "{tool: siege, concurrency: [4], requests: 400, keepalive: true}",
            "load.plans[0].keepalive: siege runs a connection per request here",
        ),
    ],
)
def test_bench_stack_experiment_refuses_a_plan_siege_cannot_run_with_that_one_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], plan: str, problem: str
) -> None:
    experiment = tmp_path / "e.yml"
    experiment.write_text(
        f"name: e\nstacks:\n  - {{name: s, port: 8001, app: {{kind: static}}, front: {{kind: nginx}}}}\n"
        f"load:\n  plans:\n    - {plan}\n"
    )
    assert main(["experiment", str(experiment)]) == 1
    assert capsys.readouterr().err.splitlines()[1:] == [f"  - {problem}"]


def test_output_that_is_not_sieges_or_lacks_its_summary_is_refused() -> None:
    with pytest.raises(ParseError, match="not siege output"):
        parse("siege", read_data("ab", "normal.txt").split("Concurrency Level")[0])
    with pytest.raises(ParseError, match="lacks 'Shortest transaction'"):
        parse("siege", read_data("siege", "ok.txt").rsplit("Shortest", 1)[0])
    cut = read_data("siege", "ok.txt").replace("HTTP/1.1 200     0.01 secs", "HTTP/1.1 200     0.0", 1)
    with pytest.raises(ParseError, match="incomplete: 499 response lines below 400 for 500 transactions"):
        parse("siege", cut)


CUT = ["duration.txt", "refused.txt", "reset.txt", "slow.txt", "drop.txt"]


def every_cut(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """test_truncated_output's cuts_read on these captures, in a new interpreter (~1 s of CPU, started with
    the session beside the other tests: conftest's early_commands)."""
    captures = [["siege", "siege", name] for name in CUT]
    cuts = in_child("test_truncated_output", "cuts_read", captures, pure=True)
    return {"cuts": (cuts, dict(os.environ), ROOT)}


@pytest.mark.early.with_args(every_cut)
@pytest.mark.parametrize("name", CUT)
def test_every_cut_of_a_capture_is_refused_or_reads_like_the_whole(
    name: str, early_results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    found = printed_json(early_results["cuts"])[f"siege/{name}"]
    assert "crash" not in found, found["crash"]
    assert found["parsed"]
    text = read_data("siege", name)
    assert found["differ"] == [], [text[max(0, n - 80) : n] for n in found["differ"][:3]]


def test_more_error_lines_than_failures_count_as_many_as_siege_counted() -> None:
    text = read_data("siege", "refused.txt").replace(
        "Failed transactions:\t          10", "Failed transactions:\t           8"
    )
    p = parse("siege", text)
    assert p.errors["connect"] == p.error_count == 8
    assert p.notes == ["siege printed 10 socket errors for 8 failed requests: the first 8 count"]
