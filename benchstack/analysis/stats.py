"""Statistics over the repetitions of one load point.

* :func:`summarize` gives n, median, min, max, mean, sample standard deviation and the coefficient of
  variation (sample stdev / mean); the report's plots draw its median and range.
* :func:`median_ci` is the distribution-free 95 % interval of the median (Hettmansperger-Sheather) that the
  report, the verdict and the extra rounds use, :func:`relative_half_width` its half-width over the median.
* :func:`mann_whitney` compares two runs' values; :func:`signed_rank_p` and :func:`shift_ci` compare paired
  cells (Wilcoxon's signed-rank test and the Hodges-Lehmann interval).

Import cost: scipy.stats takes about 1 s to import (2 s on a loaded host), so this module imports it only
inside :func:`mann_whitney`, which only ``bench-stack compare`` calls. The binomial tail of the median's
interval (:func:`half_binomial_cdf`) and the signed-rank distribution are exact integer counts written here
instead of scipy.stats.binom and scipy.stats.wilcoxon, because an extra round's Ansible worker (a fresh
process each round) computes both; the tests hold each to scipy's, and ``tests/unit/project/test_imports.py``
fails if the CLI or that worker loads scipy.
"""

from __future__ import annotations

import bisect
import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    min: float
    max: float
    mean: float
    stdev: float | None  # sample standard deviation; None below two values
    cv: float | None  # stdev / mean; None below two values or when the mean is 0


def _values(values: Sequence[float | int | None]) -> list[float]:
    return [float(v) for v in values if v is not None]


def summarize(values: Sequence[float | int | None]) -> Summary | None:
    """Summary of the non-None values, or None when there are none."""
    xs = _values(values)
    if not xs:
        return None
    mean = statistics.fmean(xs)
    stdev = cv = None
    if len(xs) >= 2:
        stdev = statistics.stdev(xs)
        cv = stdev / mean if mean else None
    return Summary(len(xs), statistics.median(xs), min(xs), max(xs), mean, stdev, cv)


def coefficient_of_variation(values: Sequence[float | int | None]) -> float | None:
    s = summarize(values)
    return s.cv if s else None


# ---------------------------------------------------------------- the median, distribution-free

# Fewest values for which an order-statistic interval of the median reaches 95 % (1 - 2 * 0.5**6 = 0.969).
MIN_MEDIAN_CI_VALUES = 6
# Modified z-score (Iglewicz and Hoaglin) above which a value is marked an outlier.
OUTLIER_Z = 3.5


@dataclass(frozen=True)
class MedianInterval:
    low: float
    high: float
    coverage: float  # the sign-test coverage of the bracketing pair x(k), x(n-k+1) (>= the confidence)
    ranks: tuple[int, int]  # 1-based ranks of that pair; low and high lie between it and the next pair in


def _sign_coverage(k: int, n: int) -> float:
    """P(x(k) <= median <= x(n-k+1)) for any continuous distribution: 1 - 2 P(B <= k - 1)."""
    return 1.0 - 2.0 * half_binomial_cdf(k - 1, n)


