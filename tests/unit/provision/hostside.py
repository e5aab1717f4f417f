"""The host side (benchstack.provision.hoststate) answered in the tests' process, for the tests of what the
controller makes of its answers: its ``main`` given the request as ``python3 -c`` gives it, its output as the
host prints it. A new interpreter per request cost ~50 ms (~40 requests in test_hostlock); the command
itself, ``python3 -c <source> <request>``, still runs for real in test_drift and in test_hostlock's first
test."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
from collections.abc import Mapping
from typing import Any

from benchstack.provision import hostcommand, hoststate


def answer(request: Mapping[str, Any]) -> str:
    """What the host side prints for ``request``, run here."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        hoststate.main(["-c", json.dumps(request)])
    return out.getvalue()


def run_on_host(request: Mapping[str, Any]) -> str:
    """What the host side prints for ``request``, run as the controller sends it: one shell command."""
    command = hostcommand.hoststate_command("python3", request)
    return subprocess.run(["sh", "-c", command], check=True, text=True, capture_output=True).stdout
