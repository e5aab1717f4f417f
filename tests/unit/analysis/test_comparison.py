"""Each stack against the baseline, paired by round (benchstack.analysis.comparison), on hand-made cells."""

import math
from typing import Any

import pytest
from cell_records import record

from benchstack.analysis.comparison import (
    EQUIVALENT,
    SLOWER,
    UNRESOLVED,
    Comparison,
    Settings,
    baseline_of,
    compare_to_baseline,
    comparisons_text,
    holm_levels,
    paired_ratios,
    pairs_needed,
    run_comparisons,
    state_of,
)
from benchstack.analysis.comparison import FASTER as FASTER_STATE
from benchstack.analysis.stats import shift_ci
from benchstack.results.cell import Cell

BASE = "sinatra-thin-x1-nginx"
X2 = "sinatra-thin-x2-nginx"
X4 = "sinatra-thin-x4-nginx"


def cell(
    stack: str,
    repetition: int,
    rps: float,
    tool: str = "wrk",
    concurrency: int = 32,
    keepalive: bool = True,
    target: str = "web1",
    disturbed: list[str] | None = None,
    **more: Any,
) -> Cell:
    d: dict[str, Any] = {
        "stack": stack, "tool": tool, "keepalive": keepalive, "concurrency": concurrency, "rate": None,
        "repetition": repetition, "rps": rps, "target": target,
    }  # fmt: skip
    if disturbed is not None:
        d["disturbed"] = disturbed
    return record({**d, **more})


def rounds(stack: str, values: list[float], **kw: Any) -> list[Cell]:
    return [cell(stack, r, v, **kw) for r, v in enumerate(values, 1)]


# 10 rounds, the baseline at 1000 req/s in each: x2 is faster in every one.
FASTER = [1120.0, 1180.0, 1200.0, 1210.0, 1215.0, 1230.0, 1260.0, 1300.0, 1190.0, 1240.0]


def test_a_stack_faster_in_every_round_is_faster_with_the_hodges_lehmann_ratio_and_its_interval() -> None:
    [c] = compare_to_baseline(rounds(BASE, [1000.0] * 10) + rounds(X2, FASTER), BASE)
    assert (c.stack, c.baseline, c.target, c.tool, c.keepalive, c.level) == (
        X2,
        BASE,
        "web1",
        "wrk",
        True,
        32,
    )
    logs = [math.log(v / 1000.0) for v in FASTER]
    ci = shift_ci(logs, 0.99)  # one comparison: Holm leaves load.confidence as it is
    assert ci is not None
    assert (c.pairs, c.ratio, c.low, c.high) == (
        10,
        pytest.approx(math.exp(ci.estimate)),
        pytest.approx(math.exp(ci.low)),
        pytest.approx(math.exp(ci.high)),
    )
    assert (c.state, c.confidence, c.margin, c.pairs_needed) == (FASTER_STATE, 0.99, 0.05, None)
    assert c.p == pytest.approx(2 / 2**10)  # every ratio above 1: the exact two-sided signed-rank p
    assert c.sentence == f"{X2}: faster, 1.21x the req/s of {BASE} (1.16-1.26; 10 pairs)"


def test_the_ratio_is_taken_within_each_round_not_between_medians() -> None:
    # The host slows down round by round; x2 is 10 % faster in each round. A ratio of medians would show
    # the drift's noise, the paired ratios show 1.10 in every round.
    base = [1000.0, 900.0, 800.0, 700.0, 600.0, 500.0, 450.0, 400.0]
    cells = rounds(BASE, base) + rounds(X2, [1.1 * v for v in base])
    [c] = compare_to_baseline(cells, BASE)
    assert (c.ratio, c.low, c.high, c.state) == (
        pytest.approx(1.1),
        pytest.approx(1.1),
        pytest.approx(1.1),
        FASTER_STATE,
    )


@pytest.mark.parametrize(
    ("low", "high", "state"),
    [
        (1.0000001, 1.3, FASTER_STATE),
        (1.0000001, 1.05, EQUIVALENT),  # above 1, but within the margin: a difference smaller than it
        (0.95, 0.9999999, EQUIVALENT),
        (1.0, 1.3, UNRESOLVED),  # touching 1 is holding it: no difference shown, and past the margin
        (1.0, 1.05, EQUIVALENT),  # touching 1 and the margin, inside both
        (0.7, 0.9999999, SLOWER),
        (0.95, 1.05, EQUIVALENT),  # the margin's own bounds are within it
        (0.9499999, 1.02, UNRESOLVED),
        (0.98, 1.0500001, UNRESOLVED),
        (None, None, UNRESOLVED),  # no interval: too few pairs
    ],
)
def test_each_state_at_its_edges(low: float | None, high: float | None, state: str) -> None:
    assert state_of(low, high, 0.05) == state


