"""Statistics over the repetitions of one load point, in the standard library only.

* :func:`summarize` gives n, median, min, max, mean, sample standard deviation, the coefficient of variation
  (sample stdev / mean) and a 95 % confidence interval **of the mean** (Student's t with n - 1 degrees of
  freedom). The report shows the median as the headline number because one disturbed repetition moves it
  least; the interval is of the mean because a distribution-free interval of the median needs at least six
  repetitions to reach 95 % (order statistics: 1 - 2 * 0.5**n >= 0.95), and runs usually have three.
* :func:`median_ci` is that distribution-free interval of the median (Hettmansperger-Sheather).
* :func:`shown_interval` is that interval as a reader should see it: none below three values (with two, one
  degree of freedom makes t = 12.7 and the interval says nothing), and clamped at 0 when its lower bound is
  negative (req/s and latencies cannot be; clamping keeps the coverage, since the true mean is >= 0).
* :func:`welch_t_test` compares two samples without assuming equal variances (Welch's t-test with the
  Welch-Satterthwaite degrees of freedom), two-sided.
* The t distribution is computed, not tabulated: its CDF through the regularized incomplete beta function
  (continued fraction, Lentz's method) and its quantiles by bisection on the CDF.
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
    ci_low: float | None  # 95 % confidence interval of the mean; None below two values
    ci_high: float | None


def _values(values: Sequence[float | int | None]) -> list[float]:
    return [float(v) for v in values if v is not None]


def summarize(values: Sequence[float | int | None], confidence: float = CONFIDENCE) -> Summary | None:
    """Summary of the non-None values, or None when there are none."""
    xs = _values(values)
    if not xs:
        return None
    n = len(xs)
    mean = statistics.fmean(xs)
    stdev = cv = low = high = None
    if n >= 2:
        stdev = statistics.stdev(xs)
        cv = stdev / mean if mean else None
        half = t_quantile(0.5 + confidence / 2, n - 1) * stdev / math.sqrt(n)
        low, high = mean - half, mean + half
    return Summary(n, statistics.median(xs), min(xs), max(xs), mean, stdev, cv, low, high)


# Fewest values for which the report shows a confidence interval.
MIN_CI_VALUES = 3


@dataclass(frozen=True)
class ShownInterval:
    low: float
    high: float
    clamped: bool  # the computed lower bound was below 0 and is shown as 0


def shown_interval(s: Summary | None) -> ShownInterval | None:
    """The confidence interval of ``s`` as the report shows it, or None below :data:`MIN_CI_VALUES` values."""
    if s is None or s.n < MIN_CI_VALUES or s.ci_low is None or s.ci_high is None:
        return None
    return ShownInterval(max(0.0, s.ci_low), s.ci_high, s.ci_low < 0)


def coefficient_of_variation(values: Sequence[float | int | None]) -> float | None:
    s = summarize(values)
    return s.cv if s else None


# ---------------------------------------------------------------- the t distribution


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz's method)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x must be in [0, 1], not {x}")
    if x in (0.0, 1.0):
        return x
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` (> 0, not necessarily whole) degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, not {df}")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = p (0 < p < 1), by bisection on :func:`t_cdf`."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be between 0 and 1, not {p}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, high * 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2.0


# ---------------------------------------------------------------- comparing two runs


@dataclass(frozen=True)
class TTest:
    t: float
    df: float
    p: float


def welch_t_test(a: Sequence[float | int | None], b: Sequence[float | int | None]) -> TTest | None:
    """Two-sided Welch's t-test of equal means; None when either side has fewer than two values.

    Two samples without any spread are equal (p = 1) or certainly different (p = 0).
    """
    xs, ys = _values(a), _values(b)
    if len(xs) < 2 or len(ys) < 2:
        return None
    va, vb = statistics.variance(xs) / len(xs), statistics.variance(ys) / len(ys)
    diff = statistics.fmean(xs) - statistics.fmean(ys)
    if va + vb == 0:
        same = diff == 0
        return TTest(t=0.0 if same else math.copysign(math.inf, diff), df=math.inf, p=1.0 if same else 0.0)
    t = diff / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(xs) - 1) + vb**2 / (len(ys) - 1))
    p = 2.0 * (1.0 - t_cdf(abs(t), df))
    return TTest(t=t, df=df, p=min(1.0, max(0.0, p)))


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
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


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
