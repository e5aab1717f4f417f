"""gunicorn: a master and sync workers, each closing the connection after its answer."""

from __future__ import annotations

from typing import Any

from benchstack.kinds.servers.base import LISTEN, MAX_REQUESTS, WORKERS, ServerKind


class Gunicorn(ServerKind):
    name = "gunicorn"
    runtime = "python"
    interface = "wsgi"
    options = {"workers": WORKERS, "max_requests": MAX_REQUESTS}
    listen = {"unix": "--bind unix:{socket}", "tcp": "--bind {host}:{port}"}
    pip = ("gunicorn",)

    def command(self, stack: dict[str, Any]) -> str:
        server = stack["server"]
        return (
            f"{{python_bin}}/gunicorn --worker-class sync --workers {server['workers']}"
            f" --max-requests {server['max_requests']} --chdir {stack['app']['dir']} app:app {LISTEN}"
        )


KIND = Gunicorn()
