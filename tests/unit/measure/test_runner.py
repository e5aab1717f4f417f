import dataclasses
import errno
import fcntl
import json
import math
import os
import shlex
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import AB_G_FILE, Helpers, cell_plan, is_helper, read_data, unwrap

from benchstack.kinds.loadtools import by_name, parse
from benchstack.measure import runner
from benchstack.measure.runner import (
    CellFailed,
    CellOptions,
    StorageFailed,
    Target,
    measure_cell,
    write_run_info,
)
from benchstack.plan.experiment import cells, experiment_from_dict
from benchstack.results.cell import validate_cell
from benchstack.results.runfolder import experiment_hash

STACK = "sinatra-thin-x1-nginx"
LOOPBACK = Target(host="127.0.0.1", target="target1", loadgen="target1")
NETWORK = Target(host="127.0.0.1", target="target1", loadgen="loadgen1")
# Plans matching the captured outputs (tests/data/README.md): the same tool, concurrency and load.
AB_PLAN = {"tool": "ab", "concurrency": 50, "requests": 2000}
AB_K_PLAN = {"tool": "ab", "concurrency": 100, "requests": 5000, "keepalive": True}
WRK_PLAN = {"tool": "wrk", "concurrency": 32, "threads": 2, "duration_s": 3}
WRK = by_name("wrk")


def plans(*load_plans: dict[str, Any], warmup: dict[str, int] | None = None, **load: Any) -> list[dict]:
    """Cell plans the way the bench_experiment lookup hands them to the bench_cell action."""
    data = {
        "name": "runner-test",
        "stacks": [{"name": STACK, "port": 18080, "app": {"kind": "static"}, "front": {"kind": "nginx"}}],
        "load": {"path": "/hello/bar", "plans": list(load_plans), **load},
    }
    if warmup is not None:
        data["load"]["warmup"] = warmup
    return [dataclasses.asdict(c) for c in cells(experiment_from_dict(data))]


def one_plan(load_plan: dict[str, Any], warmup: dict[str, int] | None = None, **load: Any) -> dict:
    [plan] = plans(load_plan, warmup=warmup, **load)
    return plan


class FakeLoadgen:
    """Replays captured output: ``warmup`` for each load command but a cell's last one, ``output`` for it.

    Helper commands (the sweep, the target's vmstat, the wrk script) are answered by ``helpers`` and recorded
    there, not in ``commands``; a load command is recorded as the tool's command line
    (``conftest.unwrap``), the whole script in ``shell``; the measured run's reply carries vmstat's samples
    and ab's -g file as the real script prints them (``Helpers.measured``).
    """

    def __init__(
        self, output: str, warmup: str = "", rc: int = 0, stderr: str = "", helpers: Helpers | None = None
    ) -> None:
        self.output = output
        self.warmup = warmup
        self.rc = rc
        self.stderr = stderr
        self.helpers = helpers or Helpers()
        self.commands: list[str] = []
        self.shell: list[str] = []
        self.expected = 0

    def expect(self, n: int) -> "FakeLoadgen":
        self.expected = n
        return self

    def __call__(self, command: str) -> tuple[int, str, str]:
        helper = self.helpers.reply(command)
        if helper is not None:
            return helper
        self.shell.append(command)
        self.commands.append(unwrap(command))
        if len(self.commands) < self.expected:
            return 0, self.warmup, ""
        return self.rc, self.helpers.measured(command, self.output), self.helpers.stderr(command, self.stderr)


def measure(
    plan: dict, run_dir: Path, fake: FakeLoadgen, where: Target = LOOPBACK, **kw: Any
) -> tuple[dict, bool]:
    kw.setdefault("sleep", lambda seconds: None)
    cell, measured = measure_cell(
        cell_plan(plan), where, run_dir, fake, experiment="runner-test", options=CellOptions(**kw)
    )
    return cell.to_dict(), measured  # as the cell's JSON, which the tests read


# ---------------------------------------------------------------- a measured cell


def test_warmup_runs_first_and_only_the_measured_output_is_kept(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN, warmup={"requests": 200})
    fake = FakeLoadgen(read_data("ab", "normal.txt"), warmup=read_data("ab", "non2xx.txt")).expect(2)
    cell, measured = measure(plan, tmp_path, fake)
    assert measured is True
    assert fake.commands == [
        "timeout --kill-after=5 660 ab -n 200 -c 50 http://127.0.0.1:18080/hello/bar",
        f"timeout --kill-after=5 660 ab -n 2000 -c 50 -g {AB_G_FILE} http://127.0.0.1:18080/hello/bar",
    ]
    raw = (tmp_path / "raw" / f"{plan['cell_id']}.txt").read_text(encoding="utf-8")
    assert raw == read_data("ab", "normal.txt")
    assert cell["requests_completed"] == 2000 and cell["errors"]["status"] == 0
    assert [p.name for p in (tmp_path / "cells").iterdir()] == [f"{plan['cell_id']}.json"]


def test_on_a_split_loopback_host_the_tool_runs_on_its_cpus_warm_up_included(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN, warmup={"requests": 200})
    fake = FakeLoadgen(read_data("ab", "normal.txt")).expect(2)
    cell, _ = measure(plan, tmp_path, fake, cpus="0")
    assert fake.commands == [
        "timeout --kill-after=5 660 taskset -c 0 ab -n 200 -c 50 http://127.0.0.1:18080/hello/bar",
        f"timeout --kill-after=5 660 taskset -c 0 ab -n 2000 -c 50 -g {AB_G_FILE} http://127.0.0.1:18080/hello/bar",
    ]
    assert cell["command"][:3] == ["taskset", "-c", "0"]


def test_the_pause_falls_between_warm_up_and_measurement(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN, warmup={"requests": 200}, pause_s=2.5)
    fake = FakeLoadgen(read_data("ab", "normal.txt")).expect(2)
    pauses: list[tuple[float, int]] = []
    measure(plan, tmp_path, fake, sleep=lambda seconds: pauses.append((seconds, len(fake.commands))))
    assert pauses == [(2.5, 1)]  # after the warm-up, before the measured run
    assert len(fake.commands) == 2


