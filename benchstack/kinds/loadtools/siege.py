"""siege output (siege 4.0.x, Debian's 4.0.7).

bench-stack runs siege with its own resource file (:func:`siegerc`, written by :func:`siege_command` in the
command's folder, which is also siege's home there: siege makes ``~/.siege`` wherever it is missing): verbose
(a line per request), no HTML parser (no fetching of a page's images), ``Connection: close``, a failure count
it never reaches (siege otherwise aborts after 1,024 socket failures), ``limit`` at the concurrency. ``-b``
(no delay between a user's requests), ``-c`` users, and ``-r`` repetitions per user or ``-t NS`` seconds.

What siege 4.0.7 prints (tests/data/siege/, captured):

* a line per response on stdout, ``HTTP/1.1 200     0.01 secs:      10 bytes ==> GET  /hello/bar``: the
  status, the time in seconds to two decimals (``%6.2f``: rounded to 10 ms) and the body's size. These lines
  are the cell's completed requests, its latency distribution (every request, 10 ms steps) and its status
  errors (4xx and 5xx).
* the summary on stderr (``Transactions: N hits`` to ``Shortest transaction: S``), times to two decimals.
  ``Transactions`` counts the responses below 400 only; ``Failed transactions`` counts the 4xx/5xx responses
  *and* the requests that got no response (mixed.txt: 300 lines, 140 of them 503, "Transactions: 160",
  "Failed transactions: 140"). So a run's socket failures are the failed transactions less the 4xx/5xx lines.
* on stderr, ``[error] socket: ...`` for most socket failures, saying why (its ``error`` in colour whatever
  ``color`` says): refused -> connect (refused.txt), reset -> read (reset.txt), timed out -> timeout, a write
  error -> write. A connection closed without an answer is counted with no line (drop.txt): exceptions.
* ``Elapsed time`` to 10 ms (0.00 for a run under 5 ms, with a rate of 0.00); ``-t 2S`` ran 1.6 s once.

siege 4.0.7's ``timeout`` does not end a request the server never answers (it waited 30 s with ``timeout = 2``
until ``timeout`` killed it), so a plan's ``timeout_s`` is refused; the runner's bound stops such a run.

A summary without every row (cut short), or response lines that do not add up to its transactions, is
incomplete output: ParseError.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, ClassVar

from benchstack.kinds.loadtools.base import (
    TIMEOUT_SLACK_S,
    ClosedRun,
    LoadTool,
    positive_int,
    required_int,
    warmup_of,
)
from benchstack.records import distribution
from benchstack.records.cellplan import CellPlan
from benchstack.records.distribution import Resolution
from benchstack.records.model import (
    Counting,
    Parsed,
    ParseError,
    empty_errors,
    empty_latency,
    fatal_messages,
)

# Failed requests never completed (not among the transactions) and each is counted once; a 4xx or 5xx
# response is a completed transaction with its time.
COUNTING = Counting(
    overlapping=False,
    with_latency=("status",),
    not_completed=("connect", "read", "write", "timeout", "exceptions"),
)
# Every request's time as siege prints it, in seconds to two decimals.
RESOLUTION = Resolution(
    source="siege",
    unit_us=10_000,
    bits=11,
    corrected=False,
    every_request=True,
    label="siege: every request, closed loop, 10 ms (siege rounds to 0.01 s)",
)

# The most users a plan may ask for: siege runs a thread per user.
SIEGE_MAX_USERS = 1000
# How long a run bounded by its request count may take (as ab's).
SIEGE_MAX_S = 600
# Failures before siege aborts the run: more than any plan can make, so failures are counted, not fatal.
SIEGE_FAILURES = 1_000_000_000
RC_FILE = "siegerc"

_ROWS = {
    "transactions": (r"Transactions:\s+(\d+) hits", "Transactions"),
    "availability": (r"Availability:\s+(\d+\.\d\d) %", "Availability"),
    "elapsed": (r"Elapsed time:\s+(\d+\.\d\d) secs", "Elapsed time"),
    "data": (r"Data transferred:\s+(\d+\.\d\d) MB", "Data transferred"),
    "response": (r"Response time:\s+(\d+\.\d\d) secs", "Response time"),
    "rate": (r"Transaction rate:\s+(\d+\.\d\d) trans/sec", "Transaction rate"),
    "throughput": (r"Throughput:\s+(\d+\.\d\d) MB/sec", "Throughput"),
    "concurrency": (r"Concurrency:\s+(\d+\.\d\d)", "Concurrency"),
    "successful": (r"Successful transactions:\s*(\d+)", "Successful transactions"),
    "failed": (r"Failed transactions:\s+(\d+)", "Failed transactions"),
    "longest": (r"Longest transaction:\s+(\d+\.\d\d)", "Longest transaction"),
    "shortest": (r"Shortest transaction:\s+(\d+\.\d\d)", "Shortest transaction"),
}
_PATTERNS = {key: re.compile(rf"^{pattern}[ \t]*$", re.M) for key, (pattern, _) in _ROWS.items()}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_REQUEST = re.compile(
    r"^HTTP/\d\.\d (\d{3})\s+(\d+\.\d\d) secs:\s+(\d+) bytes ==> ([A-Z]+)\s+(\S+)[ \t]*$", re.M
)
_USERS = re.compile(r"^\*\* Preparing (\d+) concurrent users for battle\.", re.M)
_VERSION = re.compile(r"^\*\* SIEGE (\S+)", re.M)
_SOCKET = re.compile(r"^\[(?:error|alert)\] (socket: .*|unable to .*socket.*)$", re.M)
_SOCKET_KINDS = (
    (
        "connect",
        re.compile(
            r"connection refused|unable to connect|network is unreachable|address is unavailable", re.I
        ),
    ),
    ("timeout", re.compile(r"timed out", re.I)),
    ("read", re.compile(r"read error|unable to read|closed by server|reset", re.I)),
    ("write", re.compile(r"unable to write|write error", re.I)),
)
_FATAL = (
    re.compile(r"^(siege aborted due to excessive socket failure.*)$", re.M),
    re.compile(r"^\[fatal\] (.+)$", re.M),
    re.compile(r"^(Usage: siege .*)$", re.M),
    re.compile(r"^(ERROR: .+)$", re.M),
)


def _socket_errors(text: str, failed: int) -> tuple[dict[str, int], list[str]]:
    """Each request that got no response, by kind, from siege's error lines; those it counted without a line
    are exceptions, with a note."""
    counts = dict.fromkeys(("connect", "read", "write", "timeout", "exceptions"), 0)
    lines = _SOCKET.findall(text)
    notes = []
    if len(lines) > failed:
        notes.append(
            f"siege printed {len(lines)} socket errors for {failed} failed requests: the first {failed} count"
        )
        lines = lines[:failed]
    for line in lines:
        kind = next((k for k, pattern in _SOCKET_KINDS if pattern.search(line)), "exceptions")
        counts[kind] += 1
    if len(lines) < failed:
        counts["exceptions"] += failed - len(lines)
        notes.append(
            f"siege counted {failed - len(lines)} requests without a response and said nothing of why "
            "(a connection closed without an answer): counted as exceptions"
        )
    return counts, notes


def parse(text: str) -> Parsed:
    """Parse the output of one siege run (its stdout, then its stderr)."""
    text = _ANSI.sub("", text)
    values, users = _summary(text)
    transactions, failed = int(values["transactions"]), int(values["failed"])
    responses = _REQUEST.findall(text)
    status = sum(1 for code, *_ in responses if int(code) >= 400)
    if len(responses) - status != transactions:
        raise ParseError(
            f"siege output is incomplete: {len(responses) - status} response lines below 400 for "
            f"{transactions} transactions"
        )
    if status > failed:
        raise ParseError(f"siege printed {status} 4xx/5xx responses but counted {failed} failed transactions")
    notes: list[str] = []
    errors = empty_errors()
    socket, more = _socket_errors(text, failed - status)
    errors.update(socket)
    notes += more
    errors["status"] = status
    errors["length"] = 0  # siege does not compare response lengths
    elapsed, rate = float(values["elapsed"]), float(values["rate"])
    version = _VERSION.search(text)
    parsed = Parsed(
        tool="siege",
        tool_version=version.group(1) if version else None,
        url=None,
        concurrency=users,
        threads=None,
        keepalive=False,
        requests_completed=len(responses),
        duration_s=elapsed,
        rps=_rps(len(responses), transactions, elapsed, rate, notes),
        # Bodies only: siege's "Data transferred" (headers too) is printed in steps of 10 KB.
        transfer_bytes=sum(int(size) for _, _, size, _, _ in responses),
        counting=COUNTING,
        latency_ms=empty_latency(),
        errors=errors,
        notes=notes,
        extra=_extra(values, transactions, failed),
    )
    if responses:
        dist = distribution.from_values(RESOLUTION, (round(float(secs) * 1e6) for _, secs, *_ in responses))
        distribution.attach(parsed, dist, RESOLUTION.every_request)
        # siege's longest and shortest leave 4xx/5xx out; the lines have every response.
        parsed.latency_ms.update(min=dist.counts[0][0] / 1000, max=dist.counts[-1][0] / 1000)
    return parsed


def _summary(text: str) -> tuple[dict[str, str], int]:
    """The summary's values and the run's users; ParseError naming what is missing, or why siege printed
    none."""
    found = {key: pattern.search(text) for key, pattern in _PATTERNS.items()}
    missing = [_ROWS[key][1] for key, m in found.items() if m is None]
    if missing:
        fatal = fatal_messages(_FATAL, text)
        if fatal:
            raise ParseError("siege printed no results: " + "; ".join(fatal))
        if len(missing) == len(_ROWS) and not _USERS.search(text):
            raise ParseError("not siege output (no 'Preparing N concurrent users' line and no summary)")
        raise ParseError("siege output lacks " + ", ".join(repr(label) for label in missing))
    users = _USERS.search(text)
    if users is None:
        raise ParseError("siege output lacks its 'Preparing N concurrent users for battle' line")
    return {key: m.group(1) for key, m in found.items() if m is not None}, int(users.group(1))


def _rps(responses: int, transactions: int, elapsed: float, rate: float, notes: list[str]) -> float:
    if transactions and rate:
        # siege's rate is its transactions (below 400) over the unrounded elapsed time: every response's.
        return round(rate * responses / transactions, 2)
    if responses and elapsed:
        return round(responses / elapsed, 2)
    if responses:
        notes.append("siege's run took under 5 ms (elapsed 0.00 s): it gives no rate")
    return 0.0


def _extra(values: dict[str, str], transactions: int, failed: int) -> dict[str, float | int | str | None]:
    return {
        "availability_pct": float(values["availability"]),
        "data_transferred_mb": float(values["data"]),
        "response_time_s": float(values["response"]),
        "transaction_rate": float(values["rate"]),
        "throughput_mb_s": float(values["throughput"]),
        "mean_concurrency": float(values["concurrency"]),
        "transactions": transactions,
        "failed_transactions": failed,
    }


def siegerc(concurrency: int) -> str:
    """The resource file of a run: every setting bench-stack relies on, whatever siege's own defaults."""
    settings = {
        "verbose": "true",  # a line per request: its status, time and size
        "color": "off",
        "quiet": "false",
        "json_output": "false",
        "show-logfile": "false",
        "logging": "false",
        "parser": "false",  # one request per repetition: no fetching of a page's elements
        "protocol": "HTTP/1.1",
        "connection": "close",
        "benchmark": "true",
        "delay": "0",
        "internet": "false",
        "limit": str(concurrency),
        "failures": str(SIEGE_FAILURES),
    }
    return "".join(f"{key} = {value}\n" for key, value in settings.items())


