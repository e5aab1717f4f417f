"""A mod_lua script (hello.lua) that Apache reads and compiles on every request (LuaCodeCache never): no app
server, no runtime of its own."""

from __future__ import annotations

from benchstack.kinds.apps.base import EmbeddedApp


class LuaFile(EmbeddedApp):
    name = "lua-file"
    order = 80
    entry = "hello.lua"
    entry_note = "with a `handle(r)` function, read on every request (`LuaCodeCache never`)"
    module = "mod_lua"


KIND = LuaFile()