def test_warmup_is_at_least_one_request_per_connection(tmp_path: Path) -> None:
    plan = one_plan(AB_K_PLAN, warmup={"requests": 10})
    fake = FakeLoadgen(read_data("ab", "keepalive.txt")).expect(2)
    measure(plan, tmp_path, fake)
    assert shlex.split(fake.commands[0])[3:] == [
        "ab",
        "-n",
        "100",
        "-c",
        "100",
        "-k",
        "http://127.0.0.1:18080/hello/bar",
    ]


def test_wrk_warmup_by_duration_is_bounded_by_its_duration(tmp_path: Path) -> None:
    plan = one_plan(WRK_PLAN, warmup={"duration_s": 2})
    fake = FakeLoadgen(read_data("latency", "wrk-fast.txt")).expect(2)
    cell, measured = measure(plan, tmp_path, fake)
    assert measured
    assert (
        fake.commands[0]
        == "timeout --kill-after=5 62 wrk -t 2 -c 32 -d 2s --latency http://127.0.0.1:18080/hello/bar"
    )
    assert fake.commands[1] == (
        "timeout --kill-after=5 63 env BENCH_STACK_CONNECTIONS=32 wrk -t 2 -c 32 -d 3s --latency "
        "-s /var/lib/bench-stack/bench-stack-wrk-report-0123456789abcdef.lua http://127.0.0.1:18080/hello/bar"
    )


def test_wrk_plan_with_a_request_warmup_warms_up_with_ab_keepalive(tmp_path: Path) -> None:
    plan = one_plan(WRK_PLAN, warmup={"requests": 200})
    fake = FakeLoadgen(read_data("latency", "wrk-fast.txt")).expect(2)
    measure(plan, tmp_path, fake)
    assert (
        fake.commands[0] == "timeout --kill-after=5 660 ab -n 200 -c 32 -k http://127.0.0.1:18080/hello/bar"
    )


def test_everything_before_the_measured_run_goes_to_the_loadgen_in_one_batch(tmp_path: Path) -> None:
    # sweep, version probe, report script, warm-up: one round trip (benchstack.measure.remote.batch_script),
    # in that order, so the sweep comes before any load and only the pause lies between warm-up and cell.
    plan = one_plan(WRK_PLAN, warmup={"requests": 200}, pause_s=0.5)
    fake = FakeLoadgen(read_data("latency", "wrk-fast.txt")).expect(2)
    events: list[Any] = []

    def execute_many(commands: list[str]) -> list[tuple[int, str, str]]:
        events.append([unwrap(c) if not is_helper(c) else c.split(" ", 1)[0] for c in commands])
        return [(0, "wrk 4.2.0 [epoll] Copyright (C) 2012 Will Glozer\n", "") if c == WRK.version_probe
                else fake(c) for c in commands]  # fmt: skip

    def execute(command: str) -> tuple[int, str, str]:
        events.append("measured")
        return fake(command)

    cell, _ = measure_cell(
        cell_plan(plan), LOOPBACK, tmp_path, execute, experiment="runner-test",
        options=CellOptions(sleep=events.append, probe_version=True, execute_many=execute_many),
    )  # fmt: skip
    assert events == [
        ["n=0;", WRK.version_probe, "d=/var/lib/bench-stack;",
         "timeout --kill-after=5 660 ab -n 200 -c 32 -k http://127.0.0.1:18080/hello/bar"],
        0.5,
        "measured",
    ]  # fmt: skip
    assert cell.tool_version == "wrk 4.2.0 [epoll] Copyright (C) 2012 Will Glozer"
    assert isinstance(cell.command, list)
    assert "-s /var/lib/bench-stack/bench-stack-wrk-report-" in " ".join(cell.command)


def test_without_warmup_only_the_measured_command_runs(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN)
    fake = FakeLoadgen(read_data("ab", "normal.txt")).expect(1)
    measure(plan, tmp_path, fake)
    assert len(fake.commands) == 1
    assert shlex.split(fake.commands[0])[:4] == ["timeout", "--kill-after=5", "660", "ab"]


def test_measured_command_is_wrapped_in_timeout_with_slack_over_the_tool_bound(tmp_path: Path) -> None:
    plan = one_plan({**AB_PLAN, "duration_s": 30})
    fake = FakeLoadgen(read_data("ab", "normal.txt")).expect(1)
    cell, _ = measure(plan, tmp_path, fake)
    argv = shlex.split(fake.commands[-1])
    assert argv[:3] == ["timeout", "--kill-after=5", "90"]
    assert argv[3:] == cell["command"]
    assert cell["command"] == [
        "ab", "-t", "30", "-n", "2000", "-c", "50", "-g", AB_G_FILE, "http://127.0.0.1:18080/hello/bar"
    ]  # fmt: skip


def test_cell_carries_the_run_metadata(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN, warmup={"requests": 200}, threshold_ms=300)
    fake = FakeLoadgen(read_data("ab", "normal.txt")).expect(2)
    before = datetime.now(UTC).replace(microsecond=0)
    cell, _ = measure(plan, tmp_path, fake)
    after = datetime.now(UTC)
    assert cell["experiment"] == "runner-test"
    assert cell["stack"] == STACK
    assert cell["target"] == "target1" and cell["loadgen"] == "target1"
    assert cell["mode"] == "loopback"
    assert cell["url"] == "http://127.0.0.1:18080/hello/bar"
    assert cell["command"] == [
        "ab", "-n", "2000", "-c", "50", "-g", "requests.tsv", "http://127.0.0.1:18080/hello/bar"
    ]  # fmt: skip
    assert cell["repetition"] == 1
    assert cell["requests"] == 2000 and cell["duration_s"] is None
    assert cell["concurrency"] == 50 and cell["keepalive"] is False
    assert cell["threshold_ms"] == 300
    assert cell["raw_output"] == f"raw/{plan['cell_id']}.txt"
    assert cell["tool"] == "ab" and cell["tool_version"] == "2.3"
    assert cell["started_at"].endswith("Z")
    assert before <= datetime.fromisoformat(cell["started_at"]) <= after
    assert isinstance(cell["elapsed_s"], float) and cell["elapsed_s"] >= 0
    assert cell["rps"] == parse("ab", read_data("ab", "normal.txt")).rps


