"""One adapter per front kind, and the registry of them.

Each module (``none``, ``nginx``, ``apache``) holds all that bench-stack knows of its front in a
:class:`~benchstack.kinds.fronts.base.FrontKind`, ``KIND``: its ``front.*`` keys, their checks and defaults
(the profile, the MPM and its tuning), what it can stand before (a protocol it refuses), what it derives for
its role's templates (an Apache instance's handler, modules and MPM directives), what its role installs for
the run's stacks, and how health checks name it. The rest of the package asks :func:`by_name` instead of
comparing front names. Adding a kind: a module here, its entry in :data:`REGISTRY`, its role, tests; the
schema's ``front`` branch and the docs table are scripts/kind_files.py's (docs/adding-a-kind.md).
"""

from __future__ import annotations

from benchstack.kinds.fronts import apache, nginx, none
from benchstack.kinds.fronts.base import FrontKind
from benchstack.kinds.registry import Registry

# In the order messages list them.
REGISTRY: Registry[FrontKind] = Registry("front kind", (none.KIND, nginx.KIND, apache.KIND))
KINDS: tuple[str, ...] = tuple(REGISTRY)
# Front kinds run by a role, by role.
ROLES: dict[str, FrontKind] = {k.role: k for k in REGISTRY.values() if k.role}

__all__ = ["KINDS", "REGISTRY", "ROLES", "FrontKind", "by_name", "find"]


find = REGISTRY.find
by_name = REGISTRY.by_name