def test_an_interval_that_holds_1_within_the_margin_is_equivalent() -> None:
    values = [970.0, 990.0, 1000.0, 1010.0, 1020.0, 1040.0, 995.0, 1005.0, 1000.0, 985.0]
    [c] = compare_to_baseline(rounds(BASE, [1000.0] * 10) + rounds(X2, values), BASE)
    assert c.low is not None and c.high is not None and 0.95 <= c.low < 1 < c.high <= 1.05
    assert (c.state, c.pairs_needed) == (EQUIVALENT, None)
    assert c.sentence == f"{X2}: equivalent to {BASE} within +-5 % (1.00x, 0.98-1.02; 10 pairs)"


def test_a_wider_margin_turns_an_unresolved_comparison_equivalent() -> None:
    values = [940.0, 1070.0, 1000.0, 1030.0, 960.0, 1050.0, 980.0, 1020.0, 1000.0, 990.0]
    cells = rounds(BASE, [1000.0] * 10) + rounds(X2, values)
    [narrow] = compare_to_baseline(cells, BASE, settings=Settings(margin=0.02))
    [wide] = compare_to_baseline(cells, BASE, settings=Settings(margin=0.08))
    assert (narrow.state, wide.state) == (UNRESOLVED, EQUIVALENT)
    assert narrow.pairs_needed is not None and narrow.pairs_needed > 10
    assert "neither a difference nor within +-2 %" in narrow.sentence
    assert f"about {narrow.pairs_needed} pairs would resolve it" in narrow.sentence


def test_the_pairs_needed_are_what_narrows_the_interval_to_the_nearer_resolution() -> None:
    # Half-width 0.04 over 20 pairs around log 1.02: a difference needs it below 0.0198 (about 82 pairs),
    # equivalence within +-5 % below 0.0290 (about 39): the nearer one counts.
    estimate, half = math.log(1.02), 0.04
    room = min(math.log(1.05) - estimate, estimate - math.log(0.95))
    assert pairs_needed([0.0] * 20, estimate, half, 0.05) == math.ceil(20 * (half / room) ** 2) == 39
    assert pairs_needed([0.0] * 20, math.log(1.2), 0.25, 0.05) == math.ceil(20 * (0.25 / math.log(1.2)) ** 2)
    assert pairs_needed([0.0] * 20, 0.0, 0.001, 0.05) == 21  # never fewer than one more


def test_a_stack_slower_in_every_round_is_slower() -> None:
    values = [800.0, 820.0, 830.0, 850.0, 860.0, 900.0, 840.0, 810.0]
    [c] = compare_to_baseline(rounds(BASE, [1000.0] * 8) + rounds(X2, values), BASE)
    assert c.state == SLOWER
    assert c.sentence == f"{X2}: slower, 0.83x the req/s of {BASE} (0.80-0.90; 8 pairs)"


def test_a_bound_on_1_or_on_the_margin_is_printed_with_three_decimals() -> None:
    values = [1001.0, 1003.0, 1020.0, 1030.0, 1040.0, 1090.0, 1100.0, 1080.0, 1045.0, 1002.0]
    [c] = compare_to_baseline(rounds(BASE, [1000.0] * 10) + rounds(X2, values), BASE)
    assert c.state == FASTER_STATE and c.low is not None and f"{c.low:.2f}" == "1.00"
    assert c.sentence == f"{X2}: faster, 1.040x the req/s of {BASE} (1.002-1.090; 10 pairs)"


def test_a_difference_smaller_than_the_margin_is_equivalent_and_says_so() -> None:
    # The interval excludes 1 but lies within +-5 %: equivalent, so a stack 2 % faster ends the same way in
    # every run, whether or not a run measured long enough to exclude 1.
    values = [1001.0, 1003.0, 1020.0, 1030.0, 1040.0, 1050.0, 1035.0, 1025.0, 1045.0, 1002.0]
    [c] = compare_to_baseline(rounds(BASE, [1000.0] * 10) + rounds(X2, values), BASE)
    assert (c.state, c.pairs_needed) == (EQUIVALENT, None)
    assert c.sentence == (
        f"{X2}: equivalent to {BASE} within +-5 % (1.025x, 1.002-1.045; 10 pairs: faster, by less than the "
        "margin)"
    )


def test_seven_pairs_are_too_few_for_an_interval_at_99_percent() -> None:
    [c] = compare_to_baseline(rounds(BASE, [1000.0] * 7) + rounds(X2, FASTER[:7]), BASE)
    assert (c.pairs, c.low, c.high, c.state, c.pairs_needed) == (7, None, None, UNRESOLVED, 8)
    assert c.ratio == pytest.approx(1.21)
    assert c.sentence == (
        f"{X2}: unresolved, 1.21x the req/s of {BASE}: too few pairs for an interval (7, 8 needed)"
    )


