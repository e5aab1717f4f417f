from collections.abc import Callable, Iterable


def app(environ: dict[str, object], start_response: Callable[..., object]) -> Iterable[bytes]:
    start_response("200 OK", [])
    return [b"Hello"]
