import dataclasses
from pathlib import Path
from typing import Any

from conftest import STORED_META, read_data

from benchstack.cell import make_cell, write_cell
from benchstack.experiment import experiment_from_dict
from benchstack.parsers import parse
from benchstack.repetitions import extra_cells, is_noisy, more_repetitions_needed

PARSED = parse("ab", read_data("ab", "normal.txt"))  # ab -n 2000 -c 50


def cell(stack: str, repetition: int, rps: float, concurrency: int = 50) -> dict[str, Any]:
    parsed = dataclasses.replace(PARSED, rps=rps, concurrency=concurrency)
    return dataclasses.asdict(
        make_cell(
            parsed, **STORED_META, experiment="adaptive", stack=stack, repetition=repetition, requests=2000
        )
    )


def experiment(**load: Any) -> Any:
    return experiment_from_dict(
        {
            "name": "adaptive",
            "stacks": [
                {"name": "a", "port": 8001, "app": {"kind": "static"}, "front": {"kind": "nginx"}},
                {"name": "b", "port": 8002, "app": {"kind": "static"}, "front": {"kind": "nginx"}},
            ],
            "load": {"plans": [{"tool": "ab", "concurrency": 50, "requests": 2000}], **load},
        }
    )


def store(run_dir: Path, *cells: dict[str, Any]) -> None:
    for c in cells:
        write_cell(run_dir, c)


def test_quiet_group_needs_no_more_repetitions() -> None:
    group = [cell("a", 1, 1000.0), cell("a", 2, 1010.0), cell("a", 3, 990.0)]  # cv 1 %
    assert not is_noisy(group, 0.05)
    assert not more_repetitions_needed(group, max_cv=0.05, max_repetitions=5)


def test_noisy_group_needs_more_until_the_cap() -> None:
    group = [cell("a", 1, 1000.0), cell("a", 2, 1300.0), cell("a", 3, 800.0)]  # cv 24 %
    assert is_noisy(group, 0.05)
    assert more_repetitions_needed(group, max_cv=0.05, max_repetitions=5)
    assert not more_repetitions_needed(group, max_cv=0.05, max_repetitions=3)
    assert not more_repetitions_needed(group, max_cv=0.5, max_repetitions=5)


def test_a_single_repetition_has_no_known_spread_so_another_is_needed_below_the_cap() -> None:
    assert more_repetitions_needed([cell("a", 1, 1000.0)], max_cv=0.05, max_repetitions=2)
    assert not more_repetitions_needed([cell("a", 1, 1000.0)], max_cv=0.05, max_repetitions=1)
    assert not is_noisy([cell("a", 1, 1000.0)], 0.05)


def test_extra_cells_continue_the_repetitions_of_noisy_groups_only(tmp_path: Path) -> None:
    exp = experiment(repetitions=2, max_repetitions=4, max_cv=0.05)
    store(tmp_path, cell("a", 1, 1000.0), cell("a", 2, 1500.0), cell("b", 1, 1000.0), cell("b", 2, 1001.0))
    [extra] = extra_cells(tmp_path, exp)
    assert (extra.cell_id, extra.stack, extra.repetition, extra.port) == ("a__ab__c50__r3", "a", 3, 8001)
    store(tmp_path, cell("a", 3, 1200.0))
    assert [p.cell_id for p in extra_cells(tmp_path, exp)] == ["a__ab__c50__r4"]
    store(tmp_path, cell("a", 4, 1300.0))
    assert extra_cells(tmp_path, exp) == []  # still noisy, but at the cap: the report marks it


def test_extra_cells_follow_the_rotated_stack_order(tmp_path: Path) -> None:
    exp = experiment(repetitions=1, max_repetitions=3)
    store(tmp_path, cell("a", 1, 1000.0), cell("b", 1, 1000.0))
    # Repetition 2 measures the stacks rotated by one: b before a.
    assert [p.cell_id for p in extra_cells(tmp_path, exp)] == ["b__ab__c50__r2", "a__ab__c50__r2"]


def test_no_extra_cells_before_the_regular_repetitions_are_stored(tmp_path: Path) -> None:
    exp = experiment(repetitions=2, max_repetitions=4)
    store(tmp_path, cell("a", 1, 1000.0))
    assert extra_cells(tmp_path, exp) == []
    assert extra_cells(tmp_path / "empty", exp) == []


def test_without_max_repetitions_there_are_never_extra_cells(tmp_path: Path) -> None:
    exp = experiment(repetitions=2)
    store(tmp_path, cell("a", 1, 1000.0), cell("a", 2, 2000.0), cell("b", 1, 1.0), cell("b", 2, 9.0))
    assert extra_cells(tmp_path, exp) == []
