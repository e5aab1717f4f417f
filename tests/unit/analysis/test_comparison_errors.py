"""How often the comparisons call a difference that is not there, over whole simulated runs of the real
stopping rule (scripts/simulate-comparisons.py): the extra rounds look after every round, so without the
stricter confidence per look (load.confidence 0.99) an A/A run calls a false difference about one time in five
at this spread; with it, about one in twenty. The simulation runs in a new interpreter beside the other tests
(~2 s of CPU, both confidences in one: conftest's early commands)."""

import importlib.util
import os
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import in_child, printed_json

ROOT = Path(__file__).resolve().parents[3]
RUNS = 120


def _script() -> Any:
    spec = importlib.util.spec_from_file_location(
        "simulate_comparisons", ROOT / "scripts" / "simulate-comparisons.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def aa_states(confidence: float) -> dict[str, int]:
    """States of ``RUNS`` simulated A/A runs (log-normal noise of 7 % per cell, the spread of a busy sitting
    of the test VM), at ``confidence`` per look."""
    from benchstack.plan.experiment import load_experiment

    sim = _script()
    exp = load_experiment(ROOT / "experiments" / "aa-thin.yml")
    exp = replace(exp, load=replace(exp.load, confidence=confidence))
    ratios = {s["name"]: 1.0 for s in exp.stacks}
    rng = random.Random(20261204)
    states: dict[str, int] = {}
    for _ in range(RUNS):
        [c], _, _ = sim.simulate(exp, ratios, 0.07, 0.03, 240.0, 2.4, rng)
        states[c.state] = states.get(c.state, 0) + 1
    return states


def aa_states_at(confidences: list[float]) -> dict[str, dict[str, int]]:
    """:func:`aa_states` at each confidence, in one interpreter (a second one imported the same again)."""
    return {str(c): aa_states(c) for c in confidences}


def simulated(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    argv = in_child("analysis.test_comparison_errors", "aa_states_at", [0.95, 0.99], pure=True)
    return {"aa": (argv, dict(os.environ), ROOT)}


@pytest.mark.early.with_args(simulated)
def test_a_stricter_confidence_per_look_keeps_an_aa_runs_false_differences_near_five_percent(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    states = printed_json(early_results["aa"])
    strict, loose = states["0.99"], states["0.95"]
    false = {
        name: s.get("faster", 0) + s.get("slower", 0) for name, s in (("strict", strict), ("loose", loose))
    }
    assert sum(strict.values()) == sum(loose.values()) == RUNS
    # 120 runs: about 6 false differences expected at 99 % per look (5 %), 26 at 95 % (21.5 %)
    assert false["strict"] <= 14, strict
    assert false["loose"] >= 15, loose
    assert strict.get("equivalent", 0) >= RUNS // 3, strict
