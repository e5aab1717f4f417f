"""./run test: the lane count is checked before anything runs, and every planned job must finish.

The script is sourced (it then only defines its functions) and its job runner, `job_command`, replaced by
one that only echoes: the planning, the lanes and the count are ./run's own code; no Molecule runs.
"""

import os
import subprocess
from pathlib import Path

import pytest

from scripts import role_docs

ROOT = Path(__file__).resolve().parents[3]
JOBS = sorted([p.name for p in (ROOT / "molecule").iterdir() if p.is_dir()] + ["e2e"])
# setup, lint and unit replaced by markers that show what `./run test` started, and in which order.
STAGES = (
    "setup() { echo STAGE setup; }; lint() { echo STAGE lint; }; unit() { echo STAGE unit; }; "
    "integration() { echo STAGE integration; }; "
)


def script_command(body: str, logs: Path, lanes: str | None) -> tuple[list[str], dict[str, str], Path]:
    """The shell that sources ./run, its job runner replaced by one that echoes, then runs ``body``; the
    jobs' logs in ``logs``; argv, environment and working folder."""
    env = {k: v for k, v in os.environ.items() if k != "BENCH_TEST_LANES"}
    if lanes is not None:
        env["BENCH_TEST_LANES"] = lanes
    script = f'source ./run; TEST_LOGS={logs}; job_command() {{ echo "ran $1"; }}; {body}'
    return ["bash", "-c", script], env, ROOT


def run_script(body: str, tmp_path: Path, lanes: str | None = "2") -> subprocess.CompletedProcess[str]:
    argv, env, cwd = script_command(body, tmp_path, lanes)
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False)


def finished(tmp_path: Path) -> list[str]:
    return sorted(line.split()[0] for line in (tmp_path / "finished").read_text().splitlines())


# The runs of the lanes below (each ~0.2 s of forks: date, grep, flock for every job), by name: the body
# after ./run is sourced and the lane count.
LANE_RUNS = {
    **{f"lanes {n}": ("system_tests", n) for n in ("1", "2", "3")},
    # Each lane runs only its first job, as a lane loop that stopped early would.
    "fewer": ('run_lane() { run_job "$1"; }; system_tests', "2"),
    "failing": ('job_command() { [ "$1" != dns-check ]; }; system_tests', "2"),
    "nothing": ("run_lane() { :; }; system_tests", "2"),
}
# Where each run of LANE_RUNS keeps its jobs' logs (lane_runs fills it).
LANE_LOGS: dict[str, Path] = {}


def lane_runs(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """The runs of LANE_RUNS, started with the session beside the other tests (conftest's early_commands):
    the tests read only what each printed and left in its logs' folder."""
    commands = {}
    for name, (body, lanes) in LANE_RUNS.items():
        LANE_LOGS[name] = folder / name.replace(" ", "-")
        commands[name] = script_command(body, LANE_LOGS[name], lanes)
    return commands


@pytest.mark.parametrize("lanes", ["0", "-1", "two", "1.5", "100", "01"])
def test_a_lane_count_that_is_not_1_to_99_is_refused_before_setup(tmp_path: Path, lanes: str) -> None:
    result = run_script(STAGES + "system_tests() { echo STAGE system; }; main test", tmp_path, lanes)
    assert result.returncode == 2
    assert result.stderr == (
        f"BENCH_TEST_LANES must be a number of lanes from 1 to 99 (default 2), not '{lanes}'\n"
    )
    assert "STAGE" not in result.stdout


@pytest.mark.parametrize("lanes", ["3", "", None])  # set but empty counts as unset: the default, 2
def test_a_valid_lane_count_goes_on_to_setup_lint_unit_and_integration(
    tmp_path: Path, lanes: str | None
) -> None:
    result = run_script(STAGES + "system_tests() { echo STAGE system $LANES; }; main test", tmp_path, lanes)
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if line.startswith("STAGE")] == [
        "STAGE setup",
        "STAGE lint",
        "STAGE unit",
        "STAGE integration",
        f"STAGE system {lanes or 2}",
    ]


