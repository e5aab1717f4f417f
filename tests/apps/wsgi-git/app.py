"""A user's WSGI app that the user-apps scenario serves from a git repository (tag v1.0)."""

from collections.abc import Callable, Iterable
from typing import Any


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    path = environ.get("PATH_INFO") or "/"
    if path.startswith("/hello/"):
        body = f"Hello {path[len('/hello/') :]}!"
    else:
        body = "Hello World! I am a WSGI app from git!"
    data = body.encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(data)))])
    return [data]
