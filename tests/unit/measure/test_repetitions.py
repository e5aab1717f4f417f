import dataclasses
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conftest import STORED_META, read_data

from benchstack.analysis.stats import relative_half_width
from benchstack.kinds.loadtools import parse
from benchstack.measure.repetitions import ExtraRound, extra_cells, extra_round, more_needed, precision
from benchstack.plan.experiment import cell_plan, experiment_from_dict, load_points
from benchstack.plan.loadplan import MAX_CELLS_PER_COUNTED, Load
from benchstack.results.cell import COLLAPSE_SHARE, Cell, counted, left_out, make_cell, write_cell

PARSED = parse("ab", read_data("ab", "normal.txt"))  # ab -n 2000 -c 50
QUIET = [1000.0, 1004.0, 998.0, 1001.0, 1003.0, 999.0]  # +-0.3 %
SPREAD = [1000.0, 1500.0, 800.0, 1300.0, 900.0, 1200.0]  # +-35 %


def cell(
    stack: str, repetition: int, rps: float, disturbed: list[str] | None = None, started: str | None = None
) -> Cell:
    parsed = dataclasses.replace(PARSED, rps=rps)
    meta = {**STORED_META, **({"started_at": started} if started else {})}
    return make_cell(
        parsed,
        **meta,
        experiment="adaptive",
        stack=stack,
        repetition=repetition,
        requests=2000,
        disturbed=disturbed or [],
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


def store(run_dir: Path, *cells: Cell) -> None:
    for c in cells:
        write_cell(run_dir, c)


def rounds(stack: str, values: list[float], first: int = 1) -> list[Cell]:
    return [cell(stack, first + i, v) for i, v in enumerate(values)]


WRITTEN = {"repetitions": 6, "max_repetitions": 10, "target_precision": 0.05}
LOAD = Load(plans=(), baseline="a", **WRITTEN)


def test_a_precise_load_point_needs_no_more_rounds() -> None:
    group = rounds("a", QUIET)
    assert precision(group) is not None and precision(group) <= 0.05
    assert not more_needed(group, LOAD)


def test_an_imprecise_load_point_gets_rounds_until_the_cap() -> None:
    group = rounds("a", SPREAD)
    assert precision(group) is not None and precision(group) > 0.05
    assert more_needed(group, LOAD)
    assert not more_needed(group, dataclasses.replace(LOAD, max_repetitions=6))
    assert not more_needed(group, dataclasses.replace(LOAD, target_precision=0.5))


def test_precision_at_the_target_ends_the_rounds_just_above_it_does_not() -> None:
    group = rounds("a", SPREAD)
    reached = precision(group)
    assert reached is not None
    assert not more_needed(group, dataclasses.replace(LOAD, target_precision=reached))
    assert more_needed(group, dataclasses.replace(LOAD, target_precision=reached * 0.999))


def test_below_six_counted_cells_the_precision_is_unknown_and_more_are_measured() -> None:
    group = rounds("a", QUIET[:5])
    assert precision(group) is None
    assert more_needed(group, dataclasses.replace(LOAD, repetitions=5))


def test_a_disturbed_cell_is_not_counted_and_is_measured_again() -> None:
    group = rounds("a", QUIET[:5]) + [cell("a", 6, 10.0, disturbed=["interference: foreign CPU 40 %"])]
    assert precision(group) is None  # 5 counted: the disturbed 10 req/s is not among them
    assert more_needed(group, LOAD)


def test_disturbed_cells_are_bounded() -> None:
    bad = [cell("a", i, 1000.0, disturbed=["overrun"]) for i in range(1, 2 * LOAD.repetition_cap + 1)]
    assert len(bad) == MAX_CELLS_PER_COUNTED * LOAD.repetition_cap
    assert not more_needed(bad, LOAD)
    assert more_needed(bad[:-1], LOAD)


def test_extra_cells_continue_the_repetitions_of_imprecise_load_points_and_their_baseline(
    tmp_path: Path,
) -> None:
    exp = experiment(**WRITTEN, baseline="b")
    store(tmp_path, *rounds("a", SPREAD), *rounds("b", QUIET))
    cells = extra_cells(tmp_path, exp)
    # a's comparison has 6 pairs, too few for an interval; b, precise, is its baseline and gets the round
    # too: comparisons pair by round.
    assert sorted(p.cell_id for p in cells) == ["a__ab__c50__r7", "b__ab__c50__r7"]
    [a7] = [p for p in cells if p.stack == "a"]
    assert (a7.repetition, a7.port) == (7, 8001)


def test_every_cell_of_an_extra_round_has_the_rounds_number(tmp_path: Path) -> None:
    # a needed 3 more cells alone (r7-r9). b's r3 was disturbed: b is due again, in the same round as a's
    # r10, so its cell is r10 too (the same minute, paired with a's), not r7 (paired with a cell minutes off).
    exp = experiment(**WRITTEN, baseline="a")
    noisy = ["interference: foreign CPU 40 %"]
    b = [cell("b", r, v, disturbed=noisy if r == 3 else None) for r, v in enumerate(QUIET, 1)]
    store(tmp_path, *rounds("a", SPREAD + [1000.0] * 3), *b)
    cells = extra_cells(tmp_path, exp)
    assert sorted(p.cell_id for p in cells) == ["a__ab__c50__r10", "b__ab__c50__r10"]


def test_a_comparison_without_enough_pairs_gets_rounds_with_its_baseline(tmp_path: Path) -> None:
    # 2 of a's 6 rounds were disturbed: 4 pairs, 8 needed for an interval at 99 %.
    exp = experiment(**WRITTEN, baseline="a")
    noisy = ["interference: foreign CPU 40 %"]
    a = [cell("a", r, v, disturbed=noisy if r in (2, 5) else None) for r, v in enumerate(QUIET, 1)]
    a += [cell("a", 7, 1000.0), cell("a", 8, 1002.0)]  # measured again alone: no pair with b
    store(tmp_path, *a, *rounds("b", QUIET))
    assert sorted(p.cell_id for p in extra_cells(tmp_path, exp)) == ["a__ab__c50__r9", "b__ab__c50__r9"]
    store(tmp_path, *rounds("a", [1000.0, 1001.0, 999.0], 9), *rounds("b", [1001.0, 1000.0, 1000.0], 9))
    assert len(extra_cells(tmp_path, exp)) == 2  # 7 pairs
    store(tmp_path, cell("a", 12, 1000.0), cell("b", 12, 1002.0))
    assert extra_cells(tmp_path, exp) == []  # 8 pairs within +-0.5 %: equivalent


def test_a_comparison_gets_rounds_until_it_has_max_repetitions_pairs_not_counted_cells(
    tmp_path: Path,
) -> None:
    # b's first round was disturbed and measured again in round 7, alone: 6 counted cells each, 5 pairs. The
    # comparison is bounded by its pairs: a and b get round 8 although both have max_repetitions counted.
    exp = experiment(**{**WRITTEN, "max_repetitions": 6}, baseline="a")
    noisy = ["interference: foreign CPU 40 %"]
    a = [cell("a", r, 1000.0) for r in range(1, 7)]
    b = [cell("b", r, v, disturbed=noisy if r == 1 else None) for r, v in enumerate(QUIET, 1)]
    store(tmp_path, *a, *b, cell("b", 7, 1000.0))
    assert sorted(p.cell_id for p in extra_cells(tmp_path, exp)) == ["a__ab__c50__r8", "b__ab__c50__r8"]
    store(tmp_path, cell("a", 8, 1001.0), cell("b", 8, 1000.0))
    assert extra_cells(tmp_path, exp) == []  # 6 pairs: load.max_repetitions


def test_a_comparison_gets_no_round_once_a_side_has_its_bound_of_cells_in_all(tmp_path: Path) -> None:
    # b disturbed in 6 of its 12 cells (2 x max_repetitions): 6 counted, 5 pairs, no further round.
    exp = experiment(**{**WRITTEN, "max_repetitions": 6}, baseline="a")
    noisy = ["interference: foreign CPU 40 %"]
    a = [cell("a", r, 1000.0) for r in range(1, 7)]
    b = [cell("b", r, 1000.0, disturbed=noisy if r == 1 else None) for r in range(1, 7)]
    b += [cell("b", r, 1000.0, disturbed=noisy) for r in range(7, 12)] + [cell("b", 12, 1000.0)]
    store(tmp_path, *a, *b)
    assert extra_cells(tmp_path, exp) == []


EIGHT = {"repetitions": 8, "max_repetitions": 40, "target_precision": 0.05}
FAST_AND_WIDE = [
    2000.0,
    3000.0,
    1600.0,
    2600.0,
    1800.0,
    2400.0,
    2900.0,
    1700.0,
]  # 1.6-3x the baseline, +-25 %


def test_a_resolved_comparison_stops_its_stack_however_imprecise_its_median(tmp_path: Path) -> None:
    exp = experiment(**EIGHT, baseline="a")
    store(tmp_path, *rounds("a", QUIET + [1000.0, 1002.0]), *rounds("b", FAST_AND_WIDE))
    assert (precision(rounds("b", FAST_AND_WIDE)) or 0) > 0.05  # its own median is far from +-5 %
    assert extra_cells(tmp_path, exp) == []  # but it is faster in every round: resolved


def test_an_unresolved_comparison_gets_rounds_however_precise_both_medians_are(tmp_path: Path) -> None:
    # Both medians are known to +-2 %, but the ratio's interval holds 1 and reaches past a 1 % margin.
    exp = experiment(**EIGHT, baseline="a", equivalence=0.01)
    a = [1000.0] * 8
    b = [1030.0, 990.0, 1040.0, 980.0, 1035.0, 985.0, 1025.0, 995.0]
    assert all((precision(rounds(s, v)) or 0) < 0.05 for s, v in (("a", a), ("b", b)))
    assert precision(rounds("b", b)) is not None
    store(tmp_path, *rounds("a", a), *rounds("b", b))
    assert sorted(p.cell_id for p in extra_cells(tmp_path, exp)) == ["a__ab__c50__r9", "b__ab__c50__r9"]
    # The same cells within the default margin (+-5 %) are equivalent: no round.
    assert extra_cells(tmp_path, experiment(**EIGHT, baseline="a")) == []


def test_an_unresolved_comparison_gets_rounds_until_the_cap_and_no_further(tmp_path: Path) -> None:
    exp = experiment(repetitions=8, max_repetitions=10, baseline="a", equivalence=0.01)
    b = [1030.0, 990.0, 1040.0, 980.0, 1035.0, 985.0, 1025.0, 995.0, 1030.0, 990.0]
    store(tmp_path, *rounds("a", [1000.0] * 9), *rounds("b", b[:9]))
    assert len(extra_cells(tmp_path, exp)) == 2
    store(tmp_path, cell("a", 10, 1000.0), cell("b", 10, b[9]))
    assert extra_cells(tmp_path, exp) == []  # 10 counted cells each: load.max_repetitions


def test_only_the_unresolved_comparisons_load_points_and_the_baseline_get_a_round(tmp_path: Path) -> None:
    exp = experiment_from_dict(
        {
            "name": "adaptive",
            "stacks": [
                {"name": n, "port": 8001 + i, "app": {"kind": "static"}, "front": {"kind": "nginx"}}
                for i, n in enumerate(("a", "b", "c"))
            ],
            "load": {
                "plans": [{"tool": "ab", "concurrency": 50, "requests": 2000}],
                **{**EIGHT, "repetitions": 10},
                "equivalence": 0.01,
            },
        }
    )
    # Two comparisons: Holm tests b's (faster in all 10 rounds, p 0.002) at 0.005, then c's at 0.01.
    unsure = [1030.0, 990.0, 1040.0, 980.0, 1035.0, 985.0, 1025.0, 995.0, 1010.0, 992.0]
    b = FAST_AND_WIDE + [2200.0, 1900.0]
    store(tmp_path, *rounds("a", [1000.0] * 10), *rounds("b", b), *rounds("c", unsure))
    assert sorted(p.cell_id for p in extra_cells(tmp_path, exp)) == ["a__ab__c50__r11", "c__ab__c50__r11"]


def test_a_stack_in_no_comparison_still_measures_until_its_median_is_precise(tmp_path: Path) -> None:
    exp = experiment_from_dict(
        {
            "name": "adaptive",
            "stacks": [{"name": "a", "port": 8001, "app": {"kind": "static"}, "front": {"kind": "nginx"}}],
            "load": {"plans": [{"tool": "ab", "concurrency": 50, "requests": 2000}], **WRITTEN},
        }
    )
    store(tmp_path, *rounds("a", SPREAD))
    assert [p.cell_id for p in extra_cells(tmp_path, exp)] == ["a__ab__c50__r7"]
    other = tmp_path / "quiet"
    store(other, *rounds("a", QUIET))
    assert extra_cells(other, exp) == []


def test_a_round_is_in_the_seeds_random_order_with_the_baseline_in_the_middle(tmp_path: Path) -> None:
    exp = experiment_from_dict(
        {
            "name": "adaptive",
            "stacks": [
                {"name": n, "port": 8001 + i, "app": {"kind": "static"}, "front": {"kind": "nginx"}}
                for i, n in enumerate(("a", "b", "c", "d", "e"))
            ],
            "load": {"plans": [{"tool": "ab", "concurrency": 50, "requests": 2000}], **WRITTEN},
        }
    )
    store(tmp_path, *[c for s in "abcde" for c in rounds(s, SPREAD)])
    orders = {tuple(p.stack for p in extra_cells(tmp_path, exp, seed=s)) for s in range(30)}
    assert len(orders) > 5  # random
    assert all(order[2] == "a" for order in orders)  # four others, the baseline in the middle
    assert extra_cells(tmp_path, exp, seed=7) == extra_cells(tmp_path, exp, seed=7)


def test_with_one_other_stack_the_rounds_alternate_which_side_goes_first(tmp_path: Path) -> None:
    exp = experiment(**WRITTEN)
    store(tmp_path, *rounds("a", SPREAD), *rounds("b", SPREAD))
    assert [p.stack for p in extra_cells(tmp_path, exp, seed=3)] == ["b", "a"]  # round 7
    store(tmp_path, cell("a", 7, 1000.0), cell("b", 7, 1400.0))
    assert [p.stack for p in extra_cells(tmp_path, exp, seed=3)] == ["a", "b"]  # round 8


def test_no_extra_cells_before_the_regular_rounds_are_stored(tmp_path: Path) -> None:
    exp = experiment(**WRITTEN)
    store(tmp_path, *rounds("a", SPREAD[:3]))
    assert extra_cells(tmp_path, exp) == []
    assert extra_cells(tmp_path / "empty", exp) == []


def test_without_max_repetitions_there_are_never_extra_cells(tmp_path: Path) -> None:
    exp = experiment(repetitions=6)
    store(tmp_path, *rounds("a", SPREAD), *rounds("b", SPREAD))
    assert extra_cells(tmp_path, exp) == []


def test_no_round_starts_once_the_time_budget_is_spent(tmp_path: Path) -> None:
    exp = experiment(**WRITTEN, max_seconds=60)
    started = "2026-12-02T10:00:00Z"
    store(
        tmp_path,
        *[cell("a", i + 1, v, started=started) for i, v in enumerate(SPREAD)],
        *[cell("b", i + 1, v, started=started) for i, v in enumerate(QUIET)],
    )
    within = datetime(2026, 12, 2, 10, 0, 59, tzinfo=UTC)
    beyond = datetime(2026, 12, 2, 10, 1, 1, tzinfo=UTC)
    assert extra_cells(tmp_path, exp, now=within) != []
    assert extra_cells(tmp_path, exp, now=beyond) == []


# ---------------------------------------------------------------- collapsed cells


def test_a_cell_whose_throughput_collapsed_is_left_out_and_measured_again(tmp_path: Path) -> None:
    # The case seen: docker pause of the target for 20 s in a 3 s cell stored 329.7 req/s beside ~5,000.
    group = rounds("a", [5012.0, 329.7, 4987.0])
    [(fallen, [why])] = left_out(group)
    assert fallen.repetition == 2
    assert why == (
        "collapse: 329.7 req/s, below 25 % of the median 4987.0 req/s of the load point's 3 counted cells"
    )
    assert [c.repetition for c in counted(group)] == [1, 3]
    # Six rounds wanted, a loose precision target that the six cells would reach with the collapsed one:
    # only the collapse calls for a seventh round of a; b, precise, gets it too, for its sixth pair with a.
    six = rounds("a", [5012.0, 4990.0, 5003.0, 329.7, 4987.0, 5001.0])
    load = {"repetitions": 6, "max_repetitions": 8, "target_precision": 0.9}
    typed = Load(plans=(), baseline="a", **load)
    reached = relative_half_width([c.rps for c in six])
    assert reached is not None and reached < 0.9
    assert more_needed(six, typed)
    store(tmp_path, *six, *rounds("b", QUIET))
    again = extra_cells(tmp_path, experiment(**load), seed=None)
    assert [(p.stack, p.repetition) for p in again] == [("a", 7), ("b", 7)]


def test_collapse_is_judged_at_its_limit_against_the_others_median_robustly() -> None:
    limit = COLLAPSE_SHARE * 1000.0
    assert left_out(rounds("a", [1000.0, 1000.0, limit])) == []
    assert len(left_out(rounds("a", [1000.0, 1000.0, limit - 0.01]))) == 1
    # Two cells are not enough to tell which one fell; one fast cell among slow ones is not a collapse, nor
    # are two slow cells beside a fast one (the median is theirs).
    assert left_out(rounds("a", [1000.0, 10.0])) == []
    assert left_out(rounds("a", [1000.0, 1000.0, 9000.0])) == []
    assert left_out(rounds("a", [5000.0, 300.0, 300.0])) == []
    # Load points are judged apart, disturbed cells are not among the others.
    assert left_out([*rounds("a", [1000.0, 1000.0]), cell("b", 1, 10.0)]) == []
    spoiled = [cell("a", 1, 1000.0), cell("a", 2, 10.0), cell("a", 3, 10.0, disturbed=["overrun: x"])]
    assert [why for _, [why] in left_out(spoiled)] == ["overrun: x"]


def test_each_extra_cell_says_why_it_is_measured_and_what_budget_is_left(tmp_path: Path) -> None:
    exp = experiment(**EIGHT, baseline="a", equivalence=0.01, max_seconds=600)
    started = "2026-12-02T10:00:00Z"
    b = [1030.0, 990.0, 1040.0, 980.0, 1035.0, 985.0, 1025.0, 995.0]
    store(
        tmp_path,
        *[cell("a", i + 1, 1000.0, started=started) for i in range(8)],
        *[cell("b", i + 1, v, started=started) for i, v in enumerate(b)],
    )
    planned = extra_round(tmp_path, exp, now=datetime(2026, 12, 2, 10, 2, 0, tzinfo=UTC))
    labels = planned.labels(600)
    assert labels["b__ab__c50__r9"] == (
        "extra round 9: unresolved against a: 1.01x (0.98-1.04) over 8 pairs, about 79 needed; "
        "480 s of the 600 s budget left"
    )
    assert (
        labels["a__ab__c50__r9"]
        == "extra round 9: the baseline of 1 unresolved comparison; 480 s of the 600 s budget left"
    )
    # What the console's progress line says the round is for: the compared stack's load point with its
    # reason, once; the baseline's cell serves it and is not listed.
    assert planned.number == 9
    assert planned.serves() == [
        "b ab c50: unresolved against a: 1.01x (0.98-1.04) over 8 pairs, about 79 needed"
    ]


def test_a_round_of_baseline_cells_only_says_why_each_is_measured() -> None:
    exp = experiment(**EIGHT, baseline="a")
    [point] = load_points(exp)
    base = cell_plan(exp, exp.stacks[0], point, 9)
    alone = ExtraRound([base], {base.cell_id: "the baseline beside a disturbed cell measured again"})
    assert alone.serves() == ["a ab c50: the baseline beside a disturbed cell measured again"]
    assert ExtraRound([], {}).number is None and ExtraRound([], {}).serves() == []
