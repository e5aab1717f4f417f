"""A user's WSGI app with a dependency of its own (requirements.txt) and settings from app.env."""

import os
from collections.abc import Callable, Iterable
from typing import Any

import six


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    path = environ.get("PATH_INFO") or "/"
    if path == "/env":
        body = os.environ.get("GREETING", "(GREETING is not set)")
    elif path.startswith("/hello/"):
        body = f"Hello {path[len('/hello/') :]}!"
    else:
        body = f"Hello World! I am a user's WSGI app with six {six.__version__}!"
    data = body.encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(data)))])
    return [data]
