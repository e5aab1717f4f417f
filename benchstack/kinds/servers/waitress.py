"""waitress: one process per instance, a pure-Python WSGI server whose asyncore loop holds the connections
and hands each request to a pool of ``threads`` worker threads; ``waitress-serve`` from the stacks' venv."""

from __future__ import annotations

from benchstack.kinds.servers.base import LISTEN, ServerKind
from benchstack.kinds.servers.section import Start


class Waitress(ServerKind):
    name = "waitress"
    order = 110
    runtime = "python"
    interface = "wsgi"
    # Idle connections wait in the event loop, not in a thread, for --channel-timeout seconds: longer than the
    # front's pool timeout.
    upstream_keepalive = True
    options = {"threads": (int, 1, 256, 4)}
    option_notes = {"threads": "worker threads"}
    # waitress chmods its socket to --unix-socket-perms (600 by default, whatever the unit's UMask): the
    # front's workers run as another user.
    listen = {"unix": "--unix-socket={socket} --unix-socket-perms=666", "tcp": "--listen={host}:{port}"}
    pip = ("waitress",)
    pins = ("waitress==3.0.2",)

    def command(self, start: Start) -> str:
        # waitress-serve reads options up to the first argument (getopt): the app comes last. It imports the
        # app from the working directory, the unit's (the app folder).
        return (
            f"{{python_bin}}/waitress-serve --threads={start.option('threads')}"
            f" --channel-timeout={{keepalive_timeout}} {LISTEN} app:app"
        )


KIND = Waitress()