def test_cell_validates_as_a_stored_run_cell_and_matches_the_file(tmp_path: Path) -> None:
    plan = one_plan(WRK_PLAN, warmup={"requests": 200})
    cell, _ = measure(plan, tmp_path, FakeLoadgen(read_data("latency", "wrk-fast.txt")).expect(2))
    assert validate_cell(cell, require_meta=True) == []
    stored = json.loads((tmp_path / "cells" / f"{plan['cell_id']}.json").read_text(encoding="utf-8"))
    assert stored == cell


def test_loadgen_other_than_target_is_network_mode(tmp_path: Path) -> None:
    cell, _ = measure(
        one_plan(AB_PLAN), tmp_path, FakeLoadgen(read_data("ab", "normal.txt")).expect(1), NETWORK
    )
    assert cell["mode"] == "network"
    assert cell["loadgen"] == "loadgen1" and cell["target"] == "target1"


def test_ipv6_target_address_is_bracketed_in_the_url(tmp_path: Path) -> None:
    fake = FakeLoadgen(read_data("ab", "normal.txt")).expect(1)
    cell, _ = measure(one_plan(AB_PLAN), tmp_path, fake, Target(host="fd00::2", target="t", loadgen="l"))
    assert cell["url"] == "http://[fd00::2]:18080/hello/bar"
    assert shlex.split(fake.commands[0])[-1] == "http://[fd00::2]:18080/hello/bar"


def test_wrk_gets_the_version_the_caller_probed(tmp_path: Path) -> None:
    plan = one_plan(WRK_PLAN)
    cell, _ = measure(
        plan, tmp_path, FakeLoadgen(read_data("latency", "wrk-fast.txt")).expect(1), tool_version="wrk 4.1.0"
    )
    assert cell["tool_version"] == "wrk 4.1.0"
    assert cell["duration_s"] == 3 and cell["requests"] is None
    assert cell["latency_ms"]["p99"] == 9.536  # from its histogram (wrk printed 9.55ms)


def test_version_printed_by_the_tool_wins_over_the_probed_one(tmp_path: Path) -> None:
    fake = FakeLoadgen(read_data("ab", "normal.txt")).expect(1)
    cell, _ = measure(one_plan(AB_PLAN), tmp_path, fake, tool_version="something else")
    assert cell["tool_version"] == "2.3"


def test_stderr_is_kept_after_stdout_in_the_raw_output(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN)
    out = read_data("ab", "normal.txt").rstrip("\n")
    fake = FakeLoadgen(out, stderr="a warning on stderr\n").expect(1)
    measure(plan, tmp_path, fake)
    raw = (tmp_path / "raw" / f"{plan['cell_id']}.txt").read_text(encoding="utf-8")
    assert raw == out + "\na warning on stderr\n"


@pytest.mark.parametrize(
    ("load_plan", "tool", "name"),
    [
        (AB_PLAN, "ab", "normal.txt"),
        (AB_K_PLAN, "ab", "keepalive.txt"),
        (WRK_PLAN, "latency", "wrk-fast.txt"),
    ],
)
def test_cell_is_stored_under_the_plan_cell_id_so_a_rerun_finds_it(
    tmp_path: Path, load_plan: dict, tool: str, name: str
) -> None:
    plan = one_plan(load_plan)
    measure(plan, tmp_path, FakeLoadgen(read_data(tool, name)).expect(1))
    assert [p.name for p in (tmp_path / "cells").glob("*.json")] == [f"{plan['cell_id']}.json"]


def test_every_cell_of_an_experiment_gets_its_own_files(tmp_path: Path) -> None:
    outputs = {"ab": read_data("ab", "normal.txt"), "wrk": read_data("latency", "wrk-fast.txt")}
    all_plans = plans(AB_PLAN, WRK_PLAN, repetitions=2)
    assert len(all_plans) == 4
    for plan in all_plans:
        measure(plan, tmp_path, FakeLoadgen(outputs[plan["tool"]]).expect(1))
    ids = sorted(p["cell_id"] for p in all_plans)
    assert sorted(p.stem for p in (tmp_path / "cells").glob("*.json")) == ids
    assert sorted(p.name for p in (tmp_path / "raw").glob("*.txt")) == sorted(
        [f"{i}.txt" for i in ids] + [f"{i}.vmstat.txt" for i in ids]
    )


# ---------------------------------------------------------------- resume


def test_stored_cell_is_not_measured_again(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN, warmup={"requests": 200})
    first, measured = measure(plan, tmp_path, FakeLoadgen(read_data("ab", "normal.txt")).expect(2))
    assert measured
    again = FakeLoadgen(read_data("ab", "non2xx.txt")).expect(2)
    second, measured = measure(plan, tmp_path, again)
    assert measured is False
    assert again.commands == []
    assert second == first