def test_pairing_skips_rounds_where_one_side_is_missing_or_disturbed() -> None:
    base = rounds(BASE, [1000.0] * 8)
    del base[2]  # the baseline has no round 3
    base[3].disturbed = ["foreign CPU 23 %"]  # its round 5 is disturbed
    x2 = rounds(X2, FASTER[:8])
    x2[6] = cell(X2, 7, 99999.0, disturbed=["steal 12 %"])  # x2's round 7 is disturbed
    x2[2].rps = x2[4].rps = 1.0  # rounds 3 and 5 would drag the ratios down if they were paired
    assert paired_ratios(x2, base) == pytest.approx([1.12, 1.18, 1.21, 1.23, 1.30])
    [c] = compare_to_baseline(base + x2, BASE)
    assert (c.pairs, c.state) == (5, UNRESOLVED)
    assert "(5, 8 needed)" in c.sentence


def test_a_round_where_either_side_did_nothing_has_no_ratio() -> None:
    assert paired_ratios(rounds(X2, [10.0, 20.0, 0.0]), rounds(BASE, [0.0, 10.0, 5.0])) == [2.0]


def test_an_empty_comparison_is_unresolved_without_a_ratio() -> None:
    [c] = compare_to_baseline([cell(BASE, 1, 1000.0), cell(X2, 2, 1100.0)], BASE)
    assert (c.pairs, c.ratio, c.p, c.state, c.pairs_needed) == (0, None, None, UNRESOLVED, 8)
    assert c.sentence == f"{X2}: unresolved: no pair of rounds with {BASE} (8 needed)"


def test_the_seconds_between_a_pairs_cells_are_their_median() -> None:
    def timed(stack: str, rep: int, at: str) -> Cell:
        return cell(stack, rep, 1000.0, window={"start": f"2026-12-04T10:00:{at}Z", "end": "x"})

    cells = [
        timed(BASE, 1, "00.000"),
        timed(X2, 1, "02.500"),
        timed(BASE, 2, "10.000"),
        timed(X2, 2, "06.000"),
    ]
    cells += [timed(BASE, 3, "20.000"), cell(X2, 3, 1000.0, started_at="2026-12-04T10:00:21Z")]
    [c] = compare_to_baseline(cells, BASE)
    assert c.gap_s == pytest.approx(2.5)  # 2.5, 4 and 1 s (a cell without a window: its start second)


def test_holm_gives_the_clearest_difference_the_strictest_level_and_the_rest_the_remainder() -> None:
    # Two comparisons at load.confidence 0.99: the smaller p is tested at 0.005, the other at 0.01 once the
    # first is a difference; when it is not, both keep 0.005.
    assert holm_levels([0.001, 0.2], 0.01) == [0.005, 0.01]
    assert holm_levels([0.2, 0.001], 0.01) == [0.01, 0.005]
    assert holm_levels([0.006, 0.007], 0.01) == [0.005, 0.005]
    assert holm_levels([None, 0.001, 0.002], 0.03) == [0.03, 0.01, 0.015]  # no p: tested last
    cells = rounds(BASE, [1000.0] * 10) + rounds(X2, FASTER) + rounds(X4, FASTER)
    found = compare_to_baseline(cells, BASE, [BASE, X2, X4])
    # Equal p (2 / 2**10, below 0.005): one is tested at 0.005, the other then at 0.01.
    assert sorted(c.confidence for c in found) == [0.99, 0.995]
    assert [c.state for c in found] == [FASTER_STATE, FASTER_STATE]


def test_holm_widens_an_interval_only_when_the_family_needs_it() -> None:
    one = rounds(BASE, [1000.0] * 12) + rounds(X2, FASTER + [1215.0, 1190.0])
    [alone] = compare_to_baseline(one, BASE)
    clearly_faster = rounds(X4, [3000.0 + 10 * i for i in range(12)])
    both = compare_to_baseline(one + clearly_faster, BASE, [BASE, X2, X4])
    x2 = next(c for c in both if c.stack == X2)
    assert alone.confidence == x2.confidence == 0.99  # X4's tiny p is tested first at 0.005, then X2 at 0.01
    assert (x2.low, x2.high) == (alone.low, alone.high)


def test_each_load_point_is_compared_on_its_own() -> None:
    cells = (
        rounds(BASE, [1000.0] * 6, tool="ab", concurrency=100, keepalive=False)
        + rounds(BASE, [2000.0] * 6, tool="ab", concurrency=100, keepalive=True)
        + rounds(X2, [1500.0] * 6, tool="ab", concurrency=100, keepalive=False)
        + rounds(X2, [1000.0] * 6, tool="ab", concurrency=100, keepalive=True)
    )
    found = compare_to_baseline(cells, BASE)
    assert [(c.keepalive, c.ratio) for c in found] == [
        (False, pytest.approx(1.5)),
        (True, pytest.approx(0.5)),
    ]


