"""wrk output (wrk 4.x).

wrk formats numbers with units (src/units.c): times with ``format_time_us`` (us, ms; from 1 s on: s, m,
h), counts with ``format_metric`` (base 1000: k, M, G, T, P) and sizes with ``format_binary`` (base 1024: K,
M, G, T, P, followed by "B"). Latency percentiles appear only with ``--latency``. wrk does not print its
version. Its latency statistics are corrected for coordinated omission (``stats_correct``) and exclude
responses slower than ``--timeout``, which count as timeout errors instead.

With bench-stack's report script (``-s wrk_report.lua``) the output ends in a ``BENCH-STACK-WRK-REPORT``
line holding wrk's whole (corrected) histogram: it becomes the cell's latency distribution and every
percentile is taken from it (:mod:`benchstack.records.distribution`). A report line that is cut short or whose
histogram does not add up to its sample count is incomplete output: ParseError.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar

from benchstack.kinds.loadtools.base import (
    TIMEOUT_SLACK_S,
    ClosedRun,
    LoadTool,
    positive_int,
    required_int,
    warmup_of,
)
from benchstack.kinds.loadtools.perrequest import WRK_REPORT_MARKER, wrk_over_threshold, wrk_report
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

if TYPE_CHECKING:
    from benchstack.plan.loadplan import LoadPlan

# Connect/read/write errors never completed (not in "N requests"); timeouts and non-2xx/3xx are completed
# requests, and only non-2xx/3xx have a latency (timeouts are left out of wrk's histogram).
COUNTING = Counting(overlapping=False, with_latency=("status",), not_completed=("connect", "read", "write"))
# wrk's own histogram (its report script buckets it with the same 9 bits: benchstack/data/wrk_report.lua).
RESOLUTION = Resolution(
    source="wrk",
    unit_us=1,
    bits=9,
    corrected=True,
    every_request=False,
    label="wrk: corrected for coordinated omission by wrk itself, 1 µs (within 0.4 %)",
)

TIME_UNITS_MS: dict[str, float] = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}
METRIC_UNITS: dict[str, float] = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
BINARY_UNITS: dict[str, int] = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}

_NUMBER = r"(-?(?:\d+(?:\.\d*)?|nan|inf))"
_TIME = re.compile(_NUMBER + r"(us|ms|s|m|h)$")
_METRIC = re.compile(_NUMBER + r"([kMGTP]?)$")
_BINARY = re.compile(_NUMBER + r"([KMGTP]?)B$")

_RUNNING = re.compile(r"^Running (\S+) test @ (\S+)\s*$", re.M)
_THREADS = re.compile(r"^\s*(\d+) threads and (\d+) connections\s*$", re.M)
_LATENCY_ROW = re.compile(r"^\s*Latency\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)%\s*$", re.M)
_REQSEC_ROW = re.compile(r"^\s*Req/Sec\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)%\s*$", re.M)
_DISTRIBUTION = re.compile(r"^\s*Latency Distribution\s*\n((?:\s*\d+%\s+\S+\s*\n?)+)", re.M)
_PERCENT = re.compile(r"^\s*(\d+)%\s+(\S+)\s*$", re.M)
_SUMMARY = re.compile(r"^\s*(\d+) requests in (\S+), (\S+) read\s*$", re.M)
_SOCKET = re.compile(
    r"^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)\s*$",
    re.M,
)
_STATUS = re.compile(r"^\s*Non-2xx or 3xx responses: (\d+)\s*$", re.M)
_RPS = re.compile(r"^Requests/sec:\s+([\d.]+)\s*$", re.M)
_TRANSFER = re.compile(r"^Transfer/sec:\s+(\S+)\s*$", re.M)
_FATAL = (
    re.compile(r"^(unable to .+)$", re.M),
    re.compile(r"^(number of connections must be >= threads)$", re.M),
    re.compile(r"^(PANIC: .+)$", re.M),
    re.compile(r"^(Usage: wrk .*?)\s*$", re.M),
    re.compile(r"^(invalid URL: .+)$", re.M),
)


def _number(text: str, pattern: re.Pattern[str], what: str) -> tuple[float, str]:
    m = pattern.match(text.strip())
    if not m:
        raise ParseError(f"cannot read {what} {text!r} as wrk prints it")
    return float(m.group(1)), m.group(2)


def time_ms(text: str) -> float:
    """A wrk time ("160.00us", "2.33ms", "1.00s", "1.50m", "2.00h") in milliseconds."""
    value, unit = _number(text, _TIME, "time")
    return round(value * TIME_UNITS_MS[unit], 6)


def metric(text: str) -> float:
    """A wrk count ("63.59k", "1.20M", "11.00") as a number (base 1000)."""
    value, unit = _number(text, _METRIC, "count")
    return round(value * METRIC_UNITS[unit], 6)


def binary_bytes(text: str) -> int:
    """A wrk size ("58.13MB", "2.09KB", "712.69B") in bytes (base 1024), rounded to a whole byte."""
    value, unit = _number(text, _BINARY, "size")
    return round(value * BINARY_UNITS[unit])


def parse(text: str) -> Parsed:
    """Parse the output of one wrk run."""
    running, threads_m, latency_row, summary, rps_m, transfer = _required(text)
    notes: list[str] = []
    completed = int(summary.group(1))
    # "-nan%" in the +/- Stdev column means wrk recorded no latency sample: either nothing completed or
    # every response was slower than --timeout (then counted as a timeout, not a latency).
    sampled = completed > 0 and "nan" not in latency_row.group(4)
    latency = _latency(text, latency_row, sampled, notes)
    errors = _errors(text, notes)
    extra: dict[str, float | int | str | None] = {"configured_duration": running.group(1)}
    reqsec = _REQSEC_ROW.search(text)
    if reqsec and sampled:
        extra["thread_req_per_s_avg"] = metric(reqsec.group(1))
        extra["thread_req_per_s_stdev"] = metric(reqsec.group(2))
        extra["thread_req_per_s_max"] = metric(reqsec.group(3))
    extra["transfer_per_s_bytes"] = binary_bytes(transfer.group(1))
    within = latency_row.group(4)
    extra["latency_within_stdev_pct"] = None if "nan" in within else float(within)
    duration_s = time_ms(summary.group(2)) / 1000.0
    if not math.isfinite(duration_s):
        raise ParseError(f"wrk reported a duration of {summary.group(2)!r}")
    parsed = Parsed(
        tool="wrk",
        tool_version=None,
        url=running.group(2),
        concurrency=int(threads_m.group(2)),
        threads=int(threads_m.group(1)),
        keepalive=True,
        requests_completed=completed,
        duration_s=round(duration_s, 6),
        rps=float(rps_m.group(1)),
        transfer_bytes=binary_bytes(summary.group(3)),
        counting=COUNTING,
        latency_ms=latency,
        errors=errors,
        keepalive_requests=None,
        notes=notes,
        extra=extra,
    )
    _attach_histogram(parsed, text)
    return parsed


def _required(text: str) -> tuple[re.Match[str], ...]:
    """The lines every complete wrk run prints, in the order :func:`parse` takes them; ParseError naming
    those missing, or why wrk printed none."""
    found = {
        "Running ... test @ URL": _RUNNING.search(text),
        "N threads and M connections": _THREADS.search(text),
        "Latency row of Thread Stats": _LATENCY_ROW.search(text),
        "N requests in T, S read": _SUMMARY.search(text),
        "Requests/sec": _RPS.search(text),
        # wrk's last line: without it the output may be cut inside the Requests/sec figure
        "Transfer/sec": _TRANSFER.search(text),
    }
    missing = [label for label, m in found.items() if m is None]
    if missing:
        fatal = fatal_messages(_FATAL, text)
        if fatal:
            raise ParseError("wrk printed no results: " + "; ".join(fatal))
        if len(missing) == len(found):
            raise ParseError("not wrk output (no 'Running ... test @' line and no summary)")
        raise ParseError("wrk output lacks " + ", ".join(repr(label) for label in missing))
    return tuple(m for m in found.values() if m is not None)


def _latency(
    text: str, latency_row: re.Match[str], sampled: bool, notes: list[str]
) -> dict[str, float | None]:
    """The latency figures of the Thread Stats row and the distribution's percentiles, when sampled."""
    latency = empty_latency()
    if not sampled:
        notes.append("wrk recorded no latency sample: its latency figures are placeholders and are left out")
        return latency
    avg, stdev, maximum = (time_ms(latency_row.group(i)) for i in (1, 2, 3))
    latency.update(mean=avg, stdev=stdev, max=maximum)
    dist = _DISTRIBUTION.search(text)
    if dist:
        for p, value in _PERCENT.findall(dist.group(1)):
            if f"p{p}" in latency:
                latency[f"p{p}"] = time_ms(value)
    return latency