def test_a_run_folder_that_turned_read_only_stores_nothing_and_the_resume_measures_the_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29's read-only run folder, one of its six faults (tests/bad-inputs/faults): the write's error
    ends the cell and the run, nothing of the cell is stored, and the resume measures it. (Root writes
    through a mode of 0555, so the file system's answer is given here.)"""
    plan = one_plan(AB_PLAN, warmup={"requests": 200})

    def read_only(path: Path, _text: str) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    with monkeypatch.context() as m:
        m.setattr(runner, "write_atomic", read_only)
        with pytest.raises(StorageFailed, match=r"EROFS \(Read-only file system\)") as err:
            measure(plan, tmp_path, FakeLoadgen(read_data("ab", "normal.txt")).expect(2))
    assert err.value.reason == "storage"
    assert not (tmp_path / "cells").exists()
    cell, measured = measure(plan, tmp_path, FakeLoadgen(read_data("ab", "normal.txt")).expect(2))
    assert measured and (tmp_path / "cells" / f"{plan['cell_id']}.json").is_file()


def _refuse(code: int) -> Any:
    def refuse(*_args: Any, **_kw: Any) -> None:
        raise OSError(code, os.strerror(code))

    return refuse


@pytest.mark.parametrize("code", [errno.EACCES, errno.EPERM, errno.ENOSPC], ids=errno.errorcode.get)
def test_a_cell_that_fails_to_write_stops_with_a_storage_error_and_leaves_no_part_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    """Issue 44: the cell's own write fails (here at its fsync, after its bytes went to the temporary file):
    one line naming the errno and the cell's path, no file in cells/ (no temporary one either) and none of
    the cell's raw files; the next attempt (a resume) measures and stores it."""
    plan = one_plan(AB_PLAN, warmup={"requests": 200})
    with monkeypatch.context() as m:
        m.setattr(os, "fsync", _refuse(code))
        with pytest.raises(StorageFailed) as err:
            measure(plan, tmp_path, FakeLoadgen(read_data("ab", "normal.txt")).expect(2))
    final = tmp_path / "cells" / f"{plan['cell_id']}.json"
    assert str(err.value) == (
        f"{plan['cell_id']}: cannot store the cell, nothing of it is kept: "
        f"{errno.errorcode[code]} ({os.strerror(code)}): {final}"
    )
    assert err.value.reason == "storage" and "\n" not in str(err.value)
    assert list((tmp_path / "cells").iterdir()) == []
    assert list((tmp_path / "raw").iterdir()) == []
    again = FakeLoadgen(read_data("ab", "normal.txt")).expect(2)
    cell, measured = measure(plan, tmp_path, again)
    assert measured and len(again.commands) == 2
    assert json.loads(final.read_text(encoding="utf-8")) == cell


@pytest.mark.parametrize("code", [errno.EACCES, errno.EPERM, errno.ENOSPC], ids=errno.errorcode.get)
def test_a_run_folder_that_cannot_be_written_stops_the_cell_before_any_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    """Nothing is measured into the void: the probe write before the cell fails, and the loadgen is sent
    nothing (no sweep, no warm-up, no load)."""
    plan = one_plan(AB_PLAN, warmup={"requests": 200})
    sent: list[str] = []

    def loadgen(command: str) -> tuple[int, str, str]:
        sent.append(command)
        return 0, "", ""

    with monkeypatch.context() as m:
        m.setattr(runner, "probe_writable", _refuse(code))
        with pytest.raises(StorageFailed, match=rf"nothing measured: {errno.errorcode[code]} ") as err:
            measure(plan, tmp_path, loadgen)
    assert sent == [] and str(tmp_path / "cells") in str(err.value)
    assert not (tmp_path / "cells").exists() and not (tmp_path / "raw").exists()


def test_the_probe_before_a_cell_leaves_nothing_behind_and_refuses_a_file_named_cells(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN)
    runner.check_storage(tmp_path, plan["cell_id"])
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "cells").write_text("not a folder", encoding="utf-8")
    with pytest.raises(
        StorageFailed, match=rf"nothing measured: ENOTDIR \(Not a directory\): {tmp_path}/cells$"
    ):
        runner.check_storage(tmp_path, plan["cell_id"])


# ---------------------------------------------------------------- failures


@pytest.mark.parametrize(("tool", "plan"), [("ab", AB_PLAN), ("wrk", WRK_PLAN)])
def test_connect_refused_fails_the_cell_naming_the_raw_file(tmp_path: Path, tool: str, plan: dict) -> None:
    p = one_plan(plan)
    output = read_data(tool, "connect-refused.txt")
    with pytest.raises(CellFailed) as err:
        measure(p, tmp_path, FakeLoadgen(output, rc=1).expect(1))
    raw_rel = f"raw/{p['cell_id']}.txt"
    assert raw_rel in str(err.value)
    assert p["cell_id"] in str(err.value)
    assert (tmp_path / raw_rel).read_text(encoding="utf-8") == output
    assert not (tmp_path / "cells" / f"{p['cell_id']}.json").exists()


def test_a_hung_stack_that_completed_nothing_and_failed_nothing_fails_the_cell(tmp_path: Path) -> None:
    plan = one_plan(WRK_PLAN)
    with pytest.raises(CellFailed, match=r"completed no request and counted no error"):
        measure(plan, tmp_path, FakeLoadgen(read_data("wrk", "hung-server.txt")).expect(1))
    assert not (tmp_path / "cells").exists()


def test_a_cell_where_every_request_failed_is_stored_with_its_errors(tmp_path: Path) -> None:
    plan = one_plan(WRK_PLAN)
    cell, measured = measure(plan, tmp_path, FakeLoadgen(read_data("latency", "wrk-drop.txt")).expect(1))
    assert measured and cell["requests_completed"] == 0
    assert cell["errors"]["read"] > 0 and cell["error_rate"] == 1.0


def test_failed_cell_is_measured_again_on_a_rerun(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN)
    with pytest.raises(CellFailed):
        measure(plan, tmp_path, FakeLoadgen(read_data("ab", "connect-refused.txt"), rc=1).expect(1))
    fake = FakeLoadgen(read_data("ab", "normal.txt")).expect(1)
    _, measured = measure(plan, tmp_path, fake)
    assert measured and len(fake.commands) == 1
    raw = (tmp_path / "raw" / f"{plan['cell_id']}.txt").read_text(encoding="utf-8")
    assert raw == read_data("ab", "normal.txt")


def test_timeout_exit_code_fails_the_cell_even_with_parsable_output(tmp_path: Path) -> None:
    plan = one_plan(WRK_PLAN)
    with pytest.raises(CellFailed, match=r"wrk did not finish within 63 s; see raw/.*__wrk__c32__r1\.txt"):
        measure(plan, tmp_path, FakeLoadgen(read_data("latency", "wrk-fast.txt"), rc=124).expect(1))
    assert not (tmp_path / "cells").exists()


def test_fatal_ab_output_fails_the_cell_with_the_exit_code(tmp_path: Path) -> None:
    plan = one_plan({"tool": "ab", "concurrency": 5, "requests": 300})
    with pytest.raises(CellFailed, match=r"exit code 1; raw output in raw/"):
        measure(plan, tmp_path, FakeLoadgen(read_data("ab", "receive-reset-fatal.txt"), rc=1).expect(1))


def test_wrk_usage_error_fails_the_cell(tmp_path: Path) -> None:
    with pytest.raises(CellFailed, match="raw output in raw/"):
        measure(
            one_plan(WRK_PLAN), tmp_path, FakeLoadgen(read_data("wrk", "usage-error.txt"), rc=1).expect(1)
        )


# ---------------------------------------------------------------- run.json


def test_write_run_info_writes_schema_version_and_info(tmp_path: Path) -> None:
    from benchstack import __version__

    path = write_run_info(tmp_path, {"experiment": {"name": "e"}, "hosts": {"t": {"kernel": "6.1"}}})
    assert path == tmp_path / "run.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {
        "schema": "bench-stack/run/v6",
        "bench_stack_version": __version__,
        "experiment": {"name": "e"},
        "experiment_sha256": experiment_hash({"name": "e"}),
        "hosts": {"t": {"kernel": "6.1"}},
    }


