"""The seed's Starlet-style Ruby server: the Rack handler Rack::Handler::Starlet that the prefork_engine gem
ships as example/starlet.rb, run by rackup under Server::Starter's start_server (a Perl program, which holds
the unix or TCP socket and hands it over in SERVER_STARTER_PORT). It answers HTTP/1.0 with Connection: close,
so a front keeps no idle connections to it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchstack.kinds.servers.base import LISTEN, WORKERS, ServerKind
from benchstack.kinds.servers.section import Start


class Starlet(ServerKind):
    name = "starlet"
    order = 50
    runtime = "ruby"
    interface = "rack"
    # min_request_per_child (optional, None: unset) makes each worker's limit random in min..max.
    options = {
        "workers": WORKERS,
        "max_request_per_child": (int, 1, 10_000_000, 1000),
        "min_request_per_child": (int, 1, 10_000_000, None),
    }
    option_notes = {"workers": "MaxWorkers", "min_request_per_child": "at most the max"}
    listen = {"unix": "--path {socket}", "tcp": "--port {host}:{port}"}
    # On SIGHUP start_server starts a new generation, then stops the old one (after
    # app_server_starlet_kill_old_delay seconds).
    reload_signal = "HUP"
    # The Starlet handler requires pico_http_parser itself; prefork_engine brings proc-wait3. Both compile C.
    gems = ("pico_http_parser", "prefork_engine")
    native_gems = ("pico_http_parser", "prefork_engine", "proc-wait3")
    perl = ("Server-Starter",)
    packages = {"Debian": {"Server-Starter": "libserver-starter-perl"}}
    # Keeps a worker alive when its client has gone (loaded with rackup --require, below).
    helper_files = {"ruby/bench_stack/starlet_peer_gone.rb": "{ruby_lib}/bench_stack/starlet_peer_gone.rb"}

    def option_problems(self, server: Mapping[str, Any]) -> list[tuple[str, str]]:
        low, high = server.get("min_request_per_child"), server.get("max_request_per_child")
        if low is not None and high is not None and low > high:
            return [
                ("server.min_request_per_child", f"must be at most server.max_request_per_child ({high})")
            ]
        return []

    def command(self, start: Start) -> str:
        # The handler is found in the stack's Ruby on the host (roles/app_server/tasks/starlet.yml);
        # starlet_peer_gone.rb keeps a worker alive when its client has gone (the handler dies on EPIPE).
        low = start.option("min_request_per_child")
        return (
            f"{{perl_bin}}/start_server {LISTEN} --kill-old-delay={{starlet_kill_old_delay}} --"
            " {ruby_bin}/rackup --require {starlet_handler}"
            " --require {ruby_lib}/bench_stack/starlet_peer_gone.rb"
            f" --env production --server Starlet --option MaxWorkers={start.option('workers')}"
            f" --option MaxRequestPerChild={start.option('max_request_per_child')}"
            + ("" if low is None else f" --option MinRequestPerChild={low}")
            + " config.ru"
        )


KIND = Starlet()