def _errors(text: str, notes: list[str]) -> dict[str, int | None]:
    """wrk's socket errors and non-2xx responses by kind (it compares no lengths, counts no exceptions)."""
    errors = empty_errors()
    socket = _SOCKET.search(text)
    if socket:
        for kind, value in zip(("connect", "read", "write", "timeout"), socket.groups(), strict=True):
            errors[kind] = int(value)
    status = _STATUS.search(text)
    errors["status"] = int(status.group(1)) if status else 0
    errors["length"] = 0  # wrk does not compare response lengths
    errors["exceptions"] = 0
    if errors["timeout"]:
        notes.append(
            "wrk counts responses slower than --timeout as timeout errors (they are in the request count) "
            "and leaves them out of the latency figures"
        )
    return errors


def _attach_histogram(parsed: Parsed, text: str) -> None:
    report = wrk_report(text)
    if report is None and WRK_REPORT_MARKER.strip() in text:
        raise ParseError(f"wrk output has a {WRK_REPORT_MARKER.strip()} line that is cut short")
    if report is None:
        return
    histogram = report.get("histogram")
    if not isinstance(histogram, list):
        return
    try:
        pairs = [(int(v), int(c)) for v, c in histogram]
    except (TypeError, ValueError):
        raise ParseError("the histogram in wrk's report line is not [value_us, count] pairs") from None
    samples = sum(c for _, c in pairs)
    if samples != report.get("samples"):
        raise ParseError(
            f"the histogram in wrk's report line holds {samples} samples, "
            f"the line says {report.get('samples')}"
        )
    # Responses slower than --timeout are timeout errors and not in the histogram.
    recorded = parsed.requests_completed - (parsed.errors.get("timeout") or 0)
    if samples and recorded > 0:
        distribution.attach(parsed, distribution.from_counts(RESOLUTION, pairs, requests=recorded))


