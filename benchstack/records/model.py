"""What a load tool's output says, in one shape for every tool, and how errors are counted.

Error accounting (the honest part). Every tool keeps its own counters, and they overlap:

* ab counts one bad request under several counters at once. A non-2xx error page whose body length differs
  from the first response is both a "Non-2xx response" and a "Length" failure
  (tests/data/ab/mixed-status-length.txt: Non-2xx 503, Length 503, for 503 bad requests); a connection reset
  with ``-r`` is counted as Receive, Length *and* Exceptions (tests/data/ab/receive-errors.txt: 100 resets,
  "Failed requests: 300"). "Failed requests" does not include Non-2xx responses, and "Complete requests"
  includes both non-2xx responses and length failures. So for ab the number of distinct bad requests is
  taken as the largest single counter: a lower bound, and exact in every case we captured.
* wrk counts connect/read/write errors for attempts that never completed (not in "N requests"), while
  "Non-2xx or 3xx responses" (status >= 400) and timeouts (responses slower than ``--timeout``) are
  completed requests (tests/data/wrk/timeouts.txt: 12 requests, timeout 12). The counters are summed and the
  rate is taken over attempts = completed + connect + read + write.
* httperf counts each failed connection once (``Errors: total`` is their sum): refused -> connect, reset ->
  read, client/socket timeouts -> timeout, descriptor/port/table exhaustion and other -> exceptions; none
  of them completed. 4xx/5xx replies are completed ``status`` errors. Attempts = replies + those failures.
* siege counts responses as transactions whatever their status (4xx/5xx are completed ``status`` errors,
  read from its per-request lines) and each request that got no response once, as a failed transaction
  (refused -> connect, reset or read error -> read, timed out -> timeout). Attempts = transactions + those.

Each tool's rules are one :class:`Counting`, declared by its adapter (``counting`` of
:class:`benchstack.kinds.loadtools.base.LoadTool`); the functions below take those rules, not a tool name, so
this module knows no tool (the adapters import it, not the other way).

``over_threshold`` counts completed requests slower than the experiment's threshold (from per-request data,
see :mod:`benchstack.kinds.loadtools.perrequest`); it is None when nothing measured it. A request that both
failed and was slow counts once. Per-request data carries no status, so which slow requests also failed is
unknown; the rule is to assume the slow ones are among the failed requests that have a latency (those that
completed):

    error_count = failed + max(0, over_threshold - failed_with_latency)

where ``failed_with_latency`` is, for wrk, ``status`` (connect/read/write errors never completed, and
timeouts are left out of wrk's latency data); for ab, the largest of read, write, length, exceptions and
status (ab stores a time for every request that reached the end of a response, failed or not; failed
connects have none). Exact when no completed request failed (the usual case), otherwise a lower bound, like
ab's overlapping counters. The rate is capped at 1.0. The raw counters are always kept in ``errors``.

The verdict tells the two apart (issue 25: slow is a result, not an invalid run): :func:`failed_rate` leaves
``over_threshold`` out and is what ``load.max_error_rate`` limits; :func:`slow_rate` is the share of slow
responses, reported per load point. The stored ``error_rate`` keeps counting both, as the original
benchmarks did.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchstack.records.distribution import Distribution

ERROR_KINDS: tuple[str, ...] = (
    "connect",
    "read",
    "write",
    "timeout",
    "status",
    "length",
    "exceptions",
    "over_threshold",
)
LATENCY_KEYS: tuple[str, ...] = ("mean", "stdev", "min", "max", "p50", "p75", "p90", "p99")
# Tail percentiles, from a latency distribution only (:mod:`benchstack.records.distribution`); optional in a
# cell.
TAIL_KEYS: tuple[str, ...] = ("p99.9", "p99.99")


class ParseError(ValueError):
    """The text is not output of the expected tool, or lacks lines every complete run prints."""


def fatal_messages(patterns: Iterable[re.Pattern[str]], text: str) -> list[str]:
    """What a tool said when it printed no results: group 1 of every match in ``text``, stripped, the
    first pattern's matches first."""
    return [m.group(1).strip() for pattern in patterns for m in pattern.finditer(text)]


