"""ApacheBench (ab) output.

Fields, as ab 2.3 prints them (httpd support/ab.c, output_results):

* ``latency_ms`` mean, stdev, min and max come from the ``Total:`` row of "Connection Times" (ab -S prints
  min, avg and max only): the mean of every request's own time, rounded to whole ms like the rest of the row.
  Not from ``Time per request: X [ms] (mean)``: that is concurrency * time taken / requests, which is above
  the per-request mean whenever not every client had a request in flight all the time (ramp-up, the tail,
  ab's own overhead: 147.65 vs 114.58 ms in a saturated cell), so it is kept in ``extra`` only. p50/p75/p90/
  p99 come from "Percentage of the requests served within a certain time" (whole ms too). With ab's -g file
  the runner takes mean, stdev and percentiles from every request instead
  (:func:`benchstack.records.distribution.attach`): the same mean, unrounded.
* ``Failed requests: N`` with ``(Connect: a, Receive: b, Length: c, Exceptions: d)`` gives connect, read,
  length and exceptions (older ab prints no Receive); ``Write errors`` gives write; ``Non-2xx responses``
  gives status. ab has no timeout counter: an ``-s`` timeout aborts the run. See
  :mod:`benchstack.records.model` for how overlapping counters become ``error_count``.
* ab writes progress ("Completed 100 requests") and fatal errors ("apr_socket_recv: Connection refused
  (111)") to stderr, which may be interleaved with stdout in a capture; both are tolerated. A fatal error
  means no summary, and that is a :class:`ParseError` carrying ab's message.
* Output cut short (a lost connection, a full disk) is refused, not parsed: after any completed request ab
  prints its "Connection Times" table, and after two or more the whole percentile table, 50 % to
  "100% ... (longest request)" (ab.c prints it when ``done > 1``); a missing table, a missing row or
  percentiles that go down is a :class:`ParseError`. (Cut inside the ``99%`` row, ab's output would
  otherwise read as a p99 of a few ms below its p50.)
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from benchstack.kinds.loadtools.base import (
    TIMEOUT_SLACK_S,
    ClosedRun,
    LoadTool,
    positive_int,
    required_int,
    warmup_of,
)
from benchstack.kinds.loadtools.perrequest import REQUESTS_FILE, ab_requests
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

# One bad request is counted under several counters at once; every request that reached the end of a
# response has a time in -g, failed or not (failed connects have none).
COUNTING = Counting(
    overlapping=True,
    with_latency=("read", "write", "length", "exceptions", "status"),
    not_completed=("connect",),
)
# -g: every request's own time in whole ms.
RESOLUTION = Resolution(
    source="ab",
    unit_us=1000,
    bits=11,
    corrected=False,
    every_request=True,
    label="ab: every request, closed loop, 1 ms",
)

_VERSION = re.compile(r"^This is ApacheBench, Version (\S+)", re.M)
_FATAL = (
    re.compile(r"(apr_\w+(?:\(\))?: .*?\(\d+\))"),
    re.compile(r"(Test aborted after \d+ failures)"),
    re.compile(r"(Server timed out)"),
    re.compile(r"(Total of \d+ requests completed)"),
    re.compile(r"^(ab: .+)$", re.M),
    re.compile(r"^(Usage: ab .*)$", re.M),
    re.compile(r"^(Send request failed!?)$", re.M),
)
_ESSENTIAL = {
    "concurrency": re.compile(r"^Concurrency Level:\s+(\d+)\s*$", re.M),
    "duration": re.compile(r"^Time taken for tests:\s+([\d.]+) seconds\s*$", re.M),
    "complete": re.compile(r"^Complete requests:\s+(\d+)\s*$", re.M),
    "failed": re.compile(r"^Failed requests:\s+(\d+)\s*$", re.M),
    "transferred": re.compile(r"^Total transferred:\s+(\d+) bytes\s*$", re.M),
}
_LABELS = {
    "concurrency": "Concurrency Level",
    "duration": "Time taken for tests",
    "complete": "Complete requests",
    "failed": "Failed requests",
    "transferred": "Total transferred",
}
_BREAKDOWN = re.compile(r"^Failed requests:\s+\d+\s*\n\s*\(([^)]*)\)", re.M)
_BREAKDOWN_KEYS = {"connect": "connect", "receive": "read", "length": "length", "exceptions": "exceptions"}
_WRITE = re.compile(r"^(?:Write errors|Broken pipe errors):\s+(\d+)\s*$", re.M)
_NON2XX = re.compile(r"^Non-2xx responses:\s+(\d+)\s*$", re.M)
_KEEPALIVE = re.compile(r"^Keep-Alive requests:\s+(\d+)\s*$", re.M)
_HTML = re.compile(r"^HTML transferred:\s+(\d+) bytes\s*$", re.M)
_RPS = re.compile(r"^Requests per second:\s+([\d.]+) \[#/sec\] \(mean\)\s*$", re.M)
_TPR = re.compile(r"^Time per request:\s+([\d.]+) \[ms\] \(mean\)\s*$", re.M)
_TPR_ALL = re.compile(r"^Time per request:\s+([\d.]+) \[ms\] \(mean, across all concurrent requests\)", re.M)
_RATE = re.compile(r"^Transfer rate:\s+([\d.]+) \[Kbytes/sec\] received", re.M)
_TOTAL_ROW = re.compile(r"^Total:\s+([-\d.\s]+?)\s*$", re.M)
_PERCENT = re.compile(r"^\s*(\d+)%\s+(\d+)(?: \(longest request\))?\s*$", re.M)
_CONNECTION_TIMES = re.compile(r"^Connection Times \(ms\)\s*$", re.M)
_PERCENT_HEADER = re.compile(r"^Percentage of the requests served within a certain time \(ms\)\s*\n", re.M)
_PERCENT_ROWS = (50, 66, 75, 80, 90, 95, 98, 99, 100)
_HOST = re.compile(r"^Server Hostname:\s+(\S+)\s*$", re.M)
_PORT = re.compile(r"^Server Port:\s+(\d+)\s*$", re.M)
_PATH = re.compile(r"^Document Path:\s+(\S+)\s*$", re.M)
_DOCLEN = re.compile(r"^Document Length:\s+(\d+ bytes|Variable)\s*$", re.M)
_TLS = re.compile(r"^SSL/TLS Protocol:", re.M)


def _int(pattern: re.Pattern[str], text: str) -> int | None:
    m = pattern.search(text)
    return int(m.group(1)) if m else None


def _float(pattern: re.Pattern[str], text: str) -> float | None:
    m = pattern.search(text)
    return float(m.group(1)) if m else None


def _check_complete(text: str, completed: int, has_total: bool) -> None:
    """ParseError when the output stops before the tables ab prints after its requests (module doc)."""
    if completed > 0 and not (_CONNECTION_TIMES.search(text) and has_total):
        raise ParseError(
            f"ab output is cut short: {completed} complete requests but no 'Connection Times' table "
            "with its 'Total:' row"
        )
    if completed < 2:
        return
    header = _PERCENT_HEADER.search(text)
    if header is None:
        raise ParseError(f"ab output is cut short: {completed} complete requests but no percentile table")
    lines = text[header.end() :].split("\n")
    values = []
    for i, p in enumerate(_PERCENT_ROWS):
        tail = r" \(longest request\)" if p == 100 else ""
        line = lines[i] if i < len(lines) else ""
        m = re.fullmatch(rf"\s*{p}%\s+(\d+){tail}\s*", line)
        if m is None:
            raise ParseError(f"ab output is cut short inside its percentile table, at the {p}% row: {line!r}")
        values.append(int(m.group(1)))
    if values != sorted(values):
        raise ParseError(f"ab's percentile table goes down ({values}): the output is not ab's complete table")


def parse(text: str) -> Parsed:
    """Parse the output of one ab run (stdout, optionally with stderr interleaved)."""
    values = _essentials(text)
    notes: list[str] = []
    version = _VERSION.search(text)
    completed = int(values["complete"])
    failed = int(values["failed"])
    errors = _errors(text, failed)
    rps = _float(_RPS, text)
    if rps is None:
        if completed:
            raise ParseError("ab output lacks 'Requests per second'")
        rps = 0.0
        notes.append("ab completed no requests and printed no rates")
    latency, total = _latency(text)
    _check_complete(text, completed, total is not None)
    percentiles = {int(p): float(ms) for p, ms in _PERCENT.findall(text)}
    for p in (50, 75, 90, 99):
        latency[f"p{p}"] = percentiles.get(p)
    keepalive_requests = _int(_KEEPALIVE, text)
    transferred = int(values["transferred"])
    notes += _counting_notes(text, errors, completed, transferred)
    extra: dict[str, float | int | str | None] = {
        "html_transferred_bytes": _int(_HTML, text),
        "time_per_request_ms": _float(_TPR, text),
        "time_per_request_all_ms": _float(_TPR_ALL, text),
        "transfer_rate_kbytes_s": _float(_RATE, text),
        "failed_requests": failed,
    }
    if total and len(total.group(1).split()) == 5:
        extra["total_median_ms"] = float(total.group(1).split()[3])
    if 100 in percentiles:
        extra["p100_ms"] = percentiles[100]
    return Parsed(
        tool="ab",
        tool_version=version.group(1) if version else None,
        url=_url(text),
        concurrency=int(values["concurrency"]),
        threads=None,
        keepalive=keepalive_requests is not None,
        requests_completed=completed,
        duration_s=float(values["duration"]),
        rps=rps,
        transfer_bytes=transferred,
        counting=COUNTING,
        latency_ms=latency,
        errors=errors,
        keepalive_requests=keepalive_requests,
        notes=notes,
        extra=extra,
    )


def _essentials(text: str) -> dict[str, str]:
    """The summary lines every ab run prints; ParseError naming what is missing, or why ab printed none."""
    values: dict[str, str] = {}
    for key, pattern in _ESSENTIAL.items():
        m = pattern.search(text)
        if m:
            values[key] = m.group(1)
    missing = [key for key in _ESSENTIAL if key not in values]
    if missing:
        fatal = fatal_messages(_FATAL, text)
        if fatal:
            raise ParseError("ab printed no results: " + "; ".join(fatal))
        if not values and not _VERSION.search(text):
            raise ParseError("not ApacheBench output (no 'This is ApacheBench' banner and no summary)")
        raise ParseError("ab output lacks " + ", ".join(repr(_LABELS[k]) for k in missing))
    return values


def _errors(text: str, failed: int) -> dict[str, int | None]:
    """ab's errors by kind: its failed requests' breakdown, write errors and non-2xx responses."""
    errors = empty_errors()
    if failed:
        m = _BREAKDOWN.search(text)
        if not m:
            raise ParseError(f"ab reports {failed} failed requests but no '(Connect: ..., Length: ...)' line")
        for item in m.group(1).split(","):
            name, _, count = item.partition(":")
            kind = _BREAKDOWN_KEYS.get(name.strip().lower())
            if kind is None or not count.strip().isdigit():
                raise ParseError(f"unknown item in ab's failed requests breakdown: {item.strip()!r}")
            errors[kind] = int(count)
    errors["write"] = _int(_WRITE, text) or 0
    errors["status"] = _int(_NON2XX, text) or 0
    return errors


def _latency(text: str) -> tuple[dict[str, float | None], re.Match[str] | None]:
    """The latency figures of the Connection Times' ``Total:`` row, and the row."""
    latency = empty_latency()
    total = _TOTAL_ROW.search(text)
    if total:
        numbers = [float(x) for x in total.group(1).split()]
        if len(numbers) == 5:  # min mean[+/-sd] median max
            latency["min"], latency["mean"], latency["stdev"], latency["max"] = (
                numbers[i] for i in (0, 1, 2, 4)
            )
        elif len(numbers) == 3:  # ab -S: min avg max
            latency["min"], latency["mean"], latency["max"] = numbers
        else:
            raise ParseError(f"unexpected 'Total:' row in ab's Connection Times: {total.group(0)!r}")
    return latency, total


