"""httperf output (httperf 0.9.0), the open-loop tool.

httperf opens connections at a fixed rate whatever the server's answers (``--rate``), so a slow server
meets the offered load instead of slowing the client down: the load model of a real user population, free
of coordinated omission. It prints no percentiles: per connection it gives min, avg, max, median (from a
histogram of 1 ms bins) and stddev of the connection's lifetime (connect to close), and the mean reply
time. With one call per connection (how bench-stack runs it) a connection's lifetime is the request's
latency including connect. Those statistics cover successful connections only; connections that failed
(refused, reset, timed out) are in ``Errors:``. The echoed command line (httperf prints it first) gives
the URL. The version is printed only by ``httperf --version``.

With ``-v -v`` (``--verbose --verbose``; bench-stack always asks for it) httperf also prints that histogram,
"Connection lifetime histogram (time in ms)", before its summary: one line per non-empty 1 ms bin, at the
bin's centre (bin i holds lifetimes from i to i+1 ms and prints as i+0.5), a ``:`` where bins are skipped
(src/stat/basic.c). It holds every connection with a completed call, so with one call per connection its
counts add up to the replies; when they do not, the output was cut: ParseError. That histogram becomes the
cell's latency distribution and gives p50 (equal to httperf's median) to p99.99
(:mod:`benchstack.records.distribution`).

Incomplete output is refused rather than parsed: the summary lines must all be there, and ``Errors: total``
must be the sum of the error kinds (a number cut short in the last line breaks it).
"""

from __future__ import annotations

import math
import re
from typing import Any, ClassVar
from urllib.parse import urlsplit

from benchstack.kinds.loadtools.base import (
    TIMEOUT_SLACK_S,
    LoadTool,
    check_url,
    positive_int,
    required_int,
    warmup_of,
)
from benchstack.records import distribution
from benchstack.records.cellplan import CellPlan, ConnectionLoad
from benchstack.records.distribution import Resolution
from benchstack.records.model import Counting, Parsed, ParseError, empty_errors, empty_latency

# Each failed connection is counted once and never completed; 4xx/5xx replies are completed status errors.
COUNTING = Counting(
    overlapping=False, with_latency=("status",), not_completed=("connect", "read", "timeout", "exceptions")
)
# The lifetime histogram's 1 ms bins, reported at their centres (so a 0.5 ms unit).
RESOLUTION = Resolution(
    source="httperf",
    unit_us=500,
    bits=12,
    corrected=False,
    every_request=False,
    label="httperf: open loop (connection lifetimes), 1 ms bins",
)

_COMMAND = re.compile(r"^httperf (.*--server=.*)$", re.M)
_OPTION = re.compile(r"--([a-z-]+)(?:=(\S+))?")
_TOTAL = re.compile(
    r"^Total: connections (\d+) requests (\d+) replies (\d+) test-duration ([\d.]+) s\s*$", re.M
)
_CONN_RATE = re.compile(r"^Connection rate: [\d.]+ conn/s \([^,]*, <=(\d+) concurrent connections\)", re.M)
_CONN_TIME = re.compile(
    r"^Connection time \[ms\]: min ([\d.]+) avg ([\d.]+) max ([\d.]+) median ([\d.]+) stddev ([\d.]+)\s*$",
    re.M,
)
_CONN_LENGTH = re.compile(r"^Connection length \[replies/conn\]: ([\d.]+)\s*$", re.M)
_REPLY_TIME = re.compile(r"^Reply time \[ms\]: response ([\d.]+) transfer ([\d.]+)\s*$", re.M)
_REPLY_SIZE = re.compile(r"^Reply size \[B\]: .*\(total ([\d.]+)\)\s*$", re.M)
_STATUS = re.compile(r"^Reply status: 1xx=(\d+) 2xx=(\d+) 3xx=(\d+) 4xx=(\d+) 5xx=(\d+)\s*$", re.M)
_ERRORS_1 = re.compile(
    r"^Errors: total (\d+) client-timo (\d+) socket-timo (\d+) connrefused (\d+) connreset (\d+)\s*$", re.M
)
_ERRORS_2 = re.compile(r"^Errors: fd-unavail (\d+) addrunavail (\d+) ftab-full (\d+) other (\d+)\s*$", re.M)
_FATAL = re.compile(r"^(httperf: (?!warning|maximum number of open descriptors).+)$", re.M)
_HISTOGRAM = re.compile(
    r"^Connection lifetime histogram \(time in ms\):\n((?:[ \t]*(?:[\d.]+ \d+|:)\n)*)", re.M
)
_BIN = re.compile(r"^\s*(\d+)\.5 (\d+)$")

