"""One adapter per front kind, and the registry of them.

Each module (``none``, ``nginx``, ``apache``) holds all that bench-stack knows of its front in a
:class:`~benchstack.kinds.fronts.base.FrontKind`, ``KIND``: its ``front.*`` keys, their checks and defaults
(the profile, the MPM and its tuning), what it can stand before (a protocol it refuses), what it derives for
its role's templates (an Apache instance's handler, modules and MPM directives), what its role installs for
the run's stacks, and how health checks name it. The rest of the package asks :func:`by_name` instead of
comparing front names. Adding a kind: a module here (the registry finds it), its role, tests; the
schema's ``front`` branch and the docs table are scripts/kind_files.py's (docs/adding-a-kind.md).
"""

from __future__ import annotations

from benchstack.kinds.fronts.base import FrontKind
from benchstack.kinds.registry import Registry

# The modules that hold no kind; every other module of the package is a kind's (its KIND).
SUPPORT = ("base",)
# In the order messages list them (each kind's ``order``).
REGISTRY: Registry[FrontKind] = Registry.of_package(
    "front kind", __name__, __path__, ("KIND", FrontKind), SUPPORT
)
KINDS: tuple[str, ...] = tuple(REGISTRY)
# Front kinds run by a role, by role.
ROLES: dict[str, FrontKind] = {k.role: k for k in REGISTRY.values() if k.role}

__all__ = ["KINDS", "REGISTRY", "ROLES", "FrontKind", "by_name", "find"]


find = REGISTRY.find
by_name = REGISTRY.by_name
