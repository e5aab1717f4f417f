"""bench-stack's console (plugins/callback/bench_stack.py, benchstack.report.console), issue 41.

The callback runs inside a real ansible-playbook here: a small project whose playbooks have bench-stack.yml's
file names and task shapes, and whose actions (bench_plan, bench_cell, bench_extra_cells, ...) answer what
each task's ``answer`` argument says, in the shapes the real actions return (the planned cells' labels come
from benchstack.plan.resolved.progress). Ansible builds the results, loops, labels, warnings and failures
itself; only the measuring is left out.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchstack.plan.experiment import cells as plan_cells
from benchstack.plan.experiment import load_experiment
from benchstack.plan.resolved import progress
from benchstack.report.console import Cells, phase_of, regular_position, seconds_text

ROOT = Path(__file__).resolve().parents[3]

# Every fake action: the task's ``answer``, as the real action would return it.
ACTION = """
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        result.update(self._task.args.get("answer") or {})
        return result
"""
ACTIONS = (
    "bench_plan",
    "bench_containers",
    "bench_provision_state",
    "bench_cell",
    "bench_extra_cells",
    "bench_report",
)

FIRST_TABLE = (
    "First table, after 10 rounds. More rounds follow for 2 load point(s).\n| stack | req/s |\n|---|---|"
)
RESULTS = "Run: /r/run\nReport: /r/run/report.html\n\n| stack | req/s |\n|---|---|\n\nVerdict: VALID"
SERVES = [
    "sinatra-thin-x4-nginx wrk c32: unresolved against sinatra-thin-x1: 1.08x (0.99-1.17) over 10 pairs"
]


# Skipped tasks in provision and in benchmark (5 in hosts) that must print nothing: enough that a line each
# breaks the console's line bound, few enough that the runs stay cheap (each task is a worker process).
SKIPPED = 10


def planned_labels() -> list[str]:
    """The default experiment's cells as tasks/cell.yml labels them: ``<cell id> (<progress>)``."""
    exp = load_experiment(ROOT / "experiments" / "sinatra-thin-nginx.yml")
    planned = plan_cells(exp)
    labels = progress(planned)
    return [f"{c.cell_id} ({labels[c.cell_id]})" for c in planned]


