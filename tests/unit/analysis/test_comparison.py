"""Each stack against the baseline, paired by round (benchstack.analysis.comparison), on hand-made cells."""

from typing import Any

import pytest

from benchstack.analysis.comparison import (
    Comparison,
    baseline_of,
    compare_to_baseline,
    comparisons_text,
    paired_ratios,
    run_comparisons,
)

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
) -> dict[str, Any]:
    d: dict[str, Any] = {
        "stack": stack, "tool": tool, "keepalive": keepalive, "concurrency": concurrency, "rate": None,
        "repetition": repetition, "rps": rps, "target": target,
    }  # fmt: skip
    if disturbed is not None:
        d["disturbed"] = disturbed
    return d


def rounds(stack: str, values: list[float], **kw: Any) -> list[dict[str, Any]]:
    return [cell(stack, r, v, **kw) for r, v in enumerate(values, 1)]


# The example: 8 rounds, the baseline at 1000 req/s in each.
FASTER = [1120.0, 1180.0, 1200.0, 1210.0, 1210.0, 1230.0, 1260.0, 1300.0]


def test_a_stack_faster_in_every_round_is_faster_with_the_interval_of_the_median_ratio() -> None:
    [c] = compare_to_baseline(rounds(BASE, [1000.0] * 8) + rounds(X2, FASTER), BASE)
    assert (c.stack, c.baseline, c.target, c.tool, c.keepalive, c.level) == (
        X2,
        BASE,
        "web1",
        "wrk",
        True,
        32,
    )
    # 8 ratios: median 1.21; at n = 8 the 95 % interval lies between the range (coverage 0.992) and the
    # second lowest and highest (0.930), most of the way towards the latter (stats.median_ci)
    assert (c.pairs, c.ratio) == (8, pytest.approx(1.21))
    assert (c.low, c.high) == (pytest.approx(1.1761, abs=1e-4), pytest.approx(1.2626, abs=1e-4))
    assert c.verdict == "faster"
    assert c.sentence == f"{X2}: 1.21x the req/s of {BASE} (1.18-1.26)"


def test_the_ratio_is_taken_within_each_round_not_between_medians() -> None:
    # The host slows down round by round; x2 is 10 % faster in each round. A ratio of medians would show
    # the drift's noise, the paired ratios show 1.10 in every round.
    base = [1000.0, 900.0, 800.0, 700.0, 600.0, 500.0]
    cells = rounds(BASE, base) + rounds(X2, [1.1 * v for v in base])
    [c] = compare_to_baseline(cells, BASE)
    assert (c.ratio, c.low, c.high, c.verdict) == (
        pytest.approx(1.1),
        pytest.approx(1.1),
        pytest.approx(1.1),
        "faster",
    )


def test_an_interval_that_holds_1_shows_no_difference() -> None:
    values = [970.0, 990.0, 1000.0, 1010.0, 1020.0, 1040.0]
    [c] = compare_to_baseline(rounds(BASE, [1000.0] * 6) + rounds(X2, values), BASE)
    assert (c.low, c.high) == (pytest.approx(0.9771, abs=1e-4), pytest.approx(1.0329, abs=1e-4))
    assert c.verdict == "no difference shown"
    assert c.sentence == f"{X2}: no difference shown from {BASE} (0.98-1.03)"


def test_a_stack_slower_in_every_round_is_slower() -> None:
    values = [800.0, 820.0, 830.0, 850.0, 860.0, 900.0]
    [c] = compare_to_baseline(rounds(BASE, [1000.0] * 6) + rounds(X2, values), BASE)
    assert c.verdict == "slower"
    assert c.sentence == f"{X2}: 0.84x the req/s of {BASE} (0.81-0.89)"


def test_an_interval_that_excludes_1_is_never_printed_with_a_bound_of_1_00() -> None:
    values = [1002.0, 1004.0, 1020.0, 1030.0, 1040.0, 1050.0]
    [c] = compare_to_baseline(rounds(BASE, [1000.0] * 6) + rounds(X2, values), BASE)
    assert c.verdict == "faster"
    assert c.sentence == f"{X2}: 1.025x the req/s of {BASE} (1.003-1.046)"


