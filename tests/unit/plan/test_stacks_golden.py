"""The plan's stack part is what it was before app kinds and fronts moved into adapters
(benchstack.kinds.apps, benchstack.kinds.fronts): every shipped experiment's stacks and a matrix of app kind x
front x server x bind resolve to the same JSON, and every refused one is refused with the same problems
(stack_cases.py, tests/data/stacks/resolved.json)."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import in_child, printed_json
from stack_cases import GOLDEN, ROOT


def resolved_now(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """stack_cases.golden() as the code resolves the cases now, in a new interpreter (~1 s of CPU, started
    with the session beside the other tests: conftest's early_commands)."""
    return {"golden": (in_child("stack_cases", "golden", pure=True), dict(os.environ), ROOT)}


@pytest.fixture
def now(early_results: dict[str, subprocess.CompletedProcess[str]]) -> dict[str, Any]:
    return dict(printed_json(early_results["golden"]))


@pytest.fixture(scope="module")
def before() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_the_golden_file_holds_every_kind_of_case(before: dict[str, Any]) -> None:
    cases = set(before["resolved"]) | {case for cases in before["refused"].values() for case in cases}
    assert any(case.startswith("experiments/") for case in before["resolved"])
    assert any(case.startswith("molecule/") for case in before["resolved"])
    assert len(cases) > 2000
    assert len(before["resolved"]) > 150


@pytest.mark.early.with_args(resolved_now)
def test_every_case_resolves_to_the_same_plan(now: dict[str, Any], before: dict[str, Any]) -> None:
    differs = {
        case: sorted(
            part
            for part in set(parts) | set(now["resolved"].get(case, {}))
            if parts.get(part) != now["resolved"].get(case, {}).get(part)
        )
        for case, parts in before["resolved"].items()
        if now["resolved"].get(case) != parts
    }
    assert differs == {}
    assert set(now["resolved"]) == set(before["resolved"])


@pytest.mark.early.with_args(resolved_now)
def test_every_refused_case_gets_the_same_problems(now: dict[str, Any], before: dict[str, Any]) -> None:
    assert now["refused"] == before["refused"]