def _counting_notes(text: str, errors: dict[str, int | None], completed: int, transferred: int) -> list[str]:
    """What the cell says about how ab counted its errors."""
    notes = []
    if errors["status"] and errors["length"]:
        notes.append(
            "ab counts a non-2xx response whose body length differs from the first response under both "
            "Non-2xx and Length; error_count takes the larger counter"
        )
    if errors["read"] and errors["length"]:
        notes.append("ab counts a request with a receive error also under Length (and often Exceptions)")
    if completed and transferred == 0:
        notes.append(
            f"ab counted {completed} complete requests but received 0 bytes: the server closed connections "
            "without a response, which ab does not count as failures"
        )
    doclen = _DOCLEN.search(text)
    if doclen and doclen.group(1) == "Variable":
        notes.append("response length checking was off (ab -l): Length failures are not counted")
    return notes


def _url(text: str) -> str | None:
    """The URL ab loaded, from its server lines."""
    host, port, path = _HOST.search(text), _PORT.search(text), _PATH.search(text)
    if not (host and port and path):
        return None
    scheme = "https" if _TLS.search(text) else "http"
    return f"{scheme}://{host.group(1)}:{port.group(1)}{path.group(1)}"


# ab requires at most this many concurrent connections.
AB_MAX_CONCURRENCY = 20000
# ab's bound is a request count; give it this long at most.
AB_MAX_S = 600


