"""The stack's units before a cell, as the bench_cell action checks them (issue 44, leftovers of finding 4):
the restarts of a unit are bounded per playbook run, not per cell, and with several loadgens on one target
only the lead checks (and restarts) them, before any peer's measured run."""

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from ansible.errors import AnsibleActionFail
from conftest import Helpers, read_data
from test_plugins import (  # pauses: autouse, the runner's pause recorded, not slept
    Loadgen,
    bench_cell,
    pauses,  # noqa: F401
    run_cell,
    run_plan,
    small_experiment,
    write_experiment,
)

from benchstack.measure import stackunits

_LIMIT = re.compile(r"u=(\S+); s=\$\(st \"\$u\"\).*?\[ \$a -lt (\d+) \]")


def limits(command: str) -> dict[str, int]:
    """Per unit, the restarts the check command allows."""
    return {
        u: int(n)
        for u, n in (m.groups() for p in command.split("; u=") for m in [_LIMIT.search("u=" + p)] if m)
    }


def cells(tmp_path: Path, count: int = 3) -> tuple[list[dict[str, Any]], list[str]]:
    """``count`` cells' bench_cell arguments with the stack's units, and the units' names."""
    data = small_experiment()
    data["load"]["repetitions"] = count
    plan = run_plan(str(write_experiment(tmp_path, data)))
    first = plan["cells"][0]
    units = plan["stack_units"]["Debian"][first["stack"]]
    base = {"host": "127.0.0.1", "target": "target1", "run_dir": str(tmp_path / "run"), "units": units}
    base["experiment"] = plan["experiment"]["name"]
    return [{**base, "cell": c} for c in plan["cells"][:count]], [u["unit"] for u in units]


def replying(loadgen: Loadgen, names: list[str], down: str, state: str) -> Loadgen:
    """The check prints every unit active, ``down`` as ``state`` (before after attempts seconds listening)."""
    loadgen.helpers.units = "".join(
        f"{stackunits.MARKER} {u} {state if u == down else 'active active 0 0 -'}\n" for u in names
    )
    return loadgen


def sent_check(loadgen: Loadgen) -> str:
    [check] = [c for c in loadgen.helpers.commands if c.startswith("st() ")]
    return check


def test_a_unit_that_keeps_dying_gets_two_restarts_in_the_run_not_two_before_each_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 44: the bound was per cell, so a stack that kept dying was restarted twice before each of its
    cells. Restarted once before the first and once before the second, it is not restarted before the
    third: the run stops there as for a unit that cannot be brought back; a resume gets the bound again."""
    args, names = cells(tmp_path)
    down = names[0]
    for cell in args[:2]:
        loadgen = replying(Loadgen(read_data("ab", "normal.txt")), names, down, "failed active 1 3 yes")
        assert run_cell(cell, loadgen, hostname="target1")["changed"] is True
        assert limits(sent_check(loadgen))[down] in (2, 1)
    run = tmp_path / "run"
    counted = json.loads((run / stackunits.RESTARTS_FILE).read_text(encoding="utf-8"))
    assert counted == {"run": bench_cell.playbook_run(), "units": {f"target1 {down}": 2}}
    third = replying(Loadgen(read_data("ab", "normal.txt")), names, down, "failed failed 0 0 -")
    with pytest.raises(AnsibleActionFail) as err:
        run_cell(args[2], third, hostname="target1")
    assert limits(sent_check(third)) == {down: 0} | {u: 2 for u in names[1:]}
    assert f"{down} is failed (this run's 2 restarts of it are used)" in str(err.value)
    assert third.commands == []  # no load
    [stop] = json.loads((run / "run.json").read_text(encoding="utf-8"))["stopped"]
    assert stop["cell"] == args[2]["cell"]["cell_id"] and "restarts of it are used" in stop["message"]
    # The resume is another playbook run: the unit may be restarted twice again.
    monkeypatch.setattr(bench_cell, "playbook_run", lambda: "resume-1")
    again = replying(Loadgen(read_data("ab", "normal.txt")), names, down, "failed active 1 3 yes")
    assert run_cell(args[2], again, hostname="target1")["changed"] is True
    assert limits(sent_check(again))[down] == 2


def test_two_restarts_in_one_check_use_the_runs_bound(tmp_path: Path) -> None:
    args, names = cells(tmp_path, 2)
    down = names[1]
    loadgen = replying(Loadgen(read_data("ab", "normal.txt")), names, down, "inactive failed 2 21 -")
    with pytest.raises(
        AnsibleActionFail, match=re.escape(f"{down} is failed after 2 restarts (this run's 2")
    ):
        run_cell(args[0], loadgen, hostname="target1")


def test_only_the_lead_checks_the_targets_units_and_before_any_peers_measured_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Several loadgens on one target: the lead (peers[0]) checks and restarts the units for all of them,
    over the target's connection; a loopback peer (the target itself, not the lead) sends no check of its
    own, so no unit is restarted twice at once; every peer's measured run starts after the lead's check."""
    [args], names = cells(tmp_path, 1)
    args = {**args, "peers": ["lg1", "target1"]}
    events: list[tuple[float, str]] = []
    checks: list[str] = []

    target = Helpers()  # the target's vmstat during the cell (the lead's target_stats)

    def on_target(command: str) -> tuple[int, str, str]:
        if not command.startswith("st() "):
            return target.reply(command) or (1, "", "not expected")
        checks.append(command)
        time.sleep(0.2)  # a restart takes a while: the peer must wait for it
        events.append((time.monotonic(), "lead checked"))
        return 0, "".join(f"{stackunits.MARKER} {u} active active 0 0 -\n" for u in names), ""

    monkeypatch.setattr(bench_cell.ActionModule, "_target_executor", lambda self, tv, t: on_target)

    class Timed(Loadgen):
        def __init__(self, name: str) -> None:
            super().__init__(read_data("ab", "normal.txt"))
            self.name = name

        def __call__(self, command: str) -> dict[str, Any]:
            reply = super().__call__(command)
            if command in self.commands:
                events.append((time.monotonic(), f"{self.name} measured"))
            return reply

    loadgens = {n: replying(Timed(n), names, "", "") for n in ("lg1", "target1")}
    results: dict[str, dict[str, Any]] = {}
    threads = [
        threading.Thread(target=lambda n=n: results.update({n: run_cell(args, loadgens[n], hostname=n)}))
        for n in loadgens
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(results) == ["lg1", "target1"] and all(r["changed"] for r in results.values())
    assert len(checks) == 1 and limits(checks[0]) == dict.fromkeys(names, 2)  # the lead's, on the target
    assert not [c for g in loadgens.values() for c in g.helpers.commands if c.startswith("st() ")]
    order = [what for _, what in sorted(events)]
    assert order[0] == "lead checked" and sorted(order[1:]) == ["lg1 measured", "target1 measured"]
