"""Phusion Passenger Standalone with its builtin engine: ``passenger start`` in the foreground, which starts
Passenger's watchdog and core (the HTTP server) and spawns the app's processes from a preloader, running
them on the Ruby ``--ruby`` names (the stack's). Passenger's own front end runs on the Ruby that installed it:
Debian's package on Debian's Ruby, the gem on the Ruby it was installed into."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchstack.kinds.servers.base import LISTEN, WORKERS, ServerKind
from benchstack.kinds.servers.section import Start


class Passenger(ServerKind):
    name = "passenger"
    order = 100
    runtime = "ruby"
    interface = "rack"
    # Workers: a fixed pool of app processes (--min-instances = --max-pool-size), each one request at a time.
    options = {"workers": WORKERS}
    option_notes = {"workers": "app processes"}
    listen = {"unix": "--socket {socket}", "tcp": "--address {host} --port {port}"}
    # Debian's `passenger` package: Passenger Standalone runs on Debian's Ruby, and its --ruby runs the app on
    # the stack's. Elsewhere the gem, whose agent is C++.
    gems = ("passenger",)
    packages = {"Debian": {"passenger": "passenger"}}
    native_gems = ("passenger",)

    @property
    def bundle_gems(self) -> tuple[str, ...]:
        # Passenger is not started through `bundle exec`: its loader sets up a user's bundle itself.
        return ()

    def processes(self, server: Mapping[str, Any]) -> int:
        # Besides the app processes: `passenger start`, the watchdog, the core, the preloader, the temp-dir
        # toucher and the `sh -c tail -f` pair that copies its log to the journal.
        return int(server["workers"]) + 7

    def command(self, start: Start) -> str:
        # The pid and log files go to the instance's runtime folder (%t is /run for a system unit): the app
        # folder belongs to root, and the log cannot be the journal (/dev/stdout is a socket there, which
        # Passenger cannot open); `passenger start` copies the log to its output, so it reaches the journal.
        # The security update check and the telemetry would call out to the internet from a benchmark.
        run = f"%t/{start.units.unit_runtime_directory}"
        workers = start.option("workers")
        return (
            "{ruby_bin}/passenger start --engine builtin --environment production --ruby {ruby_bin}/ruby"
            f" --min-instances {workers} --max-pool-size {workers}"
            f" --pid-file {run}/passenger.pid --log-file {run}/passenger.log"
            f" --disable-security-update-check --disable-anonymous-telemetry {LISTEN}"
        )


KIND = Passenger()
