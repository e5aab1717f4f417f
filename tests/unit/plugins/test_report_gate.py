"""The report action's gate: the exit code the report play fails its last task on, judged with fail_on
(bench_fail_on), and the file ./run bench reads it from (BENCH_STACK_OUTCOME)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import read_data, read_yaml
from test_plugins import (  # pauses: autouse, the runner's pause recorded, not slept
    Loadgen,
    bench_report,
    cell_args,
    make_action,
    pauses,  # noqa: F401
    run_cell,
)

from benchstack.plan.settings import project_problems

ROOT = Path(__file__).resolve().parents[3]


def invalid_run(tmp_path: Path) -> str:
    """One cell on a loadgen with no CPU idle left: the verdict is invalid (loadgen_saturated)."""
    args = cell_args(tmp_path)
    run_cell(args, Loadgen(read_data("ab", "normal.txt")))
    return str(args["run_dir"])


@pytest.mark.parametrize(("fail_on", "code"), [(None, 3), ("noisy", 3), ("invalid", 3), ("never", 0)])
def test_the_report_returns_the_gates_exit_code_and_why(
    tmp_path: Path, fail_on: str | None, code: int
) -> None:
    args = {"run_dir": invalid_run(tmp_path)} | ({"fail_on": fail_on} if fail_on else {})
    result = make_action(bench_report, args).run(task_vars={})
    assert result["verdict"]["status"] == "invalid"
    assert result["exit_code"] == code
    if code:
        assert result["gate"].startswith(
            "exit 3, the verdict is invalid: verdict invalid, thresholds failed: 0"
        )
    else:
        assert result["gate"] == "verdict invalid, thresholds failed: 0: exit 0 (bench_fail_on=never)"


def test_the_report_writes_the_code_and_run_folder_where_bench_stack_outcome_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = invalid_run(tmp_path)
    outcome = tmp_path / "outcome"
    monkeypatch.setenv("BENCH_STACK_OUTCOME", str(outcome))
    make_action(bench_report, {"run_dir": run_dir}).run(task_vars={})
    assert outcome.read_text() == f"3\n{run_dir}\n"


def test_a_fail_on_the_report_does_not_know_is_refused(tmp_path: Path) -> None:
    from ansible.errors import AnsibleActionFail

    with pytest.raises(AnsibleActionFail, match="fail_on"):
        make_action(bench_report, {"run_dir": str(tmp_path), "fail_on": "sometimes"}).run(task_vars={})


def test_bench_fail_on_is_checked_with_the_plan_before_any_host() -> None:
    for value in ("noisy", "invalid", "never"):
        assert project_problems({"bench_fail_on": value}) == []
    assert project_problems({"bench_fail_on": "always"}) == [
        "bench_fail_on: must be one of noisy, invalid, never (what fails the run's exit code: "
        "docs/verdict.md), not 'always'"
    ]


def test_the_report_play_fails_its_last_task_on_the_gate_and_passes_bench_fail_on() -> None:
    plays = read_yaml(ROOT / "playbooks" / "report.yml")
    tasks = plays[-1]["tasks"]
    assert tasks[0]["bench_report"]["fail_on"] == "{{ bench_fail_on | default('noisy') }}"
    assert tasks[-1]["ansible.builtin.fail"]["msg"].startswith("{{ bench_report_result.gate }}")
    assert tasks[-1]["when"] == "(bench_report_result.exit_code | default(0)) != 0"


# ---------------------------------------------------------------- the real chain: ansible-playbook, ./run


def noisy_run(folder: Path) -> Path:
    """Three cells of one load point with req/s apart: its precision is unknown, the verdict noisy."""
    from test_verdict import AB_STEADY, Run

    run = Run(folder / "results" / "run")
    output = read_data("verdict", "ab-steady.txt")
    for rep, rps in ((1, 361.52), (2, 300.0), (3, 420.0)):
        run.measure("s", AB_STEADY, output, rep, rps=rps)
    run.write_info()
    return run.path


def report_site(folder: Path, run_dir: Path) -> Path:
    """playbooks/report.yml's report play as it is, with the plan's two paths given as a variable (the plan
    play would compile them from the run's experiment, on hosts this test does not have)."""
    plays = read_yaml(ROOT / "playbooks" / "report.yml")
    play = {
        **plays[-1],
        "vars": {"bench_plan": {"run_dir": str(run_dir), "results_dir": str(run_dir.parent)}},
    }
    site = folder / "site.yml"
    site.write_text(yaml.safe_dump([play]), encoding="utf-8")
    return site


def gate_runs(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """./run bench with its ansible-playbook running the report play in place of bench-stack.yml, on a noisy
    run of its own: as is, and with -e bench_fail_on=never (started with the session: conftest's
    early_commands). The whole chain of the action's outcome file, the gate task's failure
    (ansible-playbook's 2) and ./run's code."""
    playbook = str(Path(sys.executable).with_name("ansible-playbook"))
    runs = {}
    for name, extra in (("gate", ""), ("never", " -e bench_fail_on=never")):
        place = folder / name
        site = report_site(place, noisy_run(place))
        env = {
            **os.environ,
            "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_LOCAL_TEMP": str(place / "tmp"),
        }
        wrapper = (
            f'ansible-playbook() {{ shift; "{playbook}" -i localhost, -c local "{site}" "$@"; }}; '
            "setup_bench() { :; }; "
        )
        # "x": the experiment's place (the play reads none); what follows it goes to ansible-playbook.
        script = f"source ./run; TEST_LOGS={place}; {wrapper} main bench x{extra}"
        runs[name] = (["bash", "-c", script], env, ROOT)
    return runs


@pytest.mark.ansible
@pytest.mark.early.with_args(gate_runs)
def test_the_report_play_fails_on_a_noisy_verdict_and_run_bench_exits_6(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    done = early_results["gate"]
    out = done.stdout + done.stderr
    assert done.returncode == 6, out[-4000:]
    assert "TASK [The run's gate" in out and "exit 6, the verdict is noisy: verdict noisy" in out
    said = "bench-stack: exit 6, the run's gate (docs/verdict.md, Exit codes; -e bench_fail_on=never keeps 0)"
    named = re.fullmatch(rf".*{re.escape(said)}: (\S+)", done.stderr.rstrip(), re.DOTALL)
    assert named is not None, done.stderr[-2000:]
    assert Path(named[1]).parts[-3:] == ("gate", "results", "run") and Path(named[1], "report.md").is_file()
    kept = early_results["never"]
    assert kept.returncode == 0, (kept.stdout + kept.stderr)[-4000:]
