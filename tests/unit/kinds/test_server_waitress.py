"""The waitress adapter: its start command as the app_server role's unit runs it, where each bind listens,
its one option, what the python role installs for it; what it refuses."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import ROLES, read_yaml, resolved_stack
from test_app_server_units import listen, unit_lines

from benchstack.kinds.servers import by_name, processes
from benchstack.kinds.stackfields import StackError
from benchstack.plan.readers import needs
from benchstack.plan.stacks import resolve, resolve_stack

WSGI = {"name": "w", "port": 8310, "app": {"kind": "wsgi"}}


def waitress(front: str = "nginx", **server: Any) -> dict[str, Any]:
    return resolved_stack("w", 8310, "wsgi", "waitress", front, **server)


def test_waitress_serve_runs_from_the_venv_with_its_threads_the_app_last() -> None:
    assert unit_lines(waitress(threads=8), "ExecStart=") == [
        "ExecStart=/opt/bench-stack/venv/bin/waitress-serve --threads=8 --channel-timeout=30"
        " $BENCH_LISTEN_%i app:app"
    ]
    # The app folder is the working directory, where waitress-serve imports app:app from.
    assert unit_lines(waitress(), "WorkingDirectory=") == ["WorkingDirectory=/opt/bench-stack/apps/wsgi"]
    assert unit_lines(waitress(), "ExecReload=") == []


@pytest.mark.parametrize(
    ("front", "bind", "args"),
    [
        # Its own socket mode: waitress chmods the socket (600 unless told), whatever the unit's UMask.
        ("nginx", "unix", "--unix-socket=/run/bench-stack/w-1/server.sock --unix-socket-perms=666"),
        ("nginx", "tcp", "--listen=127.0.0.1:23101"),
        ("none", "tcp", "--listen=0.0.0.0:8310"),
    ],
)
def test_waitress_listens_where_the_plan_says(front: str, bind: str, args: str) -> None:
    assert listen(waitress(front, bind=bind)) == f'BENCH_LISTEN_1="{args}"'


def test_waitress_is_one_process_per_instance_and_a_front_keeps_idle_connections_to_it() -> None:
    stack = resolve({**WSGI, "server": {"kind": "waitress", "instances": 3}, "front": {"kind": "nginx"}})
    assert processes(stack) == 3  # one per instance: no master, no workers
    assert waitress()["server"]["upstream_keepalive"] is True
    assert waitress()["server"]["threads"] == 4


def test_the_python_role_installs_waitress_at_its_pinned_version() -> None:
    found = needs([resolve({**WSGI, "server": {"kind": "waitress"}})])
    assert found.python_packages == ("waitress",)
    defaults = read_yaml(ROLES / "python" / "defaults" / "main.yml")
    assert set(by_name("waitress").pins) <= set(defaults["python_constraints"])


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ({"threads": 0}, "server.threads: must be an integer from 1 to 256, not 0"),
        ({"threads": 257}, "server.threads: must be an integer from 1 to 256, not 257"),
        ({"workers": 2}, "server.workers: unknown option of waitress"),
    ],
)
def test_waitress_options_are_checked(server: dict[str, Any], message: str) -> None:
    stack = {**WSGI, "server": {"kind": "waitress", **server}}
    with pytest.raises(StackError, match=message):
        resolve_stack(stack)


def test_waitress_serves_only_wsgi_apps() -> None:
    stack = {**WSGI, "app": {"kind": "asgi"}, "server": {"kind": "waitress"}}
    with pytest.raises(StackError, match="server.kind: waitress cannot serve app asgi"):
        resolve_stack(stack)
