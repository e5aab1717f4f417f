"""The exact command line of one load run.

Pitfalls handled here:

* ab's ``-t`` sets the request count to 50000 when it is parsed, so ``-n`` must come *after* ``-t`` or the
  configured count is silently dropped (checked with ab 2.3: ``ab -n 300 -t 1`` ran 20284 requests).
* ab requires ``-n >= -c`` and at most 20000 concurrent connections, and a URL with a path.
* wrk always keeps connections alive, needs a duration, and needs ``-c >= -t``; ``--timeout`` and ``-d`` take
  whole seconds ("500ms" is rejected with a usage message).
* httperf (open loop) takes server, port and URI separately, a rate of new connections and a connection
  count (rate x duration bounds the run), one request per connection; ``--timeout`` takes fractions of a
  second; ``--hog`` lets it use the whole ephemeral port range, which high rates need. It waits for
  answers forever unless given a timeout, so it always gets one. ``--verbose --verbose`` (``-v -v``) makes
  it print its connection lifetime histogram, the cell's latency distribution; the only other lines it
  adds are a reply rate every 5 s and the descriptor limit.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from benchstack.numbers import is_int

AB_MAX_CONCURRENCY = 20000
# httperf without --timeout waits forever for a silent server.
HTTPERF_DEFAULT_TIMEOUT_S = 5.0


def _positive_int(name: str, value: object) -> int:
    if not is_int(value) or value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return value


def _check_url(tool: str, url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{tool} needs an http:// or https:// URL with a host, not {url!r}")
    if not parts.path:
        raise ValueError(f"{tool} needs a path in the URL, e.g. {url}/ (ab rejects {url!r} as invalid)")


def http_url(host: str, port: int, path: str) -> str:
    """The URL of ``path`` on ``host:port``; an IPv6 address goes in brackets (``http://[fd00::2]:80/``)."""
    host_part = f"[{host}]" if ":" in host else host
    return f"http://{host_part}:{port}{path}"


def httperf_timeout_s(plan: dict[str, Any]) -> float:
    """httperf's --timeout for a cell plan: the threshold (slower is an error), else the plan's, else 5 s."""
    if plan.get("threshold_ms"):
        return float(plan["threshold_ms"]) / 1000
    if plan.get("timeout_s") is not None:
        return float(plan["timeout_s"])
    return HTTPERF_DEFAULT_TIMEOUT_S


def httperf_command(url: str, rate: int, duration_s: int, timeout_s: float | None = None) -> list[str]:
    """httperf offering ``rate`` new connections (one request each) per second for ``duration_s``."""
    _positive_int("rate", rate)
    _positive_int("duration_s", duration_s)
    _check_url("httperf", url)
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


def build_command(
    tool: str,
    url: str,
    concurrency: int,
    requests: int | None = None,
    duration_s: int | None = None,
    threads: int | None = None,
    keepalive: bool | None = None,
    timeout_s: int | None = None,
    gnuplot_file: str | None = None,
    script: str | None = None,
) -> list[str]:
    """The argv to run ``tool`` ("ab" or "wrk") against ``url``. Raises ValueError on a bad combination.

    ``keepalive`` None means the tool's own behaviour: off for ab, always on for wrk (False is an error).
    ``threads`` (wrk only) defaults to min(2, concurrency). ``gnuplot_file`` (ab only): ``-g FILE``, one
    line per request; ``script`` (wrk only): ``-s FILE``, a Lua script.
    """
    if gnuplot_file is not None and tool != "ab":
        raise ValueError("gnuplot_file (-g) applies to ab only")
    if script is not None and tool != "wrk":
        raise ValueError("script (-s) applies to wrk only")
    _positive_int("concurrency", concurrency)
    _check_url(tool, url)
    if timeout_s is not None:
        _positive_int("timeout_s", timeout_s)
    if duration_s is not None:
        _positive_int("duration_s", duration_s)

    if tool == "ab":
        if requests is None:
            raise ValueError("ab needs requests (-n)")
        _positive_int("requests", requests)
        if requests < concurrency:
            raise ValueError(f"ab needs requests >= concurrency (-n {requests} < -c {concurrency})")
        if concurrency > AB_MAX_CONCURRENCY:
            raise ValueError(f"ab allows at most {AB_MAX_CONCURRENCY} concurrent requests, not {concurrency}")
        if threads is not None:
            raise ValueError("ab is single-threaded; threads applies to wrk only")
        cmd = ["ab"]
        if duration_s is not None:
            cmd += ["-t", str(duration_s)]  # before -n: -t resets the request count
        cmd += ["-n", str(requests), "-c", str(concurrency)]
        if keepalive:
            cmd.append("-k")
        if timeout_s is not None:
            cmd += ["-s", str(timeout_s)]
        if gnuplot_file is not None:
            cmd += ["-g", gnuplot_file]
        return [*cmd, url]

    if tool == "wrk":
        if duration_s is None:
            raise ValueError("wrk needs duration_s (-d); it runs for a time, not a request count")
        if requests is not None:
            raise ValueError("wrk cannot run a fixed number of requests; give duration_s only")
        if keepalive is False:
            raise ValueError(
                "wrk always keeps connections alive; use keepalive=True (or ab for no keep-alive)"
            )
        threads = min(2, concurrency) if threads is None else _positive_int("threads", threads)
        if threads > concurrency:
            raise ValueError(f"wrk needs threads <= connections (-t {threads} > -c {concurrency})")
        cmd = ["wrk", "-t", str(threads), "-c", str(concurrency), "-d", f"{duration_s}s", "--latency"]
        if timeout_s is not None:
            cmd += ["--timeout", f"{timeout_s}s"]
        if script is not None:
            cmd += ["-s", script]
        return [*cmd, url]

    if tool == "httperf":
        raise ValueError("httperf is open loop: build it with httperf_command(url, rate, duration_s)")
    raise ValueError(f"unknown tool {tool!r}; known: ab, wrk, httperf")


def warmup_tool(plan: dict[str, Any], warmup: dict[str, Any] | None) -> str | None:
    """The tool a cell's warm-up runs with (``runner.warmup_command``): httperf at the offered rate for an
    open-loop plan, ab for a request count (wrk has none), wrk for a duration; None without a warm-up."""
    if not warmup:
        return None
    if plan.get("rate") or plan.get("tool") == "httperf":
        return "httperf"
    return "ab" if "requests" in warmup else "wrk"


def load_tools(load: dict[str, Any]) -> list[str]:
    """Every tool a loadgen runs for ``load`` (an experiment's load section): its plans' and warm-ups'."""
    tools = {plan["tool"] for plan in load["plans"]}
    tools |= {warmup_tool(plan, load.get("warmup")) for plan in load["plans"]} - {None}
    return sorted(tools)  # type: ignore[type-var]