def test_several_targets_are_paired_within_each_target() -> None:
    cells = (
        rounds(BASE, [1000.0] * 8, target="web-a")
        + rounds(X2, [1300.0 + i for i in range(8)], target="web-a")
        + rounds(BASE, [500.0] * 8, target="web-b")
        + rounds(X2, [400.0 + i for i in range(8)], target="web-b")
    )
    found = compare_to_baseline(cells, BASE)
    assert [(c.target, round(c.ratio or 0, 2), c.state) for c in found] == [
        ("web-a", 1.30, "faster"),
        ("web-b", 0.81, "slower"),
    ]
    # Each target's comparisons are one family for Holm: one comparison each, at load.confidence.
    assert [c.confidence for c in found] == [0.99, 0.99]
    text = comparisons_text(cells, None)
    assert "wrk c32 on web-a:\n  " in text and "wrk c32 on web-b:\n  " in text


def test_the_stacks_come_in_the_experiments_order() -> None:
    cells = rounds(BASE, [1.0] * 6) + rounds(X4, [1.0] * 6) + rounds("a-first-by-name", [1.0] * 6)
    assert [c.stack for c in compare_to_baseline(cells, BASE, [BASE, X4])] == [X4, "a-first-by-name"]


def test_the_baseline_missing_from_the_cells_gives_no_comparison_and_says_why() -> None:
    cells = rounds(X2, FASTER) + rounds(X4, FASTER)
    info = {"experiment": {"name": "e", "load": {"baseline": BASE}}}
    assert compare_to_baseline(cells, BASE) == []
    assert run_comparisons(cells, info) == []
    assert (
        comparisons_text(cells, info) == f"No comparisons: the baseline, {BASE}, has no cells in this run.\n"
    )


def test_a_run_of_one_stack_prints_no_comparison() -> None:
    assert comparisons_text(rounds(BASE, [1.0] * 6), None) == ""


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        ({"experiment": {"load": {"baseline": X4}, "stacks": [{"name": X2}]}}, X4),
        ({"experiment": {"load": {}, "stacks": [{"name": X2}, {"name": BASE}]}}, X2),
        (None, BASE),  # no run.json: the first stack by name
    ],
)
def test_the_baseline_is_the_recorded_one_else_the_experiments_first_stack(
    info: dict[str, Any] | None, expected: str
) -> None:
    assert baseline_of(info, rounds(X2, [1.0]) + rounds(BASE, [1.0])) == expected


def test_the_printed_comparisons_group_sentences_by_tool_and_level() -> None:
    cells = (
        rounds(BASE, [1000.0] * 10)
        + rounds(X2, FASTER)
        + rounds(BASE, [1000.0] * 10, tool="ab", concurrency=100, keepalive=True)
        + rounds(X2, [1000.0, 1001.0] * 5, tool="ab", concurrency=100, keepalive=True)
    )
    assert comparisons_text(cells, None).splitlines() == [
        f"Comparisons (baseline {BASE}):",
        "ab -k c100:",
        f"  {X2}: equivalent to {BASE} within +-5 % (1.000x, 1.000-1.001; 10 pairs)",
        "wrk c32:",
        # two comparisons: Holm tests the clearer one (this, p 0.002) at 0.005, so its interval is at 99.5 %
        f"  {X2}: faster, 1.21x the req/s of {BASE} (1.15-1.28; 10 pairs)",
    ]


def test_to_dict_is_what_run_json_stores() -> None:
    c = Comparison(X2, BASE, "web1", "wrk", True, 32, 8, 1.21, 1.12, 1.3, "faster", 0.05, 0.995, 0.0078125,
                   None, 2.41234)  # fmt: skip
    assert c.to_dict() == {
        "stack": X2, "baseline": BASE, "target": "web1", "tool": "wrk", "keepalive": True, "level": 32,
        "pairs": 8, "ratio": 1.21, "low": 1.12, "high": 1.3, "state": "faster", "margin": 0.05,
        "confidence": 0.995, "p": 0.007812, "pairs_needed": None, "gap_s": 2.41, "sentence": c.sentence,
    }  # fmt: skip
    assert c.sentence == f"{X2}: faster, 1.21x the req/s of {BASE} (1.12-1.30; 8 pairs 2.4 s apart)"


def test_the_settings_are_read_from_run_json_else_the_defaults() -> None:
    info = {"experiment": {"load": {"equivalence": 0.02, "confidence": 0.95}}}
    assert Settings.of(info) == Settings(margin=0.02, confidence=0.95)
    assert Settings.of(None) == Settings() == Settings(margin=0.05, confidence=0.99)