_ESSENTIAL = {
    "total": _TOTAL,
    "status": _STATUS,
    "errors": _ERRORS_1,
    "errors2": _ERRORS_2,
}


def _url(text: str) -> str | None:
    m = _COMMAND.search(text)
    if not m:
        return None
    opts = {k: v for k, v in _OPTION.findall(m.group(1))}
    server, port, uri = opts.get("server"), opts.get("port", "80"), opts.get("uri", "/")
    if not server:
        return None
    host = f"[{server}]" if ":" in server else server
    return f"http://{host}:{port}{uri}"


def _calls(text: str) -> int:
    m = _COMMAND.search(text)
    calls = dict(_OPTION.findall(m.group(1))).get("num-calls") if m else None
    return int(calls) if calls and calls.isdigit() else 1


def parse(text: str) -> Parsed:
    """Parse the output of one httperf run (stdout and stderr together)."""
    total, status, err1, err2 = _required(text)
    connections, _requests, replies = (int(total.group(i)) for i in (1, 2, 3))
    duration = float(total.group(4))
    calls = _calls(text)
    dist = _histogram(text, replies, calls)
    notes: list[str] = []
    latency = _latency(text, replies, calls, dist, notes)
    peak = _CONN_RATE.search(text)
    size = _REPLY_SIZE.search(text)
    parsed = Parsed(
        tool="httperf",
        tool_version=None,
        url=_url(text),
        # Open loop: connections are not a setting; this is the most that were open at once.
        concurrency=max(1, int(peak.group(1))) if peak else 1,
        threads=None,
        keepalive=calls > 1,
        requests_completed=replies,
        duration_s=duration,
        rps=round(replies / duration, 2) if duration > 0 else 0.0,
        transfer_bytes=round(float(size.group(1)) * replies) if size else 0,
        counting=COUNTING,
        latency_ms=latency,
        errors=_errors(status, err1, err2),
        notes=notes,
        extra={"connections": connections, "calls_per_connection": calls},
    )
    if dist is not None and calls == 1:
        distribution.attach(parsed, dist)
    return parsed


def _required(text: str) -> tuple[re.Match[str], re.Match[str], re.Match[str], re.Match[str]]:
    """The summary's total, status and two error lines; ParseError naming those missing (or why httperf
    printed none), or when the errors' total is not the sum of their kinds."""
    found = {key: pattern.search(text) for key, pattern in _ESSENTIAL.items()}
    missing = [key for key, m in found.items() if m is None]
    if missing:
        fatal = [m.group(1) for m in _FATAL.finditer(text)]
        if fatal:
            raise ParseError("httperf printed no results: " + "; ".join(fatal))
        if all(m is None for m in found.values()):
            raise ParseError("not httperf output (no 'Total: connections' summary)")
        raise ParseError("httperf output lacks the " + ", ".join(missing) + " line(s)")
    total, status, err1, err2 = (found[k] for k in ("total", "status", "errors", "errors2"))
    assert total and status and err1 and err2
    kinds = [int(err1.group(i)) for i in (2, 3, 4, 5)] + [int(err2.group(i)) for i in (1, 2, 3, 4)]
    if int(err1.group(1)) != sum(kinds):
        raise ParseError(
            f"httperf output is incomplete: 'Errors: total {err1.group(1)}' is not the sum of its kinds "
            f"({sum(kinds)})"
        )
    return total, status, err1, err2


def _errors(status: re.Match[str], err1: re.Match[str], err2: re.Match[str]) -> dict[str, int | None]:
    """httperf's errors by kind: refused, reset, both timeouts, the client's own failures, 4xx and 5xx."""
    client_timo, socket_timo, refused, reset = (int(err1.group(i)) for i in (2, 3, 4, 5))
    fd_unavail, addr_unavail, ftab_full, other = (int(err2.group(i)) for i in (1, 2, 3, 4))
    codes = [int(status.group(i)) for i in range(1, 6)]
    errors = empty_errors()
    errors["connect"] = refused
    errors["read"] = reset
    errors["timeout"] = client_timo + socket_timo
    errors["exceptions"] = fd_unavail + addr_unavail + ftab_full + other
    errors["status"] = codes[3] + codes[4]
    return errors