def ab_command(run: ClosedRun) -> list[str]:
    """ab's argv (arguments checked by :func:`benchstack.kinds.loadtools.loadcmd.build_command` first). ab's
    ``-t`` sets the request count to 50000 when it is parsed, so ``-n`` must come *after* ``-t`` or the
    configured count is silently dropped (checked with ab 2.3: ``ab -n 300 -t 1`` ran 20284 requests). ab
    requires ``-n >= -c`` and at most 20000 concurrent connections, and a URL with a path. ``per_request``:
    the ``-g`` (gnuplot) file."""
    requests, concurrency = run.requests, run.concurrency
    if requests is None:
        raise ValueError("ab needs requests (-n)")
    positive_int("requests", requests)
    if requests < concurrency:
        raise ValueError(f"ab needs requests >= concurrency (-n {requests} < -c {concurrency})")
    if concurrency > AB_MAX_CONCURRENCY:
        raise ValueError(f"ab allows at most {AB_MAX_CONCURRENCY} concurrent requests, not {concurrency}")
    if run.threads is not None:
        raise ValueError("ab is single-threaded; threads applies to wrk only")
    cmd = ["ab"]
    if run.duration_s is not None:
        cmd += ["-t", str(run.duration_s)]  # before -n: -t resets the request count
    cmd += ["-n", str(requests), "-c", str(concurrency)]
    if run.keepalive:
        cmd.append("-k")
    if run.timeout_s is not None:
        cmd += ["-s", str(run.timeout_s)]
    if run.per_request is not None:
        cmd += ["-g", run.per_request]
    return [*cmd, run.url]


