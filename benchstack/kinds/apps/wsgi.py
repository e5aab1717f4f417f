"""The WSGI hello app (app.py) on Python, served by gunicorn from the stacks' venv."""

from __future__ import annotations

from benchstack.kinds.apps.base import AppKind


class Wsgi(AppKind):
    name = "wsgi"
    order = 30
    interface = "wsgi"
    runtime = "python"
    entry = "app.py"
    entry_note = "with `app`"


KIND = Wsgi()
