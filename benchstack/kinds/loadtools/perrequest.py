"""Per-request timing: requests slower than the experiment's threshold, and percentiles from every request.

ab: ``ab -g FILE`` writes one TSV line per completed request (gnuplot format:
``starttime<TAB>seconds<TAB>ctime<TAB>dtime<TAB>ttime<TAB>wait``, times in whole ms, ``ttime`` the total time
of the request). ab writes it at the end of the run, and opens the file with O_TRUNC: pointed at a
captured stderr that is a regular file it overwrites ab's own progress lines (it works on a pipe), so the
runner gives ab a temporary file on the loadgen and reads it back instead of using ``-g /dev/stderr``.
Every request ab stored a time for is in the file, including non-2xx and length failures.

wrk: ``benchstack/data/wrk_report.lua`` prints one ``BENCH-STACK-WRK-REPORT {json}`` line from its
``done()``. wrk 4 corrects its latency histogram for coordinated omission before ``done()`` sees it (it adds
synthetic samples: tests/data/wrk/report-slow.txt has 315 samples for 169 requests), so the script undoes
the correction exactly (it knows the interval wrk used from the request count, the duration and the
connection count, passed as BENCH_STACK_CONNECTIONS) and counts the recorded requests above the threshold.
The undo is checked: the recorded count must equal completed requests minus timeouts (it does in every
capture: 169 = 169; 223910 = 223910; 192 = 199 - 7 timeouts). If it does not, the count is estimated
instead as the slow share of the corrected histogram times the requests with a latency, with a note.
Responses slower than wrk's ``--timeout`` are not in the histogram; they are timeout errors.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchstack.records.model import ParseError

AB_GNUPLOT_HEADER = ("starttime", "seconds", "ctime", "dtime", "ttime", "wait")
WRK_REPORT_MARKER = "BENCH-STACK-WRK-REPORT "
_WRK_REPORT = re.compile(r"^" + re.escape(WRK_REPORT_MARKER) + r"(\{.*\})\s*$", re.M)
PERCENTILES = (50, 75, 90, 99)

# ab's -g file, in the measured script's own folder (its working folder).
REQUESTS_FILE = "requests.tsv"


def ab_requests(tsv: str) -> list[tuple[int, int]]:
    """(start second, total ms) of every request in an ``ab -g`` file, in file order.

    ab writes the start time in whole seconds of the loadgen's clock (``seconds``, the Unix time) and the
    times rounded to whole milliseconds. A file cut short (its last line incomplete) raises ParseError.
    """
    lines = tsv.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines or tuple(lines[0].rstrip("\r").split("\t")) != AB_GNUPLOT_HEADER:
        raise ParseError(
            "not an ab -g file (no 'starttime<TAB>seconds<TAB>ctime<TAB>dtime<TAB>ttime<TAB>wait')"
        )
    if not tsv.endswith("\n"):
        raise ParseError("ab -g file is cut short: its last line has no end")
    requests = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        try:
            if len(fields) != 6:
                raise ValueError
            requests.append((int(fields[1]), int(fields[4])))
        except ValueError:
            if not line.strip():
                continue
            raise ParseError(f"ab -g file line {number}: unexpected {line!r}") from None
    return requests


def ab_request_times(tsv: str) -> list[int]:
    """Total time (ms) of every request in an ``ab -g`` file, in file order."""
    return [ms for _, ms in ab_requests(tsv)]


def nearest_rank(sorted_values: Sequence[float], p: float) -> float:
    """The p-th percentile by the nearest-rank method: the smallest value with at least p % at or below it."""
    if not sorted_values:
        raise ValueError("no values")
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


@dataclass(frozen=True)
class RequestTimes:
    count: int
    over_threshold: int | None
    percentiles_ms: dict[str, float]  # p50 .. p99
    max_ms: float | None


def summarize_times(times_ms: Sequence[float], threshold_ms: float | None) -> RequestTimes:
    ordered = sorted(times_ms)
    over = None if threshold_ms is None else sum(1 for t in ordered if t > threshold_ms)
    pct = {f"p{p}": float(nearest_rank(ordered, p)) for p in PERCENTILES} if ordered else {}
    return RequestTimes(len(ordered), over, pct, float(ordered[-1]) if ordered else None)


def wrk_report(text: str) -> dict[str, Any] | None:
    """The JSON block wrk_report.lua printed, or None when there is none."""
    m = _WRK_REPORT.search(text)
    if not m:
        return None
    try:
        data = json.loads(m.group(1))
    except json.JSONDecodeError as exc:
        raise ParseError(f"unreadable {WRK_REPORT_MARKER.strip()} line: {exc}") from exc
    if not isinstance(data, dict) or data.get("schema") != "bench-stack/wrk-report/v1":
        raise ParseError(f"{WRK_REPORT_MARKER.strip()} line is not bench-stack/wrk-report/v1")
    return data


def wrk_over_threshold(
    report: dict[str, Any], requests_completed: int, timeouts: int
) -> tuple[int | None, str | None]:
    """(slow requests, a note when it is an estimate); (None, None) without a threshold (see module doc)."""
    with_latency = max(0, requests_completed - timeouts)
    if report.get("histogram_read") == "none":
        return None, (
            "wrk over_threshold not measured: the report script could not read wrk's histogram "
            "(unknown stats layout, and walking it through latency(i) would have taken too long)"
        )
    over, recorded = report.get("over_threshold"), report.get("recorded")
    if isinstance(over, int) and recorded == with_latency:
        return over, None
    corrected, samples = report.get("over_threshold_corrected"), report.get("samples")
    if not isinstance(corrected, int) or not isinstance(samples, int):
        return None, None
    estimate = 0 if samples <= 0 else min(with_latency, round(with_latency * corrected / samples))
    return estimate, (
        f"wrk over_threshold is an estimate: undoing wrk's coordinated-omission correction gave "
        f"{recorded} requests for {with_latency} with a latency, so it is the slow share of the corrected "
        f"histogram ({corrected} of {samples} samples)"
    )
