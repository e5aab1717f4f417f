"""ApacheBench (ab) output.

Fields, as ab 2.3 prints them (httpd support/ab.c, output_results):

* ``Time per request: X [ms] (mean)`` (the first of the two lines, = concurrency * time / done: the latency a
  client saw) is ``latency_ms.mean``; min, stdev and max come from the ``Total:`` row of "Connection Times";
  p50/p75/p90/p99 from "Percentage of the requests served within a certain time". ab prints whole
  milliseconds there.
* ``Failed requests: N`` with ``(Connect: a, Receive: b, Length: c, Exceptions: d)`` gives connect, read,
  length and exceptions (older ab prints no Receive); ``Write errors`` gives write; ``Non-2xx responses``
  gives status. ab has no timeout counter: an ``-s`` timeout aborts the run. See :mod:`benchstack.model`
  for how overlapping counters become ``error_count``.
* ab writes progress ("Completed 100 requests") and fatal errors ("apr_socket_recv: Connection refused
  (111)") to stderr, which may be interleaved with stdout in a capture; both are tolerated. A fatal error
  means no summary, and that is a :class:`ParseError` carrying ab's message.
"""

from __future__ import annotations

import re

from benchstack.model import Parsed, ParseError, empty_errors, empty_latency

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
_HOST = re.compile(r"^Server Hostname:\s+(\S+)\s*$", re.M)
_PORT = re.compile(r"^Server Port:\s+(\d+)\s*$", re.M)
_PATH = re.compile(r"^Document Path:\s+(\S+)\s*$", re.M)
_DOCLEN = re.compile(r"^Document Length:\s+(\d+ bytes|Variable)\s*$", re.M)
_TLS = re.compile(r"^SSL/TLS Protocol:", re.M)


def _fatal_messages(text: str) -> list[str]:
    found: list[str] = []
    for pattern in _FATAL:
        found += [m.group(1).strip() for m in pattern.finditer(text)]
    return found


def _int(pattern: re.Pattern[str], text: str) -> int | None:
    m = pattern.search(text)
    return int(m.group(1)) if m else None


def _float(pattern: re.Pattern[str], text: str) -> float | None:
    m = pattern.search(text)
    return float(m.group(1)) if m else None


def parse(text: str) -> Parsed:
    """Parse the output of one ab run (stdout, optionally with stderr interleaved)."""
    values: dict[str, str] = {}
    for key, pattern in _ESSENTIAL.items():
        m = pattern.search(text)
        if m:
            values[key] = m.group(1)
    missing = [key for key in _ESSENTIAL if key not in values]
    if missing:
        fatal = _fatal_messages(text)
        if fatal:
            raise ParseError("ab printed no results: " + "; ".join(fatal))
        if not values and not _VERSION.search(text):
            raise ParseError("not ApacheBench output (no 'This is ApacheBench' banner and no summary)")
        raise ParseError("ab output lacks " + ", ".join(repr(_LABELS[k]) for k in missing))

    notes: list[str] = []
    version = _VERSION.search(text)
    concurrency = int(values["concurrency"])
    completed = int(values["complete"])
    failed = int(values["failed"])

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

    rps = _float(_RPS, text)
    if rps is None:
        if completed:
            raise ParseError("ab output lacks 'Requests per second'")
        rps = 0.0
        notes.append("ab completed no requests and printed no rates")

    latency = empty_latency()
    latency["mean"] = _float(_TPR, text)
    total = _TOTAL_ROW.search(text)
    if total:
        numbers = [float(x) for x in total.group(1).split()]
        if len(numbers) == 5:  # min mean[+/-sd] median max
            latency["min"], latency["stdev"], latency["max"] = numbers[0], numbers[2], numbers[4]
        elif len(numbers) == 3:  # ab -S: min avg max
            latency["min"], latency["max"] = numbers[0], numbers[2]
        else:
            raise ParseError(f"unexpected 'Total:' row in ab's Connection Times: {total.group(0)!r}")
    percentiles = {int(p): float(ms) for p, ms in _PERCENT.findall(text)}
    for p in (50, 75, 90, 99):
        latency[f"p{p}"] = percentiles.get(p)

    keepalive_requests = _int(_KEEPALIVE, text)
    transferred = int(values["transferred"])

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

    url = None
    host, port, path = _HOST.search(text), _PORT.search(text), _PATH.search(text)
    if host and port and path:
        scheme = "https" if _TLS.search(text) else "http"
        url = f"{scheme}://{host.group(1)}:{port.group(1)}{path.group(1)}"

    extra: dict[str, float | int | str | None] = {
        "html_transferred_bytes": _int(_HTML, text),
        "time_per_request_all_ms": _float(_TPR_ALL, text),
        "transfer_rate_kbytes_s": _float(_RATE, text),
        "failed_requests": failed,
    }
    if total and len(total.group(1).split()) == 5:
        extra["total_mean_ms"] = float(total.group(1).split()[1])
        extra["total_median_ms"] = float(total.group(1).split()[3])
    if 100 in percentiles:
        extra["p100_ms"] = percentiles[100]

    return Parsed(
        tool="ab",
        tool_version=version.group(1) if version else None,
        url=url,
        concurrency=concurrency,
        threads=None,
        keepalive=keepalive_requests is not None,
        requests_completed=completed,
        duration_s=float(values["duration"]),
        rps=rps,
        transfer_bytes=transferred,
        latency_ms=latency,
        errors=errors,
        keepalive_requests=keepalive_requests,
        notes=notes,
        extra=extra,
    )