class Ab(LoadTool):
    """ApacheBench: closed loop, a request count, keep-alive optional, one thread; ``-g`` gives every
    request's time and start second."""

    name = "ab"
    order = 10
    bound = "requests"
    keepalive_choice = True
    packages: ClassVar[dict[str, tuple[str, ...] | None]] = {
        "Debian": ("apache2-utils",),
        "RedHat": ("httpd-tools",),
        "Amazon": ("httpd-tools",),
    }
    counting = COUNTING
    resolution = RESOLUTION
    summary = "closed loop (concurrency), bounded by requests"
    plan_docs: ClassVar[dict[str, str]] = {
        "concurrency": "required: an integer or a list (clients), at most 20,000",
        "rate": "not allowed",
        "requests": "required, 1-1,000,000, at least the concurrency",
        "duration_s": "optional (1-600): `-t`, a time limit",
        "threads": "not allowed",
        "keepalive": "`false`; `true` adds `-k`",
        "timeout_s": "unset; `-s`",
    }

    def check_plan(self, where: str, written: dict[str, Any], problems: list[str]) -> bool:
        ok = True
        if "requests" not in written:
            problems.append(f"{where}.requests: ab needs a number of requests")
            ok = False
        if "threads" in written:
            problems.append(f"{where}.threads: ab is single-threaded; threads applies to wrk only")
            ok = False
        return ok

    def argv(self, run: ClosedRun) -> list[str]:
        return ab_command(run)

    def command(self, cell: CellPlan, url: str, per_request: str | None = None) -> list[str]:
        return self.closed_command(cell, url, cell.timeout_s, per_request)

    def warmup_command(self, cell: CellPlan, url: str) -> list[str]:
        concurrency = required_int(cell, "concurrency")
        requests = max(int(warmup_of(cell)["requests"]), concurrency)
        return ab_command(ClosedRun(url, concurrency, requests=requests, keepalive=cell.keepalive))

    def bound_s(self, cell: CellPlan) -> int:
        return int(cell.duration_s or AB_MAX_S) + TIMEOUT_SLACK_S

    def warmup_s(self, cell: CellPlan) -> int | None:
        return None  # a request count: bounded like any ab run

    def duration_bound(self, cell: CellPlan) -> bool:
        return False  # -t only caps a run that is bounded by its request count

    def setup_result(self, rc: int, out: str, err: str) -> tuple[str | None, list[str]]:
        # -g in the command's folder; the measured script prints it after ab's report
        # (benchstack.measure.remote).
        return REQUESTS_FILE, []

    def per_request(
        self,
        parsed: Parsed,
        threshold_ms: float | None,
        raw: str,
        tsv: str | None,
        per_request: str | None,
    ) -> list[str]:
        """ab's distribution (and, with a threshold, its slow requests) from its -g file; a file that is
        missing, unreadable or holds another number of requests than ab completed is not used (a note
        says why)."""
        if per_request is None:
            return []
        unmeasured = " (over_threshold not measured)" if threshold_ms else ""
        if not tsv:
            return [f"no per-request data: ab wrote no -g file{unmeasured}"]
        try:
            requests = ab_requests(tsv)
        except ParseError as exc:
            return [f"unreadable ab -g data, not used: {exc}{unmeasured}"]
        if len(requests) != parsed.requests_completed:
            return [
                f"ab -g holds {len(requests)} request times for {parsed.requests_completed} complete "
                f"requests: not used{unmeasured}"
            ]
        times = [ms for _, ms in requests]
        if threshold_ms:
            parsed.errors["over_threshold"] = sum(1 for t in times if t > threshold_ms)
        distribution.attach(
            parsed, distribution.from_values(RESOLUTION, (t * 1000 for t in times)), RESOLUTION.every_request
        )
        return []

    probe_rank = 1
    probe_rps = re.compile(r"^Requests per second:\s+([\d.]+)", re.MULTILINE)
    probe_done = re.compile(r"^Complete requests:\s+(\d+)", re.MULTILINE)

    def probe_command(self, url: str, seconds: int, connections: int) -> str | None:
        # At most ``seconds`` (-t), with a request count it cannot reach first.
        return f"ab -q -t {seconds} -n 10000000 -c {connections} {url}"

    def parse(self, text: str) -> Parsed:
        return parse(text)

    def no_steady_data_note(self, cells: int) -> str:
        return (
            f"steady state: {cells} ab cells ran without -g (the runner asks for it with load.threshold_ms)"
        )


TOOL = Ab()
