"""The ASGI hello app: answers like the Sinatra app (GET / and GET /hello/:name)."""

from collections.abc import Awaitable, Callable
from typing import Any


async def app(
    scope: dict[str, Any],
    receive: Callable[[], Awaitable[dict[str, Any]]],
    send: Callable[[dict[str, Any]], Awaitable[None]],
) -> None:
    if scope["type"] != "http":
        return
    path = scope["path"] or "/"
    status, body = 404, b"Not Found"
    if scope["method"] in ("GET", "HEAD"):
        if path == "/":
            status, body = 200, b"Hello World! I am asgi!"
        elif path.startswith("/hello/") and "/" not in path[7:] and path[7:]:
            status, body = 200, f"Hello {path[7:]}!".encode()
    headers = [(b"content-type", b"text/html;charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
