"""WEBrick, through rackup: one process per instance, TCP only (rackup's WEBrick handler takes no socket)."""

from __future__ import annotations

from benchstack.kinds.servers.base import LISTEN, ServerKind
from benchstack.kinds.servers.section import Start


class Webrick(ServerKind):
    name = "webrick"
    order = 20
    runtime = "ruby"
    interface = "rack"
    binds = ("tcp",)
    listen = {"tcp": "--host {host} --port {port}"}
    gems = ("webrick",)
    packages = {"Debian": {"webrick": "ruby-webrick"}}

    def command(self, start: Start) -> str:
        return f"{{ruby_run}}rackup --server webrick --env production config.ru {LISTEN}"


KIND = Webrick()