WRK_SCRIPT = "wrk_report.lua"
# The report script's environment: the threshold to count slow responses at, and the connection count.
THRESHOLD_ENV = "BENCH_STACK_THRESHOLD_MS"
CONNECTIONS_ENV = "BENCH_STACK_CONNECTIONS"
# The largest thread count a load plan may give.
MAX_THREADS = 1024


def wrk_command(run: ClosedRun) -> list[str]:
    """wrk's argv (arguments checked by :func:`benchstack.kinds.loadtools.loadcmd.build_command` first). wrk
    always keeps connections alive, needs a duration, and needs ``-c >= -t``; ``--timeout`` and ``-d`` take
    whole seconds ("500ms" is rejected with a usage message). ``threads`` defaults to min(2, concurrency).
    ``per_request``: the report script (``-s``)."""
    concurrency = run.concurrency
    if run.duration_s is None:
        raise ValueError("wrk needs duration_s (-d); it runs for a time, not a request count")
    if run.requests is not None:
        raise ValueError("wrk cannot run a fixed number of requests; give duration_s only")
    if run.keepalive is False:
        raise ValueError("wrk always keeps connections alive; use keepalive=True (or ab for no keep-alive)")
    threads = min(2, concurrency) if run.threads is None else positive_int("threads", run.threads)
    if threads > concurrency:
        raise ValueError(f"wrk needs threads <= connections (-t {threads} > -c {concurrency})")
    cmd = ["wrk", "-t", str(threads), "-c", str(concurrency), "-d", f"{run.duration_s}s", "--latency"]
    if run.timeout_s is not None:
        cmd += ["--timeout", f"{run.timeout_s}s"]
    if run.per_request is not None:
        cmd += ["-s", run.per_request]
    return [*cmd, run.url]


def wrk_timeout_s(cell: CellPlan) -> int | None:
    """wrk's --timeout: the plan's, or above the threshold so slow responses are measured, not dropped."""
    if cell.timeout_s is not None:
        return int(cell.timeout_s)
    if cell.threshold_ms:
        return max(2, math.ceil(2 * float(cell.threshold_ms) / 1000))
    return None


def wrk_script() -> str:
    """The Lua report script shipped with the package."""
    return resources.files("benchstack").joinpath("data", WRK_SCRIPT).read_text(encoding="utf-8")


def install_script_command(text: str) -> str:
    """Shell that puts ``text`` on the loadgen once (kept while its SHA-256 matches) and prints its path."""
    sha = hashlib.sha256(text.encode()).hexdigest()
    b64 = base64.b64encode(text.encode()).decode()
    return (
        'd=/var/lib/bench-stack; { [ -d "$d" ] && [ -w "$d" ]; } || d=/tmp; '
        f'p="$d/bench-stack-wrk-report-{sha[:16]}.lua"; '
        f'if ! echo "{sha}  $p" | sha256sum -c --status 2>/dev/null; then '
        f't=$(mktemp "$d/.bench-stack-wrk-report.XXXXXX") && echo {b64} | base64 -d > "$t" '
        '&& chmod 644 "$t" && mv -f "$t" "$p" || exit 1; fi; echo "$p"'
    )


