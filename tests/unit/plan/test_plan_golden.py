"""The plan fact of every experiment file the project holds is what it was before the stack sections became
typed (issue 26, item 1), and every refused one is refused with the same problems (plan_cases.py,
tests/data/plan/golden.json)."""

import functools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import in_child, printed_json
from plan_cases import EXPERIMENTS, GOLDEN, ROOT


def compiled_now(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """plan_cases.golden() as the code compiles the files now, in a new interpreter (~1 s of CPU, started with
    the session beside the other tests: conftest's early_commands)."""
    return {"golden": (in_child("plan_cases", "golden", pure=True), dict(os.environ), ROOT)}


@pytest.fixture
def now(early_results: dict[str, subprocess.CompletedProcess[str]]) -> dict[str, Any]:
    return _parsed(early_results["golden"])


@functools.cache
def _parsed(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    # Once for the 74 cases (~50 ms each).
    return dict(printed_json(done))


@pytest.fixture(scope="module")
def before() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_the_golden_file_holds_every_experiment_file(before: dict[str, Any]) -> None:
    assert set(before) == {str(p.relative_to(ROOT)) for p in EXPERIMENTS}
    compiled = [case for case, result in before.items() if "one_target" in result]
    assert any(case.startswith("experiments/") for case in compiled)
    assert any(case.startswith("molecule/") for case in compiled)
    assert "tests/e2e/experiment.yml" in compiled
    assert len(compiled) >= 20
    assert sum("problems" in result for result in before.values()) >= 40


@pytest.mark.early.with_args(compiled_now)
@pytest.mark.parametrize("case", sorted(str(p.relative_to(ROOT)) for p in EXPERIMENTS))
def test_every_experiment_compiles_to_the_same_plan(
    case: str, now: dict[str, Any], before: dict[str, Any]
) -> None:
    was, got = before[case], now[case]
    # Key by key first, so a difference names the part of the plan it is in.
    for part in sorted(set(was) | set(got)):
        if isinstance(was.get(part), dict) and isinstance(got.get(part), dict):
            for key in sorted(set(was[part]) | set(got[part])):
                assert got[part].get(key) == was[part].get(key), (part, key)
        assert got.get(part) == was.get(part), part