def half_binomial_cdf(k: int, n: int) -> float:
    """P(B <= k) for B ~ Binomial(n, 1/2), exactly: the count of subsets over 2**n in integers. Not
    scipy.stats.binom: importing scipy.stats takes about 2 s here, and every extra round's Ansible worker
    (a fresh process) asks for intervals, so that import was most of the time between two rounds."""
    return float(sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def median_ci(values: Sequence[float | int | None], confidence: float = CONFIDENCE) -> MedianInterval | None:
    """The distribution-free confidence interval of the median, by Hettmansperger and Sheather (1986):
    the sign-test pair x(k), x(n-k+1) with the largest k whose coverage is at least ``confidence``,
    interpolated towards the next pair x(k+1), x(n-k), whose coverage is below it, so that the coverage is
    ``confidence`` rather than anything up to the next step above it (97 % at 23 values, 96.5 % at 36). This
    is scipy's ``scipy.stats.mstats.median_cihs`` (the tests hold it to that), written here for the import
    time :func:`half_binomial_cdf` explains. None when even the range falls short (fewer than
    :data:`MIN_MEDIAN_CI_VALUES` values at 95 %)."""
    xs = sorted(_values(values))
    n = len(xs)
    k = 0
    while k + 1 <= n // 2 and _sign_coverage(k + 1, n) >= confidence:
        k += 1
    if k == 0:
        return None
    outer = _sign_coverage(k, n)
    low, high = xs[k - 1], xs[n - k]
    if k + 1 <= n - k:
        inner = _sign_coverage(k + 1, n)
        share = (outer - confidence) / (outer - inner)
        lam = (n - k) * share / (k + (n - 2 * k) * share)
        low = lam * xs[k] + (1 - lam) * low
        high = lam * xs[n - k - 1] + (1 - lam) * high
    return MedianInterval(low, high, outer, (k, n - k + 1))


def relative_half_width(values: Sequence[float | int | None], confidence: float = CONFIDENCE) -> float | None:
    """Half the width of :func:`median_ci` over the median (0.05 = +-5 %); None without an interval or
    with a median of 0."""
    ci = median_ci(values, confidence)
    if ci is None:
        return None
    median = statistics.median(_values(values))
    return (ci.high - ci.low) / 2 / abs(median) if median else None


def outliers(values: Sequence[float]) -> list[bool]:
    """Per value, whether its modified z-score 0.6745 |x - median| / MAD is above :data:`OUTLIER_Z`
    (Iglewicz and Hoaglin; MAD-based like hyperfine's warning). All False below three values or when the
    MAD is 0."""
    xs = [float(v) for v in values]
    if len(xs) < 3:
        return [False] * len(xs)
    median = statistics.median(xs)
    mad = statistics.median(abs(x - median) for x in xs)
    if mad == 0:
        return [False] * len(xs)
    return [0.6745 * abs(x - median) / mad > OUTLIER_Z for x in xs]


@dataclass(frozen=True)
class RankTest:
    p: float
    n_a: int
    n_b: int


# Fewest values per side for a two-sided Mann-Whitney test at 5 % to be able to show a difference at all
# (with 3 and 3 the smallest exact p is 0.1).
MIN_RANK_TEST_VALUES = 4


def mann_whitney(a: Sequence[float | int | None], b: Sequence[float | int | None]) -> RankTest | None:
    """Two-sided Mann-Whitney U test (exact for small samples without ties), as Go's benchstat compares;
    None below :data:`MIN_RANK_TEST_VALUES` values on either side (no 5 % difference could be shown)."""
    from scipy.stats import mannwhitneyu

    xs, ys = _values(a), _values(b)
    if len(xs) < MIN_RANK_TEST_VALUES or len(ys) < MIN_RANK_TEST_VALUES:
        return None
    result = mannwhitneyu(xs, ys, alternative="two-sided")
    return RankTest(float(result.pvalue), len(xs), len(ys))


# ---------------------------------------------------------------- paired comparisons (Hodges-Lehmann)

# Largest number of pairs whose Wilcoxon signed-rank distribution is counted exactly; above it the normal
# approximation (with the tie correction) is as good as the exact one and the count would cost seconds.
EXACT_SIGNED_RANK_MAX = 60


@dataclass(frozen=True)
class ShiftInterval:
    estimate: float  # the Hodges-Lehmann estimate: the median of the Walsh averages
    low: float
    high: float
    confidence: float  # the level asked for (the exact interval's coverage is at least this)


@functools.cache
def _signed_rank_cdf(n: int) -> tuple[float, ...]:
    """P(W+ <= w) for w = 0 .. n(n+1)/2, for n values without ties or zeros: each subset of the ranks 1..n
    is equally likely to be the positive one, so the counts of subsets by their sum, over 2**n."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    for rank in range(1, n + 1):
        for w in range(len(counts) - 1, rank - 1, -1):
            counts[w] += counts[w - rank]
    total, cdf, running = 2**n, [], 0
    for c in counts:
        running += c
        cdf.append(running / total)
    return tuple(cdf)


def _ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def signed_rank_p(values: Sequence[float | int | None]) -> float | None:
    """The two-sided p-value of Wilcoxon's signed-rank test that the values are centred on 0: exact for up
    to :data:`EXACT_SIGNED_RANK_MAX` values without ties or zeros, else the normal approximation with the
    tie correction and a continuity correction (scipy.stats.wilcoxon's ``method="exact"`` and ``"approx"``
    with ``correction=True``; the tests hold it to them). Zeros are dropped (Wilcoxon's own rule); None
    without a nonzero value."""
    xs = [v for v in _values(values) if v != 0]
    n = len(xs)
    if n == 0:
        return None
    ranks = _ranks([abs(v) for v in xs])
    w_plus = sum(r for r, v in zip(ranks, xs, strict=True) if v > 0)
    tied = len(set(ranks)) < n
    if n <= EXACT_SIGNED_RANK_MAX and not tied:
        cdf = _signed_rank_cdf(n)
        w = round(w_plus)
        low = cdf[w]
        high = 1.0 - (cdf[w - 1] if w > 0 else 0.0)
        return min(1.0, 2.0 * min(low, high))
    mean = n * (n + 1) / 4
    counts: dict[float, int] = {}
    for r in ranks:
        counts[r] = counts.get(r, 0) + 1
    var = n * (n + 1) * (2 * n + 1) / 24 - sum(t**3 - t for t in counts.values()) / 48
    if var <= 0:
        return 1.0
    z = max(0.0, abs(w_plus - mean) - 0.5) / math.sqrt(var)
    return min(1.0, 2.0 * (1.0 - statistics.NormalDist().cdf(z)))


def _walsh_rank(n: int, confidence: float) -> int:
    """k: the interval of the shift is the k-th smallest to the k-th largest Walsh average (0: no interval
    reaches ``confidence`` with ``n`` values). Exactly the largest k with P(W+ <= k - 1) <= alpha / 2 up to
    :data:`EXACT_SIGNED_RANK_MAX` values, the normal approximation above."""
    alpha = 1.0 - confidence
    if n <= EXACT_SIGNED_RANK_MAX:
        return bisect.bisect_right(_signed_rank_cdf(n), alpha / 2 + 1e-12)
    z = statistics.NormalDist().inv_cdf(1.0 - alpha / 2)
    mean, sd = n * (n + 1) / 4, math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    return max(0, math.floor(mean - z * sd))


def min_pairs(confidence: float) -> int:
    """The fewest values with which :func:`shift_ci` has an interval at ``confidence``
    (2 ** -n <= alpha / 2)."""
    n = 1
    while _walsh_rank(n, confidence) == 0:
        n += 1
    return n


def shift_ci(values: Sequence[float | int | None], confidence: float = CONFIDENCE) -> ShiftInterval | None:
    """The Hodges-Lehmann estimate of the centre of ``values`` (symmetric about it: the logs of paired
    ratios) with the confidence interval that inverts Wilcoxon's signed-rank test: the k-th smallest and
    largest of the n(n+1)/2 Walsh averages (x_i + x_j) / 2, i <= j (Hollander and Wolfe; R's
    ``wilcox.test(conf.int = TRUE)``). Under normal noise it needs about 1 / 1.5 of the values the interval of
    the median (:func:`median_ci`) needs for the same width, and one outlier moves it little. None below
    :func:`min_pairs` values."""
    xs = sorted(_values(values))
    n = len(xs)
    if n == 0:
        return None
    k = _walsh_rank(n, confidence)
    if k == 0:
        return None
    walsh = sorted((xs[i] + xs[j]) / 2 for i in range(n) for j in range(i, n))
    return ShiftInterval(statistics.median(walsh), walsh[k - 1], walsh[len(walsh) - k], confidence)


# ---------------------------------------------------------------- unpaired comparisons (two runs)

# Largest m * n whose Mann-Whitney U distribution is counted exactly; above it the normal approximation.
EXACT_RANK_SUM_MAX = 2500


@functools.cache
def _rank_sum_cdf(m: int, n: int) -> tuple[float, ...]:
    """P(U <= u) for u = 0 .. m n, for samples of m and n values without ties: the counts of U are the
    coefficients of the Gaussian binomial [m + n choose m] in q, the product over i = 1 .. m of
    (1 - q^(n+i)) / (1 - q^i), in exact integers, over C(m + n, m)."""
    size = m * n + 1
    poly = [1] + [0] * (size - 1)
    for i in range(1, m + 1):
        for k in range(size - 1, n + i - 1, -1):  # times (1 - q^(n+i))
            poly[k] -= poly[k - n - i]
        for k in range(i, size):  # over (1 - q^i): a running sum with stride i
            poly[k] += poly[k - i]
    total, cdf, running = math.comb(m + n, m), [], 0
    for count in poly:
        running += count
        cdf.append(running / total)
    return tuple(cdf)


def _rank_sum_k(m: int, n: int, confidence: float) -> int:
    """k: the interval of a two-sample shift is the k-th smallest to the k-th largest of the m n differences
    (0: no interval reaches ``confidence``). Exactly the largest k with P(U <= k - 1) <= alpha / 2 up to
    :data:`EXACT_RANK_SUM_MAX`, the normal approximation above."""
    alpha = 1.0 - confidence
    if m * n <= EXACT_RANK_SUM_MAX:
        return bisect.bisect_right(_rank_sum_cdf(m, n), alpha / 2 + 1e-12)
    z = statistics.NormalDist().inv_cdf(1.0 - alpha / 2)
    return max(0, math.floor(m * n / 2 - z * math.sqrt(m * n * (m + n + 1) / 12)))


def two_sample_shift_ci(
    a: Sequence[float | int | None], b: Sequence[float | int | None], confidence: float = CONFIDENCE
) -> ShiftInterval | None:
    """The Hodges-Lehmann estimate of the shift from ``a`` to ``b`` (the median of every difference b_j - a_i)
    with the interval that inverts the two-sided Mann-Whitney test: the k-th smallest and largest of those
    m n differences (Hollander and Wolfe; R's ``wilcox.test(x, y, conf.int = TRUE)``, exact without ties).
    For unpaired values, such as two runs' cells of one load point; of log req/s, a ratio. None when no
    interval reaches ``confidence`` (fewer than 4 values a side at 95 %)."""
    xs, ys = _values(a), _values(b)
    m, n = len(xs), len(ys)
    if m == 0 or n == 0:
        return None
    k = _rank_sum_k(m, n, confidence)
    if k == 0:
        return None
    diffs = sorted(y - x for x in xs for y in ys)
    return ShiftInterval(statistics.median(diffs), diffs[k - 1], diffs[len(diffs) - k], confidence)
