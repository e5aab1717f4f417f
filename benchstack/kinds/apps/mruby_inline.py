"""A mod_mruby handler whose code is in the Apache config (mrubyHandlerCode), compiled once when Apache reads
it: nothing to deploy, no app server, no runtime of its own (the apache role builds mod_mruby)."""

from __future__ import annotations

from benchstack.kinds.apps.base import EmbeddedApp


class MrubyInline(EmbeddedApp):
    name = "mruby-inline"
    order = 90
    entry = None
    entry_note = "(the handler is `mrubyHandlerCode` in the Apache config, `SetHandler mruby-native-script`)"
    module = "mod_mruby"


KIND = MrubyInline()
