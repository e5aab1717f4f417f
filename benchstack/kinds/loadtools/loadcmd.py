"""The exact command line of one load run: the URL, and a closed-loop run's argv from its arguments.

Each tool's own pitfalls (ab's ``-t`` before ``-n``, wrk's whole seconds, httperf's split URL) are handled by
its adapter (:mod:`benchstack.kinds.loadtools`).
"""

from __future__ import annotations

from benchstack.kinds.loadtools import by_name


def http_url(host: str, port: int, path: str) -> str:
    """The URL of ``path`` on ``host:port``; an IPv6 address goes in brackets (``http://[fd00::2]:80/``)."""
    host_part = f"[{host}]" if ":" in host else host
    return f"http://{host_part}:{port}{path}"


def build_command(
    tool: str,
    url: str,
    concurrency: int,
    requests: int | None = None,
    duration_s: int | None = None,
    threads: int | None = None,
    keepalive: bool | None = None,
    timeout_s: int | None = None,
    per_request: str | None = None,
) -> list[str]:
    """The argv to run the closed-loop ``tool`` against ``url``. Raises ValueError on a bad combination or
    an unknown or open-loop tool.

    ``keepalive`` None means the tool's own behaviour: off for ab, always on for wrk (False is an error).
    ``threads`` (wrk only) defaults to min(2, concurrency). ``per_request``: where the tool's per-request
    data goes (ab's ``-g FILE``, wrk's ``-s`` report script).
    """
    return by_name(tool).build(
        url,
        concurrency,
        requests=requests,
        duration_s=duration_s,
        threads=threads,
        keepalive=keepalive,
        timeout_s=timeout_s,
        per_request=per_request,
    )
