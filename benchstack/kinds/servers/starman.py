"""Starman (Perl, PSGI) under Server::Starter's start_server, which holds the socket (--port or --path)."""

from __future__ import annotations

from typing import Any

from benchstack.kinds.servers.base import LISTEN, WORKERS, ServerKind


class Starman(ServerKind):
    name = "starman"
    runtime = "perl"
    interface = "psgi"
    options = {"workers": WORKERS, "max_requests": (int, 1, 10_000_000, 1000)}
    listen = {"unix": "--path {socket}", "tcp": "--port {host}:{port}"}
    # A SIGHUP to start_server (systemctl reload) starts a new Starman and then stops the old one with QUIT,
    # Starman's graceful shutdown, so the socket never closes.
    reload_signal = "HUP"
    perl = ("Starman", "Server-Starter")
    # Lets Starman under start_server take a unix socket (loaded with perl -M, below).
    helper_files = {"perl/BenchStack/StarterUnix.pm": "{perl_lib}/BenchStack/StarterUnix.pm"}

    def command(self, stack: dict[str, Any]) -> str:
        # On a unix socket Starman needs BenchStack::StarterUnix ({perl_lib}): Debian's
        # Net::Server::SS::PreFork 0.05 treats every inherited socket as TCP. Behind a front, keep-alive is
        # off: each prefork worker would sit on one idle pooled connection of one nginx worker while requests
        # on new connections wait in the backlog (measured: 0 requests in 10 s).
        server = stack["server"]
        direct = stack["front"]["kind"] == "none"
        return (
            f"{{perl_bin}}/start_server {LISTEN} --signal-on-hup=QUIT --"
            " {perl_bin}/perl -I{perl_lib} -MBenchStack::StarterUnix"
            f" {{perl_bin}}/starman -E deployment --workers {server['workers']}"
            f" --max-requests {server['max_requests']}"
            + (" --keepalive-timeout {keepalive_timeout}" if direct else " --disable-keepalive")
            + f" {stack['app']['entry']}"
        )


KIND = Starman()
