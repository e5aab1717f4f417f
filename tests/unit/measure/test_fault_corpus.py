"""The faults of issue 29, section 1 (tests/bad-inputs/faults): what the hosts and the load tool showed while
each fault happened, fed to the judgement a stored cell gets now. Each must give the reasons its file
expects; a fault no data shows names the tests of its process-level fix, which must exist."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import cell_plan, read_yaml
from test_repetitions import rounds

from benchstack.measure.hostevents import reasons, states
from benchstack.measure.runner import overrun_reasons
from benchstack.measure.stackunits import down_reasons
from benchstack.records.cellparts import Window
from benchstack.results.cell import left_out

ROOT = Path(__file__).resolve().parents[3]
FAULTS = sorted((ROOT / "tests" / "bad-inputs" / "faults").glob("*.yml"))


def comments(path: Path, key: str) -> list[str]:
    prefix = f"# {key}: "
    return [
        line[len(prefix) :]
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith(prefix)
    ]


def judged(case: dict[str, Any]) -> list[str]:
    """The reasons the fault's evidence gets from the judgement its ``judge`` names."""
    if case["judge"] == "overrun":
        window = case["window"]
        return overrun_reasons(cell_plan(case["plan"]), None if window is None else Window.from_dict(window))
    if case["judge"] == "collapse":
        group = rounds("fault", case["rps"])
        return [why for cell, whys in left_out(group) if cell is group[case["fault"]] for why in whys]
    if case["judge"] == "states":
        found = []
        for before, after in case["cells"]:
            state0, state1 = states(f"{before}\n{after}\n")
            found += reasons(state0, state1, case["host"])
            found += down_reasons(state0, case.get("units") or [], case["host"])
        return found
    raise AssertionError(f"unknown judge {case['judge']!r}")


def test_every_fault_of_the_issue_is_in_the_corpus() -> None:
    faults = " ".join(f for path in FAULTS for f in comments(path, "fault"))
    # The six of the trial: four stored bad cells, two went well and are kept so they stay so.
    six = ("docker pause", "docker restart", "SIGKILL of the controller", "systemctl stop nginx", "Ctrl-C")
    for words in (*six, "run folder made read-only"):
        assert words in faults, words
    assert all(comments(p, "fault") and comments(p, "then") for p in FAULTS)


@pytest.mark.parametrize(
    "path", [p for p in FAULTS if "judge: none" not in p.read_text()], ids=lambda p: p.stem
)
def test_each_faults_evidence_gets_the_reasons_it_expects(path: Path) -> None:
    case = read_yaml(path)
    found = judged(case)
    expected = comments(path, "expect")
    assert expected
    for reason in expected:
        assert any(why.startswith(reason) for why in found), (reason, found)
    # Nothing beyond what the file says: a new reason is a new line in the corpus.
    assert len(found) == len(expected), found


@pytest.mark.parametrize("path", [p for p in FAULTS if "covered_by" in p.read_text()], ids=lambda p: p.stem)
def test_the_tests_a_fault_names_exist(path: Path) -> None:
    case = read_yaml(path)
    if case["judge"] == "none":
        assert case["why"].strip()
    for test in case["covered_by"]:
        file, _, name = test.partition("::")
        text = (ROOT / file).read_text(encoding="utf-8")
        assert re.search(rf"^def {re.escape(name)}\(", text, re.MULTILINE), test
