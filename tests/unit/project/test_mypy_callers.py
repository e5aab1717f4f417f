"""scripts/mypy-callers.sh (in ./run lint) type-checks every Python file outside the package that calls it, in
runs where no two files would get one module name. Its mypy is replaced by one that records its arguments."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ["--config-file", "tests/mypy-callers.toml", "--no-error-summary"]


def callers() -> list[str]:
    """What the check must cover: the Molecule scenarios' tests and helpers, the e2e test, the shared
    testinfra helpers and the scripts."""
    found = [*ROOT.glob("molecule/**/*.py"), *ROOT.glob("tests/e2e/**/*.py"), *ROOT.glob("tests/*.py")]
    found += ROOT.glob("scripts/**/*.py")
    return sorted(str(p.relative_to(ROOT)) for p in found if "__pycache__" not in p.parts)


def runs(tmp_path: Path, exit_code: int = 0) -> tuple[list[list[str]], int]:
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    (bin_dir / "mypy").write_text(f'#!/bin/sh\necho "$*" >>{calls}\nexit {exit_code}\n')
    (bin_dir / "mypy").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    done = subprocess.run(
        [str(ROOT / "scripts" / "mypy-callers.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return [line.split() for line in calls.read_text().splitlines()], done.returncode


def test_every_caller_is_checked_once_and_no_run_names_a_module_twice(tmp_path: Path) -> None:
    found, code = runs(tmp_path)
    assert code == 0
    files = []
    for args in found:
        assert args[:3] == CONFIG, args
        checked = [a for a in args[3:] if not a.startswith("--")]
        files += checked
        if "--explicit-package-bases" not in args:  # named by their file: no two alike in one run
            stems = [Path(f).stem for f in checked]
            assert len(stems) == len(set(stems)), checked
    assert sorted(files) == callers()
    assert {"molecule/multi-host/tests/test_safety.py", "tests/e2e/test_bench_run.py"} <= set(files)


def test_a_run_that_finds_an_error_fails_the_check_after_every_run(tmp_path: Path) -> None:
    found, code = runs(tmp_path, exit_code=1)
    assert code == 1
    assert len(found) == len({Path(f).parts[1] for f in callers() if f.startswith("molecule/")}) + 3