def empty_latency() -> dict[str, float | None]:
    return dict.fromkeys(LATENCY_KEYS + TAIL_KEYS)


def empty_errors() -> dict[str, int | None]:
    errors: dict[str, int | None] = dict.fromkeys(ERROR_KINDS, 0)
    errors["over_threshold"] = None
    return errors


def _n(value: int | None) -> int:
    return value or 0


@dataclass(frozen=True)
class Counting:
    """How one tool's error counters become distinct failed requests and attempts (see module doc)."""

    # One bad request is counted under several counters at once: the distinct ones are the largest counter.
    overlapping: bool
    # Failed requests that still have a latency, so may also be among the slow ones.
    with_latency: tuple[str, ...]
    # Error kinds whose requests never completed: attempts = completed + these.
    not_completed: tuple[str, ...]


def error_count(rules: Counting, errors: dict[str, int | None]) -> int:
    """Distinct failed requests, as well as the tool's overlapping counters allow (see module doc)."""
    kinds = [k for k in ERROR_KINDS if k != "over_threshold"]
    if rules.overlapping:
        failed = max(_n(errors.get(k)) for k in kinds)
        with_latency = max(_n(errors.get(k)) for k in rules.with_latency)
    else:
        failed = sum(_n(errors.get(k)) for k in kinds)
        with_latency = sum(_n(errors.get(k)) for k in rules.with_latency)
    return failed + max(0, _n(errors.get("over_threshold")) - with_latency)


def attempts(rules: Counting, requests_completed: int, errors: dict[str, int | None]) -> int:
    """Requests tried: completed ones plus attempts the tool counted as failed without completing."""
    return requests_completed + sum(_n(errors.get(k)) for k in rules.not_completed)


def _share(count: int, rules: Counting, requests_completed: int, errors: dict[str, int | None]) -> float:
    if count == 0:
        return 0.0
    return min(1.0, count / max(attempts(rules, requests_completed, errors), 1))


def error_rate(rules: Counting, requests_completed: int, errors: dict[str, int | None]) -> float:
    return _share(error_count(rules, errors), rules, requests_completed, errors)


def failed_count(rules: Counting, errors: dict[str, int | None]) -> int:
    """Distinct failed requests, slow ones left out unless they also failed (the rule of :func:`error_count`
    without ``over_threshold``)."""
    return error_count(rules, {**errors, "over_threshold": 0})


def failed_rate(rules: Counting, requests_completed: int, errors: dict[str, int | None]) -> float:
    """Failed requests over the requests attempted: what ``load.max_error_rate`` limits in the verdict."""
    return _share(failed_count(rules, errors), rules, requests_completed, errors)


def slow_rate(rules: Counting, requests_completed: int, errors: dict[str, int | None]) -> float | None:
    """Responses over the threshold over the requests attempted; None when nothing counted them."""
    over = errors.get("over_threshold")
    return None if over is None else _share(over, rules, requests_completed, errors)


@dataclass
class Parsed:
    """One tool run as the tool reported it. Latency in milliseconds, sizes in bytes, times in seconds."""

    tool: str
    tool_version: str | None
    url: str | None
    concurrency: int
    threads: int | None
    keepalive: bool
    requests_completed: int
    duration_s: float
    rps: float
    transfer_bytes: int
    # The tool's error accounting (its adapter's ``counting``).
    counting: Counting
    latency_ms: dict[str, float | None] = field(default_factory=empty_latency)
    errors: dict[str, int | None] = field(default_factory=empty_errors)
    keepalive_requests: int | None = None
    notes: list[str] = field(default_factory=list)
    extra: dict[str, float | int | str | None] = field(default_factory=dict)
    # Every request's latency, when the tool's output (or its per-request data) holds it.
    latency_dist: Distribution | None = None

    @property
    def error_count(self) -> int:
        return error_count(self.counting, self.errors)

    @property
    def error_rate(self) -> float:
        return error_rate(self.counting, self.requests_completed, self.errors)
