"""The exact command line of one load run: the URL, and a closed-loop run's argv from its arguments.

Each tool's own pitfalls (ab's ``-t`` before ``-n``, wrk's whole seconds, httperf's split URL) are handled by
its adapter (:mod:`benchstack.kinds.loadtools`).
"""

from __future__ import annotations

from benchstack.kinds.loadtools import by_name
from benchstack.kinds.loadtools.base import ClosedRun


def http_url(host: str, port: int, path: str) -> str:
    """The URL of ``path`` on ``host:port``; an IPv6 address goes in brackets (``http://[fd00::2]:80/``)."""
    host_part = f"[{host}]" if ":" in host else host
    return f"http://{host_part}:{port}{path}"


def build_command(tool: str, run: ClosedRun) -> list[str]:
    """The argv of the closed-loop ``run`` (:class:`~benchstack.kinds.loadtools.base.ClosedRun`) with
    ``tool``. Raises ValueError on a bad combination or an unknown or open-loop tool."""
    return by_name(tool).build(run)