def _latency(
    text: str, replies: int, calls: int, dist: distribution.Distribution | None, notes: list[str]
) -> dict[str, float | None]:
    """The connection lifetimes' figures (one call per connection), else the mean reply time only."""
    latency = empty_latency()
    conn = _CONN_TIME.search(text)
    if replies and conn and calls == 1:
        lo, avg, hi, median, stdev = (float(conn.group(i)) for i in range(1, 6))
        latency.update(mean=avg, min=lo, max=hi, p50=median, stdev=stdev)
        if dist is None:
            notes.append(
                "httperf latency is each connection's lifetime (connect to close, one request each), "
                "successful connections only; its median comes from 1 ms histogram bins; no p75/p90/p99 "
                "(httperf ran without -v -v, so it printed no histogram)"
            )
        else:
            notes.append(
                "httperf latency is each connection's lifetime (connect to close, one request each), "
                "successful connections only; percentiles from its histogram of 1 ms bins, at bin centres"
            )
    elif replies:
        reply = _REPLY_TIME.search(text)
        if reply:
            latency["mean"] = round(float(reply.group(1)) + float(reply.group(2)), 3)
        notes.append(f"httperf ran {calls} calls per connection: only the mean reply time is known")
    return latency


def _histogram(text: str, replies: int, calls: int) -> distribution.Distribution | None:
    """The connection lifetime histogram (``-v -v``) as a distribution, or None when not printed."""
    m = _HISTOGRAM.search(text)
    if m is None:
        return None
    counts: dict[int, int] = {}
    for line in m.group(1).splitlines():
        if line.strip() == ":":
            continue
        b = _BIN.match(line)
        if b is None:
            raise ParseError(f"unexpected line in httperf's lifetime histogram: {line!r}")
        # bin i prints as i + 0.5 ms: its centre, in µs
        counts[int(b.group(1)) * 1000 + 500] = int(b.group(2))
    lifetimes = sum(counts.values())
    if calls == 1 and lifetimes != replies:
        raise ParseError(
            f"httperf output is incomplete: its lifetime histogram holds {lifetimes} connections for "
            f"{replies} replies"
        )
    return distribution.from_counts(RESOLUTION, counts)


# httperf without --timeout waits forever for a silent server.
HTTPERF_DEFAULT_TIMEOUT_S = 5.0
# httperf uses select(): it holds at most FD_SETSIZE descriptors, whatever the open-files limit.
HTTPERF_MAX_FDS = 1024


def httperf_timeout_s(threshold_ms: float | None, timeout_s: float | None) -> float:
    """httperf's --timeout for a cell plan: the threshold (slower is an error), else the plan's, else 5 s."""
    if threshold_ms:
        return float(threshold_ms) / 1000
    if timeout_s is not None:
        return float(timeout_s)
    return HTTPERF_DEFAULT_TIMEOUT_S


def cell_timeout_s(cell: CellPlan) -> float:
    """httperf's --timeout for ``cell`` (:func:`httperf_timeout_s`)."""
    return httperf_timeout_s(cell.threshold_ms, cell.timeout_s)


def load_timeout_s(load: ConnectionLoad) -> float:
    """httperf's --timeout for a cell's :class:`ConnectionLoad` (:func:`httperf_timeout_s`)."""
    return httperf_timeout_s(load.threshold_ms, load.timeout_s)


def httperf_command(url: str, rate: int, duration_s: int, timeout_s: float | None = None) -> list[str]:
    """httperf offering ``rate`` new connections (one request each) per second for ``duration_s``.

    httperf takes server, port and URI separately, a rate of new connections and a connection count (rate
    x duration bounds the run), one request per connection; ``--timeout`` takes fractions of a second;
    ``--hog`` lets it use the whole ephemeral port range, which high rates need. It waits for answers
    forever unless given a timeout, so it always gets one. ``--verbose --verbose`` (``-v -v``) makes it
    print its connection lifetime histogram, the cell's latency distribution; the only other lines it adds
    are a reply rate every 5 s and the descriptor limit.
    """
    positive_int("rate", rate)
    positive_int("duration_s", duration_s)
    check_url("httperf", url)
    timeout = HTTPERF_DEFAULT_TIMEOUT_S if timeout_s is None else float(timeout_s)
    if not timeout > 0:
        raise ValueError(f"timeout_s must be above 0, not {timeout_s!r}")
    parts = urlsplit(url)
    uri = parts.path + (f"?{parts.query}" if parts.query else "")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    cmd = ["httperf", "--verbose", "--verbose", "--hog", "--server", str(parts.hostname), "--port", str(port)]
    cmd += ["--uri", uri]
    if parts.scheme == "https":
        cmd.append("--ssl")
    return [
        *cmd,
        "--rate", str(rate),
        "--num-conns", str(rate * duration_s),
        "--num-calls", "1",
        "--timeout", f"{timeout:g}",
    ]  # fmt: skip


