"""uvicorn: one process, or a master and workers; keeps idle connections past the front's pool timeout."""

from __future__ import annotations

from typing import Any

from benchstack.kinds.servers.base import LISTEN, ServerKind


class Uvicorn(ServerKind):
    name = "uvicorn"
    runtime = "python"
    interface = "asgi"
    upstream_keepalive = True
    options = {"workers": (int, 1, 64, 1)}
    listen = {"unix": "--uds {socket}", "tcp": "--host {host} --port {port}"}
    pip = ("uvicorn",)

    def processes(self, server: dict[str, Any]) -> int:
        # --workers 1 runs the app in the process that listens: no master.
        return 1 if server["workers"] == 1 else 1 + server["workers"]

    def command(self, stack: dict[str, Any]) -> str:
        return (
            f"{{python_bin}}/uvicorn --workers {stack['server']['workers']} --no-access-log"
            f" --timeout-keep-alive {{keepalive_timeout}} --app-dir {stack['app']['dir']} app:app {LISTEN}"
        )


KIND = Uvicorn()
