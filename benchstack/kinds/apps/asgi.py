"""The ASGI hello app (app.py) on Python, served by uvicorn from the stacks' venv."""

from __future__ import annotations

from benchstack.kinds.apps.base import AppKind


class Asgi(AppKind):
    name = "asgi"
    order = 40
    interface = "asgi"
    runtime = "python"
    entry = "app.py"
    entry_note = "with `app`"


KIND = Asgi()
