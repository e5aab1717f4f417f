"""Thin: one evented process per instance, listen arguments on the command line."""

from __future__ import annotations

from benchstack.kinds.servers.base import LISTEN, ServerKind
from benchstack.kinds.servers.section import Start


class Thin(ServerKind):
    name = "thin"
    order = 10
    runtime = "ruby"
    interface = "rack"
    upstream_keepalive = True
    listen = {"unix": "--socket {socket}", "tcp": "--address {host} --port {port}"}
    gems = ("thin",)
    packages = {"Debian": {"thin": "thin"}}
    native_gems = ("thin",)

    def command(self, start: Start) -> str:
        # Thin closes keep-alive connections past 100 per process by default; a front's keep-alive pool would
        # then race those closes and turn them into 502s.
        return (
            "{ruby_run}thin start --rackup config.ru --environment production"
            f" --max-persistent-conns {{max_persistent_conns}} {LISTEN}"
        )


KIND = Thin()
