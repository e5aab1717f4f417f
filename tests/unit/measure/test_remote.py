"""The shell the runner sends to a loadgen, run here for real with sh: whatever ends a load command, its tool,
vmstat and folder are gone; a later run stops what an interrupted one left running, and only that."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import in_child, printed_json

from benchstack.measure import remote
from benchstack.measure.runner import window_of

ROOT = Path(__file__).resolve().parents[3]
# Unique durations, so the processes of these tests can be told from any other sleep or vmstat here, those
# of another test session on the machine included (pgrep and pkill look machine-wide): this process's pid.
TOOL = f"sleep 41.{os.getpid():07d}"
VMSTAT_S = 100 + os.getpid() % 900
OWN = f"sleep 30.{os.getpid():07d}"
# How long a stopped process may take to be gone: far below the tool's 41 s, so a process left running still
# fails, and long enough for a machine busy with other work (2 s failed at load 3-8).
GONE_S = 10


def run_id() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"


def folders(rid: str) -> list[str]:
    return glob.glob(remote.folder_pattern(rid))


def running(pattern: str) -> list[str]:
    out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True, check=False).stdout
    return out.split()


def gone_within(seconds: float, check: object) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not check():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return not check()  # type: ignore[operator]


def _default_signals() -> None:
    # A shell cannot trap a signal ignored when it started: under `nohup` or `&` the runner's SIGHUP or
    # SIGINT would be ignored here, as no connection's shell has them.
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)


def start(script: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["sh", "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_default_signals,
    )


def sweep(rid: str) -> subprocess.CompletedProcess[str]:
    """Run the sweep of run ``rid`` here, as a loadgen would before a cell."""
    return subprocess.run(
        ["sh", "-c", remote.sweep_command(rid)], capture_output=True, text=True, timeout=30, check=False
    )


def wait_for_folder(rid: str) -> str:
    for _ in range(100):
        found = folders(rid)
        if found and Path(found[0], "pid").exists():
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no folder for run {rid}")


@pytest.fixture(autouse=True)
def own_temp_root(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run folders in this session's own root: a sweep stops every other run's script it finds, and
    another session's (or a real run's) in /tmp is not this one's to stop."""
    root = tmp_path_factory.getbasetemp() / "remote-root"
    root.mkdir(exist_ok=True)
    monkeypatch.setattr(remote, "TEMP_ROOT", str(root))


@pytest.fixture(autouse=True)
def no_leftovers() -> Iterator[None]:
    yield
    for pid in running(TOOL) + running(f"timeout {VMSTAT_S} vmstat"):
        os.kill(int(pid), signal.SIGTERM)  # timeout passes it on to its tool


# The measured run below, started with the session (conftest's early_commands) in a root of its own, so that
# no sweep of the tests here stops it; its vmstat bound differs from the other tests' (no_leftovers stops
# those).
MEASURED_RID = run_id()
MEASURED_VMSTAT_S = VMSTAT_S + 1
MEASURED_ROOT = "remote-root-measured"


