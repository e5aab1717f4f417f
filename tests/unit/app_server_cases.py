"""Stacks of every server kind the app_server role runs, in the variants its unit, env and config files
differ by (bind, front, instances, options, an rbenv Ruby, a bundled app), with the host values their
commands leave to the role. tests/data/app_server/files.json holds what they rendered to before the start
commands moved into benchstack.kinds.servers (main at 2d97fdd): test_app_server_units.py holds every file to
it."""

from typing import Any

RBENV = {"3.1.2": "/opt/rbenv/versions/3.1.2/bin"}
HANDLER = "/var/lib/gems/3.1.0/gems/prefork_engine-0.0.7/example/starlet.rb"


def case(
    kind: str, app: str, front: str = "nginx", runtime: dict[str, Any] | None = None, **server: Any
) -> dict[str, Any]:
    return {
        "name": f"s-{kind}",
        "port": 8100,
        "app": {"kind": app},
        **({"runtime": runtime} if runtime else {}),
        "server": {"kind": kind, **server},
        "front": {"kind": front},
    }


# case id -> (experiment stack, extra role variables)
CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "thin-unix": (case("thin", "sinatra", instances=2, bind="unix"), {}),
    "thin-tcp": (case("thin", "sinatra", bind="tcp"), {}),
    "thin-direct": (case("thin", "sinatra", "none"), {}),
    "thin-bundled": (case("thin", "sinatra"), {"bundled": True}),
    "thin-rbenv": (case("thin", "sinatra", runtime={"kind": "ruby", "version": "3.1.2"}), {}),
    "webrick-tcp": (case("webrick", "sinatra", instances=2), {}),
    "webrick-direct": (case("webrick", "sinatra", "none"), {}),
    "webrick-bundled": (case("webrick", "sinatra"), {"bundled": True}),
    "unicorn-unix": (case("unicorn", "sinatra", workers=3, preload=False, bind="unix"), {}),
    "unicorn-tcp": (case("unicorn", "sinatra", instances=2, bind="tcp"), {}),
    "unicorn-direct": (case("unicorn", "sinatra", "none", workers=1), {}),
    "unicorn-bundled-rbenv": (
        case("unicorn", "sinatra", runtime={"kind": "ruby", "version": "3.1.2"}),
        {"bundled": True},
    ),
    "puma-unix": (case("puma", "sinatra", workers=2, threads=4, preload=True, bind="unix"), {}),
    "puma-tcp-single": (case("puma", "sinatra", instances=2, threads=8, bind="tcp"), {}),
    "puma-direct": (case("puma", "sinatra", "none"), {}),
    "puma-bundled": (case("puma", "sinatra"), {"bundled": True}),
    "starlet-unix": (case("starlet", "sinatra", workers=8, max_request_per_child=500), {}),
    "starlet-tcp-min": (
        case("starlet", "sinatra", bind="tcp", max_request_per_child=1000, min_request_per_child=800),
        {},
    ),
    "starlet-direct-rbenv": (
        case("starlet", "sinatra", "none", runtime={"kind": "ruby", "version": "3.1.2"}),
        {},
    ),
    "starman-unix": (case("starman", "psgi", instances=2, workers=3, max_requests=50), {}),
    "starman-tcp": (case("starman", "psgi", bind="tcp"), {}),
    "starman-direct": (case("starman", "psgi", "none", workers=4), {}),
    "gunicorn-unix": (case("gunicorn", "wsgi", workers=4, max_requests=100, bind="unix"), {}),
    "gunicorn-tcp": (case("gunicorn", "wsgi", instances=3, bind="tcp"), {}),
    "gunicorn-direct": (case("gunicorn", "wsgi", "none"), {}),
    "uvicorn-unix": (case("uvicorn", "asgi", workers=2, bind="unix"), {}),
    "uvicorn-tcp": (case("uvicorn", "asgi", bind="tcp"), {}),
    "uvicorn-direct": (case("uvicorn", "asgi", "none"), {}),
    "php-fpm-unix": (case("php-fpm", "php", workers=5, max_requests=10, bind="unix"), {}),
    "php-fpm-tcp": (case("php-fpm", "php", instances=2, bind="tcp"), {}),
    "php-fpm-pinned": (case("php-fpm", "php", "nginx", bind="tcp"), {"cpu": "1"}),
}


def role_variables(stack: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """The role variables a play would have for the resolved ``stack`` of a case."""
    return {
        "app_server_ruby_bin_dirs": RBENV,
        "app_server_bundled_apps": [stack["app"]["dir"]] if extra.get("bundled") else [],
        "app_server_cpu_affinity": extra.get("cpu", ""),
        "__app_server_starlet_handlers": {stack["name"]: HANDLER},
    }
