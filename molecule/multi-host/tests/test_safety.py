"""What the side effect (side_effect.py) did on purpose, checked from its evidence (the verify gate is
sinatra-thin-nginx's): loadgens whose warm-ups differ start their measured runs together; an
interrupted run leaves nothing on the loadgens and resumes where it stopped, measuring again a cell only
one loadgen had stored."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sideeffect import load

from benchstack.records.cellparts import Window

LOADGENS = ["bench-mol-multi-lg1", "bench-mol-multi-lg2"]


def epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


@pytest.fixture(scope="module")
def interrupted() -> dict[str, Any]:
    return load("interrupted")


def test_every_warm_up_of_lg2_was_held_longer(interrupted: dict[str, Any]) -> None:
    stops = [line for line in interrupted["delays"] if " stopped " in line]
    conts = [line for line in interrupted["delays"] if " continued " in line]
    # the first cell twice (interrupted run, lone resume) and the second twice (interrupted run, resume)
    assert len(stops) == len(conts) >= 4
    for stop, cont in zip(stops, conts, strict=True):
        assert float(cont.split()[0]) - float(stop.split()[0]) >= interrupted["delay_s"]


def merged_cells(interrupted: dict[str, Any]) -> list[dict[str, Any]]:
    run = Path(interrupted["run_dir"])
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((run / "cells").glob("*.json"))]


def test_loadgens_whose_warm_ups_differ_start_their_measured_runs_within_a_second(
    interrupted: dict[str, Any],
) -> None:
    cells = merged_cells(interrupted)
    assert sorted(c["tool"] for c in cells) == ["ab", "wrk"]
    for cell in cells:
        starts = [epoch(lg["window"]["start"]) for lg in cell["merged"]["per_loadgen"]]
        assert max(starts) - min(starts) < 1, cell["merged"]["per_loadgen"]
        # The windows overlap: the merge cuts every loadgen's requests to their common part.
        spans = [Window.from_dict(lg["window"]).span() for lg in cell["merged"]["per_loadgen"]]
        assert max(start for start, _ in spans) < min(end for _, end in spans), spans


def test_ctrl_c_mid_cell_ends_the_playbook_and_leaves_nothing_running_on_the_loadgens(
    interrupted: dict[str, Any],
) -> None:
    assert interrupted["caught_mid_cell"], interrupted["log_tail"]
    assert interrupted["interrupt"]["hung"] is False and interrupted["interrupt"]["rc"] != 0
    assert interrupted["loadgens_clean"], interrupted["left_after"]
    # The measured wrk run (3 s) ends by itself, with its vmstat and its folder; not after vmstat's bound.
    assert interrupted["loadgens_clean_after_s"] < 15
    for lg in LOADGENS:
        assert interrupted["left_after"][lg] == ""


def test_the_resume_keeps_finished_cells_and_measures_the_interrupted_one_again(
    interrupted: dict[str, Any],
) -> None:
    first, second = interrupted["cells"]
    before, after = interrupted["stored_after_interrupt"], interrupted["stored_after_resume"]
    assert f"cells/{first}.json" in before and f"cells/{second}.json" not in before
    assert interrupted["resume"]["rc"] == 0, interrupted["resume"]["output"]
    for path, started in before.items():
        assert after[path] == started, path  # untouched
    for path in [f"cells/{second}.json"] + [f"loadgens/{lg}/cells/{second}.json" for lg in LOADGENS]:
        assert epoch(after[path]) >= int(interrupted["resume_started_at"]), path
    assert all(v == "" for v in interrupted["left_after_resume"].values()), interrupted["left_after_resume"]


def test_a_cell_only_one_loadgen_had_stored_is_measured_again_by_both(interrupted: dict[str, Any]) -> None:
    first, _ = interrupted["cells"]
    before, after = interrupted["stored_after_resume"], interrupted["stored_after_lone"]
    assert interrupted["lone"]["rc"] == 0, interrupted["lone"]["output"]
    for path in [f"cells/{first}.json"] + [f"loadgens/{lg}/cells/{first}.json" for lg in LOADGENS]:
        assert epoch(after[path]) >= int(interrupted["lone_started_at"]), path
    # lg1's lone cell is kept aside, as it was
    [aside] = [p for p in after if p.startswith(f"loadgens/{LOADGENS[0]}/superseded/")]
    assert after[aside] == before[f"loadgens/{LOADGENS[0]}/cells/{first}.json"]
    assert all(v == "" for v in interrupted["left_after_lone"].values()), interrupted["left_after_lone"]
