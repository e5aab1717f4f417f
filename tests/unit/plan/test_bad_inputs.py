"""The corpus of bad experiments (tests/bad-inputs): the command line (`bench-stack experiment`) and the
playbook (the plan play, bench_plan) refuse each one, with the same problems, before any host is touched."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ansible.errors import AnsibleActionFail
from conftest import bench_stack
from test_plugins import run_plan

ROOT = Path(__file__).resolve().parents[3]
BAD = ROOT / "tests" / "bad-inputs"
# Cases that git cannot hold as they are (a link out of the project, a FIFO) have a sidecar that says how the
# test makes them in a copy of the folder: with_links.
MADE = [p.with_suffix(".yml") for sidecar in ("*.links", "*.fifo") for p in BAD.glob(sidecar)]
CORPUS = sorted({*BAD.glob("*.yml"), *MADE})


def expected(path: Path) -> list[str]:
    sidecar = path.with_suffix(".expect")
    text = sidecar.read_text(encoding="utf-8") if sidecar.exists() else path.read_text(encoding="utf-8")
    return [line.split("# expect: ", 1)[1] for line in text.splitlines() if line.startswith("# expect: ")]


def cli(path: Path) -> subprocess.CompletedProcess[str]:
    return bench_stack("experiment", path)


def test_the_corpus_holds_the_cases_the_issues_name() -> None:
    assert len(CORPUS) >= 15
    names = {p.stem for p in CORPUS}
    # Issue 29, item 4: what is not a bounded regular file, or not bounded YAML.
    assert {"fifo", "dev-zero", "symlink-loop", "deep-nesting", "alias-bomb-env", "duplicate-key"} <= names
    # Issue 44, finding 7: what was a traceback (a file name that is not UTF-8, an experiment path of no
    # user's home: tests/unit/cli/test_cli_bad_input.py).
    assert {
        "app-src-symlink-loop",
        "app-src-nul",
        "app-src-5000-characters",
        "app-src-no-such-user",
        "requirements-dangling-link",
        "requirements-link-to-folder",
        "gemfile-dangling-link",
        "gemfile-link-to-folder",
        "env-lone-surrogate",
        "check-lone-surrogate",
    } <= names
    assert all(expected(p) for p in CORPUS), [p.name for p in CORPUS if not expected(p)]


def with_links(path: Path, tmp_path: Path) -> Path:
    """``path``, or for a case with a ``.links`` sidecar (``LINK -> TARGET`` lines) or a ``.fifo`` one (the
    case is a FIFO), a copy of the corpus folder in ``tmp_path`` with those links or that FIFO made: the
    project itself holds no link that leaves it, and git holds no FIFO."""
    sidecar, fifo = path.with_suffix(".links"), path.with_suffix(".fifo")
    if not sidecar.exists() and not fifo.exists():
        return path
    copy = tmp_path / "bad-inputs"
    shutil.copytree(path.parent, copy)
    if fifo.exists():
        os.mkfifo(copy / path.name)
        return copy / path.name
    for line in sidecar.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            link, target = line.split(" -> ")
            (copy / link).parent.mkdir(parents=True, exist_ok=True)
            (copy / link).symlink_to(target)
    return copy / path.name


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_the_command_line_and_the_plan_refuse_each_bad_experiment_alike(path: Path, tmp_path: Path) -> None:
    path = with_links(path, tmp_path)
    result = cli(path)
    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("bench-stack: ")
    for problem in expected(path):
        assert problem in result.stderr, (problem, result.stderr)
    with pytest.raises(AnsibleActionFail) as err:
        run_plan(str(path))
    assert err.value.message == result.stderr.removeprefix("bench-stack: ").rstrip("\n")


def nowhere(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """An inventory whose one host does not exist (the plan play must never connect to it), and the
    environment ansible-playbook runs in."""
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        "all:\n  vars: {ansible_host: 192.0.2.1}\n  children:\n"
        "    targets: {hosts: {nowhere: {}}}\n    loadgens: {hosts: {nowhere: {}}}\n"
    )
    # PYTHONPATH: the plugins import this checkout's benchstack, as pytest's pythonpath does for the tests
    # (an editable install may point at another checkout).
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    return inventory, env


def refused(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """bench-stack.yml with three bad experiments, against a host that does not exist (started with the
    session: conftest's early_commands)."""
    inventory, env = nowhere(folder)
    playbook = [
        str(Path(sys.executable).with_name("ansible-playbook")),
        "-i",
        str(inventory),
        "bench-stack.yml",
    ]
    names = ("injection-app-dir", "five-problems", "uppercase-name")
    return {
        n: ([*playbook, "-e", f"experiment={ROOT / 'tests' / 'bad-inputs' / n}.yml"], env, ROOT)
        for n in names
    }


@pytest.mark.ansible
@pytest.mark.early.with_args(refused)
def test_the_playbook_refuses_them_in_its_first_play_before_any_host(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    assert list(early_results) == ["injection-app-dir", "five-problems", "uppercase-name"]
    for name, result in early_results.items():
        out = result.stdout + result.stderr
        assert result.returncode != 0, out[-2000:]
        assert "TASK [Compile the plan" in out and "Local Docker containers" not in out, out[-2000:]
        assert "UNREACHABLE" not in out
        for problem in expected(ROOT / "tests" / "bad-inputs" / f"{name}.yml"):
            assert problem in out.replace("\\n", "\n"), (problem, out[-2000:])


def answered(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """playbooks/plan.yml with bench_yes true, false and maybe (started with the session)."""
    inventory, env = nowhere(folder)
    path = ROOT / "tests" / "bad-inputs" / "unicorn-4160-processes.yml"
    playbook = [
        str(Path(sys.executable).with_name("ansible-playbook")),
        *("-i", str(inventory), "playbooks/plan.yml"),
        *("-e", f"experiment={path}", "-e", f"bench_results_dir={folder}"),
    ]
    return {yes: ([*playbook, "-e", f"bench_yes={yes}"], env, ROOT) for yes in ("true", "false", "maybe")}


@pytest.mark.ansible
@pytest.mark.early.with_args(answered)
def test_the_playbook_says_yes_with_bench_yes_and_nothing_else(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    """bench_yes reaches the one validator (benchstack.plan.resolved.compile_plan) through the plan play
    alone."""
    outputs = {yes: (r.returncode, r.stdout + r.stderr) for yes, r in early_results.items()}
    assert outputs["true"][0] == 0, outputs["true"][1][-2000:]
    assert "more than 256 (said yes)" in outputs["true"][1]
    assert outputs["false"][0] != 0 and "-e bench_yes=true" in outputs["false"][1]
    assert outputs["maybe"][0] != 0 and "bench_yes: must be true or false, not 'maybe'" in outputs["maybe"][1]
