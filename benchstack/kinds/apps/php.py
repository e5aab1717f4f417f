"""The PHP hello app (index.php, a front controller): behind nginx from php-fpm (FastCGI), or without an app
server inside an Apache front (mod_php, prefork only)."""

from __future__ import annotations

from benchstack.kinds.apps.base import AppKind


class Php(AppKind):
    name = "php"
    order = 50
    interface = "php"
    runtime = "php"
    entry = "index.php"
    entry_note = "(every path runs it; no other file of the folder is served, by nginx or Apache)"
    # Without a server, an Apache front runs it itself.
    fronts = ("apache",)
    apache_handler = "mod_php"


KIND = Php()
