"""A folder of static files (index.html and the 1 KB 1k.html) that the front serves itself, nginx or Apache:
no app server, no runtime."""

from __future__ import annotations

from benchstack.kinds.apps.base import AppKind


def _one_kb_body() -> str:
    """The bundled static 1 KB file (roles/webapp/files/static/1k.html): 32 lines of 32 bytes."""
    lines = ["Hello World! I am static, 1 KB!\n"]
    lines += [f"{i:02d}" + "-" * 29 + "\n" for i in range(1, 32)]
    return "".join(lines)


ONE_KB_BODY = _one_kb_body()


class Static(AppKind):
    name = "static"
    order = 60
    runtime = "none"
    entry = "index.html"
    entry_note = "(and the bundled `1k.html`, 1024 bytes)"
    fronts = ("nginx", "apache")
    front_only = True
    apache_handler = "static"

    def checks(self) -> list[dict[str, str]]:
        return [
            {"path": "/index.html", "body": "Hello World! I am static!\n"},
            {"path": "/1k.html", "body": ONE_KB_BODY},
        ]


KIND = Static()
