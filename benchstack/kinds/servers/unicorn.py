"""unicorn: a master and prefork workers; where it listens and its options are in its config file."""

from __future__ import annotations

from benchstack.kinds.servers.base import WORKERS, ServerKind
from benchstack.kinds.servers.section import Start


class Unicorn(ServerKind):
    name = "unicorn"
    order = 30
    runtime = "ruby"
    interface = "rack"
    options = {"workers": WORKERS, "preload": (bool, None, None, True)}
    config = "unicorn.rb"
    config_listen = {"unix": "{socket}", "tcp": "{host}:{port}"}
    gems = ("unicorn",)
    packages = {"Debian": {"unicorn": "unicorn"}}
    native_gems = ("unicorn",)

    def command(self, start: Start) -> str:
        config = start.units.unit_config_file
        return f"{{ruby_run}}unicorn --env production --config-file {config} config.ru"


KIND = Unicorn()
