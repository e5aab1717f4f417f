"""A cell's whole latency distribution: sparse ``[value_us, count]`` pairs, exact merges, percentiles.

Encoding. Each stored value is a bucket of the tool's own resolution unit (``unit_us``: wrk 1 µs, ab 1 ms,
httperf 0.5 ms because its 1 ms bins are reported at their centres), floored to a number of significant bits
(``significant_bits``, per source: its adapter's :class:`Resolution`): values below 2**bits units are exact,
larger ones are rounded down by less than 2**(1 - bits). ab and httperf (11 bits) keep every request exactly
at their own resolution up to 2 s (httperf: 1 s) and within 0.1 % beyond, like an HdrHistogram with 3
significant digits; wrk (9 bits) to the microsecond below 0.5 ms and within 0.4 % above: its microseconds are
finer than any latency difference a benchmark can show, and 9 bits keep a cell's histogram at about 1,700
pairs (17 KB) where 11 bits took 4,800 (45 KB) for the same 2 s run. Bucketing is idempotent, so sums of
stored distributions (merged loadgens, pooled repetitions) are exact: nothing is re-rounded and no percentile
is ever averaged.

Why sparse pairs and not PyPI ``hdrhistogram``: the pairs are plain JSON that ``jq`` and a spreadsheet read,
they need no new dependency on the controller or in the Lua script that reads wrk's histogram, and the
bucketing bounds their size (about 1,000 pairs per doubling of latency at most, usually a few hundred per
cell). HdrHistogram's compressed base64 is smaller but opaque in a cell meant to be read.

Percentiles use the nearest-rank method (the smallest stored value with at least p % of the samples at or
below it), like :func:`benchstack.kinds.loadtools.perrequest.nearest_rank`. p99.9 and p99.99 are given only
when the distribution holds enough real requests (:data:`TAIL_MIN_REQUESTS`): with fewer, the top 0.1 % is one
or two requests and the figure would be a single outlier, not a percentile. wrk's histogram is corrected for
coordinated omission (it holds synthetic samples besides the requests,
:mod:`benchstack.kinds.loadtools.perrequest`), so a distribution counts both: ``samples`` (what percentiles
rank) and ``requests`` (real ones, what the tail rule counts).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from benchstack.common.numbers import is_int

if TYPE_CHECKING:
    from benchstack.records.model import Parsed


@dataclass(frozen=True)
class Resolution:
    """Where a distribution comes from, as the tool's adapter declares it (``resolution`` of
    :class:`benchstack.kinds.loadtools.base.LoadTool`; the published cell schema's per-source rules are
    generated from these, scripts/kindfiles/loadtools.py): the tool's resolution, the significant bits kept,
    whether the samples are corrected for coordinated omission, whether they are every request's own time
    (their mean and stdev then replace the tool's rounded ones), and how its percentiles are to be read."""

    source: str
    unit_us: int
    bits: int
    corrected: bool
    every_request: bool
    label: str


PERCENTILES: tuple[tuple[str, float], ...] = (("p50", 50), ("p75", 75), ("p90", 90), ("p99", 99))
# The tail percentiles (model.TAIL_KEYS) and the real requests each needs (Distribution.unsupported).
TAIL_MIN_REQUESTS: dict[str, tuple[float, int]] = {"p99.9": (99.9, 1_000), "p99.99": (99.99, 10_000)}
TAIL_FROM = 99.9


class DistributionError(ValueError):
    """Distributions that cannot be summed, or a stored distribution that is malformed."""


def bucket(units: int, bits: int) -> int:
    """``units`` floored to ``bits`` significant bits (exact below 2**bits)."""
    shift = units.bit_length() - bits
    return units if shift <= 0 else (units >> shift) << shift


def bucket_width_us(resolution: Resolution, value_us: int) -> int:
    """The width of the bucket holding ``value_us``: every value in it is stored as its lowest."""
    unit, bits = resolution.unit_us, resolution.bits
    return unit << max(0, (value_us // unit).bit_length() - bits)


@dataclass(frozen=True)
class Distribution:
    """Latency samples of one cell (or of merged or pooled cells). ``counts``: (value_us, count), ascending,
    values already bucketed to ``bits`` significant bits of ``unit_us``. ``requests``: real requests
    described (fewer than the samples for wrk's corrected histogram)."""

    source: str
    unit_us: int
    counts: tuple[tuple[int, int], ...]
    requests: int
    corrected: bool
    bits: int

    @cached_property
    def _cumulative(self) -> list[int]:
        out, seen = [], 0
        for _, count in self.counts:
            seen += count
            out.append(seen)
        return out

    @property
    def samples(self) -> int:
        return self._cumulative[-1] if self.counts else 0

    def percentile_us(self, p: float) -> int | None:
        """Nearest-rank p-th percentile in µs; None for an empty distribution."""
        total = self.samples
        if total == 0:
            return None
        rank = min(total, max(1, math.ceil(round(p / 100 * total, 9))))
        return self.counts[bisect.bisect_left(self._cumulative, rank)][0]

    def percentile_ms(self, p: float) -> float | None:
        value = self.percentile_us(p)
        return None if value is None else value / 1000

    def unsupported(self, p: float) -> str | None:
        """Why percentile ``p`` is not given, or None. From p99.9 on, a percentile needs 1 / (1 - p) real
        requests (1,000 for p99.9, 10,000 for p99.99): with fewer, it is one outlier, not a percentile."""
        if p < TAIL_FROM:
            return None
        needed = round(100 / (100 - p)) if p < 100 else 0
        if self.requests >= needed:
            return None
        return f"{self.requests:,} requests; p{p:g} needs at least {needed:,}"

    def tail_reasons(self) -> dict[str, str]:
        """Why each tail percentile is left out (empty when the request count supports both)."""
        reasons = {key: self.unsupported(p) for key, (p, _) in TAIL_MIN_REQUESTS.items()}
        return {key: reason for key, reason in reasons.items() if reason}

    def latency_ms(self) -> dict[str, float | None]:
        """p50 .. p99 and, when supported, p99.9 and p99.99, in ms."""
        figures: dict[str, float | None] = {key: self.percentile_ms(p) for key, p in PERCENTILES}
        unsupported = self.tail_reasons()
        for key, (p, _) in TAIL_MIN_REQUESTS.items():
            figures[key] = None if key in unsupported else self.percentile_ms(p)
        return figures

    def moments_ms(self) -> dict[str, float | None]:
        """mean, stdev (population), min and max of the stored values, in ms."""
        total = self.samples
        if total == 0:
            return dict.fromkeys(("mean", "stdev", "min", "max"))
        mean = sum(v * c for v, c in self.counts) / total
        var = sum(c * (v - mean) ** 2 for v, c in self.counts) / total
        return {
            "mean": round(mean / 1000, 3),
            "stdev": round(math.sqrt(var) / 1000, 3),
            "min": self.counts[0][0] / 1000,
            "max": self.counts[-1][0] / 1000,
        }

    def rows(self) -> list[tuple[int, int, float]]:
        """(value_us, count, percentile): the percentile is the share of samples at or below the value."""
        total = self.samples
        return [
            (v, c, 100 * seen / total) for (v, c), seen in zip(self.counts, self._cumulative, strict=True)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "unit_us": self.unit_us,
            "significant_bits": self.bits,
            "corrected": self.corrected,
            "requests": self.requests,
            "samples": self.samples,
            "unsupported": self.tail_reasons(),
            "counts": [[v, c] for v, c in self.counts],
        }


def from_counts(
    resolution: Resolution, counts: Iterable[tuple[int, int]] | Mapping[int, int], requests: int | None = None
) -> Distribution:
    """A distribution of ``resolution``'s source from (value_us, count) pairs; values are bucketed in its unit
    (a value between two units is floored to the unit). ``requests`` defaults to the number of samples."""
    unit, bits = resolution.unit_us, resolution.bits
    pairs = counts.items() if isinstance(counts, Mapping) else counts
    summed: dict[int, int] = {}
    exact_below = 1 << bits
    for value, count in pairs:
        if count < 0 or value < 0:
            raise DistributionError(f"negative value or count: [{value}, {count}]")
        if count:
            units = int(value) // unit
            key = (units if units < exact_below else bucket(units, bits)) * unit
            summed[key] = summed.get(key, 0) + int(count)
    ordered = tuple(sorted(summed.items()))
    total = sum(c for _, c in ordered)
    return Distribution(
        source=resolution.source,
        unit_us=unit,
        counts=ordered,
        requests=total if requests is None else int(requests),
        corrected=resolution.corrected,
        bits=bits,
    )


def from_values(resolution: Resolution, values_us: Iterable[int]) -> Distribution:
    """A distribution of one sample per value (per-request data)."""
    counts: dict[int, int] = {}
    for value in values_us:
        counts[value] = counts.get(value, 0) + 1
    return from_counts(resolution, counts)


def merge(dists: Sequence[Distribution]) -> Distribution:
    """The sum of several distributions of the same source: every sample of each, nothing averaged."""
    if not dists:
        raise DistributionError("nothing to merge")
    kinds = {(d.source, d.unit_us, d.corrected, d.bits) for d in dists}
    if len(kinds) > 1:
        raise DistributionError(f"cannot sum distributions of different kinds: {sorted(kinds)}")
    summed: dict[int, int] = {}
    for d in dists:
        for value, count in d.counts:
            summed[value] = summed.get(value, 0) + count
    first = dists[0]
    return Distribution(
        first.source,
        first.unit_us,
        tuple(sorted(summed.items())),
        sum(d.requests for d in dists),
        first.corrected,
        first.bits,
    )


def _is_count(v: object) -> bool:
    return is_int(v) and v >= 0


def validate(d: object, resolution: Resolution | None = None) -> list[str]:
    """Problems with a stored ``latency_dist`` object; empty when valid. Its own unit and bits hold its
    values; with ``resolution`` (the adapter of its source, which the caller knows), they must be the
    source's."""
    if not isinstance(d, dict):
        return ["latency_dist must be an object"]
    problems = []
    source = d.get("source")
    if not isinstance(source, str) or not source:
        return [f"latency_dist.source must name a load tool, not {source!r}"]
    unit, bits = d.get("unit_us"), d.get("significant_bits")
    if not is_int(unit) or unit < 1 or not is_int(bits) or bits < 1:
        return ["latency_dist.unit_us and significant_bits must be integers >= 1"]
    if not isinstance(d.get("corrected"), bool):
        problems.append("latency_dist.corrected must be true or false")
    if resolution is not None:
        name = resolution.source
        if unit != resolution.unit_us:
            problems.append(f"latency_dist.unit_us must be {resolution.unit_us} for {name}")
        if bits != resolution.bits:
            problems.append(f"latency_dist.significant_bits must be {resolution.bits} for {name}")
        if d.get("corrected") is not resolution.corrected:
            flag = str(resolution.corrected).lower()
            problems.append(f"latency_dist.corrected must be {flag} for {name}")
    for key in ("requests", "samples"):
        if not _is_count(d.get(key)):
            problems.append(f"latency_dist.{key} must be an integer >= 0")
    if not isinstance(d.get("unsupported"), dict):
        problems.append("latency_dist.unsupported must be an object")
    counts = d.get("counts")
    if not isinstance(counts, list):
        return problems + ["latency_dist.counts must be a list of [value_us, count] pairs"]
    previous = -1
    for pair in counts:
        # type() is, not isinstance(): a bool is not a count
        ok = type(pair) is list and len(pair) == 2 and type(pair[0]) is int and type(pair[1]) is int
        if not ok or pair[0] < 0 or pair[1] <= 0:
            problems.append(f"latency_dist.counts: {pair!r} is not a [value_us, count>0] pair")
            break
        value = pair[0]
        if value <= previous:
            problems.append("latency_dist.counts must be sorted by value, each value once")
            break
        if value % unit or bucket(value // unit, bits) * unit != value:
            problems.append(f"latency_dist.counts: {value} is not a bucket of {source}'s resolution")
            break
        previous = value
    else:
        if _is_count(d.get("samples")) and d["samples"] != sum(c for _, c in counts):
            problems.append("latency_dist.samples must be the sum of the counts")
    return problems


def from_dict(d: Mapping[str, Any]) -> Distribution:
    """A stored ``latency_dist`` back as a :class:`Distribution` (DistributionError if malformed; that its
    unit and bits are its source's is the cell's check, :func:`benchstack.results.cell.validate_cell`)."""
    problems = validate(dict(d))
    if problems:
        raise DistributionError("; ".join(problems))
    return Distribution(
        source=d["source"],
        unit_us=int(d["unit_us"]),
        counts=tuple((int(v), int(c)) for v, c in d["counts"]),
        requests=int(d["requests"]),
        corrected=bool(d["corrected"]),
        bits=int(d["significant_bits"]),
    )


def attach(parsed: Parsed, dist: Distribution, every_request: bool = False) -> None:
    """Give ``parsed`` its distribution and take every percentile from it, so a cell's percentiles, its merged
    cell's and its pooled repetitions' all come from the same data (the tool's own figures may round or rank
    differently: ab prints whole ms one rank off, wrk prints 2 decimals)."""
    parsed.latency_dist = dist
    parsed.latency_ms.update(dist.latency_ms())
    if parsed.latency_ms.get("min") is None and dist.counts:  # wrk prints no minimum
        parsed.latency_ms["min"] = dist.counts[0][0] / 1000
    if dist.counts and every_request:
        # ab's -g file holds every request: its mean is the Total row's without the rounding to whole ms,
        # and the one a merged cell computes from the same files (benchstack.measure.merge).
        moments = dist.moments_ms()
        parsed.latency_ms.update(mean=moments["mean"], stdev=moments["stdev"])


def pooled(dists: Sequence[Distribution | None]) -> Distribution | None:
    """Every sample of several cells' distributions (the repetitions of one load point) together; None
    unless every cell has a distribution. The pooled percentiles describe all the requests of all
    repetitions at once, which a median of per-repetition percentiles does not."""
    if not dists or any(d is None for d in dists):
        return None
    return merge([d for d in dists if d is not None])
