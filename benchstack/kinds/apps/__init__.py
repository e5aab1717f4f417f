"""One adapter per app kind, and the registry of them.

Each module (``sinatra``, ``php``, ``static``, ``lua_file``, ...) holds all that bench-stack knows of its
app kind in an :class:`~benchstack.kinds.apps.base.AppKind`, ``KIND``: the runtime it runs on, the entry file
a deployment holds, its default health checks, what the runtime roles install for the bundled app, whether a
user's app of it brings a bundle, and whether an app server serves it or its front does (and which fronts
can). The checks of an ``app`` section are the base class's, the deployment of users' apps is
:mod:`benchstack.kinds.apps.deploy`'s. The rest of the package asks :func:`by_name` instead of comparing app
kind names. Adding a kind: a module here (the registry finds it), its bundled files in
``roles/webapp/files/<kind>/``, tests; the schema's enum, the webapp role's choices and the docs table are
scripts/kind_files.py's (docs/adding-a-kind.md).
"""

from __future__ import annotations

from benchstack.kinds.apps.base import AppKind, EmbeddedApp
from benchstack.kinds.registry import Registry

# The modules that hold no kind; every other module of the package is a kind's (its KIND).
SUPPORT = ("base", "deploy", "fields", "section", "userapp")
# In the order messages list them (each kind's ``order``).
REGISTRY: Registry[AppKind] = Registry.of_package("app kind", __name__, __path__, ("KIND", AppKind), SUPPORT)
KINDS: tuple[str, ...] = tuple(REGISTRY)
# The kinds with bundled files to deploy (one folder each under the apps root, from roles/webapp/files/).
BUNDLED_KINDS: tuple[str, ...] = tuple(name for name, kind in REGISTRY.items() if kind.entry)

__all__ = ["BUNDLED_KINDS", "KINDS", "REGISTRY", "AppKind", "EmbeddedApp", "by_name", "find"]


find = REGISTRY.find
by_name = REGISTRY.by_name