def siege_command(
    url: str,
    concurrency: int,
    requests: int | None = None,
    duration_s: int | None = None,
) -> list[str]:
    """siege's argv: a shell that writes the run's resource file in the command's own folder (the runner's,
    removed after the run) and execs siege with it, that folder as its home. ``requests`` is the total: ``-r``
    takes repetitions per user, so it must be a multiple of ``concurrency``."""
    positive_int("concurrency", concurrency)
    if (requests is None) == (duration_s is None):
        raise ValueError("siege needs requests or duration_s, not both")
    if concurrency > SIEGE_MAX_USERS:
        raise ValueError(f"siege runs a thread per user: at most {SIEGE_MAX_USERS}, not {concurrency}")
    bound: list[str]
    if requests is not None:
        positive_int("requests", requests)
        if requests % concurrency:
            raise ValueError(
                f"siege runs requests / concurrency repetitions per user: {requests} / {concurrency}"
            )
        bound = ["-r", str(requests // concurrency)]
    else:
        bound = ["-t", f"{positive_int('duration_s', duration_s)}S"]
    siege = ["siege", "-R", RC_FILE, "-b", "-c", str(concurrency), *bound, url]
    # HOME: siege makes ~/.siege/siege.conf wherever it is missing, even with -R; here it makes it in the
    # command's folder, which the runner removes.
    rc = shlex.quote(siegerc(concurrency))
    script = f'printf %s {rc} > {RC_FILE} && HOME="$PWD" exec {shlex.join(siege)}'

    return ["sh", "-c", script]


class Siege(LoadTool):
    """siege: closed loop, users that each send a request and wait for its answer, bounded by a request count
    or a duration; a new connection per request; every request's time to 10 ms."""

    name = "siege"
    order = 40
    bound = "requests"
    # No version probe: its output names it ("** SIEGE 4.0.7"), and `siege -V` would make ~/.siege.
    # EPEL's siege on RHEL; Amazon Linux 2023 has no EPEL: the role refuses it there.
    packages: ClassVar[dict[str, tuple[str, ...] | None]] = {
        "Debian": ("siege",),
        "RedHat": ("siege",),
        "Amazon": None,
    }
    counting = COUNTING
    resolution = RESOLUTION
    summary = "closed loop (concurrency), bounded by requests or duration_s"
    plan_docs: ClassVar[dict[str, str]] = {
        "concurrency": f"required: users, at most {SIEGE_MAX_USERS:,} (a thread each)",
        "rate": "not allowed",
        "requests": "this or `duration_s`: a multiple of the concurrency (`-r` is per user)",
        "duration_s": "this or `requests` (1-600): `-t NS`",
        "threads": "not allowed",
        "keepalive": "off (`true` is refused): a connection per request",
        "timeout_s": "not allowed (siege 4.0.7 waits for an answer whatever its timeout)",
    }

    def check_plan(self, where: str, written: dict[str, Any], problems: list[str]) -> bool:
        before = len(problems)
        if ("requests" in written) == ("duration_s" in written):
            problems.append(f"{where}: siege needs requests or duration_s, not both")
        if "threads" in written:
            problems.append(f"{where}.threads: not for siege (it runs a thread per user)")
        if written.get("keepalive"):
            problems.append(f"{where}.keepalive: siege runs a connection per request here")
        if "timeout_s" in written:
            problems.append(
                f"{where}.timeout_s: siege 4.0.7 does not end a request its server never answers, whatever "
                "its timeout; the run's own bound stops it"
            )
        levels = written.get("concurrency")
        levels = levels if isinstance(levels, list) else [levels]
        for level in levels:
            if isinstance(level, int) and level > SIEGE_MAX_USERS:
                problems.append(
                    f"{where}.concurrency: siege runs a thread per user: at most {SIEGE_MAX_USERS:,}, "
                    f"not {level:,}"
                )
            elif (
                isinstance(level, int)
                and isinstance(written.get("requests"), int)
                and written["requests"] % level
            ):
                problems.append(
                    f"{where}.requests: siege runs requests / concurrency repetitions per user: "
                    f"{written['requests']:,} is not a multiple of {level:,}"
                )
        return len(problems) == before

    def argv(self, run: ClosedRun) -> list[str]:
        if run.threads is not None:
            raise ValueError("siege runs a thread per user; threads applies to wrk only")
        if run.keepalive:
            raise ValueError("siege runs a connection per request here; use ab -k or wrk for keep-alive")
        if run.timeout_s is not None:
            raise ValueError("siege 4.0.7 ignores its timeout for a request that gets no answer")
        return siege_command(run.url, run.concurrency, run.requests, run.duration_s)

    def command(self, cell: CellPlan, url: str, per_request: str | None = None) -> list[str]:
        return self.closed_command(cell, url, cell.timeout_s, None)

    def warmup_command(self, cell: CellPlan, url: str) -> list[str]:
        warm = warmup_of(cell)
        concurrency = required_int(cell, "concurrency")
        if "duration_s" in warm:
            return siege_command(url, concurrency, duration_s=int(warm["duration_s"]))
        # At least one repetition per user.
        reps = max(1, -(-int(warm["requests"]) // concurrency))
        return siege_command(url, concurrency, requests=reps * concurrency)

    def bound_s(self, cell: CellPlan) -> int:
        return int(cell.duration_s or SIEGE_MAX_S) + TIMEOUT_SLACK_S

    def per_request(
        self,
        parsed: Parsed,
        threshold_ms: float | None,
        raw: str,
        tsv: str | None,
        per_request: str | None,
    ) -> list[str]:
        """Slow requests from the per-request lines: those whose printed time is above the threshold."""
        if not threshold_ms or parsed.latency_dist is None:
            return []
        over = sum(c for value_us, c in parsed.latency_dist.counts if value_us > threshold_ms * 1000)
        parsed.errors["over_threshold"] = over
        return [
            f"siege prints each request's time to 10 ms: over_threshold counts those printed above "
            f"{threshold_ms:g} ms"
        ]

    def parse(self, text: str) -> Parsed:
        return parse(text)

    def cores(self, command: list[Any]) -> int:
        # A thread per user.
        script = str(command[-1]) if command else ""
        users = re.search(r"\s-c (\d+)\s", script)
        return int(users.group(1)) if users else 1


TOOL = Siege()
