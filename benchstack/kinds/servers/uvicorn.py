"""uvicorn: one process, or a master and workers; keeps idle connections past the front's pool timeout."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchstack.kinds.servers.base import LISTEN, ServerKind
from benchstack.kinds.servers.section import Start


class Uvicorn(ServerKind):
    name = "uvicorn"
    order = 80
    runtime = "python"
    interface = "asgi"
    upstream_keepalive = True
    options = {"workers": (int, 1, 64, 1)}
    listen = {"unix": "--uds {socket}", "tcp": "--host {host} --port {port}"}
    pip = ("uvicorn",)
    pins = ("uvicorn==0.32.1", "click==8.5.1", "h11==0.16.0")

    def processes(self, server: Mapping[str, Any]) -> int:
        # --workers 1 runs the app in the process that listens: no master.
        return 1 if server["workers"] == 1 else 1 + server["workers"]

    def command(self, start: Start) -> str:
        return (
            f"{{python_bin}}/uvicorn --workers {start.option('workers')} --no-access-log"
            f" --timeout-keep-alive {{keepalive_timeout}} --app-dir {start.app_dir} app:app {LISTEN}"
        )


KIND = Uvicorn()
