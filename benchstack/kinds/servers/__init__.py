"""One adapter per app server kind, and the registry of them.

Each module (``thin``, ``puma``, ``passenger``, ...) holds all that bench-stack knows of its server in a
:class:`~benchstack.kinds.servers.base.ServerKind`, ``KIND``: runtime and app interface, binds and how an
instance is told where to listen, protocol, typed options and their checks, what the runtime roles install for
it, the processes it keeps, and its full start command (the plan's ``server.exec``, which the app_server
role's unit prints). The rest of the package asks :func:`by_name` instead of comparing server names. Adding a
kind: a module here (the registry finds it), a config template when it reads one, tests; then
``scripts/kind_files.py`` writes what the schema, the roles and the docs say of it (docs/adding-a-kind.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchstack.kinds.registry import Registry
from benchstack.kinds.servers.base import BINDS, HOST_VALUES, ServerKind, host_command
from benchstack.kinds.stackfields import TypedOption

if TYPE_CHECKING:
    from benchstack.plan.stacks import Stack

# The modules that hold no kind; every other module of the package is a kind's (its KIND).
SUPPORT = ("base", "section")
# In the order messages list them (each kind's ``order``).
REGISTRY: Registry[ServerKind] = Registry.of_package(
    "server kind", __name__, __path__, ("KIND", ServerKind), SUPPORT
)
KINDS: tuple[str, ...] = tuple(REGISTRY)

__all__ = [
    "BINDS",
    "HOST_VALUES",
    "KINDS",
    "REGISTRY",
    "ServerKind",
    "TypedOption",
    "by_name",
    "find",
    "host_command",
    "processes",
]


find = REGISTRY.find
by_name = REGISTRY.by_name


def processes(stack: Stack) -> int:
    """The app server processes a resolved stack keeps running on its target (0 without a server)."""
    if stack.server is None:
        return 0
    spec = stack.server.spec
    return spec.instances * by_name(spec.kind).processes(spec.options)