class Wrk(LoadTool):
    """wrk: closed loop, a duration, always keep-alive, threaded; its histogram comes from the report
    script (``-s``), corrected for coordinated omission."""

    name = "wrk"
    order = 20
    bound = "duration_s"
    always_keepalive = True
    # `wrk -v` exits non-zero.
    version_probe = "wrk -v 2>&1 | head -n 1"
    # Amazon Linux / RHEL have no wrk package: roles/loadgen builds it from source there.
    packages: ClassVar[dict[str, tuple[str, ...] | None]] = {"Debian": ("wrk",), "RedHat": (), "Amazon": ()}
    counting = COUNTING
    resolution = RESOLUTION
    summary = "closed loop (concurrency), bounded by duration_s"
    plan_docs: ClassVar[dict[str, str]] = {
        "concurrency": "required, at most 20,000",
        "rate": "not allowed",
        "requests": "not allowed",
        "duration_s": "required (1-600)",
        "threads": "`min(2, concurrency)`; 1-1024, at most the concurrency",
        "keepalive": "always on (`false` is refused)",
        "timeout_s": "`--timeout`; unset: max(2 s, 2 x threshold) with a threshold, else wrk's own",
    }

    def check_plan(self, where: str, written: dict[str, Any], problems: list[str]) -> bool:
        ok = True
        if "duration_s" not in written:
            problems.append(f"{where}.duration_s: wrk needs a duration in seconds")
            ok = False
        if "requests" in written:
            problems.append(f"{where}.requests: wrk runs for a duration, not a number of requests")
            ok = False
        if written.get("keepalive") is False:
            problems.append(
                f"{where}.keepalive: wrk always keeps connections alive; use ab for keepalive: false"
            )
            ok = False
        return ok

    def threads(self, load: LoadPlan, level: int) -> int | None:
        return min(2, level) if load.threads is None else load.threads

    def argv(self, run: ClosedRun) -> list[str]:
        return wrk_command(run)

    def command(self, cell: CellPlan, url: str, per_request: str | None = None) -> list[str]:
        """With the report script (``per_request``), the threshold and connection count go in its
        environment."""
        env: list[str] = []
        if per_request is not None:
            threshold = cell.threshold_ms
            env = ["env", *([f"{THRESHOLD_ENV}={threshold:g}"] if threshold else [])]
            env.append(f"{CONNECTIONS_ENV}={cell.concurrency}")
        return env + self.closed_command(cell, url, wrk_timeout_s(cell), per_request)

    def warmup_command(self, cell: CellPlan, url: str) -> list[str]:
        duration_s = int(warmup_of(cell)["duration_s"])
        return self.build(
            ClosedRun(url, required_int(cell, "concurrency"), duration_s=duration_s, threads=cell.threads)
        )

    def bound_s(self, cell: CellPlan) -> int:
        return required_int(cell, "duration_s") + TIMEOUT_SLACK_S

    def setup_command(self) -> str | None:
        """Write the report script to the loadgen once (named by its SHA-256) and print its path."""
        return install_script_command(wrk_script())

    def setup_result(self, rc: int, out: str, err: str) -> tuple[str | None, list[str]]:
        script = out.strip().splitlines()[-1] if rc == 0 and out.strip() else None
        if script is None:
            return None, [
                f"no per-request data: the wrk script could not be written: {(err or out).strip()[:200]}"
            ]
        return script, []

    def incomplete(self, raw: str, per_request: str | None) -> str | None:
        # The script prints its line after wrk's own report, from done(): without it the output was cut
        # short (or the script failed), and the cell would silently lose its distribution.
        if per_request is not None and wrk_report(raw) is None:
            return (
                f"wrk ran with the report script but printed no {WRK_REPORT_MARKER.strip()} line: its output "
                "is incomplete"
            )
        return None

    def per_request(
        self,
        parsed: Parsed,
        threshold_ms: float | None,
        raw: str,
        tsv: str | None,
        per_request: str | None,
    ) -> list[str]:
        """Fill over_threshold from the report script's count; a note when it is an estimate."""
        if not threshold_ms or per_request is None:
            return []
        report = wrk_report(raw)  # present: the runner refused output without it (incomplete)
        assert report is not None
        over, note = wrk_over_threshold(report, parsed.requests_completed, parsed.errors.get("timeout") or 0)
        parsed.errors["over_threshold"] = over
        return [note] if note else []

    probe_rank = 0
    probe_rps = re.compile(r"^Requests/sec:\s+([\d.]+)", re.MULTILINE)
    probe_done = re.compile(r"^\s*(\d+) requests in ", re.MULTILINE)

    def probe_command(self, url: str, seconds: int, connections: int) -> str | None:
        return f"wrk -t1 -c{connections} -d{seconds}s {url}"

    def parse(self, text: str) -> Parsed:
        return parse(text)

    def cores(self, command: list[Any]) -> int:
        threads = 1
        for i, arg in enumerate(command[:-1]):
            if arg == "-t" and str(command[i + 1]).isdigit():
                threads = int(command[i + 1])
            elif arg.startswith("-t") and arg[2:].isdigit():
                threads = int(arg[2:])
        return threads


TOOL = Wrk()
