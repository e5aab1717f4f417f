"""Statistics over the repetitions of one load point, in the standard library only.

* :func:`summarize` gives n, median, min, max, mean, sample standard deviation, the coefficient of variation
  (sample stdev / mean) and a 95 % confidence interval **of the mean** (Student's t with n - 1 degrees of
  freedom). The report shows the median as the headline number because one disturbed repetition moves it
  least; the interval is of the mean because a distribution-free interval of the median needs at least six
  repetitions to reach 95 % (order statistics: 1 - 2 * 0.5**n >= 0.95), and runs usually have three.
* :func:`shown_interval` is that interval as a reader should see it: none below three values (with two, one
  degree of freedom makes t = 12.7 and the interval says nothing), and clamped at 0 when its lower bound is
  negative (req/s and latencies cannot be; clamping keeps the coverage, since the true mean is >= 0).
* :func:`welch_t_test` compares two samples without assuming equal variances (Welch's t-test with the
  Welch-Satterthwaite degrees of freedom), two-sided.
* The t distribution is computed, not tabulated: its CDF through the regularized incomplete beta function
  (continued fraction, Lentz's method) and its quantiles by bisection on the CDF.
"""

from __future__ import annotations

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
