"""Starman (Perl, PSGI) under Server::Starter's start_server, which holds the socket (--port or --path)."""

from __future__ import annotations

from benchstack.kinds.servers.base import LISTEN, WORKERS, ServerKind
from benchstack.kinds.servers.section import Start


class Starman(ServerKind):
    name = "starman"
    order = 60
    runtime = "perl"
    interface = "psgi"
    options = {"workers": WORKERS, "max_requests": (int, 1, 10_000_000, 1000)}
    listen = {"unix": "--path {socket}", "tcp": "--port {host}:{port}"}
    # A SIGHUP to start_server (systemctl reload) starts a new Starman and then stops the old one with QUIT,
    # Starman's graceful shutdown, so the socket never closes.
    reload_signal = "HUP"
    perl = ("Starman", "Server-Starter")
    # RedHat packages neither without EPEL (Amazon Linux 2023 has none): a perl stack fails early there.
    packages = {"Debian": {"Starman": "starman", "Server-Starter": "libserver-starter-perl"}}
    # Lets Starman under start_server take a unix socket (loaded with perl -M, below).
    helper_files = {"perl/BenchStack/StarterUnix.pm": "{perl_lib}/BenchStack/StarterUnix.pm"}

    def command(self, start: Start) -> str:
        # On a unix socket Starman needs BenchStack::StarterUnix ({perl_lib}): Debian's
        # Net::Server::SS::PreFork 0.05 treats every inherited socket as TCP. Behind a front, keep-alive is
        # off: each prefork worker would sit on one idle pooled connection of one nginx worker while requests
        # on new connections wait in the backlog (measured: 0 requests in 10 s).
        return (
            f"{{perl_bin}}/start_server {LISTEN} --signal-on-hup=QUIT --"
            " {perl_bin}/perl -I{perl_lib} -MBenchStack::StarterUnix"
            f" {{perl_bin}}/starman -E deployment --workers {start.option('workers')}"
            f" --max-requests {start.option('max_requests')}"
            + (" --keepalive-timeout {keepalive_timeout}" if start.direct else " --disable-keepalive")
            + f" {start.app_entry}"
        )


KIND = Starman()
