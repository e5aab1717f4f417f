"""The WSGI hello app: answers like the Sinatra app (GET / and GET /hello/:name)."""

from collections.abc import Callable, Iterable
from typing import Any

HEADERS = [("Content-Type", "text/html;charset=utf-8")]


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    path = environ.get("PATH_INFO") or "/"
    body = None
    if environ["REQUEST_METHOD"] in ("GET", "HEAD"):
        if path == "/":
            body = b"Hello World! I am wsgi!"
        elif path.startswith("/hello/") and "/" not in path[7:] and path[7:]:
            body = f"Hello {path[7:]}!".encode()
    if body is None:
        start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", "9")])
        return [b"Not Found"]
    start_response("200 OK", [*HEADERS, ("Content-Length", str(len(body)))])
    return [body]
