"""A cell measures the whole stack or is not counted (benchstack.measure.stackunits, issue 44): a unit of the
stack down when the cell begins makes it disturbed, a unit found down before the cell is restarted (at most
twice), and a stack that cannot be brought back stops before its load.

The state lines are in the form the real state function prints (tests/unit/measure/test_hostevents.py's
STATE0, captured in a systemd container): the stack's second thin instance, stopped before the cell, is
still loaded and ``inactive`` in systemctl's lines, and stays so after it (the case of the finding: it did
not change during the cell, so the unit comparison alone counted the cell)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
from pathlib import Path

import pytest
from conftest import Helpers, read_data
from test_hostevents import BOOT, STATE0, UNIT, after
from test_runner import AB_PLAN, LOOPBACK, NETWORK, STACK, FakeLoadgen, measure, one_plan

from benchstack.measure import stackunits
from benchstack.measure.runner import CellFailed
from benchstack.plan.roles import stack_units
from benchstack.plan.stacks import resolve_stacks

UNITS = [f"bench-{STACK}@1.service", f"bench-{STACK}@2.service", "nginx.service"]
# As the plan hands them to the bench_cell action (stack_units).
PLANNED = [
    {"unit": UNITS[0], "listen": f"unix:/run/bench-{STACK}-1/thin.sock"},
    {"unit": UNITS[1], "listen": f"unix:/run/bench-{STACK}-2/thin.sock"},
    {"unit": UNITS[2], "listen": "tcp:18080"},
]


def unit_word(name: str, state: str, entered: int = 11213128761, left: int = 0) -> str:
    """One unit in the state line's units word (systemctl's lines joined by commas)."""
    return (
        f"NRestarts=0,Id={name},ActiveState={state},ActiveEnterTimestampMonotonic={entered},"
        f"InactiveEnterTimestampMonotonic={left},"
    )


# The stack's units: instance 2 stopped (systemctl stop) before the cell; units apart by an empty line.
HALF = ",".join(
    [
        unit_word(UNITS[0], "active"),
        unit_word(UNITS[1], "inactive", left=11250000000),
        unit_word(UNITS[2], "active"),
    ]
)
WHOLE = HALF.replace("ActiveState=inactive", "ActiveState=active")
HALF_STATE0 = f"BENCH-STACK-CPU state0 {BOOT} 1099081 100 11260.32 running {HALF}"
WHOLE_STATE0 = f"BENCH-STACK-CPU state0 {BOOT} 1099081 100 11260.32 running {WHOLE}"


def checked(*lines: str) -> str:
    return "".join(f"{stackunits.MARKER} {line}\n" for line in lines)


ALL_ACTIVE = checked(*(f"{u} active active 0 0 -" for u in UNITS))


def test_a_cell_begun_with_a_unit_of_its_stack_down_is_disturbed_though_the_unit_did_not_change(
    tmp_path: Path,
) -> None:
    # The check before the cell found the stack whole; the instance went down before the measured run.
    helpers = Helpers(states=(HALF_STATE0, after(HALF_STATE0)), units=ALL_ACTIVE)
    fake = FakeLoadgen(read_data("ab", "normal.txt"), helpers=helpers)
    cell, measured = measure(one_plan(AB_PLAN), tmp_path, fake.expect(1), LOOPBACK, units=PLANNED)
    assert measured
    assert cell["disturbed"] == [f"failure: {UNITS[1]} was inactive on target1 when the cell began"]


def test_a_stack_unit_systemd_no_longer_holds_is_not_loaded_and_a_whole_stack_is_counted(
    tmp_path: Path,
) -> None:
    gone = f"BENCH-STACK-CPU state0 {BOOT} 1099081 100 11260.32 running {UNIT}"
    helpers = Helpers(states=(gone, after(gone)), units=ALL_ACTIVE)
    cell, _ = measure(
        one_plan(AB_PLAN),
        tmp_path,
        FakeLoadgen(read_data("ab", "normal.txt"), helpers=helpers).expect(1),
        units=PLANNED,
    )
    assert cell["disturbed"] == [f"failure: {u} was not loaded on target1 when the cell began" for u in UNITS]

    helpers = Helpers(states=(WHOLE_STATE0, after(WHOLE_STATE0)), units=ALL_ACTIVE)
    cell, _ = measure(
        one_plan(AB_PLAN),
        tmp_path / "2",
        FakeLoadgen(read_data("ab", "normal.txt"), helpers=helpers).expect(1),
        units=PLANNED,
    )
    assert cell["disturbed"] == []


def test_in_network_mode_the_targets_state_line_judges_the_stack(tmp_path: Path) -> None:
    target = Helpers(states=(HALF_STATE0, after(HALF_STATE0)), units=ALL_ACTIVE)

    def on_target(command: str) -> tuple[int, str, str]:
        reply = target.reply(command)
        assert reply is not None, command
        return reply

    quiet = (STATE0, after(STATE0))
    fake = FakeLoadgen(read_data("ab", "normal.txt"), helpers=Helpers(states=quiet))
    cell, _ = measure(
        one_plan(AB_PLAN),
        tmp_path,
        fake.expect(1),
        NETWORK,
        target_execute=on_target,
        target_control=on_target,
        units=PLANNED,
    )
    assert cell["disturbed"] == [f"failure: {UNITS[1]} was inactive on target1 when the cell began"]
    # The check ran on the target, before its vmstat.
    assert target.commands[0].startswith("st() { systemctl show")


def test_a_unit_found_down_before_the_cell_is_restarted_and_the_cell_says_so(tmp_path: Path) -> None:
    restarted = checked(
        f"{UNITS[0]} active active 0 0 -",
        f"{UNITS[1]} failed active 1 3 yes",
        f"{UNITS[2]} active active 0 0 -",
    )
    helpers = Helpers(states=(WHOLE_STATE0, after(WHOLE_STATE0)), units=restarted)
    fake = FakeLoadgen(read_data("ab", "normal.txt"), helpers=helpers)
    cell, _ = measure(one_plan(AB_PLAN), tmp_path, fake.expect(1), units=PLANNED)
    assert cell["disturbed"] == []
    assert (
        f"{UNITS[1]} was failed before this cell: restarted (1 attempt), active again, listening after 3 s"
        in (cell["notes"])
    )
    [check] = [c for c in helpers.commands if c.startswith("st() ")]
    assert all(u in check for u in UNITS)


def test_a_stack_that_cannot_be_brought_back_is_not_loaded_and_not_stored(tmp_path: Path) -> None:
    lost = checked(
        f"{UNITS[0]} active active 0 0 -",
        f"{UNITS[1]} inactive failed 2 21 -",
        f"{UNITS[2]} active active 0 0 -",
    )
    fake = FakeLoadgen(read_data("ab", "normal.txt"), helpers=Helpers(units=lost))
    plan = one_plan(AB_PLAN)
    with pytest.raises(CellFailed) as raised:
        measure(plan, tmp_path, fake.expect(1), units=PLANNED)
    assert str(raised.value) == (
        f"{plan['cell_id']}: stack {STACK} cannot be brought back on target1: {UNITS[1]} is failed after 2 "
        "restarts; its cells are not measured with part of the stack down (see the unit's journal, then "
        "resume the run)"
    )
    assert fake.commands == []  # no measured run
    assert not (tmp_path / "cells").exists()


def test_without_units_or_an_answer_from_the_target_nothing_is_checked_before_the_cell(
    tmp_path: Path,
) -> None:
    fake = FakeLoadgen(read_data("ab", "normal.txt"), helpers=Helpers())
    measure(one_plan(AB_PLAN), tmp_path, fake.expect(1))
    assert not [c for c in fake.helpers.commands if c.startswith("st() ")]

    fake = FakeLoadgen(read_data("ab", "normal.txt"), helpers=Helpers(states=(STATE0, after(STATE0))))
    cell, _ = measure(
        one_plan(AB_PLAN),
        tmp_path / "2",
        fake.expect(1),
        NETWORK,
        target_control=lambda command: (1, "", "no connection to the target"),
        units=PLANNED,
    )
    assert (
        f"the units of stack {STACK} were not checked before this cell: the target did not answer"
        in cell["notes"]
    )


def run_check(
    tmp_path: Path,
    states: dict[str, list[str]],
    listen: dict[str, str] | None = None,
    attempts: dict[str, int] | None = None,
) -> tuple[list[stackunits.UnitCheck], list[str]]:
    """Run the real check command under sh with a fake systemctl (each unit's states, one per `show`, the
    last repeated), a fake sudo and a `sleep` that notes its argument in sleeps.log and returns at once (the
    fake states change per `show`, not with time: ~7 s of real pauses in these tests); the restarts it
    asked for. ``listen``: where a unit listens; ``attempts``: the restarts the run has left for a unit."""
    for unit, seen in states.items():
        (tmp_path / unit).write_text("\n".join(seen) + "\n", encoding="utf-8")
    log = tmp_path / "restarts.log"
    systemctl = tmp_path / "systemctl"
    systemctl.write_text(
        "#!/bin/sh\n"
        f"cd {tmp_path}\n"
        'if [ "$1" = restart ]; then echo "$2" >> restarts.log; exit 0; fi\n'
        '[ "$1" = reset-failed ] && exit 0\n'
        'u=$4; s=$(head -n 1 "$u"); [ "$(wc -l < "$u")" -gt 1 ] && sed -i 1d "$u"; echo "ActiveState=$s"\n',
        encoding="utf-8",
    )
    sudo = tmp_path / "sudo"
    sudo.write_text('#!/bin/sh\n[ "$1" = -n ] && shift\nexec "$@"\n', encoding="utf-8")
    sleep = tmp_path / "sleep"
    sleep.write_text(f'#!/bin/sh\necho "$1" >> {tmp_path}/sleeps.log\n', encoding="utf-8")
    for fake in (systemctl, sudo, sleep):
        fake.chmod(0o755)
    out = subprocess.run(
        [
            "sh",
            "-c",
            stackunits.check_command(
                [stackunits.StackUnit(u, (listen or {}).get(u)) for u in states],
                wait_s=1,
                listen_s=1,
                settle_s=0,
                attempts=attempts,
            ),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"},
    ).stdout
    restarts = log.read_text(encoding="utf-8").split() if log.exists() else []
    return stackunits.parse_check(out, list(states)), restarts


def test_the_check_restarts_a_down_unit_at_most_twice_and_leaves_an_active_one_alone(tmp_path: Path) -> None:
    checks, restarts = run_check(
        tmp_path,
        {
            "bench-a@1.service": ["active"],
            "bench-a@2.service": ["inactive", "activating", "active"],
            "bench-a@3.service": ["failed"],
        },
    )
    assert [(c.unit, c.before, c.after, c.attempts) for c in checks] == [
        ("bench-a@1.service", "active", "active", 0),
        ("bench-a@2.service", "inactive", "active", 1),
        ("bench-a@3.service", "failed", "failed", stackunits.RESTART_ATTEMPTS),
    ]
    assert restarts == ["bench-a@2.service", *["bench-a@3.service"] * stackunits.RESTART_ATTEMPTS]
    assert stackunits.RESTART_ATTEMPTS == 2
    # Polled every 0.5 s, wait_s (1 s) at most after each restart: @2 once (activating), then its settle
    # pause (settle_s 0); @3 twice after each of its two restarts.
    assert (tmp_path / "sleeps.log").read_text(encoding="utf-8").split() == ["0.5", "0", *["0.5"] * 4]


def test_a_restarted_unit_is_awaited_where_it_listens_and_the_cell_says_whether_it_listened(
    tmp_path: Path,
) -> None:
    # A unix socket that listens (as a restarted thin's does once its app is loaded); nothing at the other
    # path, nor (very likely) on port 1 of this machine.
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(tmp_path / "thin.sock"))
    server.listen()
    try:
        checks, _ = run_check(
            tmp_path,
            {
                u: ["inactive", "active"]
                for u in ("bench-a@1.service", "bench-a@2.service", "bench-a@3.service")
            },
            {
                "bench-a@1.service": f"unix:{tmp_path}/thin.sock",
                "bench-a@2.service": f"unix:{tmp_path}/nothing.sock",
                "bench-a@3.service": "tcp:1",
            },
        )
    finally:
        server.close()
    assert [(c.after, c.listening) for c in checks] == [("active", "yes"), ("active", "no"), ("active", "no")]
    notes = stackunits.restart_notes(checks)
    assert re.fullmatch(
        r"bench-a@1.service was inactive before this cell: restarted \(1 attempt\), active again, listening "
        r"after \d+ s",
        notes[0],
    ), notes
    assert ", but not yet listening after " in notes[1]
    # What the check looks for: the socket's line in /proc/net/unix, the port listening (0A) in hex.
    assert ":1F41" in stackunits._listening("tcp:8001") and "/proc/net/tcp6" in stackunits._listening(
        "tcp:8001"
    )
    assert stackunits._listening(None) == "false"


def test_a_unit_the_check_printed_nothing_for_is_unknown_and_down() -> None:
    checks = stackunits.parse_check(
        checked("bench-a@1.service active active 0 0 -"), ["bench-a@1.service", "x"]
    )
    assert [c.after for c in checks] == ["active", "unknown"]
    assert stackunits.still_down(checks, "a", "t1") == (
        "stack a cannot be brought back on t1: x is unknown; its cells are not measured with part of the "
        "stack down (see the unit's journal, then resume the run)"
    )


def test_the_plan_names_each_stacks_units_its_instances_and_its_front() -> None:
    stacks = resolve_stacks(
        [
            {
                "name": "a",
                "app": {"kind": "sinatra"},
                "server": {"kind": "thin", "instances": 2},
                "front": {"kind": "nginx"},
                "port": 8001,
            },
            {"name": "b", "app": {"kind": "static"}, "front": {"kind": "apache"}, "port": 8002},
            {"name": "c", "app": {"kind": "sinatra"}, "server": {"kind": "thin"}, "port": 8003},
        ]
    )
    debian = stack_units(stacks, "Debian")
    assert [u["unit"] for u in debian["a"]] == ["bench-a@1.service", "bench-a@2.service", "nginx.service"]
    assert [u["listen"] for u in debian["a"]] == [
        f"unix:{stacks[0].endpoints[0].socket}",
        f"unix:{stacks[0].endpoints[1].socket}",
        "tcp:8001",
    ]
    assert debian["b"] == [{"unit": "apache2@bench-b.service", "listen": "tcp:8002"}]
    assert debian["c"] == [{"unit": "bench-c@1.service", "listen": f"tcp:{stacks[2].endpoints[0].port}"}]
    assert stack_units(stacks, "RedHat")["b"] == [{"unit": "httpd@bench-b.service", "listen": "tcp:8002"}]


def test_the_check_restarts_a_unit_only_as_often_as_the_run_has_restarts_left(tmp_path: Path) -> None:
    checks, restarts = run_check(
        tmp_path,
        # @1 would be active again after a restart, but the run has none left for it.
        {
            "bench-a@1.service": ["failed", "active"],
            "bench-a@2.service": ["failed"],
            "bench-a@3.service": ["failed"],
        },
        attempts={"bench-a@1.service": 0, "bench-a@2.service": 1},  # @3: not named, the whole bound
    )
    assert [(c.unit, c.after, c.attempts) for c in checks] == [
        ("bench-a@1.service", "failed", 0),
        ("bench-a@2.service", "failed", 1),
        ("bench-a@3.service", "failed", 2),
    ]
    assert restarts == ["bench-a@2.service", "bench-a@3.service", "bench-a@3.service"]
    budget = stackunits.RestartBudget(tmp_path, "run-1")
    assert budget.spend("t1", checks) == {
        "bench-a@1.service": 2,
        "bench-a@2.service": 1,
        "bench-a@3.service": 0,
    }
    message = stackunits.still_down(checks, "a", "t1", budget.left("t1", [c.unit for c in checks]))
    assert (
        message is not None
        and (
            "bench-a@1.service is failed, bench-a@2.service is failed after 1 restart, bench-a@3.service is "
            "failed after 2 restarts (this run's 2 restarts of it are used);"
        )
        in message
    )


def test_the_runs_restarts_are_kept_per_target_and_unit_and_a_new_playbook_run_starts_afresh(
    tmp_path: Path,
) -> None:
    def restarted(unit: str, times: int) -> stackunits.UnitCheck:
        return stackunits.UnitCheck(unit, "failed", "active", times, 1)

    first = stackunits.RestartBudget(tmp_path, "run-1")
    assert first.left("t1", ["u@1"]) == {"u@1": 2} and not (tmp_path / stackunits.RESTARTS_FILE).exists()
    first.spend("t1", [restarted("u@1", 1)])
    # Another cell, another worker: the same file, the same count; another target's unit is its own.
    again = stackunits.RestartBudget(tmp_path, "run-1")
    assert again.spend("t1", [restarted("u@1", 1), restarted("u@2", 0)]) == {"u@1": 0, "u@2": 2}
    assert again.left("t1", ["u@1"]) == {"u@1": 0} and again.left("t2", ["u@1"]) == {"u@1": 2}
    assert stackunits.RestartBudget(tmp_path, "resume-2").left("t1", ["u@1"]) == {"u@1": 2}
    (tmp_path / stackunits.RESTARTS_FILE).write_text('{"run": "run-1", "units": {"t1 u@1"', encoding="utf-8")
    assert again.left("t1", ["u@1"]) == {"u@1": 2}  # half written by a killed worker: nothing known