@pytest.mark.early.with_args(lane_runs)
@pytest.mark.parametrize("lanes", ["1", "2", "3"])
def test_every_planned_job_runs_once(
    lanes: str, early_results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    result, logs = early_results[f"lanes {lanes}"], LANE_LOGS[f"lanes {lanes}"]
    assert result.returncode == 0, result.stdout + result.stderr
    assert finished(logs) == JOBS
    for job in JOBS:
        assert (logs / f"{job}.log").read_text() == f"ran {job}\n"
    assert result.stdout.count("\n== lane ") == int(lanes)


@pytest.mark.early.with_args(lane_runs)
def test_a_lane_that_runs_fewer_jobs_than_planned_fails(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    result = early_results["fewer"]
    assert result.returncode == 1
    never_ran = sorted(set(JOBS) - set(finished(LANE_LOGS["fewer"])))
    assert len(never_ran) == len(JOBS) - 2
    message = f"FAILED: 2 of {len(JOBS)} planned jobs finished; never ran: {' '.join(never_ran)}"
    assert message in result.stdout


@pytest.mark.early.with_args(lane_runs)
def test_a_failing_job_fails_the_run_after_every_job_finished(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    result = early_results["failing"]
    assert result.returncode == 1
    assert finished(LANE_LOGS["failing"]) == JOBS
    assert "== dns-check: FAILED (exit 1)" in result.stdout


@pytest.mark.early.with_args(lane_runs)
def test_lanes_that_run_nothing_fail_on_the_count(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    result = early_results["nothing"]
    assert result.returncode == 1
    assert f"FAILED: 0 of {len(JOBS)} planned jobs finished; never ran: {' '.join(JOBS)}" in result.stdout


def shell_scripts() -> list[str]:
    """Every file in the repository that starts with a sh or bash shebang."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        if Path(folder) == ROOT:
            dirs[:] = [d for d in dirs if d not in (".git", ".venv", "results")]
        for name in files:
            path = Path(folder) / name
            with path.open("rb") as fh:
                head = fh.readline()
            if head.startswith(b"#!") and head.split(b"/")[-1].split()[-1:] in ([b"sh"], [b"bash"]):
                found.append(str(path.relative_to(ROOT)))
    return sorted(found)


def test_lint_runs_shellcheck_on_every_shell_script(tmp_path: Path) -> None:
    # mypy exported: scripts/mypy-callers.sh runs it too. The checks lint runs with python (~0.7 s of
    # interpreters) are named here and run in this process below.
    stubs = (
        "yamllint() { :; }; ansible-lint() { :; }; ruff() { :; }; mypy() { :; }; export -f mypy; "
        "shellcheck() { echo SHELLCHECK $@; }; python() { echo PYTHON $@; }; "
    )
    result = run_script(stubs + "lint", tmp_path)
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stdout.splitlines() if line.startswith("SHELLCHECK ")]
    assert sorted(line.split()[1:]) == shell_scripts()
    assert {"run", ".ci/run", "scripts/docker-engine.sh", "tests/mirror/inside.sh"} <= set(shell_scripts())
    assert [line for line in result.stdout.splitlines() if line.startswith("PYTHON ")] == [
        "PYTHON scripts/kind_files.py --check",
        "PYTHON scripts/role_docs.py --check",
    ]


def test_the_role_readmes_lint_checks_are_up_to_date() -> None:
    # lint's `python scripts/role_docs.py --check`, here; its kind_files.py --check is
    # test_kind_files::test_no_generated_file_is_stale.
    assert role_docs.main(["--check"]) == 0


def fake_bin(tmp_path: Path, **tools: str) -> Path:
    """A PATH of its own: `date` (the log lines use it) and the given tools as small scripts."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "date").symlink_to("/bin/date")
    for name, body in tools.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return bin_dir


def test_setup_installs_shellcheck_with_apt_when_missing(tmp_path: Path) -> None:
    calls = tmp_path / "apt-calls"
    bin_dir = fake_bin(tmp_path, **{"apt-get": f'echo "$*" >>{calls}', "id": "echo 0"})
    result = run_script(f"PATH={bin_dir}; setup_shellcheck", tmp_path)
    assert result.returncode == 0, result.stderr
    assert calls.read_text() == "update -q\ninstall -y -q shellcheck\n"


def test_setup_without_shellcheck_or_apt_says_what_to_do(tmp_path: Path) -> None:
    result = run_script(f"PATH={fake_bin(tmp_path)}; setup_shellcheck", tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("shellcheck is missing and there is no apt-get: install shellcheck")


def test_setup_leaves_an_installed_shellcheck_alone(tmp_path: Path) -> None:
    calls = tmp_path / "apt-calls"
    bin_dir = fake_bin(tmp_path, shellcheck="true", **{"apt-get": f'echo "$*" >>{calls}'})
    result = run_script(f"PATH={bin_dir}; setup_shellcheck", tmp_path)
    assert result.returncode == 0 and result.stdout == "" and not calls.exists()


def test_setup_installs_chromium_and_its_driver_with_apt_when_either_is_missing(tmp_path: Path) -> None:
    calls = tmp_path / "apt-calls"
    bin_dir = fake_bin(tmp_path, chromium="true", **{"apt-get": f'echo "$*" >>{calls}', "id": "echo 0"})
    result = run_script(f"PATH={bin_dir}; setup_chromium", tmp_path)
    assert result.returncode == 0, result.stderr
    assert calls.read_text() == (
        "update -q\ninstall -y -q --no-install-recommends chromium chromium-driver fonts-dejavu-core\n"
    )


def test_setup_leaves_an_installed_chromium_alone_and_says_what_to_do_without_apt(tmp_path: Path) -> None:
    calls = tmp_path / "apt-calls"
    tools = {"chromium": "true", "chromedriver": "true", "apt-get": f'echo "$*" >>{calls}'}
    result = run_script(f"PATH={fake_bin(tmp_path, **tools)}; setup_chromium", tmp_path)
    assert result.returncode == 0 and result.stdout == "" and not calls.exists()
    bare = tmp_path / "bare"
    bare.mkdir()
    result = run_script(f"PATH={fake_bin(bare)}; setup_chromium", tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("chromium or chromedriver is missing and there is no apt-get")


@pytest.mark.parametrize(
    ("step", "stages"),
    [("unit", ["python dev", "unit"]), ("integration", ["python dev", "chromium", "integration"])],
)
def test_a_test_step_sets_up_what_it_needs_then_runs(tmp_path: Path, step: str, stages: list[str]) -> None:
    stubs = "setup_python() { echo STAGE python $1; }; setup_chromium() { echo STAGE chromium; }; "
    result = run_script(stubs + STAGES + f"main {step}", tmp_path)
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if line.startswith("STAGE")] == [
        f"STAGE {stage}" for stage in stages
    ]


def test_unit_and_integration_select_the_tests_not_marked_ansible_or_browser_and_those_marked(
    tmp_path: Path,
) -> None:
    # Between them, every test of tests/unit runs once: unit on every core, integration in one process
    # whose marked commands start with the session.
    result = run_script(
        "pytest() { printf 'PYTEST'; printf ' <%s>' \"$@\"; echo; }; unit; integration", tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if line.startswith("PYTEST")] == [
        "PYTEST <-q> <-n> <auto> <--dist> <loadfile> <-m> <not ansible and not browser> <tests/unit>",
        "PYTEST <-q> <-m> <ansible or browser> <tests/unit>",
    ]


def test_a_scenario_whose_needed_file_is_missing_is_skipped_naming_the_file(tmp_path: Path) -> None:
    # The scenario in a checkout of its own (./run reads molecule/NAME/needs from where it runs): one made in
    # this checkout's molecule/ would be a job of the lanes' runs above, which run beside this test.
    checkout = tmp_path / "checkout"
    (checkout / "molecule" / "needs-probe").mkdir(parents=True)
    (checkout / "molecule" / "needs-probe" / "needs").write_text(
        f"# test data\n{ROOT}/README.md\n{tmp_path}/nowhere.bundle\n"
    )
    body = f'cd {checkout}; molecule() {{ echo "molecule ran $*"; }}; scenario_test needs-probe'
    result = run_script(body, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"molecule needs-probe: skipped: it needs {tmp_path}/nowhere.bundle"
        " (not found; see molecule/needs-probe/needs)\n"
    )
    (tmp_path / "nowhere.bundle").write_text("")
    result = run_script(body, tmp_path)
    assert result.stdout == "molecule ran test -s needs-probe\n"


def test_bench_passes_what_follows_the_experiment_to_ansible_playbook(tmp_path: Path) -> None:
    stubs = "setup_bench() { :; }; ansible-playbook() { printf '<%s>' \"$@\"; echo; }; "
    result = run_script(stubs + "main bench apache-embedded -e 'apache_mod_mruby_repo=file:///a b'", tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        "<bench-stack.yml><-e><experiment=apache-embedded><-e><apache_mod_mruby_repo=file:///a b>"
    )
    result = run_script(stubs + "main bench", tmp_path)
    assert result.stdout.splitlines()[-1] == "<bench-stack.yml>"


def test_the_venv_is_compiled_once_but_ansible_collections(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    calls = tmp_path / "python-calls"
    (venv / "bin" / "python").write_text(f'#!/bin/sh\necho "$*" >>{calls}\n')
    (venv / "bin" / "python").chmod(0o755)
    result = run_script(f"VENV={venv}; compile_python; compile_python", tmp_path)
    assert result.returncode == 0, result.stderr
    assert calls.read_text() == f"-m compileall -q -j 0 -x /ansible_collections/ {venv}/lib\n"


def test_bench_setup_output_goes_to_a_log_whose_path_is_printed(tmp_path: Path) -> None:
    """./run bench printed 222 lines of pip and apt output before the run (issue 41)."""
    log = tmp_path / "setup.log"
    body = f"noisy() {{ echo 'Collecting ansible'; echo 'Setting up wrk'; }}; logged {log} noisy"
    result = run_script(body, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"noisy: done (log: {log})\n"
    assert log.read_text() == "Collecting ansible\nSetting up wrk\n"


def test_a_failed_setup_shows_the_end_of_its_log_and_stops(tmp_path: Path) -> None:
    log = tmp_path / "setup.log"
    # errexit inside the setup, as when it runs alone: the step after the failed one does not run.
    broken = "broken() { echo 'E: Unable to locate package wrk'; false; echo after; }; "
    body = f"{broken}logged {log} broken; echo next"
    result = run_script(body, tmp_path)
    assert result.returncode == 1
    assert result.stderr == (
        f"broken failed (exit 1); the end of its log, {log}:\nE: Unable to locate package wrk\n"
    )
    assert "next" not in result.stdout and "after" not in log.read_text()


# ./run bench ends with the run's own exit code (docs/verdict.md, Exit codes): the report action writes the
# gate's code into $BENCH_STACK_OUTCOME; ansible-playbook's 2 alone cannot tell the gate from a failed task.
def bench_with(playbook_body: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    stubs = f"logged() {{ :; }}; ansible-playbook() {{ {playbook_body}; }}; "
    return run_script(stubs + "main bench", tmp_path)


@pytest.mark.parametrize(("code", "meaning"), [("3", "invalid"), ("6", "noisy"), ("7", "a threshold failed")])
def test_bench_exits_with_the_gates_code_when_the_gate_failed_the_playbook(
    tmp_path: Path, code: str, meaning: str
) -> None:
    result = bench_with(f'printf "{code}\\nresults/R\\n" >"$BENCH_STACK_OUTCOME"; return 2', tmp_path)
    assert result.returncode == int(code), meaning
    assert result.stderr.startswith(f"bench-stack: exit {code}, the run's gate (docs/verdict.md, Exit codes;")
    assert result.stderr.rstrip().endswith("results/R")


@pytest.mark.parametrize("rc", ["1", "2", "4", "99"])
def test_bench_exits_1_when_the_playbook_failed_before_the_gate(tmp_path: Path, rc: str) -> None:
    # A failed task (2), a parse error (4), Ctrl-C (99): no code written, or the gate passed (0) before a
    # later failure.
    for body in (f"return {rc}", f'echo 0 >"$BENCH_STACK_OUTCOME"; return {rc}'):
        result = bench_with(body, tmp_path)
        assert result.returncode == 1
        assert result.stderr == (
            f"bench-stack: ansible-playbook failed (its exit code {rc}) before the run's gate: exit 1\n"
        )


def test_bench_exits_0_when_the_playbook_passed_and_removes_the_outcome_file(tmp_path: Path) -> None:
    result = bench_with(
        'echo "$BENCH_STACK_OUTCOME" >' + f'{tmp_path}/named; echo 0 >"$BENCH_STACK_OUTCOME"', tmp_path
    )
    assert result.returncode == 0, result.stderr
    named = Path((tmp_path / "named").read_text().strip())
    assert named.name.startswith("bench-stack-outcome.") and not named.exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ("", "bench-stack.yml"),
        (" webrick-vs-thin -i inv", "bench-stack.yml -e experiment=webrick-vs-thin -i inv"),
        # The resume hint's form: an option first names no experiment (it became `-e experiment=-e`).
        (" -e bench_run_dir=results/R", "bench-stack.yml -e bench_run_dir=results/R"),
    ],
)
def test_bench_passes_the_experiment_and_the_rest_to_ansible_playbook(
    tmp_path: Path, args: str, expected: str
) -> None:
    stubs = f'logged() {{ :; }}; ansible-playbook() {{ echo "$*" >{tmp_path}/args; }}; '
    result = run_script(stubs + "main bench" + args, tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "args").read_text().strip() == expected
