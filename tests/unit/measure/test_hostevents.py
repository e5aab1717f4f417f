"""A host's state around a cell (benchstack.measure.hostevents, benchstack.measure.runner): a reboot, a
container restart, a boot not settled, a unit of ours that stopped or restarted during the cell disturb it.

STATE0/RESTARTED/BOOTING were printed by the real state function in a systemd container of
bench-stack/debian:bookworm on this machine: with a unit bench-x@1.service running, then across
`docker restart`, then 3.7 s after it. Their units word is in today's form (systemctl's own lines joined by
commas), in the order the function printed them there for a unit started with systemd-run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import Helpers, read_data
from test_runner import AB_PLAN, LOOPBACK, NETWORK, FakeLoadgen, measure, one_plan

from benchstack.measure.hostevents import (
    BOOT_SETTLE_S,
    STATE_FUNCTION,
    parse_state,
    print_state,
    reasons,
    states,
)

BOOT = "e77ee28f-3095-49a9-9e29-491284ece4ff"
UNIT = (
    "NRestarts=0,Id=bench-x@1.service,ActiveState=active,ActiveEnterTimestampMonotonic=11213128761,"
    "InactiveEnterTimestampMonotonic=0,"
)
STATE0 = f"BENCH-STACK-CPU state0 {BOOT} 1099081 100 11213.32 running {UNIT}"
RESTARTED = f"BENCH-STACK-CPU state1 {BOOT} 1121600 100 11218.64 - -"
BOOTING = f"BENCH-STACK-CPU state0 {BOOT} 1121600 100 11219.70 initializing -"


def after(line: str) -> str:
    return line.replace(" state0 ", " state1 ", 1)


def judge(before: str, later: str) -> list[str]:
    b, a = states(f"{before}\n{later}\n")
    return reasons(b, a, "h1")


def test_the_state_function_runs_under_sh_and_prints_a_line_the_parser_reads() -> None:
    out = subprocess.run(
        ["sh", "-c", f"{STATE_FUNCTION}; {print_state('state0')}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    [before, _] = states(out)
    assert before is not None and before.boot_id not in ("", "-") and before.hz > 0


def test_the_state_line_holds_every_unit_systemctl_shows(tmp_path: Path) -> None:
    """systemctl's lines, joined into one word of the state line, read back unit by unit."""
    shown = (
        "NRestarts=2\nId=bench-x@1.service\nActiveState=active\nActiveEnterTimestampMonotonic=5\n"
        "InactiveEnterTimestampMonotonic=4\n\n"
        "Id=nginx.service\nActiveState=failed\nActiveEnterTimestampMonotonic=3\nInactiveEnterTimestampMonotonic=0\n"
    )
    (tmp_path / "shown").write_text(shown, encoding="utf-8")
    fake = tmp_path / "systemctl"
    fake.write_text(f'#!/bin/sh\n[ "$1" = show ] && cat {tmp_path / "shown"}\nexit 0\n', encoding="utf-8")
    fake.chmod(0o755)
    out = subprocess.run(
        ["sh", "-c", f"{STATE_FUNCTION}; {print_state('state0')}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
        env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"},
    ).stdout
    [before, _] = states(out)
    assert before is not None
    assert before.units == {
        "bench-x@1.service": ("active", "5", "2", "4"),
        "nginx.service": ("failed", "3", "", "0"),
    }


def test_a_quiet_host_disturbs_nothing() -> None:
    assert judge(STATE0, after(STATE0).replace("11213.32", "11216.40")) == []


def test_a_container_restart_during_the_cell_is_a_restart() -> None:
    assert judge(STATE0, RESTARTED) == [
        "restart: h1's PID 1 started again during the cell (a container restart)"
    ]


def test_a_reboot_is_a_restart() -> None:
    [reason] = judge(STATE0, after(STATE0).replace(BOOT, "0f3c-another-boot"))
    assert reason == "restart: h1 rebooted during the cell (its boot id changed)"


def test_a_cell_that_begins_while_systemd_boots_is_booting() -> None:
    found = judge(BOOTING, after(BOOTING).replace("11219.70", "11223.00"))
    assert found == [
        "booting: h1's systemd was still initializing when the cell began",
        "booting: h1's PID 1 had run 3.70 s when the cell began (less than 15 s)",
    ]


def test_boot_settles_at_its_limit() -> None:
    # PID 1 started 11216.00 s after the kernel's boot; the cell begins BOOT_SETTLE_S later, or just before.
    def at(uptime: float) -> str:
        return f"BENCH-STACK-CPU state0 {BOOT} 1121600 100 {uptime:.2f} running -"

    assert judge(at(11216 + BOOT_SETTLE_S), after(at(11240))) == []
    [reason] = judge(at(11216 + BOOT_SETTLE_S - 0.01), after(at(11240)))
    assert reason.startswith("booting: h1's PID 1 had run 14.99 s")


def test_a_unit_of_ours_that_stops_restarts_or_goes_during_the_cell_is_a_failure() -> None:
    stopped = after(STATE0).replace("ActiveState=active,", "ActiveState=inactive,")
    assert judge(STATE0, stopped) == [
        "failure: units of ours on h1 changed during the cell: bench-x@1.service (active -> inactive)"
    ]
    restarted = after(STATE0).replace(
        UNIT,
        "NRestarts=1,Id=bench-x@1.service,ActiveState=active,ActiveEnterTimestampMonotonic=11214000000,"
        "InactiveEnterTimestampMonotonic=11213990000,",
    )
    [reason] = judge(STATE0, restarted)
    assert reason.endswith("bench-x@1.service (restarted by systemd: NRestarts 0 -> 1)")
    gone = after(STATE0).replace(UNIT, "-")
    assert judge(STATE0, gone) == [
        "failure: units of ours on h1 changed during the cell: bench-x@1.service (gone)"
    ]


def test_a_host_that_answers_no_state_after_the_cell_is_a_restart_and_one_without_states_is_not_judged() -> (
    None
):
    b, _ = states(STATE0)
    assert reasons(b, None, "h1", after_read=False) == [
        "restart: h1 did not answer after the cell: it restarted or stopped during it"
    ]
    assert reasons(None, parse_state(RESTARTED.split(" ", 2)[2]), "h1") == []


def test_a_loopback_cell_across_a_restart_is_stored_disturbed(tmp_path: Path) -> None:
    fake = FakeLoadgen(read_data("ab", "normal.txt"), helpers=Helpers(states=(STATE0, RESTARTED)))
    cell, measured = measure(one_plan(AB_PLAN), tmp_path, fake.expect(1), LOOPBACK)
    assert measured
    assert cell["disturbed"] == [
        "restart: target1's PID 1 started again during the cell (a container restart)"
    ]


def test_a_network_cell_whose_target_restarted_is_disturbed_and_the_loadgens_state_counts_too(
    tmp_path: Path,
) -> None:
    target_helpers = Helpers(states=(STATE0, None))

    def on_target(command: str) -> tuple[int, str, str]:
        reply = target_helpers.reply(command)
        assert reply is not None, command
        return reply

    quiet = (STATE0, after(STATE0))
    fake = FakeLoadgen(read_data("ab", "normal.txt"), helpers=Helpers(states=quiet))
    cell, _ = measure(one_plan(AB_PLAN), tmp_path, fake.expect(1), NETWORK, target_execute=on_target)
    assert cell["disturbed"] == [
        "restart: target1 printed no state line after the cell: it restarted or stopped during it"
    ]

    target_helpers.states = (STATE0, after(STATE0))
    fake = FakeLoadgen(read_data("ab", "normal.txt"), helpers=Helpers(states=(BOOTING, after(BOOTING))))
    cell, _ = measure(one_plan(AB_PLAN), tmp_path / "2", fake.expect(1), NETWORK, target_execute=on_target)
    assert [r.split(":")[0] for r in cell["disturbed"]] == ["booting", "booting"]
    assert all("loadgen1" in r for r in cell["disturbed"])
