"""Puma: threads, in one process (workers 0, puma's single mode) or a master and workers; config file."""

from __future__ import annotations

from benchstack.kinds.servers.base import ServerKind
from benchstack.kinds.servers.section import Start


class Puma(ServerKind):
    name = "puma"
    order = 40
    runtime = "ruby"
    interface = "rack"
    upstream_keepalive = True
    options = {
        "workers": (int, 0, 64, 0),
        "threads": (int, 1, 256, 5),
        "preload": (bool, None, None, False),
    }
    option_notes = {"workers": "0: single mode", "threads": "per worker"}
    config = "puma.rb"
    config_listen = {"unix": "unix://{socket}", "tcp": "tcp://{host}:{port}"}
    gems = ("puma",)
    packages = {"Debian": {"puma": "puma"}}
    native_gems = ("puma",)

    def command(self, start: Start) -> str:
        config = start.units.unit_config_file
        return f"{{ruby_run}}puma --environment production --config {config} config.ru"


KIND = Puma()