def test_five_pairs_are_too_few_for_an_interval() -> None:
    [c] = compare_to_baseline(rounds(BASE, [1000.0] * 5) + rounds(X2, FASTER[:5]), BASE)
    assert (c.pairs, c.low, c.high, c.verdict) == (5, None, None, "too few rounds")
    assert c.ratio == pytest.approx(1.2)
    assert (
        c.sentence == f"{X2}: 1.20x the req/s of {BASE}; too few paired rounds (5, 6 needed) for an interval"
    )


def test_pairing_skips_rounds_where_one_side_is_missing_or_disturbed() -> None:
    base = rounds(BASE, [1000.0] * 8)
    del base[2]  # the baseline has no round 3
    base[3]["disturbed"] = ["foreign CPU 23 %"]  # its round 5 is disturbed
    x2 = rounds(X2, FASTER)
    x2[6] = cell(X2, 7, 99999.0, disturbed=["steal 12 %"])  # x2's round 7 is disturbed
    x2[2]["rps"] = x2[4]["rps"] = 1.0  # rounds 3 and 5 would drag the ratios down if they were paired
    assert paired_ratios(x2, base) == pytest.approx([1.12, 1.18, 1.21, 1.23, 1.30])
    [c] = compare_to_baseline(base + x2, BASE)
    assert (c.pairs, c.verdict) == (5, "too few rounds")
    assert "(5, 6 needed)" in c.sentence


def test_a_round_whose_baseline_did_nothing_has_no_ratio() -> None:
    assert paired_ratios(rounds(X2, [10.0, 20.0]), rounds(BASE, [0.0, 10.0])) == [2.0]


def test_no_pair_at_all_says_so_without_a_ratio() -> None:
    [c] = compare_to_baseline([cell(BASE, 1, 1000.0), cell(X2, 2, 1100.0)], BASE)
    assert (c.pairs, c.ratio, c.verdict) == (0, None, "too few rounds")
    assert c.sentence == f"{X2}: too few paired rounds with {BASE} (0, 6 needed) for an interval"


def test_each_load_point_is_compared_on_its_own() -> None:
    cells = (
        rounds(BASE, [1000.0] * 6, tool="ab", concurrency=100, keepalive=False)
        + rounds(BASE, [2000.0] * 6, tool="ab", concurrency=100, keepalive=True)
        + rounds(X2, [1500.0] * 6, tool="ab", concurrency=100, keepalive=False)
        + rounds(X2, [1000.0] * 6, tool="ab", concurrency=100, keepalive=True)
    )
    found = compare_to_baseline(cells, BASE)
    assert [(c.keepalive, c.ratio) for c in found] == [(False, 1.5), (True, 0.5)]


def test_several_targets_are_paired_within_each_target() -> None:
    cells = (
        rounds(BASE, [1000.0] * 6, target="web-a")
        + rounds(X2, [1300.0] * 6, target="web-a")
        + rounds(BASE, [500.0] * 6, target="web-b")
        + rounds(X2, [400.0] * 6, target="web-b")
    )
    found = compare_to_baseline(cells, BASE)
    assert [(c.target, c.ratio, c.verdict) for c in found] == [
        ("web-a", 1.3, "faster"),
        ("web-b", 0.8, "slower"),
    ]
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
        rounds(BASE, [1000.0] * 8)
        + rounds(X2, FASTER)
        + rounds(BASE, [1000.0] * 6, tool="ab", concurrency=100, keepalive=True)
        + rounds(X2, [1000.0] * 6, tool="ab", concurrency=100, keepalive=True)
    )
    assert comparisons_text(cells, None).splitlines() == [
        f"Comparisons (baseline {BASE}):",
        "ab -k c100:",
        f"  {X2}: no difference shown from {BASE} (1.00-1.00)",
        "wrk c32:",
        f"  {X2}: 1.21x the req/s of {BASE} (1.18-1.26)",
    ]


def test_to_dict_is_what_run_json_stores() -> None:
    c = Comparison(X2, BASE, "web1", "wrk", True, 32, 8, 1.21, 1.12, 1.3, "faster")
    assert c.to_dict() == {
        "stack": X2, "baseline": BASE, "target": "web1", "tool": "wrk", "keepalive": True, "level": 32,
        "pairs": 8, "ratio": 1.21, "low": 1.12, "high": 1.3, "verdict": "faster", "sentence": c.sentence,
    }  # fmt: skip