class Httperf(LoadTool):
    """httperf: open loop, an offered rate of new connections (one request each) for a duration; its
    lifetime histogram is the distribution."""

    name = "httperf"
    order = 30
    open_loop = True
    spinning = True
    fd_limit = HTTPERF_MAX_FDS
    # `httperf --version` prints "httperf: httperf-0.9.0 compiled ..." then a test run against localhost.
    version_probe = "dpkg-query -W -f '${Version}' httperf 2>/dev/null || rpm -q --qf '%{VERSION}' httperf"
    # EPEL's httperf on RHEL; no httperf package on Amazon Linux 2023 (and no EPEL): the role refuses it.
    packages: ClassVar[dict[str, tuple[str, ...] | None]] = {
        "Debian": ("httperf",),
        "RedHat": ("httperf",),
        "Amazon": None,
    }
    counting = COUNTING
    resolution = RESOLUTION
    summary = "open loop (rate), bounded by duration_s"
    plan_docs: ClassVar[dict[str, str]] = {
        "concurrency": "not allowed",
        "rate": "required: an integer or a list (new connections per second), at most 20,000",
        "requests": "not allowed (rate x duration_s, at most 1,000,000)",
        "duration_s": "required (1-600)",
        "threads": "not allowed",
        "keepalive": "off (`true` is refused)",
        "timeout_s": "the threshold if set, else this, else 5 s",
    }

    def check_plan(self, where: str, written: dict[str, Any], problems: list[str]) -> bool:
        before = len(problems)
        for key, why in (
            ("concurrency", "open loop: the load is the offered rate, not a number of clients"),
            ("requests", "the run is bounded by duration_s (rate x duration_s connections)"),
            ("threads", "httperf is single-threaded"),
        ):
            if key in written:
                problems.append(f"{where}.{key}: not for httperf ({why})")
        if written.get("keepalive"):
            problems.append(f"{where}.keepalive: httperf runs one request per connection here")
        if "duration_s" not in written:
            problems.append(f"{where}.duration_s: httperf needs a duration in seconds")
        return len(problems) == before

    def command(self, cell: CellPlan, url: str, per_request: str | None = None) -> list[str]:
        rate, duration_s = required_int(cell, "rate"), required_int(cell, "duration_s")
        return httperf_command(url, rate, duration_s, cell_timeout_s(cell))

    def warmup_command(self, cell: CellPlan, url: str) -> list[str]:
        # At the offered rate, for the warm-up's duration or request count.
        return httperf_command(url, required_int(cell, "rate"), self.warmup_s(cell), cell_timeout_s(cell))

    def warmup_s(self, cell: CellPlan) -> int:
        warm = warmup_of(cell)
        if "duration_s" in warm:
            return int(warm["duration_s"])
        return max(1, math.ceil(int(warm["requests"]) / required_int(cell, "rate")))

    def bound_s(self, cell: CellPlan) -> int:
        return required_int(cell, "duration_s") + math.ceil(cell_timeout_s(cell)) + TIMEOUT_SLACK_S

    def open_connections(self, load: ConnectionLoad) -> int:
        # Every connection of one timeout's window still waiting.
        return math.ceil(int(load.rate or 0) * load_timeout_s(load))

    def fd_warning(self, load: ConnectionLoad, connections: int, room: int) -> str:
        return (
            f"httperf at {load.rate}/s with a {load_timeout_s(load):g} s timeout may hold "
            f"{connections} connections; it can hold about {room} (select's FD_SETSIZE) and counts the rest "
            "as fd-unavail errors"
        )

    def cell_notes(self, cell: CellPlan) -> list[str]:
        threshold = cell.threshold_ms
        if not threshold:
            return []
        return [
            f"httperf aborted responses slower than the threshold ({threshold:g} ms) and counted them as "
            "timeout errors (it keeps no per-request times, so over_threshold is not counted separately)"
        ]

    def parse(self, text: str) -> Parsed:
        return parse(text)

    def unmeasured_slow_note(self, cells: int) -> str:
        return (
            f"slow responses: {cells} httperf cells: httperf aborts a response slower than the threshold "
            "(its --timeout) and counts it as a failed request (timeout)"
        )


TOOL = Httperf()