def test_write_run_info_is_rewritten_on_a_resumed_run(tmp_path: Path) -> None:
    write_run_info(tmp_path, {"inventory": "inventories/local"})
    verify = {"passed": True, "at": datetime(2024, 1, 2, tzinfo=UTC), "stacks": []}
    write_run_info(tmp_path, {"inventory": "inventories/other", "verify": verify})
    data = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert data["inventory"] == "inventories/other"
    assert data["verify"]["at"] == "2024-01-02 00:00:00+00:00"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_write_run_info_creates_the_run_folder(tmp_path: Path) -> None:
    path = write_run_info(tmp_path / "results" / "run1", {})
    assert path.is_file()


def test_write_run_info_waits_for_a_stop_being_recorded_and_keeps_it(tmp_path: Path) -> None:
    # A resumed run writes run.json while a loadgen of the killed run may still record its stop: both go
    # through the run folder's lock, so neither write is lost.
    write_run_info(tmp_path, {"inventory": "inventories/local"})
    fd = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as record_stop holds it while it rewrites run.json
    writer = threading.Thread(target=write_run_info, args=(tmp_path, {"inventory": "inventories/other"}))
    writer.start()
    writer.join(0.3)
    assert writer.is_alive(), "run.json was written while another writer held the run folder's lock"
    data = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    data["stopped"] = [{"cell": "c", "reason": "failed", "message": "m", "at": "2026-12-03T01:00:00Z"}]
    (tmp_path / "run.json").write_text(json.dumps(data), encoding="utf-8")
    os.close(fd)
    writer.join(10)
    data = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert data["inventory"] == "inventories/other" and data["stopped"][0]["cell"] == "c"


def test_write_run_info_replaces_a_run_json_that_is_not_json(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text("{half", encoding="utf-8")
    write_run_info(tmp_path, {"inventory": "inventories/local"})
    assert json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))["inventory"] == "inventories/local"


# ---------------------------------------------------------------- per-request data and system stats


def test_ab_with_a_threshold_counts_slow_requests_from_its_g_file(tmp_path: Path) -> None:
    plan = one_plan({"tool": "ab", "concurrency": 20, "requests": 400}, threshold_ms=300)
    helpers = Helpers(tsv=read_data("ab", "gnuplot-slow.tsv"))
    fake = FakeLoadgen(read_data("ab", "gnuplot-slow.txt"), helpers=helpers).expect(1)
    cell, _ = measure(plan, tmp_path, fake)
    assert cell["command"][-3:-1] == ["-g", "requests.tsv"]  # in the measured command's own folder
    assert cell["errors"]["over_threshold"] == 31  # awk -F'\t' 'NR>1 && $5>300' gnuplot-slow.tsv | wc -l
    assert cell["error_count"] == 31
    assert cell["error_rate"] == pytest.approx(31 / 400)
    # nearest-rank percentiles of the 400 request times (ab's own table is one rank off: 11 and 1012 ms)
    assert (cell["latency_ms"]["p50"], cell["latency_ms"]["p90"], cell["latency_ms"]["p99"]) == (0, 10, 1006)
    stored = (tmp_path / "raw" / f"{plan['cell_id']}.requests.tsv").read_text(encoding="utf-8")
    assert stored == read_data("ab", "gnuplot-slow.tsv")
    assert validate_cell(cell, require_meta=True) == []


@pytest.mark.parametrize(
    ("folder", "name", "plan"),
    [
        ("ab", "gnuplot-slow", {"tool": "ab", "concurrency": 20, "requests": 400}),
        ("multi", "ab-lg1", {"tool": "ab", "concurrency": 50, "requests": 3000}),
    ],
)
def test_an_ab_cells_mean_with_its_g_file_is_every_requests_as_a_merged_cell_computes_it(
    tmp_path: Path, folder: str, name: str, plan: dict[str, Any]
) -> None:
    from benchstack.kinds.loadtools.perrequest import ab_request_times
    from benchstack.measure.merge import latency_from_times

    tsv = read_data(folder, f"{name}.tsv")
    fake = FakeLoadgen(read_data(folder, f"{name}.txt"), helpers=Helpers(tsv=tsv)).expect(1)
    cell, _ = measure(one_plan(plan), tmp_path, fake)
    own = latency_from_times(ab_request_times(tsv))
    assert (cell["latency_ms"]["mean"], cell["latency_ms"]["stdev"]) == (own["mean"], own["stdev"])
    # ab's Total row rounds the same mean to whole ms (gnuplot-slow: 79, ab-lg1: 65); its "Time per request"
    # (101.278, 66.129 ms) is another figure.
    total = parse("ab", read_data(folder, f"{name}.txt")).latency_ms["mean"]
    assert abs(cell["latency_ms"]["mean"] - total) <= 0.5


def test_ab_slow_and_failed_requests_are_not_counted_twice(tmp_path: Path) -> None:
    plan = one_plan({"tool": "ab", "concurrency": 10, "requests": 1000, "keepalive": True}, threshold_ms=300)
    # /mixed: 516 non-2xx (also 484 length failures); pretend 600 requests were slow as well.
    tsv = read_data("ab", "gnuplot-mixed.tsv").splitlines()
    slowed = [tsv[0]] + [
        "\t".join([*line.split("\t")[:4], "900", "900"]) if i < 600 else line
        for i, line in enumerate(tsv[1:])
    ]
    fake = FakeLoadgen(read_data("ab", "gnuplot-mixed.txt"), helpers=Helpers(tsv="\n".join(slowed) + "\n"))
    cell, _ = measure(plan, tmp_path, fake.expect(1))
    assert cell["errors"]["status"] == 516 and cell["errors"]["over_threshold"] == 600
    # failed 516 + slow ones beyond the 516 that may be the failed ones: 516 + 84
    assert cell["error_count"] == 600


def test_ab_without_its_g_file_leaves_over_threshold_unmeasured(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN, threshold_ms=300)
    cell, _ = measure(plan, tmp_path, FakeLoadgen(read_data("ab", "normal.txt"), helpers=Helpers(tsv="")))
    assert cell["errors"]["over_threshold"] is None
    assert any("ab wrote no -g file" in n for n in cell["notes"])