def play(name: str, hosts: str, tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": name, "hosts": hosts, "gather_facts": False, "tasks": tasks}]


def task(name: str, action: str, answer: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    return {"name": name, action: {"answer": answer or {}}, **more}


def cell_loop(labels: list[str], name: str) -> dict[str, Any]:
    """tasks/cell.yml's loop: the cells (each with its cell id) labelled ``<cell id> (<progress>)``."""
    items = [{"cell_id": label.split(" ", 1)[0], "label": label} for label in labels]
    return {
        "name": name,
        "bench_cell": {"answer": {"changed": True, "cell": {"rps": 9500.0}}},
        "loop": items,
        "loop_control": {"label": "{{ item.label }}"},
    }


def project(folder: Path, labels: list[str], fail_in: str = "", skipping: int = SKIPPED) -> Path:
    """The small project: bench-stack.yml's playbooks by name, their tasks' shapes, the actions' answers;
    ``skipping`` skipped tasks in provision and benchmark (each a worker process, ~10 ms of CPU)."""
    (folder / "actions").mkdir()
    for name in ACTIONS:
        (folder / "actions" / f"{name}.py").write_text(ACTION)
    books = folder / "playbooks"
    books.mkdir()
    plan = {"run_dir": "/r/run", "experiment": {"load": {"max_seconds": 250}}}
    failing = [{"name": "Install them in one transaction", "ansible.builtin.fail": {"msg": "E: no wrk"}}]
    skipped = [
        {"name": f"Skipped step {i}", "ansible.builtin.debug": {"msg": "x"}, "when": False}
        for i in range(skipping)
    ]
    books_content = {
        "plan": play(
            "Plan the run",
            "localhost",
            [
                task(
                    "Compile the plan",
                    "bench_plan",
                    {"msg": "sinatra-thin-nginx: 5 stacks, 50 cells", "ansible_facts": {"bench_plan": plan}},
                    when="ansible_facts.bench_plan is not defined",
                )
            ],
        ),
        "hosts": play(
            "Local Docker containers",
            "localhost",
            [
                task("Find the containers that already run as wanted", "bench_containers", {"stale": ["b"]}),
                {
                    "name": "Start each host as a systemd container",
                    "ansible.builtin.command": {"cmd": "true"},
                    "loop": ["bench-local"],
                    "changed_when": True,
                },
                *skipped[:5],
            ],
        ),
        "provision": play(
            "Provision every host",
            "localhost",
            [
                task(
                    "Decide which roles run",
                    "bench_provision_state",
                    {
                        "ansible_facts": {"bench_provision": {"run": {"host": "new", "nginx": "new"}}},
                        "warnings": ["bench-local: a real warning"],
                    },
                ),
                *(failing if fail_in == "provision" else []),
                *skipped,
            ],
        ),
        "verify": play(
            "Every stack answers",
            "localhost",
            [{"name": "Ask each stack", "ansible.builtin.debug": {"msg": "ok"}, "when": False}],
        ),
        "benchmark": play(
            "Measure the cells",
            "localhost",
            [
                {
                    "name": "Noise floor",
                    "ansible.builtin.debug": {"msg": ["bench-local: wrk 5 times on nginx-static: CV 3.0 %"]},
                },
                cell_loop(labels, "Measure each cell"),
                task("Find the load points that need another cell", "bench_extra_cells",
                     {"cells": [{"cell_id": "a"}, {"cell_id": "b"}], "round": 11, "serves": SERVES,
                      "budget_s": 250, "left_s": 73.0, "first_table": FIRST_TABLE}),
                {"name": "First table", "ansible.builtin.debug": {"msg": FIRST_TABLE}},
                cell_loop(
                    [
                        "sinatra-thin-x4-nginx__wrk__c32__r11 (extra round 11: unresolved ...)",
                        "sinatra-thin-x1__wrk__c32__r11 (extra round 11: the baseline of 1 unresolved ...)",
                    ],
                    "Measure each cell",
                ),
                task("Find the load points that need another cell", "bench_extra_cells",
                     {"cells": [], "round": None, "serves": [], "budget_s": 250, "left_s": 60.0}),
                *skipped,
            ],
        ),
        "report": play(
            "Report",
            "localhost",
            [
                task("Write report.md", "bench_report", {"report_html": "/r/run/report.html"}),
                {"name": "Results", "ansible.builtin.debug": {"msg": RESULTS}},
            ],
        ),
    }  # fmt: skip
    for name, plays in books_content.items():
        (books / f"{name}.yml").write_text(json.dumps(plays))
    site = [{"ansible.builtin.import_playbook": f"playbooks/{name}.yml"} for name in books_content]
    # Each playbook imports the plan again, as bench-stack's do.
    site.insert(3, {"ansible.builtin.import_playbook": "playbooks/plan.yml"})
    (folder / "site.yml").write_text(json.dumps(site))
    return folder / "site.yml"


def command(
    folder: Path, *extra: str, fail_in: str = "", skipping: int = SKIPPED
) -> tuple[list[str], dict[str, str], Path]:
    """ansible-playbook of the small project in ``folder``, with the console as its stdout callback."""
    folder.mkdir()
    site = project(folder, planned_labels(), fail_in, skipping)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")},
        "ANSIBLE_CONFIG": str(folder / "none.cfg"),
        "ANSIBLE_CALLBACK_PLUGINS": str(ROOT / "plugins" / "callback"),
        "ANSIBLE_STDOUT_CALLBACK": "bench_stack",
        "ANSIBLE_ACTION_PLUGINS": str(folder / "actions"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_LOCAL_TEMP": str(folder / "tmp"),
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    argv = [str(Path(sys.executable).with_name("ansible-playbook")), "-i", "localhost,", "-c", "local"]
    return [*argv, *extra, str(site)], env, folder


def console_runs(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """The small project run three ways (started with the session: conftest's early_commands): as is, with
    -v, and with a task of the provision phase failing."""
    return {
        "default": command(folder / "default"),
        # -v: the default callback's output, which prints skipped tasks as it always does (not checked here).
        "verbose": command(folder / "verbose", "-v", skipping=0),
        "failed": command(folder / "failed", fail_in="provision"),
    }


Runs = dict[str, subprocess.CompletedProcess[str]]


@pytest.mark.ansible
@pytest.mark.early.with_args(console_runs)
def test_a_run_prints_a_line_per_phase_the_tables_and_no_task_headers(early_results: Runs) -> None:
    default_run = early_results["default"]
    out = default_run.stdout
    assert default_run.returncode == 0, out + default_run.stderr
    lines = out.splitlines()
    phases = [line.split()[0] for line in lines if line[:1].isalpha() and line.split()[0] in PHASES]
    phases = [p for i, p in enumerate(phases) if p not in phases[:i]]
    assert phases == ["plan", "hosts", "provision", "verify", "cells", "report", "done"]
    assert "TASK [" not in out and "PLAY [" not in out and "skipping:" not in out and "PLAY RECAP" not in out
    assert "built image bench-local" in next(line for line in lines if line.startswith("hosts "))
    plan_line = next(line for line in lines if line.startswith("plan "))
    assert "sinatra-thin-nginx: 5 stacks, 50 cells; run folder /r/run" in plan_line
    assert "host, nginx" in next(line for line in lines if line.startswith("provision "))
    # The noise floor, the first table before the extra round, the final table and verdict after.
    assert "nginx-static: CV 3.0 %" in out
    assert out.index("First table") < out.index("cells     extra round 11") < out.index("Verdict: VALID")
    assert "report.html" in next(line for line in lines if line.startswith("report "))
    assert lines[-1].startswith("done      no task failed on localhost (")
    # 20 lines; a line for each skipped task of even one play would make SKIPPED more.
    assert len(lines) < 20 + SKIPPED, out


@pytest.mark.ansible
@pytest.mark.early.with_args(console_runs)
def test_a_real_warning_still_prints(early_results: Runs) -> None:
    default_run = early_results["default"]
    assert "[WARNING]: bench-local: a real warning" in default_run.stderr


@pytest.mark.ansible
@pytest.mark.early.with_args(console_runs)
def test_the_cells_line_counts_regular_and_extra_cells_and_says_what_the_round_is_for(
    early_results: Runs,
) -> None:
    lines = early_results["default"].stdout.splitlines()
    cells = [line for line in lines if line.startswith("cells ")]
    # The regular rounds' end (50/50, with the 250 s budget), the extra round and what it serves, the summary.
    assert cells[0].startswith("cells     50/50 · ") and "of the 4 min 10 s budget" in cells[0]
    assert "regular rounds done; at most" in cells[0]
    assert cells[1].startswith("cells     extra round 11 (2 cells, ") and SERVES[0] in cells[1]
    assert cells[-1].startswith("cells     52 cells: 50 regular + 2 in 1 extra round; 4 min 10 s budget (")


@pytest.mark.ansible
@pytest.mark.early.with_args(console_runs)
def test_with_v_the_output_is_the_default_callbacks(early_results: Runs) -> None:
    done = early_results["verbose"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert "TASK [Measure each cell]" in done.stdout and "PLAY RECAP" in done.stdout
    assert f"changed: [localhost] => (item={planned_labels()[0]})" in done.stdout
    assert "cells     52 cells" not in done.stdout


@pytest.mark.ansible
@pytest.mark.early.with_args(console_runs)
def test_a_failed_task_prints_its_header_and_whole_error_and_the_recap(early_results: Runs) -> None:
    done = early_results["failed"]
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "TASK [Install them in one transaction]" in out
    assert "fatal: [localhost]: FAILED! =>" in out and "E: no wrk" in out
    assert "provision failed (" in out and "PLAY RECAP" in out and "failed=1" in out
    assert "cells " not in out


PHASES = ("plan", "hosts", "provision", "verify", "cells", "report", "done")


def test_each_playbook_of_bench_stack_is_a_phase() -> None:
    assert phase_of("/p/playbooks/provision.yml:11") == "provision"
    assert phase_of("/p/playbooks/dns_check.yml:44") == "verify"
    assert phase_of("/p/playbooks/benchmark.yml:9") == "cells"
    assert phase_of("/p/mine.yml:3") == "mine"
    assert phase_of(None, "A play") == "A play"


def test_the_planned_cells_labels_are_read_as_the_plan_writes_them() -> None:
    labels = planned_labels()
    assert regular_position(labels[0])[:2] == (1, 50)
    assert regular_position(labels[-1]) == (50, 50, 0)
    assert regular_position("x__r11 (extra round 11: the baseline of 1 unresolved comparison)") is None


def test_the_estimate_uses_the_pace_measured_and_bounds_the_extra_rounds_by_the_budget() -> None:
    cells = Cells(budget_s=250)
    cells.batch_started(0.0)
    assert cells.estimate(0.0) == "at least 0.0 s left; at most 4 min 10 s with extra rounds"
    # Ten cells of 4 s each, where the plan said at least 3.1 s: the rest is at the pace measured.
    for i in range(1, 11):
        cells.cell_done(f"c (({i}/50, at least {round(3.1 * (50 - i))} s left after it)", True, 4.0 * i)
    assert cells.pace_s == 4.0 and cells.regular_left_s() == 160.0
    assert cells.estimate(40.0) == "about 2 min 40 s left; at most 3 min 38 s with extra rounds"
    # The budget spent before the regular rounds end: no extra round will start.
    slow = Cells(budget_s=10)
    slow.batch_started(0.0)
    slow.cell_done("c ((1/3, at least 6 s left after it)", True, 12.0)
    assert slow.estimate(12.0) == "about 24 s left"
    # Without a budget: no bound to promise.
    free = Cells()
    free.cell_done("c ((1/2, at least 3 s left after it)", True, 4.0)
    assert free.estimate(4.0).endswith("more if extra rounds are needed")
    # In an extra round: the budget bench_extra_cells counted, less the time since, plus the round's rest.
    cells.round_planned(11, 2, SERVES, 73.0, 250, now=200.0)
    assert cells.estimate(210.0) == "at most 1 min 11 s left (budget)"
    cells.cell_done("x__r11 (extra round 11: ...)", True, 214.0)
    # Time used as bench_extra_cells counts it (from the target's first stored cell): 250 - (73 - 14) s.
    assert cells.line(214.0).startswith(
        "10/50 + 1 extra · extra round 11 (1/2) · 3 min 11 s of the 4 min 10 s"
    )


def test_a_cell_several_loadgens_measured_together_counts_once() -> None:
    cells = Cells()
    for loadgen_part in range(2):
        cells.cell_done("c (1/2, at least 3 s left after it)", True, 4.0 + loadgen_part, cell_id="c")
    cells.cell_done("d (2/2, at least 0 s left after it)", True, 8.0, cell_id="d")
    assert (cells.regular, cells.measured, cells.done_text()) == (2, 2, "2/2")


def test_a_resumed_run_counts_stored_cells_apart_and_a_stopped_run_says_so() -> None:
    cells = Cells()
    cells.cell_done("c ((1/3, at least 6 s left after it)", False, 0.1)
    cells.cell_done("c ((2/3, at least 3 s left after it)", True, 4.0)
    cells.cell_skipped()
    assert cells.summary(5.0) == "2 cells: 2 regular (1 stored before), 1 not measured (the run stopped)"
    checked = Cells()
    checked.cell_skipped("check mode")
    assert checked.summary(0.0).endswith("1 not measured (check mode)")


def test_durations_read_as_a_person_says_them() -> None:
    assert [seconds_text(s) for s in (0.42, 42, 185, 3720)] == ["0.4 s", "42 s", "3 min 05 s", "1 h 02 min"]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_on_a_terminal_the_progress_line_is_rewritten_and_cleared_before_other_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sys.path.insert(0, str(ROOT / "plugins" / "callback"))
    try:
        import bench_stack  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "plugins" / "callback"))
    monkeypatch.setattr(bench_stack, "TICK_S", 0.05)
    out = io.StringIO()
    clock = Clock()
    callback = bench_stack.CallbackModule(clock=clock, tty=True, out=out)
    callback._display.verbosity = 0
    shown: list[str] = []
    monkeypatch.setattr(
        callback._display, "display", lambda msg, **kw: shown.append(out.getvalue() + "|" + msg)
    )
    callback._phase = "cells"
    callback._cells.batch_started(0.0)
    clock.now = 4.0
    callback._cells.cell_done("c ((1/50, at least 150 s left after it)", True, 4.0)
    callback._status()
    assert out.getvalue().startswith("cells     1/50 · 4.0 s of") is False  # no budget known: time used only
    assert out.getvalue().startswith("cells     1/50 · 4.0 s · about 3 min 16 s left")
    callback._say("a warning")
    # The line was cleared before the message printed.
    assert shown[-1].endswith(bench_stack.CLEAR + "|a warning")
    assert callback._live_shown is False
    # Between events, the clock thread redraws the line with the time moved on.
    callback._status()
    clock.now = 9.0
    deadline = time.monotonic() + 5
    while "9.0 s · " not in out.getvalue().rsplit(bench_stack.CLEAR, 1)[-1] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert out.getvalue().rsplit(bench_stack.CLEAR, 1)[-1].startswith("cells     1/50 · 9.0 s · ")
    callback._stopped.set()
