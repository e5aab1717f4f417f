import random
import statistics

import pytest

from benchstack.analysis.stats import (
    coefficient_of_variation,
    half_binomial_cdf,
    median_ci,
    min_pairs,
    shift_ci,
    signed_rank_p,
    summarize,
)


def test_the_coefficient_of_variation() -> None:
    assert coefficient_of_variation([100.0, 110.0, 90.0, None]) == pytest.approx(0.1)
    assert coefficient_of_variation([3.0]) is None and coefficient_of_variation([0.0, 0.0]) is None


def test_summary_of_three_repetitions() -> None:
    s = summarize([100.0, 110.0, 90.0])
    assert s is not None
    assert (s.n, s.median, s.min, s.max, s.mean) == (3, 100.0, 90.0, 110.0, 100.0)
    assert s.stdev == pytest.approx(10.0)
    assert s.cv == pytest.approx(0.1)


def test_summary_of_one_value_has_no_spread() -> None:
    s = summarize([42.0, None])
    assert s is not None
    assert (s.n, s.median, s.stdev, s.cv) == (1, 42.0, None, None)
    assert summarize([]) is None
    assert summarize([None]) is None


def test_cv_is_none_when_the_mean_is_zero() -> None:
    s = summarize([0.0, 0.0])
    assert s is not None and s.cv is None


def test_the_binomial_tail_by_hand() -> None:
    # Six fair coins: P(B <= 0) = 1/64, P(B <= 1) = 7/64, P(B <= 3) = 42/64; so the range of six values
    # covers the median with 1 - 2/64 = 96.9 % and the next pair inwards with 1 - 14/64 = 78.1 %.
    assert [half_binomial_cdf(k, 6) for k in (0, 1, 3, 6)] == [1 / 64, 7 / 64, 42 / 64, 1.0]
    six = median_ci([float(x) for x in range(1, 7)])
    assert six is not None and six.coverage == 1 - 2 / 64 and six.ranks == (1, 6)


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


# ---------------------------------------------------------------- two samples: compare --fail-on-regression


@pytest.mark.parametrize(("m", "n"), [(4, 4), (5, 7), (6, 6), (10, 10), (3, 9)])
def test_the_rank_sum_distribution_is_scipys_exact_mann_whitney(m: int, n: int) -> None:
    import random

    from scipy.stats import mannwhitneyu

    from benchstack.analysis.stats import _rank_sum_cdf

    cdf, rng = _rank_sum_cdf(m, n), random.Random(m * 100 + n)
    for _ in range(20):
        x = [rng.random() for _ in range(m)]
        y = [rng.random() + rng.choice([0.0, 0.3, 0.6]) for _ in range(n)]
        u = sum(1 for xi in x for yj in y if xi > yj)  # U of x; scipy's one-sided exact p is P(U <= u)
        p = mannwhitneyu(x, y, alternative="less", method="exact").pvalue
        assert cdf[u] == pytest.approx(p, abs=1e-12)


def test_two_sample_shift_ci_is_r_wilcox_test_conf_int() -> None:
    from benchstack.analysis.stats import two_sample_shift_ci

    # R: wilcox.test(c(2,3,4,5,6), c(1,2,3,4,5), conf.int=TRUE)$conf.int is -2 .. 4 (with ties R warns; the
    # interval is the 3rd smallest to the 3rd largest of the 25 differences: qwilcox(0.025, 5, 5) = 3).
    shift = two_sample_shift_ci([2, 3, 4, 5, 6], [1, 2, 3, 4, 5])
    assert shift is not None and (shift.estimate, shift.low, shift.high) == (-1.0, -4.0, 2.0)
    assert two_sample_shift_ci([1, 2, 3], [4, 5, 6]) is None  # 3 a side: no 95 % interval