def test_wrk_with_a_threshold_runs_the_report_script_with_a_longer_timeout(tmp_path: Path) -> None:
    plan = one_plan({"tool": "wrk", "concurrency": 4, "threads": 1, "duration_s": 3}, threshold_ms=300)
    helpers = Helpers()
    fake = FakeLoadgen(read_data("wrk", "report-slow.txt"), helpers=helpers).expect(1)
    cell, _ = measure(plan, tmp_path, fake)
    assert cell["command"] == [
        "env", "BENCH_STACK_THRESHOLD_MS=300", "BENCH_STACK_CONNECTIONS=4",
        "wrk", "-t", "1", "-c", "4", "-d", "3s", "--latency", "--timeout", "2s",
        "-s", "/var/lib/bench-stack/bench-stack-wrk-report-0123456789abcdef.lua",
        "http://127.0.0.1:18080/hello/bar",
    ]  # fmt: skip
    # 12 of the 169 requests (after undoing wrk's correction; 120 of 315 samples before)
    assert cell["errors"]["over_threshold"] == 12
    assert cell["error_count"] == 12 and cell["error_rate"] == pytest.approx(12 / 169)
    assert not any("estimate" in n for n in cell["notes"])


def test_wrk_slow_responses_and_timeouts_are_distinct_errors(tmp_path: Path) -> None:
    plan = one_plan(
        {"tool": "wrk", "concurrency": 4, "threads": 1, "duration_s": 3, "timeout_s": 1}, threshold_ms=300
    )
    cell, _ = measure(plan, tmp_path, FakeLoadgen(read_data("wrk", "report-timeouts.txt")).expect(1))
    assert (cell["errors"]["timeout"], cell["errors"]["over_threshold"], cell["error_count"]) == (7, 3, 10)


def test_wrk_timeout_is_above_a_long_threshold_unless_the_plan_sets_one(tmp_path: Path) -> None:
    plan = one_plan({"tool": "wrk", "concurrency": 32, "threads": 2, "duration_s": 3}, threshold_ms=1500)
    fake = FakeLoadgen(read_data("wrk", "report-fast.txt")).expect(1)
    cell, _ = measure(plan, tmp_path, fake)
    assert cell["command"][cell["command"].index("--timeout") + 1] == "3s"
    assert cell["errors"]["over_threshold"] == 0
    plan = one_plan({"tool": "wrk", "concurrency": 32, "duration_s": 3, "timeout_s": 9}, threshold_ms=1500)
    cell, _ = measure(plan, tmp_path / "b", FakeLoadgen(read_data("wrk", "report-fast.txt")).expect(1))
    assert cell["command"][cell["command"].index("--timeout") + 1] == "9s"


def test_wrk_script_is_installed_once_by_its_hash_and_the_shipped_script_is_valid() -> None:
    from benchstack.kinds.loadtools.wrk import install_script_command, wrk_script

    text = wrk_script()
    assert "done = function(summary, latency, requests)" in text
    assert "BENCH-STACK-WRK-REPORT" in text
    command = install_script_command(text)
    assert "sha256sum -c --status" in command and "/var/lib/bench-stack" in command


def test_wrk_output_without_the_report_scripts_line_fails_the_cell_as_incomplete(tmp_path: Path) -> None:
    # wrk/latency.txt: a whole wrk report without the line the script prints after it from done()
    plan = one_plan(WRK_PLAN, threshold_ms=300)
    with pytest.raises(CellFailed, match="printed no BENCH-STACK-WRK-REPORT line: its output is incomplete"):
        measure(plan, tmp_path, FakeLoadgen(read_data("wrk", "latency.txt")).expect(1))
    assert not (tmp_path / "cells").exists()


def test_vmstat_runs_beside_the_measured_command_only(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN, warmup={"requests": 200})
    fake = FakeLoadgen(read_data("ab", "normal.txt")).expect(2)
    cell, _ = measure(plan, tmp_path, fake)
    warm, measured = fake.shell
    assert "vmstat" not in warm
    assert "timeout 670 vmstat -n 1 > vmstat.txt" in measured  # the tool's bound + 10 s
    assert measured.index("vmstat -n 1") < measured.index(" ab -n 2000 ") < measured.index("kill $v")
    raw = tmp_path / "raw" / f"{plan['cell_id']}.vmstat.txt"
    assert raw.read_text(encoding="utf-8") == read_data("vmstat", "vmstat-during-wrk.txt")
    loadgen = cell["system"]["loadgen"]
    assert loadgen["samples"] == 9
    assert loadgen["cpu_idle"] == pytest.approx(round((0 + 0 + 0 + 19 + 7 + 6 + 2 + 0 + 1) / 9, 2))
    assert cell["system"]["target"] == loadgen  # loopback: one host
    assert raw.with_name(f"{plan['cell_id']}.txt").read_text(encoding="utf-8") == read_data(
        "ab", "normal.txt"
    )


def test_each_cell_first_stops_what_an_interrupted_run_left_running_and_says_so(tmp_path: Path) -> None:
    helpers = Helpers(swept=2)
    fake = FakeLoadgen(read_data("ab", "normal.txt"), helpers=helpers).expect(2)
    cell, _ = measure(one_plan(AB_PLAN, warmup={"requests": 200}), tmp_path, fake, run_id="run-42")
    sweep = helpers.commands[0]
    assert (
        sweep.startswith("n=0; for o in /tmp/bench-stack-run.") and "/tmp/bench-stack-run.run-42.*)" in sweep
    )
    assert all(s.startswith("d=$(mktemp -d /tmp/bench-stack-run.run-42.XXXXXX)") for s in fake.shell)
    assert any(
        "stopped 2 load command(s) or vmstat of an earlier, interrupted run" in n for n in cell["notes"]
    )


def test_network_mode_without_a_target_executor_has_no_target_stats(tmp_path: Path) -> None:
    cell, _ = measure(one_plan(AB_PLAN), tmp_path, FakeLoadgen(read_data("ab", "normal.txt")), NETWORK)
    assert cell["system"]["loadgen"] is not None and cell["system"]["target"] is None