def measured_run(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """A measured run of a tool that prints, writes the -g file and exits 7 after 1.2 s."""
    tool = "sh -c 'echo report; sleep 1.2; printf \"starttime\\tseconds\\n\" > requests.tsv; exit 7'"
    root = folder.parent / MEASURED_ROOT
    root.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(remote, "TEMP_ROOT", str(root))
        script = remote.measured_script(MEASURED_RID, tool, MEASURED_VMSTAT_S)
    return {"measured": (["sh", "-c", script], dict(os.environ), folder)}


@pytest.mark.early.with_args(measured_run)
def test_a_measured_run_keeps_its_exit_code_prints_vmstat_and_the_g_file_then_removes_its_folder(
    early_results: dict[str, subprocess.CompletedProcess[str]],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    done = early_results["measured"]
    assert done.returncode == 7
    report, vmstat, tsv = remote.split_measured(done.stdout)
    assert report == "report\n"
    assert vmstat is not None and vmstat.startswith("procs")
    assert tsv == "starttime\tseconds\n"
    window = window_of(done.stderr)
    assert window is not None and window.start < window.end
    monkeypatch.setattr(remote, "TEMP_ROOT", str(tmp_path_factory.getbasetemp() / MEASURED_ROOT))
    assert folders(MEASURED_RID) == [] and running(f"timeout {MEASURED_VMSTAT_S} vmstat") == []


SIGNALS = [signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE]


def stopped_together(root: str, vmstat_base: int) -> dict[str, dict[str, Any]]:
    """The stops of the tests below, all started at once (each stop waits ~0.4 s for the script's trap, which
    sleeps 0.1 s then 0.3 s before it kills again), in a new interpreter (:func:`stopped`): a signal mid-run
    of a measured script, one between starting the tool and naming it, a warm-up killed mid-run. Each has a
    tool and a vmstat bound of its own, so each checks only its own processes. What each saw, by name."""
    remote.TEMP_ROOT = root
    # Per case: its tool, its vmstat bound (a measured script's), its run id; then its process.
    cases: dict[str, dict[str, Any]] = {}
    for k, name in enumerate([*(s.name for s in SIGNALS), "between", "vmstat_between", "warm_up"], start=1):
        cases[name] = {"tool": f"{TOOL}{k}", "vmstat": vmstat_base + k, "rid": run_id()}
    for sig in SIGNALS:
        case = cases[sig.name]
        case["proc"] = start(
            remote.measured_script(case["rid"], f"timeout 60 {case['tool']}", case["vmstat"])
        )
    between = cases["between"]
    # The tool's start as the scripts write it, with the signal forced into the gap after `CMD &` and before
    # `t=$!` (under load it landed there by itself: the tool kept running after the script ended).
    start_and_signal = remote.START_TOOL.format(between["tool"]).replace(" & t=$!", " & kill -TERM $$; t=$!")
    between["forced"] = start_and_signal != remote.START_TOOL.format(between["tool"])
    between["proc"] = start(remote.in_own_folder(between["rid"], f"{start_and_signal}; exit $rc"))
    # The same for vmstat, forced into the gap after its `&` and before `v=$!`: the script ends there, before
    # the tool starts, and vmstat must not outlive it.
    vmstat_between = cases["vmstat_between"]
    script = remote.measured_script(
        vmstat_between["rid"], f"timeout 60 {vmstat_between['tool']}", vmstat_between["vmstat"]
    )
    forced = script.replace(" & v=$!", " & kill -TERM $$; v=$!")
    vmstat_between["forced"] = forced != script
    vmstat_between["proc"] = start(forced)
    warm_up = cases["warm_up"]
    warm_up["proc"] = start(remote.load_script(warm_up["rid"], f"timeout 60 {warm_up['tool']}"))
    for sig in SIGNALS:
        case = cases[sig.name]
        wait_for_folder(case["rid"])
        # Both started (the script writes its pid before it starts them; in a niced lane that can take a
        # moment): the signal then has something to stop.
        both = (case["tool"], f"timeout {case['vmstat']} vmstat")
        case["running"] = gone_within(5, lambda both=both: not all(running(p) for p in both))
        case["proc"].send_signal(sig)
    wait_for_folder(warm_up["rid"])
    warm_up["proc"].send_signal(signal.SIGHUP)
    for case in cases.values():
        case["rc"] = case["proc"].wait(timeout=5)  # at once, not when the tool would have ended
    # Gone within GONE_S of the stops, all polled together: one after the other, a tool still running after
    # a broken stop would have ended by itself (41 s) before the last one was looked at.
    left = {
        name: [case["tool"], *([f"timeout {case['vmstat']} vmstat"] if name in WITH_VMSTAT else [])]
        for name, case in cases.items()
    }
    deadline = time.monotonic() + GONE_S
    while left and time.monotonic() < deadline:
        left = {name: own for name, own in left.items() if any(running(p) for p in own)}
        time.sleep(0.05)
    left = {name: own for name, own in left.items() if any(running(p) for p in own)}
    return {
        name: {
            "rc": case["rc"],
            "gone": name not in left,
            "folders": folders(case["rid"]),
            **{k: case[k] for k in ("running", "forced") if k in case},
        }
        for name, case in cases.items()
    }


SIGNALS_BY_NAME = {s.name: s for s in SIGNALS}
# The cases whose script is a measured one: vmstat runs beside the tool.
WITH_VMSTAT = {*SIGNALS_BY_NAME, "vmstat_between"}
# Above the bounds of this process's own vmstats (VMSTAT_S + 0 to 3): no_leftovers stops none of them.
STOPS_VMSTAT_S = VMSTAT_S + 10


def stopped(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """:func:`stopped_together` in a root of its own (no sweep here stops them), started with the session
    beside the other tests (conftest's early_commands): ~0.5 s of waiting, once instead of six times."""
    (folder / "stops").mkdir()
    argv = in_child("test_remote", "stopped_together", str(folder / "stops"), STOPS_VMSTAT_S)
    return {"stops": (argv, dict(os.environ), ROOT)}


@pytest.mark.early.with_args(stopped)
@pytest.mark.parametrize("sig", SIGNALS)
def test_a_signal_mid_run_stops_the_tool_and_vmstat_and_removes_the_folder(
    sig: signal.Signals, early_results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    found = printed_json(early_results["stops"])[sig.name]
    assert found["running"]  # the tool and vmstat, before the signal
    assert found["rc"] == 128 + sig
    assert found["gone"]
    assert found["folders"] == []


@pytest.mark.early.with_args(stopped)
def test_a_signal_between_starting_the_tool_and_naming_it_still_stops_it(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    found = printed_json(early_results["stops"])["between"]
    assert found["forced"]
    assert found["rc"] == 143
    assert found["gone"]
    assert found["folders"] == []


@pytest.mark.early.with_args(stopped)
def test_a_signal_between_starting_vmstat_and_naming_it_still_stops_it(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    found = printed_json(early_results["stops"])["vmstat_between"]
    assert found["forced"]
    assert found["rc"] == 143
    assert found["gone"]
    assert found["folders"] == []


def test_both_scripts_start_their_tool_as_the_trap_expects() -> None:
    assert remote.START_TOOL.format("TOOL") in remote.load_script(run_id(), "TOOL")
    assert remote.START_TOOL.format("TOOL") in remote.measured_script(run_id(), "TOOL", 5)


@pytest.mark.early.with_args(stopped)
def test_a_warm_up_killed_mid_run_leaves_nothing_either(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    found = printed_json(early_results["stops"])["warm_up"]
    assert found["gone"]
    assert found["folders"] == []


AWAY_VMSTAT_S = VMSTAT_S + 2
TARGET_VMSTAT_S = VMSTAT_S + 3


def client_gone(root: str, vmstat_s: int) -> dict[str, Any]:
    """A measured run of ``sleep 0.5`` whose output nobody reads, as :func:`start` runs it: its folder, then
    its exit code (in a new interpreter: :func:`away`)."""
    remote.TEMP_ROOT = root
    rid = run_id()
    proc = start(remote.measured_script(rid, "sleep 0.5", vmstat_s))
    folder = wait_for_folder(rid)
    return {"folder": folder, "rc": proc.wait(timeout=10)}


def away(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """:func:`client_gone` and :func:`vmstat_start_then_stop`, each in a root of its own (no sweep here stops
    them) and with a vmstat bound of its own (no_leftovers stops the others'), started with the session
    beside the other tests (conftest's early_commands): 0.6 s and 1.4 s of waiting."""
    commands = {}
    for name, vmstat_s in (("client_gone", AWAY_VMSTAT_S), ("vmstat_start_then_stop", TARGET_VMSTAT_S)):
        (folder / name).mkdir()
        commands[name] = (in_child("test_remote", name, str(folder / name), vmstat_s), dict(os.environ), ROOT)
    return commands


@pytest.mark.early.with_args(away)
def test_a_command_whose_client_went_away_runs_to_its_end_and_cleans_up(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    # Docker's exec: no signal reaches the command when its client dies; the pipe it writes to stays open.
    found = printed_json(early_results["client_gone"])
    assert found["rc"] == 0
    assert not Path(found["folder"]).exists() and running(f"timeout {AWAY_VMSTAT_S} vmstat") == []


def leftover_swept(root: str, vmstat_s: int) -> dict[str, Any]:
    """Another run's measured script left running, this run's own load script and a dead run's folder, then
    this run's sweep: what each became (in a new interpreter: :func:`sweeps`)."""
    remote.TEMP_ROOT = root
    old, mine = run_id(), run_id()
    leftover = start(remote.measured_script(old, f"timeout 60 {TOOL}", vmstat_s))
    wait_for_folder(old)
    own = start(remote.load_script(mine, OWN))
    own_folder = wait_for_folder(mine)
    dead = Path(f"{remote.TEMP_ROOT}/{remote.PREFIX}.{run_id()}.abc123")
    dead.mkdir()
    (dead / "pid").write_text("999999\n")  # no such process: a script that was killed outright
    try:
        swept = sweep(mine)
        return {
            "swept": [swept.returncode, swept.stdout],
            "leftover_rc": leftover.wait(timeout=5),
            "gone": gone_within(GONE_S, lambda: running(TOOL) or running(f"timeout {vmstat_s} vmstat")),
            "folders": folders(old),
            "dead": dead.exists(),
            # this run's own command goes on
            "own_running": own.poll() is None,
            "own_folder": Path(own_folder).exists(),
        }
    finally:
        own.kill()
        subprocess.run(["pkill", "-f", OWN], check=False)
        subprocess.run(["rm", "-rf", own_folder, str(dead)], check=False)


def batch_swept(root: str) -> dict[str, Any]:
    """A load script started in a batch, then another run's sweep: where the script ran, what the sweep and
    the batch said (in a new interpreter: :func:`sweeps`)."""
    remote.TEMP_ROOT = root
    old = run_id()
    batch = start(remote.batch_script(["true", remote.load_script(old, f"timeout 60 {TOOL}")]))
    folder = wait_for_folder(old)
    try:
        pid = int(Path(folder, "pid").read_text())
        cwd = os.readlink(f"/proc/{pid}/cwd")  # what the sweep checks
        swept = sweep(run_id())
        out, _ = batch.communicate(timeout=10)
        return {
            "folder": folder,
            "cwd": cwd,
            "swept": swept.stdout,
            "rcs": [rc for rc, _, _ in remote.split_batch(out, 2)],
            "gone": gone_within(GONE_S, lambda: running(TOOL)),
            "folders": folders(old),
        }
    finally:
        batch.kill()
        subprocess.run(["pkill", "-f", TOOL], check=False)


def swept_apart(root: str, vmstat_s: int) -> dict[str, dict[str, Any]]:
    """:func:`leftover_swept` then :func:`batch_swept`, each in a root of its own (a sweep stops every other
    run's script in its root)."""
    (Path(root) / "leftover").mkdir()
    (Path(root) / "batch").mkdir()
    return {
        "leftover": leftover_swept(str(Path(root) / "leftover"), vmstat_s),
        "batch": batch_swept(str(Path(root) / "batch")),
    }


# Above the stops' bounds (STOPS_VMSTAT_S + 1 to 7): a vmstat of the sweeps is none of theirs.
SWEEPS_VMSTAT_S = VMSTAT_S + 20


def sweeps(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """:func:`swept_apart` in a new interpreter (its tool and own command named after its pid, its vmstat
    bound its own: no_leftovers here stops none of them, nor do the stops' checks see them), started with
    the session beside the other tests (conftest's early_commands): each sweep waits ~0.4 s for the stopped
    script's trap."""
    (folder / "sweeps").mkdir()
    argv = in_child("test_remote", "swept_apart", str(folder / "sweeps"), SWEEPS_VMSTAT_S)
    return {"sweeps": (argv, dict(os.environ), ROOT)}


@pytest.mark.early.with_args(sweeps)
def test_the_sweep_stops_another_runs_leftover_and_removes_a_dead_ones_folder_but_not_this_runs(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    found = printed_json(early_results["sweeps"])["leftover"]
    assert found["swept"] == [0, "1\n"]
    assert found["leftover_rc"] == 128 + signal.SIGTERM
    assert found["gone"]
    assert found["folders"] == [] and not found["dead"]
    assert found["own_running"] and found["own_folder"]


def test_the_sweep_never_kills_a_process_that_only_reuses_a_leftovers_pid() -> None:
    # A folder whose pid now belongs to another process (not working in that folder) is removed, the
    # process left alone.
    other = subprocess.Popen(["sleep", "30.7"], cwd="/")
    stale = Path(f"{remote.TEMP_ROOT}/{remote.PREFIX}.{run_id()}.xyz789")
    stale.mkdir()
    (stale / "pid").write_text(f"{other.pid}\n")
    try:
        swept = sweep(run_id())
        assert swept.stdout == "0\n"
        assert other.poll() is None and not stale.exists()
    finally:
        other.kill()
        other.wait()


def vmstat_start_then_stop(root: str, vmstat_s: int) -> dict[str, str]:
    """The target's vmstat started, its pid file read, then stopped 1.2 s later: what each printed (in a new
    interpreter: :func:`away`)."""
    remote.TEMP_ROOT = root
    started = subprocess.run(
        ["sh", "-c", remote.target_vmstat_start(run_id(), vmstat_s)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    pid, folder, _ = started.stdout.split()
    pid_file = (Path(folder) / "pid").read_text()
    time.sleep(1.2)
    out = subprocess.run(
        ["sh", "-c", remote.target_vmstat_stop(int(pid), folder)], capture_output=True, text=True, timeout=30
    ).stdout
    return {"started": started.stdout, "started_err": started.stderr, "pid_file": pid_file, "stopped": out}


@pytest.mark.early.with_args(away)
def test_the_targets_vmstat_starts_in_its_own_folder_and_its_stop_leaves_nothing(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    found = printed_json(early_results["vmstat_start_then_stop"])
    pid, folder, stopped = found["started"].split()
    assert found["pid_file"].strip() == pid and stopped == "0"
    assert found["started_err"].startswith("BENCH-STACK-CPU state0 ")  # the target's state before the cell
    # The state after the cell first (printed even when a restart took the folder), then vmstat's samples.
    state, samples = found["stopped"].split("\n", 1)
    assert state.startswith("BENCH-STACK-CPU state1 ") and samples.startswith("procs")
    assert not Path(folder).exists() and gone_within(
        GONE_S, lambda: running(f"timeout {TARGET_VMSTAT_S} vmstat")
    )


def test_output_cut_before_the_markers_is_all_the_tools() -> None:
    assert remote.split_measured("half a report") == ("half a report", None, None)


def test_a_run_id_that_is_not_a_plain_word_is_refused() -> None:
    with pytest.raises(ValueError, match="run id"):
        remote.sweep_command("x; rm -rf /")


@pytest.mark.parametrize("plugin", ["ssh", "local"])
def test_commands_go_without_a_terminal_on_every_connection(plugin: str) -> None:
    """Ansible's ssh connection would ask for one (-tt) for a become command without input; the others have
    no such option (local, docker) and are left alone."""
    from ansible.playbook.play_context import PlayContext
    from ansible.plugins.loader import connection_loader

    conn = connection_loader.get(plugin, PlayContext(), None)
    conn.set_options(var_options={})
    had_tty = conn.has_option("use_tty") and conn.get_option("use_tty")
    remote.without_tty(conn)
    if plugin == "ssh":
        assert had_tty and conn.get_option("use_tty") is False
    else:
        assert not conn.has_option("use_tty")


def test_a_batch_replies_as_each_command_run_on_its_own_would() -> None:
    commands = [
        "echo out; echo err >&2; exit 3",
        "printf 'no newline, ünïcode'",
        "exit 0",
        remote.sweep_command(run_id()),
    ]
    alone = [subprocess.run(["sh", "-c", c], capture_output=True, text=True, check=False) for c in commands]
    batch = subprocess.run(
        ["sh", "-c", remote.batch_script(commands)], capture_output=True, text=True, timeout=30, check=False
    )
    assert batch.returncode == 0
    assert remote.split_batch(batch.stdout, len(commands)) == [
        (p.returncode, p.stdout, p.stderr) for p in alone
    ]


@pytest.mark.early.with_args(sweeps)
def test_a_load_script_in_a_batch_is_its_own_process_so_another_runs_sweep_stops_it(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    found = printed_json(early_results["sweeps"])["batch"]
    assert found["cwd"] == found["folder"]
    assert found["swept"] == "1\n"
    assert found["rcs"] == [0, 128 + signal.SIGTERM]
    assert found["gone"] and found["folders"] == []


def test_a_batch_cut_short_says_which_commands_did_not_run() -> None:
    done = subprocess.run(["sh", "-c", remote.batch_script(["echo a"])], capture_output=True, text=True)
    assert remote.split_batch(done.stdout, 3) == [
        (0, "a\n", ""),
        (1, "", "not run: the batch ended before it"),
        (1, "", "not run: the batch ended before it"),
    ]
