"""A mod_lua handler whose code is in the Apache config (a LuaQuickHandler block), compiled once when Apache
reads it: nothing to deploy, no app server, no runtime of its own."""

from __future__ import annotations

from benchstack.kinds.apps.base import EmbeddedApp


class LuaInline(EmbeddedApp):
    name = "lua-inline"
    order = 70
    entry = None
    entry_note = "(the handler is a `LuaQuickHandler` block in the Apache config)"
    module = "mod_lua"


KIND = LuaInline()
