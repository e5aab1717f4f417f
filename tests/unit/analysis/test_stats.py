import math
import random
import statistics

import pytest

from benchstack.analysis.stats import (
    betainc,
    half_binomial_cdf,
    median_ci,
    min_pairs,
    shift_ci,
    shown_interval,
    signed_rank_p,
    summarize,
    t_cdf,
    t_quantile,
    welch_t_test,
)

# Two-sided 95 % critical values of Student's t, as printed in every t table (and by scipy.stats.t.ppf).
T_TABLE_975 = {1: 12.7062047, 2: 4.30265273, 3: 3.18244631, 4: 2.77644511, 9: 2.26215716, 29: 2.04522964}


@pytest.mark.parametrize(("df", "expected"), sorted(T_TABLE_975.items()))
def test_t_quantile_matches_the_t_table(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("t", [-30.0, -2.0, -0.3, 0.0, 0.5, 1.0, 4.0, 100.0])
def test_t_cdf_matches_closed_forms_for_one_and_two_degrees_of_freedom(t: float) -> None:
    assert t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, abs=1e-12)  # Cauchy
    assert t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)), abs=1e-12)


def test_t_cdf_with_fractional_degrees_of_freedom() -> None:
    # Reference values: scipy.stats.t.cdf (scipy 1.17.1).
    assert t_cdf(0.7, 3.5) == pytest.approx(0.7361829288271606, abs=1e-10)
    assert t_cdf(-2.5, 7.25) == pytest.approx(0.019932760379457286, abs=1e-10)


def test_t_quantile_is_symmetric_and_inverts_the_cdf() -> None:
    assert t_quantile(0.025, 5) == pytest.approx(-t_quantile(0.975, 5))
    assert t_cdf(t_quantile(0.9, 3.3), 3.3) == pytest.approx(0.9, abs=1e-10)


def test_betainc_edges_and_symmetry() -> None:
    assert betainc(2, 3, 0.0) == 0.0
    assert betainc(2, 3, 1.0) == 1.0
    assert betainc(2, 3, 0.4) == pytest.approx(1 - betainc(3, 2, 0.6))
    assert betainc(1, 1, 0.37) == pytest.approx(0.37)  # uniform
    with pytest.raises(ValueError):
        betainc(1, 1, 1.5)


def test_welch_on_the_textbook_example() -> None:
    # Wikipedia "Welch's t-test", example 1 (R: t = -2.4554, df = 24.988, p-value = 0.02138).
    a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
    b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]
    result = welch_t_test(a, b)
    assert result is not None
    assert result.t == pytest.approx(-2.455356398286006, abs=1e-9)
    assert result.df == pytest.approx(24.988, abs=1e-3)
    assert result.p == pytest.approx(0.021378001462866992, abs=1e-9)


def test_welch_on_three_repetitions_each() -> None:
    # req/s of three repetitions per run; reference: scipy.stats.ttest_ind(equal_var=False).
    result = welch_t_test([5120.5, 5210.3, 5098.7], [5402.1, 5388.0, 5450.9])
    assert result is not None
    assert result.t == pytest.approx(-6.916660713062734, abs=1e-9)
    assert result.p == pytest.approx(0.005363766721147787, abs=1e-9)


def test_welch_needs_two_values_per_side() -> None:
    assert welch_t_test([1.0], [1.0, 2.0]) is None
    assert welch_t_test([1.0, None], [1.0, 2.0]) is None


def test_welch_without_spread() -> None:
    same = welch_t_test([3.0, 3.0], [3.0, 3.0])
    differ = welch_t_test([3.0, 3.0], [4.0, 4.0])
    assert same is not None and same.p == 1.0
    assert differ is not None and differ.p == 0.0


def test_summary_of_three_repetitions() -> None:
    s = summarize([100.0, 110.0, 90.0])
    assert s is not None
    assert (s.n, s.median, s.min, s.max, s.mean) == (3, 100.0, 90.0, 110.0, 100.0)
    assert s.stdev == pytest.approx(10.0)
    assert s.cv == pytest.approx(0.1)
    half = 4.30265273 * 10.0 / math.sqrt(3)
    assert s.ci_low == pytest.approx(100.0 - half, abs=1e-5)
    assert s.ci_high == pytest.approx(100.0 + half, abs=1e-5)


def test_summary_of_one_value_has_no_spread() -> None:
    s = summarize([42.0, None])
    assert s is not None
    assert (s.n, s.median, s.stdev, s.cv, s.ci_low, s.ci_high) == (1, 42.0, None, None, None, None)
    assert summarize([]) is None
    assert summarize([None]) is None


def test_cv_is_none_when_the_mean_is_zero() -> None:
    s = summarize([0.0, 0.0])
    assert s is not None and s.cv is None


def test_no_interval_is_shown_below_three_values() -> None:
    two = summarize([990.0, 1010.0])
    assert two is not None and two.ci_low is not None  # computable (t = 12.71), but says nothing
    assert shown_interval(two) is None
    three = shown_interval(summarize([990.0, 1010.0, 1000.0]))
    assert three is not None and not three.clamped
    assert (round(three.low, 2), round(three.high, 2)) == (975.16, 1024.84)


def test_an_interval_reaching_below_zero_is_clamped_and_marked() -> None:
    s = summarize([100.0, 300.0, 200.0])  # 200 +- 248.41
    shown = shown_interval(s)
    assert s is not None and shown is not None
    assert s.ci_low == pytest.approx(-48.41, abs=0.01)
    assert (shown.low, round(shown.high, 2), shown.clamped) == (0.0, 448.41, True)


