"""The PSGI hello app (app.psgi) on Perl, served by Starman."""

from __future__ import annotations

from benchstack.kinds.apps.base import AppKind


class Psgi(AppKind):
    name = "psgi"
    order = 20
    interface = "psgi"
    runtime = "perl"
    entry = "app.psgi"


KIND = Psgi()
