"""A mod_mruby script (hello.rb) that Apache reads and compiles on every request (mod_mruby's mruby-script
handler never caches): no app server, no runtime of its own (the apache role builds mod_mruby)."""

from __future__ import annotations

from benchstack.kinds.apps.base import EmbeddedApp


class MrubyFile(EmbeddedApp):
    name = "mruby-file"
    order = 100
    entry = "hello.rb"
    entry_note = "(run on every request: `AddHandler mruby-script .rb`, read and compiled each time)"
    module = "mod_mruby"


KIND = MrubyFile()