@pytest.mark.parametrize("n", [1, 6, 7, 20, 41, 120, 400])
def test_the_exact_binomial_tail_is_scipys(n: int) -> None:
    binom = pytest.importorskip("scipy.stats").binom
    for k in range(n + 1):
        assert half_binomial_cdf(k, n) == pytest.approx(float(binom.cdf(k, n, 0.5)), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("n", [6, 7, 8, 13, 23, 36, 40, 80])
def test_the_median_interval_is_scipys_hettmansperger_sheather(n: int) -> None:
    median_cihs = pytest.importorskip("scipy.stats.mstats").median_cihs
    rng = random.Random(n)
    values = [rng.lognormvariate(8.5, 0.12) for _ in range(n)]
    ci = median_ci(values)
    assert ci is not None
    low, high = median_cihs(values, alpha=0.05)
    assert (ci.low, ci.high) == (pytest.approx(low, rel=1e-12), pytest.approx(high, rel=1e-12))


def test_the_median_interval_lies_between_the_sign_test_pairs_around_95_percent() -> None:
    xs = [float(x) for x in range(1, 37)]  # 36 values: the pair (12, 25) covers 97.1 %, (13, 24) 93.5 %
    ci = median_ci(xs)
    assert ci is not None and ci.ranks == (12, 25) and ci.coverage > 0.95
    assert 12 < ci.low < 13 and 24 < ci.high < 25


def test_five_values_have_no_median_interval_and_six_have_one() -> None:
    assert median_ci([1.0, 2.0, 3.0, 4.0, 5.0]) is None
    six = median_ci([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert six is not None and 1.0 < six.low < 2.0 and 5.0 < six.high < 6.0


# ---------------------------------------------------------------- the paired comparisons' statistics


def _sample(n: int, seed: int, centre: float = 0.04, ties: bool = False) -> list[float]:
    rng = random.Random(seed)
    values = [rng.gauss(centre, 0.1) for _ in range(n)]
    return [round(v, 1) for v in values] if ties else values


@pytest.mark.parametrize("n", [1, 5, 8, 13, 30, 60])
def test_the_exact_signed_rank_p_is_scipys(n: int) -> None:
    wilcoxon = pytest.importorskip("scipy.stats").wilcoxon
    for seed in range(5):
        values = _sample(n, seed)
        assert signed_rank_p(values) == pytest.approx(wilcoxon(values, method="exact").pvalue, rel=1e-9)


@pytest.mark.parametrize(("n", "ties"), [(61, False), (120, False), (20, True), (40, True)])
def test_above_sixty_values_or_with_ties_the_p_is_scipys_normal_approximation(n: int, ties: bool) -> None:
    wilcoxon = pytest.importorskip("scipy.stats").wilcoxon
    for seed in range(5):
        values = [v for v in _sample(n, seed, ties=ties) if v != 0]
        expected = wilcoxon(values, method="approx", correction=True).pvalue
        assert signed_rank_p(values) == pytest.approx(expected, rel=1e-9)


def test_the_signed_rank_p_drops_zeros_and_has_none_without_a_value() -> None:
    assert signed_rank_p([0.0, 0.0]) is None
    assert signed_rank_p([0.0, 0.1, 0.2, 0.3]) == signed_rank_p([0.1, 0.2, 0.3]) == 0.25


@pytest.mark.parametrize("confidence", [0.95, 0.99, 0.999])
def test_the_shift_interval_is_the_set_of_shifts_the_signed_rank_test_keeps(confidence: float) -> None:
    # Inverting the test: a shift just inside a bound is kept (p above alpha), just outside it is refused.
    for n, seed in ((12, 1), (25, 2), (60, 3)):
        values = _sample(n, seed)
        ci = shift_ci(values, confidence)
        assert ci is not None and ci.low < ci.estimate < ci.high
        alpha = 1 - confidence
        for bound, inward in ((ci.low, 1), (ci.high, -1)):
            inside = signed_rank_p([v - (bound + inward * 1e-9) for v in values])
            outside = signed_rank_p([v - (bound - inward * 1e-9) for v in values])
            assert inside is not None and outside is not None
            assert inside > alpha - 1e-12 and outside <= alpha + 1e-12, (n, bound)


def test_the_estimate_is_the_median_of_the_walsh_averages() -> None:
    values = [0.3, -0.1, 0.2, 0.5, 0.0, 0.4]
    walsh = sorted((values[i] + values[j]) / 2 for i in range(6) for j in range(i, 6))
    ci = shift_ci(values, 0.95)
    assert ci is not None and ci.estimate == pytest.approx(statistics.median(walsh))
    # n = 6 at 95 %: P(W+ <= 0) = 1/64 <= 0.025 < P(W+ <= 1): the smallest and largest Walsh averages
    assert (ci.low, ci.high) == (pytest.approx(-0.1), pytest.approx(0.5))


@pytest.mark.parametrize(("confidence", "fewest"), [(0.95, 6), (0.99, 8), (0.9975, 10), (0.999, 11)])
def test_an_interval_needs_the_fewest_values_whose_all_one_sign_is_rare_enough(
    confidence: float, fewest: int
) -> None:
    assert min_pairs(confidence) == fewest
    assert shift_ci([0.1 * i for i in range(1, fewest)], confidence) is None
    assert shift_ci([0.1 * i for i in range(1, fewest + 1)], confidence) is not None


def test_a_shift_interval_needs_fewer_values_than_the_median_interval_for_the_same_width() -> None:
    # Why comparisons use it: over normal noise, the same values give a narrower interval (about 1.25x).
    rng = random.Random(7)
    ratios = []
    for _ in range(200):
        values = [rng.gauss(0.0, 0.1) for _ in range(30)]
        hl, med = shift_ci(values, 0.95), median_ci(values, 0.95)
        assert hl is not None and med is not None
        ratios.append((med.high - med.low) / (hl.high - hl.low))
    assert 1.1 < statistics.median(ratios) < 1.4