def test_network_mode_with_a_target_executor_takes_target_stats(tmp_path: Path) -> None:
    # The target's vmstat differs from the loadgen's: two of its nine samples were 9 % idle instead of 0 %.
    target_vmstat = read_data("vmstat", "vmstat-during-wrk.txt").replace(" 0  0  5\n", " 9  0  5\n")
    target_helpers = Helpers(vmstat=target_vmstat)
    target_calls: list[str] = []

    def on_target(command: str) -> tuple[int, str, str]:
        target_calls.append(command)
        reply = target_helpers.reply(command)
        assert reply is not None, command
        return reply

    fake = FakeLoadgen(read_data("ab", "normal.txt"))
    cell, _ = measure(one_plan(AB_PLAN), tmp_path, fake, NETWORK, target_execute=on_target)
    assert len(target_calls) == 2
    target, loadgen = cell["system"]["target"], cell["system"]["loadgen"]
    assert target["samples"] == loadgen["samples"] == 9
    assert target["cpu_idle"] == round((0 + 9 + 9 + 19 + 7 + 6 + 2 + 0 + 1) / 9, 2)
    assert loadgen["cpu_idle"] == round((0 + 0 + 0 + 19 + 7 + 6 + 2 + 0 + 1) / 9, 2)
    assert (target["cpu_idle_median"], loadgen["cpu_idle_median"]) == (6.0, 1.0)
    idle = ("cpu_idle", "cpu_idle_median")
    assert {k: v for k, v in target.items() if k not in idle} == {
        k: v for k, v in loadgen.items() if k not in idle
    }
    raw = tmp_path / "raw" / f"{cell['stack']}__ab__c50__r1.target.vmstat.txt"
    assert raw.read_text(encoding="utf-8") == target_vmstat


def test_vmstat_failure_is_a_note_not_a_failed_cell(tmp_path: Path) -> None:
    fake = FakeLoadgen(read_data("ab", "normal.txt"), helpers=Helpers(fail=frozenset({"vmstat"})))
    cell, measured = measure(one_plan(AB_PLAN), tmp_path, fake.expect(1))
    assert measured and cell["system"] == {"loadgen": None, "target": None}
    assert any(n.startswith("vmstat did not run: timeout: failed to run command") for n in cell["notes"])


HTTPERF_PLAN = {"tool": "httperf", "rate": 200, "duration_s": 5}


def test_httperf_cell_is_open_loop_with_its_rate_and_the_threshold_as_timeout(tmp_path: Path) -> None:
    plan = one_plan(HTTPERF_PLAN, warmup={"duration_s": 2}, threshold_ms=300)
    assert plan["cell_id"] == f"{STACK}__httperf__rate200__r1" and plan["concurrency"] is None
    fake = FakeLoadgen(read_data("httperf", "ok.txt")).expect(2)
    cell, measured = measure(plan, tmp_path, fake)
    warm, measured_cmd = (shlex.split(c) for c in fake.commands)
    assert warm[warm.index("--num-conns") + 1] == "400"  # 2 s at 200/s
    assert measured_cmd[measured_cmd.index("--num-conns") + 1] == "1000"
    assert measured_cmd[measured_cmd.index("--timeout") + 1] == "0.3"
    assert measured and cell["tool"] == "httperf" and cell["rate"] == 200
    assert cell["concurrency"] == 6  # observed, not set
    assert cell["errors"]["over_threshold"] is None
    assert any("slower than the threshold (300 ms)" in n for n in cell["notes"])
    assert validate_cell(cell, require_meta=True) == []
    stored = json.loads((tmp_path / "cells" / f"{plan['cell_id']}.json").read_text())
    assert stored == cell


def test_a_stored_httperf_cell_without_its_rate_is_invalid(tmp_path: Path) -> None:
    cell, _ = measure(one_plan(HTTPERF_PLAN), tmp_path, FakeLoadgen(read_data("httperf", "ok.txt")).expect(1))
    assert validate_cell({**cell, "rate": None}, require_meta=True) == [
        "httperf is open loop: a stored cell needs its offered rate"
    ]


# ---------------------------------------------------------------- several loadgens


def test_per_request_data_is_kept_for_ab_without_a_threshold(tmp_path: Path) -> None:
    plan = one_plan({"tool": "ab", "concurrency": 20, "requests": 400})
    helpers = Helpers(tsv=read_data("ab", "gnuplot-slow.tsv"))
    fake = FakeLoadgen(read_data("ab", "gnuplot-slow.txt"), helpers=helpers).expect(1)
    cell, _ = measure(plan, tmp_path, fake)
    assert "-g" in cell["command"]
    assert cell["errors"]["over_threshold"] is None  # no threshold: nothing counted as slow
    stored = (tmp_path / "raw" / f"{plan['cell_id']}.requests.tsv").read_text(encoding="utf-8")
    assert stored == read_data("ab", "gnuplot-slow.tsv")


def test_the_barrier_hook_runs_after_warm_up_and_before_the_measured_run(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN, warmup={"requests": 200})
    fake = FakeLoadgen(read_data("ab", "normal.txt")).expect(2)
    events: list[str] = []

    def execute(command: str) -> tuple[int, str, str]:
        if not is_helper(command):
            events.append("measured" if "vmstat" in command else "warm-up")
        return fake(command)

    measure(plan, tmp_path, execute, before_measure=lambda: events.append("barrier"))  # type: ignore[arg-type]
    assert events == ["warm-up", "barrier", "measured"]


def test_the_go_comes_after_the_targets_stats_and_before_the_measured_run(tmp_path: Path) -> None:
    # The lead's round trip to the target happens before its go, so the others do not start before it.
    events: list[str] = []
    target_helpers = Helpers(vmstat=read_data("vmstat", "vmstat-during-wrk.txt"))

    def on_target(command: str) -> tuple[int, str, str]:
        events.append("target")
        reply = target_helpers.reply(command)
        assert reply is not None, command
        return reply

    fake = FakeLoadgen(read_data("ab", "normal.txt"))

    def execute(command: str) -> tuple[int, str, str]:
        if not is_helper(command) and "vmstat" in command:
            events.append("measured")
        return fake(command)

    measure(
        one_plan(AB_PLAN),
        tmp_path,
        execute,  # type: ignore[arg-type]
        NETWORK,
        target_execute=on_target,
        before_measure=lambda: events.append("barrier"),
        measure_now=lambda: events.append("go"),
    )
    assert events[:4] == ["barrier", "target", "go", "measured"]


