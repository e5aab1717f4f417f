"""One adapter per app kind, and the registry of them.

Each module (``sinatra``, ``php``, ``static``, ``lua_file``, ...) holds all that bench-stack knows of its
app kind in an :class:`~benchstack.kinds.apps.base.AppKind`, ``KIND``: the runtime it runs on, the entry file
a deployment holds, its default health checks, what the runtime roles install for the bundled app, whether a
user's app of it brings a bundle, and whether an app server serves it or its front does (and which fronts
can). The checks of an ``app`` section are the base class's, the deployment of users' apps is
:mod:`benchstack.kinds.apps.deploy`'s. The rest of the package asks :func:`by_name` instead of comparing app
kind names. Adding a kind: a module here, its entry in :data:`REGISTRY`, its bundled files in
``roles/webapp/files/<kind>/``, tests; the schema's enum, the webapp role's choices and the docs table are
scripts/kind_files.py's (docs/adding-a-kind.md).
"""

from __future__ import annotations

from benchstack.kinds.apps import (
    asgi,
    lua_file,
    lua_inline,
    mruby_file,
    mruby_inline,
    php,
    psgi,
    sinatra,
    static,
    wsgi,
)
from benchstack.kinds.apps.base import AppKind, EmbeddedApp
from benchstack.kinds.registry import Registry

# In the order messages list them.
REGISTRY: Registry[AppKind] = Registry(
    "app kind",
    (
        sinatra.KIND,
        psgi.KIND,
        wsgi.KIND,
        asgi.KIND,
        php.KIND,
        static.KIND,
        lua_inline.KIND,
        lua_file.KIND,
        mruby_inline.KIND,
        mruby_file.KIND,
    ),
)
KINDS: tuple[str, ...] = tuple(REGISTRY)
# The kinds with bundled files to deploy (one folder each under the apps root, from roles/webapp/files/).
BUNDLED_KINDS: tuple[str, ...] = tuple(name for name, kind in REGISTRY.items() if kind.entry)

__all__ = ["BUNDLED_KINDS", "KINDS", "REGISTRY", "AppKind", "EmbeddedApp", "by_name", "find"]


find = REGISTRY.find
by_name = REGISTRY.by_name
