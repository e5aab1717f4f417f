"""gunicorn: a master and sync workers, each closing the connection after its answer."""

from __future__ import annotations

from benchstack.kinds.servers.base import LISTEN, MAX_REQUESTS, WORKERS, ServerKind
from benchstack.kinds.servers.section import Start


class Gunicorn(ServerKind):
    name = "gunicorn"
    order = 70
    runtime = "python"
    interface = "wsgi"
    options = {"workers": WORKERS, "max_requests": MAX_REQUESTS}
    option_notes = {"workers": "sync workers", "max_requests": "0: never"}
    listen = {"unix": "--bind unix:{socket}", "tcp": "--bind {host}:{port}"}
    pip = ("gunicorn",)
    pins = ("gunicorn==23.0.0", "packaging==26.4")

    def command(self, start: Start) -> str:
        return (
            f"{{python_bin}}/gunicorn --worker-class sync --workers {start.option('workers')}"
            f" --max-requests {start.option('max_requests')} --chdir {start.app_dir} app:app {LISTEN}"
        )


KIND = Gunicorn()