def test_the_go_is_given_when_the_targets_stats_fail(tmp_path: Path) -> None:
    events: list[str] = []

    def on_target(command: str) -> tuple[int, str, str]:
        raise ConnectionError("target gone")

    with pytest.raises(ConnectionError):
        measure(
            one_plan(AB_PLAN),
            tmp_path,
            FakeLoadgen(read_data("ab", "normal.txt")),
            NETWORK,
            target_execute=on_target,
            measure_now=lambda: events.append("go"),
        )
    assert events == ["go"]  # the other loadgens are not left waiting out their timeout


def test_a_stored_cell_does_not_wait_at_the_barrier(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN)
    measure(plan, tmp_path, FakeLoadgen(read_data("ab", "normal.txt")).expect(1))
    waited: list[bool] = []
    _, measured = measure(plan, tmp_path, FakeLoadgen(""), before_measure=lambda: waited.append(True))
    assert not measured and waited == []


# ---------------------------------------------------------------- latency distributions and windows


def test_the_measured_run_is_timed_on_the_loadgen_and_the_window_is_stored(tmp_path: Path) -> None:
    plan = one_plan(AB_PLAN)
    stderr = "Finished 2000 requests\nBENCH-STACK-WINDOW 1796075389.694224357 1796075392.401827631\n"
    fake = FakeLoadgen(read_data("ab", "normal.txt"), stderr=stderr).expect(1)
    cell, _ = measure(plan, tmp_path, fake)
    shell = fake.shell[-1]
    assert "s=$(date +%s.%N); t=pending; timeout --kill-after=5 660 ab " in shell
    assert "wait $t; rc=$?; t=; times > times.txt; e=$(date +%s.%N); " in shell
    assert 'echo "BENCH-STACK-WINDOW $s $e" >&2' in shell and shell.endswith("exit $rc")
    assert cell["window"] == {"start": "2026-11-30T21:49:49.694Z", "end": "2026-11-30T21:49:52.401Z"}
    assert not any("BENCH-STACK-WINDOW" in n for n in cell["notes"])


def test_a_cell_without_a_window_says_a_merge_cannot_cut_it(tmp_path: Path) -> None:
    cell, _ = measure(one_plan(AB_PLAN), tmp_path, FakeLoadgen(read_data("ab", "normal.txt")).expect(1))
    assert cell["window"] is None
    assert any("cannot cut this cell" in n for n in cell["notes"])


def test_every_ab_cell_stores_its_distribution_and_takes_its_percentiles_from_it(tmp_path: Path) -> None:
    plan = one_plan({"tool": "ab", "concurrency": 20, "requests": 2000})  # no threshold
    helpers = Helpers(tsv=read_data("latency", "ab-slow.tsv"))
    fake = FakeLoadgen(read_data("latency", "ab-slow.txt"), helpers=helpers).expect(1)
    cell, _ = measure(plan, tmp_path, fake)
    dist = cell["latency_dist"]
    assert dist["source"] == "ab" and dist["samples"] == dist["requests"] == 2000
    from benchstack.records.distribution import from_dict

    assert {k: cell["latency_ms"][k] for k in ("p50", "p99", "p99.9")} == {
        k: from_dict(dist).latency_ms()[k] for k in ("p50", "p99", "p99.9")
    }
    assert cell["latency_ms"]["p99.99"] is None and "p99.99" in dist["unsupported"]
    assert validate_cell(cell, require_meta=True) == []


def test_an_ab_g_file_with_other_requests_than_ab_completed_is_not_used(tmp_path: Path) -> None:
    plan = one_plan({"tool": "ab", "concurrency": 20, "requests": 2000}, threshold_ms=300)
    tsv = read_data("latency", "ab-slow.tsv").splitlines(keepends=True)
    helpers = Helpers(tsv="".join(tsv[:-10]))  # cut at a line's end: 1990 requests
    cell, _ = measure(plan, tmp_path, FakeLoadgen(read_data("latency", "ab-slow.txt"), helpers=helpers))
    assert cell["latency_dist"] is None and cell["errors"]["over_threshold"] is None
    assert any(
        "ab -g holds 1990 request times for 2000 complete requests: not used" in n for n in cell["notes"]
    )
    assert cell["latency_ms"]["p99"] == parse("ab", read_data("latency", "ab-slow.txt")).latency_ms["p99"]


def test_every_wrk_cell_runs_the_report_script_and_stores_wrks_histogram(tmp_path: Path) -> None:
    plan = one_plan(WRK_PLAN)  # no threshold
    cell, _ = measure(plan, tmp_path, FakeLoadgen(read_data("latency", "wrk-fast.txt")).expect(1))
    assert cell["command"][:2] == ["env", "BENCH_STACK_CONNECTIONS=32"] and "-s" in cell["command"]
    assert cell["latency_dist"]["source"] == "wrk" and cell["latency_dist"]["corrected"] is True
    assert cell["errors"]["over_threshold"] is None


def test_every_httperf_cell_asks_for_and_stores_its_lifetime_histogram(tmp_path: Path) -> None:
    plan = one_plan({"tool": "httperf", "rate": 500, "duration_s": 5})
    fake = FakeLoadgen(read_data("httperf", "hist-ok.txt")).expect(1)
    cell, _ = measure(plan, tmp_path, fake)
    assert shlex.split(fake.commands[-1])[3:6] == ["httperf", "--verbose", "--verbose"]
    assert cell["latency_dist"]["source"] == "httperf" and cell["latency_dist"]["samples"] == 2500
    assert cell["latency_ms"]["p99.9"] is not None
    assert validate_cell(cell, require_meta=True) == []


def test_a_stored_cell_writes_its_pairs_ten_to_a_line(tmp_path: Path) -> None:
    plan = one_plan(WRK_PLAN)
    cell, _ = measure(plan, tmp_path, FakeLoadgen(read_data("latency", "wrk-fast.txt")).expect(1))
    text = (tmp_path / "cells" / f"{plan['cell_id']}.json").read_text(encoding="utf-8")
    assert json.loads(text) == cell
    pairs = len(cell["latency_dist"]["counts"])
    assert text.count("\n      [") == math.ceil(pairs / 10)  # ten [value_us, count] to a line
    assert "      [35,1],[36,1]," in text
    assert len(text) < 12 * pairs + 4000
