"""No front: the app server is one instance bound to TCP on the stack's port, and answers HTTP itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from benchstack.common.numbers import is_int
from benchstack.kinds.fronts.base import FrontKind, FrontSpec
from benchstack.kinds.stackfields import FIRST_USER_PORT, err, typed_keys

if TYPE_CHECKING:
    from benchstack.kinds.servers import ServerKind
    from benchstack.kinds.servers.section import ServerSpec


class NoFront(FrontKind):
    name = "none"
    order = 10
    called = "front kind none"

    def check(self, front: Mapping[str, Any], who: str) -> FrontSpec:
        typed_keys(who, "front", front, self.key_of(), keys={"kind"}, options={})
        return FrontSpec(kind=self.name, written=tuple(front))

    def proxy_problem(self, front: FrontSpec, server: ServerKind) -> tuple[str, str] | None:
        if server.protocol != "http":
            return "front.kind", f"{server.name} speaks {server.protocol}, not HTTP: it needs a front"
        return None

    def check_server(self, server: ServerSpec, port: object, who: str) -> None:
        if server.instances != 1 or server.bind != "tcp":
            raise err(
                who, "server", "without a front, the server is one instance bound to TCP on the stack port"
            )
        if is_int(port) and port < FIRST_USER_PORT:
            raise err(
                who,
                "port",
                f"{port} is below {FIRST_USER_PORT}: without a front the app server listens on it as the "
                "benchmark user, which a host does not allow (put a front before it, or use a port from "
                f"{FIRST_USER_PORT})",
            )


KIND = NoFront()
