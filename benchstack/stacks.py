"""Stacks: the data that names one serving path, validated and resolved into everything derived from it.

The app_server role (units, sockets, env and config files), the nginx and apache roles (upstreams, pool
members, instances, modules), verification and the benchmark all need the same socket paths, ports, unit
names and expected answers. They are computed here, once per run, from the stack data
(:func:`resolve_stacks`, called by :mod:`benchstack.plan`), so no template rebuilds a path or an address.
Every value that reaches a config file is validated for its context here too: names, paths and URL paths
are refused when they could break out of a config line (newlines, ``;``, braces, quotes, spaces).

An Apache front is one Apache instance per stack (``apache2@bench-NAME`` on Debian, ``httpd@bench-NAME`` on
RedHat), so stacks with different MPMs and tuning run side by side on one target. Its ``handler`` says what
the instance does: ``proxy`` (mod_proxy_balancer to the app server pool), ``static``, ``mod_php``,
``lua-inline`` or ``lua-file`` (mod_lua, the app runs inside Apache).
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import asdict, dataclass
from typing import Any

from benchstack.loadcmd import http_url
from benchstack.numbers import is_int
from benchstack.trace import note


def _hello_checks(kind: str) -> list[dict[str, str]]:
    return [
        {"path": "/", "body": f"Hello World! I am {kind}!"},
        {"path": "/hello/bar", "body": "Hello bar!"},
    ]


def _one_kb_body() -> str:
    """The bundled static 1 KB file (roles/app/files/static/1k.html): 32 lines of 32 bytes."""
    lines = ["Hello World! I am static, 1 KB!\n"]
    lines += [f"{i:02d}" + "-" * 29 + "\n" for i in range(1, 32)]
    return "".join(lines)


STATIC_1K_BODY = _one_kb_body()

APP_KINDS: dict[str, dict[str, Any]] = {
    # kind -> runtime it needs, the file a user-supplied app dir must hold, and the answers every
    # deployment of it must give. Every hello app answers GET / and GET /hello/:name like the Sinatra app.
    "sinatra": {"runtime": "ruby", "entry": "config.ru", "checks": _hello_checks("sinatra")},
    "psgi": {"runtime": "perl", "entry": "app.psgi", "checks": _hello_checks("psgi")},
    "wsgi": {"runtime": "python", "entry": "app.py", "checks": _hello_checks("wsgi")},
    "asgi": {"runtime": "python", "entry": "app.py", "checks": _hello_checks("asgi")},
    "php": {"runtime": "php", "entry": "index.php", "checks": _hello_checks("php")},
    "static": {
        "runtime": "none",
        "entry": "index.html",
        "checks": [
            {"path": "/index.html", "body": "Hello World! I am static!\n"},
            {"path": "/1k.html", "body": STATIC_1K_BODY},
        ],
    },
    # Apps that run inside Apache (mod_lua): no app server, no runtime of their own. lua-inline's code is in
    # the Apache config (a LuaQuickHandler block), so it has no files; lua-file's hello.lua is read and
    # compiled on every request (LuaCodeCache never).
    "lua-inline": {
        "runtime": "none",
        "entry": None,
        "embedded": True,
        "checks": [{"path": "/", "body": "Hello World! I am lua-inline!"}],
    },
    "lua-file": {
        "runtime": "none",
        "entry": "hello.lua",
        "embedded": True,
        "checks": [{"path": "/hello.lua", "body": "Hello World! I am lua-file!"}],
    },
}
# App kinds that are known but cannot be deployed here, with the reason.
_MRUBY_REASON = (
    "mod_mruby is built from its source repository (apache role: apache_mod_mruby_repo and "
    "apache_mod_mruby_version, with apxs), which cannot be fetched offline; not available here "
    "(use lua-inline / lua-file, its mod_lua peers)"
)
UNAVAILABLE_APP_KINDS: dict[str, str] = {"mruby-inline": _MRUBY_REASON, "mruby-file": _MRUBY_REASON}

# Typed server options: name -> (type, minimum, maximum, default). Integers are bounded; bools are bools.
_WORKERS = (int, 1, 64, 2)
_MAX_REQUESTS = (int, 0, 10_000_000, 0)
SERVER_KINDS: dict[str, dict[str, Any]] = {
    # kind -> runtime, apps it serves, binds it supports, protocol it speaks to a front, typed options, and
    # upstream_keepalive: whether a front should keep idle connections to it. Only servers that keep
    # connections open longer than the front's pool timeout qualify: unicorn and gunicorn (sync) close after
    # every response, WEBrick closes idle ones after 2 s (a pool would race those closes into 502s), and a
    # prefork worker (Starman, php-fpm) would sit on one idle pooled connection while others wait.
    #
    # How an instance is told where to listen: ``listen`` (per bind) are command-line arguments, formatted
    # with the endpoint (``{socket}``, ``{host}``, ``{port}``); a kind with a ``config`` file (its extension)
    # reads ``config_listen`` from it instead.
    "thin": {
        "runtime": "ruby",
        "apps": ["sinatra"],
        "upstream_keepalive": True,
        "options": {},
        "listen": {"unix": "--socket {socket}", "tcp": "--address {host} --port {port}"},
    },
    # rackup's WEBrick handler only listens on TCP.
    "webrick": {
        "runtime": "ruby",
        "apps": ["sinatra"],
        "binds": ["tcp"],
        "options": {},
        "listen": {"tcp": "--host {host} --port {port}"},
    },
    "unicorn": {
        "runtime": "ruby",
        "apps": ["sinatra"],
        "options": {"workers": _WORKERS, "preload": (bool, None, None, True)},
        "config": "unicorn.rb",
        "config_listen": {"unix": "{socket}", "tcp": "{host}:{port}"},
    },
    # workers 0 is puma's single mode (one process, `threads` threads).
    "puma": {
        "runtime": "ruby",
        "apps": ["sinatra"],
        "upstream_keepalive": True,
        "options": {
            "workers": (int, 0, 64, 0),
            "threads": (int, 1, 256, 5),
            "preload": (bool, None, None, False),
        },
        "config": "puma.rb",
        "config_listen": {"unix": "unix://{socket}", "tcp": "tcp://{host}:{port}"},
    },
    # The seed's Starlet-style server: the Rack handler Rack::Handler::Starlet that the prefork_engine gem
    # ships as example/starlet.rb, run by rackup under Server::Starter's start_server (which holds the unix
    # or TCP socket). It answers HTTP/1.0 with Connection: close, so a front keeps no idle connections to
    # it. min_request_per_child (optional, None: unset) makes each worker's limit random in min..max.
    "starlet": {
        "runtime": "ruby",
        "apps": ["sinatra"],
        "options": {
            "workers": _WORKERS,
            "max_request_per_child": (int, 1, 10_000_000, 1000),
            "min_request_per_child": (int, 1, 10_000_000, None),
        },
        "listen": {"unix": "--path {socket}", "tcp": "--port {host}:{port}"},
    },
    "starman": {
        "runtime": "perl",
        "apps": ["psgi"],
        "options": {"workers": _WORKERS, "max_requests": (int, 1, 10_000_000, 1000)},
        "listen": {"unix": "--path {socket}", "tcp": "--port {host}:{port}"},
    },
    "gunicorn": {
        "runtime": "python",
        "apps": ["wsgi"],
        "options": {"workers": _WORKERS, "max_requests": _MAX_REQUESTS},
        "listen": {"unix": "--bind unix:{socket}", "tcp": "--bind {host}:{port}"},
    },
    "uvicorn": {
        "runtime": "python",
        "apps": ["asgi"],
        "upstream_keepalive": True,
        "options": {"workers": (int, 1, 64, 1)},
        "listen": {"unix": "--uds {socket}", "tcp": "--host {host} --port {port}"},
    },
    # php-fpm speaks FastCGI, so it always sits behind a front.
    "php-fpm": {
        "runtime": "php",
        "apps": ["php"],
        "protocol": "fastcgi",
        "options": {"workers": _WORKERS, "max_requests": _MAX_REQUESTS},
        "config": "php-fpm.conf",
        "config_listen": {"unix": "{socket}", "tcp": "{host}:{port}"},
    },
}
SERVER_COMMON_KEYS = {"kind", "instances", "bind", "port_base"}
STACK_KEYS = {"name", "port", "path", "app", "runtime", "server", "front"}
APP_KEYS = {"kind", "dir", "checks"}
CHECK_KEYS = {"path", "body"}
NGINX_FRONT_KEYS = {"kind", "profile"}
FRONT_KINDS = ("none", "nginx", "apache")
FRONT_PROFILES = ("stock", "tuned")
APACHE_MPMS = ("prefork", "worker", "event")
# Typed MPM tuning keys of an apache front: key -> (directive, minimum, maximum, default). The defaults are
# Debian's shipped mods-available/mpm_*.conf.
_APACHE_PREFORK: dict[str, tuple[str, int, int, int]] = {
    "start_servers": ("StartServers", 1, 1024, 5),
    "min_spare_servers": ("MinSpareServers", 1, 1024, 5),
    "max_spare_servers": ("MaxSpareServers", 1, 1024, 10),
    "max_request_workers": ("MaxRequestWorkers", 1, 20000, 150),
    "max_connections_per_child": ("MaxConnectionsPerChild", 0, 10_000_000, 0),
}
_APACHE_THREADED: dict[str, tuple[str, int, int, int]] = {
    "start_servers": ("StartServers", 1, 1024, 2),
    "min_spare_threads": ("MinSpareThreads", 1, 20000, 25),
    "max_spare_threads": ("MaxSpareThreads", 1, 20000, 75),
    "threads_per_child": ("ThreadsPerChild", 1, 1024, 25),
    "max_request_workers": ("MaxRequestWorkers", 1, 20000, 150),
    "max_connections_per_child": ("MaxConnectionsPerChild", 0, 10_000_000, 0),
}
APACHE_MPM_OPTIONS: dict[str, dict[str, tuple[str, int, int, int]]] = {
    "prefork": _APACHE_PREFORK,
    "worker": _APACHE_THREADED,
    "event": _APACHE_THREADED,
}
# Apache modules (Debian a2enmod names; the apache role maps them per OS) each handler needs besides the MPM.
APACHE_HANDLER_MODULES: dict[str, list[str]] = {
    "proxy": ["proxy", "proxy_http", "slotmem_shm", "proxy_balancer", "lbmethod_byrequests"],
    "static": [],
    "mod_php": ["php"],
    "lua-inline": ["lua"],
    "lua-file": ["lua"],
}
BINDS = ("unix", "tcp")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,47}$")
# Backends behind a front listen on 127.0.0.1:BASE + (port % 1000) * 10 + instance when bound to TCP
# and no port_base is given: distinct for stacks whose ports differ modulo 1000, up to 9 instances.
TCP_BACKEND_BASE = 20000
MAX_INSTANCES = 64
# A folder path that is safe in every config line it reaches (nginx root, Apache DocumentRoot and
# <Directory>, systemd WorkingDirectory=, unit and env files): absolute, each part letters, digits, '.',
# '_', '+' or '-', no '..'. Newlines, ';', braces, quotes and spaces could end a directive and start another.
SAFE_PATH_RE = re.compile(r"^(/[A-Za-z0-9._+-]+)+/?$")
# A URL path as a request line and a load tool take it: '/' then printable ASCII, no space.
URL_PATH_RE = re.compile(r"^/[!-~]*$")
MAX_CHECKS = 20
MAX_CHECK_BODY = 65536
# Ports a stack may use but that usually belong to something else on a host.
WELL_KNOWN_PORTS = {
    22: "ssh",
    25: "smtp",
    53: "dns",
    80: "http",
    443: "https",
    3306: "mysql",
    5432: "postgres",
}


def safe_path_problem(value: object) -> str | None:
    """Why ``value`` cannot be a folder path in a config file, or None when it can."""
    if not isinstance(value, str) or not SAFE_PATH_RE.match(value):
        return (
            "must be an absolute path of letters, digits, '.', '_', '+', '-' and '/' "
            f"(no spaces, quotes, ';', braces or newlines), not {value!r}"
        )
    if ".." in value.split("/"):
        return f"must not contain '..', not {value!r}"
    return None


def url_path_problem(value: object) -> str | None:
    """Why ``value`` cannot be a URL path (load path, check path), or None when it can."""
    if not isinstance(value, str) or not URL_PATH_RE.match(value):
        return f"must be a URL path starting with '/' without spaces or control characters, not {value!r}"
    return None


@dataclass(frozen=True)
class Roots:
    """The project-wide roots every derived path hangs from (bench_run_root, bench_app_root,
    bench_unit_config_dir): one value each, for every role, verify and the report."""

    # Parent of every instance's RuntimeDirectory (its socket lives there); systemd makes it under /run.
    run: str = "/run/bench-stack"
    # Folder of the bundled apps (one folder per app kind) and the default of app.dir.
    apps: str = "/opt/bench-stack/apps"
    # Per-instance env files and server configs (unicorn, puma, php-fpm).
    units: str = "/etc/bench-stack/units"

    def problems(self) -> list[str]:
        names = {"run": "bench_run_root", "apps": "bench_app_root", "units": "bench_unit_config_dir"}
        out = []
        for key, value in asdict(self).items():
            problem = safe_path_problem(value)
            if problem:
                out.append(f"{names[key]}: {problem}")
        if not out and not self.run.rstrip("/").startswith("/run/"):
            out.append(
                f"bench_run_root: must be a folder under /run (systemd's RuntimeDirectory=), not {self.run!r}"
            )
        return out

    @property
    def run_relative(self) -> str:
        """The run root as systemd's RuntimeDirectory= takes it: relative to /run."""
        return self.run.rstrip("/").removeprefix("/run/")


DEFAULT_ROOTS = Roots()


class StackError(ValueError):
    """Stack definitions are invalid; ``problems`` lists every problem found, each naming its stack and
    field."""

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


def _err(name: object, field: str, msg: str) -> StackError:
    return StackError(f"stack {name!r}: {field}: {msg}")


def _mapping(s: dict[str, Any], key: str, default: dict[str, Any]) -> dict[str, Any]:
    """``s[key]`` (set to ``default`` when absent); a StackError naming the field when it is not a mapping."""
    value = s.setdefault(key, default)
    if not isinstance(value, dict):
        raise _err(s.get("name"), key, f"must be a mapping, not {type(value).__name__}")
    return value


def resolve_stack(stack: dict[str, Any], roots: Roots = DEFAULT_ROOTS) -> dict[str, Any]:
    """The stack with defaults filled in and everything derived (upstream, units, endpoints with their
    addresses, files and listen arguments); StackError listing every problem otherwise.

    Independent parts (name and port, app, runtime, front) are each checked even when another one failed, so
    one run reports every problem of the stack; the server is checked once the app and front are valid.
    """
    if not isinstance(stack, dict):
        raise StackError(f"a stack must be a mapping, not {type(stack).__name__}")
    s = copy.deepcopy(stack)
    problems: list[str] = []

    def check(part: Any) -> bool:
        try:
            part(s, roots)
        except StackError as exc:
            problems.extend(exc.problems)
            return False
        return True

    check(_identity)
    app_ok = check(_app)
    if app_ok:
        check(_runtime)
    front_ok = check(_front)
    if app_ok and front_ok:
        check(_server)
    if problems:
        raise StackError(problems)
    return s


def _identity(s: dict[str, Any], roots: Roots) -> None:
    name = s.get("name")
    problems = [
        f"stack {name!r}: {key}: unknown field (allowed: {', '.join(sorted(STACK_KEYS))})"
        for key in sorted(set(s) - STACK_KEYS, key=str)
    ]
    if not isinstance(name, str) or not NAME_RE.match(name):
        problems.append(
            f"stack {name!r}: name: must be 1-48 lowercase letters, digits or '-', starting with a letter or "
            "digit (it names units, sockets and config blocks)"
        )
    port = s.get("port")
    if not is_int(port) or not 1 <= port <= 65535:
        problems.append(f"stack {name!r}: port: must be an integer from 1 to 65535, not {port!r}")
    if "path" in s and (problem := url_path_problem(s["path"])):
        problems.append(f"stack {name!r}: path: {problem}")
    if problems:
        raise StackError(problems)


def _app(s: dict[str, Any], roots: Roots) -> None:
    name = s.get("name")
    app = _mapping(s, "app", {})
    problems = [
        f"stack {name!r}: app.{key}: unknown field (allowed: {', '.join(sorted(APP_KEYS))})"
        for key in sorted(set(app) - APP_KEYS, key=str)
    ]
    kind = app.get("kind")
    if kind in UNAVAILABLE_APP_KINDS:
        raise _err(name, "app.kind", f"{kind}: {UNAVAILABLE_APP_KINDS[kind]}")
    if kind not in APP_KINDS:
        raise StackError(
            [*problems, f"stack {name!r}: app.kind: must be one of {', '.join(APP_KINDS)}, not {kind!r}"]
        )
    app_dir = app.setdefault("dir", f"{roots.apps.rstrip('/')}/{kind}")
    if problem := safe_path_problem(app_dir):
        problems.append(f"stack {name!r}: app.dir: {problem}")
    app["entry"] = APP_KINDS[kind]["entry"]
    checks = app.setdefault("checks", copy.deepcopy(APP_KINDS[kind]["checks"]))
    problems += _check_problems(name, checks)
    if problems:
        raise StackError(problems)


def _check_problems(name: object, checks: object) -> list[str]:
    """Problems with ``app.checks``: a list of 1 to MAX_CHECKS {path, body} mappings."""
    where = f"stack {name!r}: app.checks"
    if not isinstance(checks, list) or not 1 <= len(checks) <= MAX_CHECKS:
        return [f"{where}: must be a list of 1 to {MAX_CHECKS} {{path, body}} mappings, not {checks!r}"]
    problems = []
    for i, check in enumerate(checks):
        if not isinstance(check, dict) or set(check) != CHECK_KEYS:
            problems.append(f"{where}[{i}]: must be a mapping with exactly path and body, not {check!r}")
            continue
        if problem := url_path_problem(check["path"]):
            problems.append(f"{where}[{i}].path: {problem}")
        body = check["body"]
        if not isinstance(body, str) or len(body) > MAX_CHECK_BODY:
            problems.append(
                f"{where}[{i}].body: must be the expected answer as a string of at most "
                f"{MAX_CHECK_BODY} characters"
            )
    return problems


def _runtime(s: dict[str, Any], roots: Roots) -> None:
    name, kind = s.get("name"), s["app"]["kind"]
    runtime = _mapping(s, "runtime", {"kind": APP_KINDS[kind]["runtime"]})
    runtime.setdefault("kind", APP_KINDS[kind]["runtime"])
    if runtime.get("kind") != APP_KINDS[kind]["runtime"]:
        raise _err(name, "runtime.kind", f"app {kind} runs on {APP_KINDS[kind]['runtime']}")
    _runtime_version(name, runtime)


def _front(s: dict[str, Any], roots: Roots) -> None:
    name = s.get("name")
    front = _mapping(s, "front", {"kind": "none"})
    if front.get("kind") not in FRONT_KINDS:
        raise _err(name, "front.kind", f"must be one of {', '.join(FRONT_KINDS)}, not {front.get('kind')!r}")
    if front["kind"] == "nginx":
        _typed_keys(name, "front", front, "key of an nginx front", keys=NGINX_FRONT_KEYS, options={})
        front.setdefault("profile", "tuned")
        if front["profile"] not in FRONT_PROFILES:
            raise _err(name, "front.profile", f"must be one of {', '.join(FRONT_PROFILES)}")
    elif front["kind"] == "apache":
        _apache_front(name, front)
    else:
        _typed_keys(name, "front", front, "key of front kind none", keys={"kind"}, options={})


def _server(s: dict[str, Any], roots: Roots) -> None:
    name, port, app, front = s.get("name"), s.get("port"), s["app"], s["front"]
    kind = app["kind"]
    server = s.get("server")
    embedded = APP_KINDS[kind].get("embedded", False)
    mod_php = kind == "php" and front["kind"] == "apache" and not server
    s["upstream"] = None
    if kind == "static" or embedded or mod_php:
        if server:
            raise _err(name, "server", f"app {kind} is served by its front, not by an app server")
        if front["kind"] == "none":
            raise _err(name, "front.kind", f"app {kind} needs a front ({'apache' if embedded else 'nginx'})")
        if embedded and front["kind"] != "apache":
            raise _err(
                name, "front.kind", f"app {kind} runs inside Apache (mod_lua): it needs front.kind apache"
            )
        if front["kind"] == "apache":
            _apache_handler(name, front, "mod_php" if mod_php else kind)
        s["server"] = None
        s["endpoints"] = []
        return
    if not isinstance(server, dict):
        hint = " (or front.kind apache, which runs it with mod_php)" if kind == "php" else ""
        raise _err(name, "server", f"app {kind} needs an app server (one of {', '.join(SERVER_KINDS)}){hint}")
    skind = server.get("kind")
    if skind not in SERVER_KINDS:
        raise _err(name, "server.kind", f"must be one of {', '.join(SERVER_KINDS)}, not {skind!r}")
    if kind not in SERVER_KINDS[skind]["apps"]:
        raise _err(name, "server.kind", f"{skind} cannot serve app {kind}")
    instances = server.setdefault("instances", 1)
    if not is_int(instances) or not 1 <= instances <= MAX_INSTANCES:
        raise _err(name, "server.instances", f"must be an integer from 1 to {MAX_INSTANCES}")
    spec = SERVER_KINDS[skind]
    binds = spec.get("binds", list(BINDS))
    bind = server.setdefault("bind", "tcp" if front["kind"] == "none" else binds[0])
    if bind not in BINDS:
        raise _err(name, "server.bind", f"must be one of {', '.join(BINDS)}, not {bind!r}")
    if bind not in binds:
        raise _err(name, "server.bind", f"{skind} listens on {' or '.join(binds)} only, not {bind}")
    protocol = spec.get("protocol", "http")
    if protocol != "http" and front["kind"] == "none":
        raise _err(name, "front.kind", f"{skind} speaks {protocol}, not HTTP: it needs a front")
    if front["kind"] == "apache":
        if protocol != "http":
            raise _err(
                name,
                "front.kind",
                f"{skind} speaks {protocol}; the apache front proxies HTTP only "
                "(for PHP under Apache leave out the server: mod_php runs it)",
            )
        _apache_handler(name, front, "proxy")
    _server_options(name, server, spec["options"])
    low, high = server.get("min_request_per_child"), server.get("max_request_per_child")
    if low is not None and high is not None and low > high:
        raise _err(
            name, "server.min_request_per_child", f"must be at most server.max_request_per_child ({high})"
        )
    if front["kind"] == "none" and (instances != 1 or bind != "tcp"):
        raise _err(
            name, "server", "without a front, the server is one instance bound to TCP on the stack port"
        )
    if not is_int(port):
        return  # the port's own problem is reported; nothing can be derived from it
    base = server.get("port_base", TCP_BACKEND_BASE + (port % 1000) * 10)
    if bind == "tcp" and front["kind"] != "none":
        if not is_int(base) or not 1 <= base + 1 <= base + instances <= 65535:
            raise _err(
                name,
                "server.port_base",
                f"must be an integer that keeps ports base+1..base+{instances} in 1-65535, not {base!r}",
            )
        if base < port <= base + instances:
            raise _err(name, "server.port_base", f"a backend would listen on the stack's own port {port}")
    _derive_server(s, spec, roots, base)


def _derive_server(s: dict[str, Any], spec: dict[str, Any], roots: Roots, base: int) -> None:
    """Units, files and every instance's addresses, as the app_server, nginx and apache roles print them."""
    name, server, front = s["name"], s["server"], s["front"]
    units = roots.units.rstrip("/")
    config = spec.get("config")
    server.update(
        protocol=spec.get("protocol", "http"),
        upstream_keepalive=spec.get("upstream_keepalive", False),
        # One systemd template unit per stack; %i is the instance number.
        unit=f"bench-{name}@.service",
        unit_runtime_directory=f"{roots.run_relative}/{name}-%i",
        # One env file per stack: instance i's unit reads its listen arguments as $BENCH_LISTEN_i.
        env_file=f"{units}/{name}.env",
        unit_config_file=f"{units}/{name}-%i.{config}" if config else None,
    )
    if front["kind"] != "none":
        s["upstream"] = f"bench_{name.replace('-', '_')}"
    endpoints = []
    for i in range(1, server["instances"] + 1):
        ep: dict[str, Any] = {"instance": i, "unit": f"bench-{name}@{i}.service"}
        if front["kind"] == "none":
            ep.update(socket=None, host="0.0.0.0", port=s["port"])
        elif server["bind"] == "unix":
            ep.update(socket=f"{roots.run.rstrip('/')}/{name}-{i}/server.sock", host=None, port=None)
        else:
            ep.update(socket=None, host="127.0.0.1", port=base + i)
        bind = "unix" if ep["socket"] else "tcp"
        ep.update(
            address=f"unix:{ep['socket']}" if ep["socket"] else f"{ep['host']}:{ep['port']}",
            # Apache names each unix-socket member after '|': members sharing one name merge into one worker.
            balancer_member=(
                f"unix:{ep['socket']}|http://{name}-{i}"
                if ep["socket"]
                else f"http://{ep['host']}:{ep['port']}"
            ),
            runtime_directory=f"{roots.run_relative}/{name}-{i}",
            config_file=f"{units}/{name}-{i}.{config}" if config else None,
            listen_args=spec["listen"][bind].format(**ep) if "listen" in spec else "",
            config_listen=spec["config_listen"][bind].format(**ep) if config else None,
        )
        endpoints.append(ep)
    s["endpoints"] = endpoints
    server["environment"] = {
        f"BENCH_LISTEN_{ep['instance']}": ep["listen_args"] for ep in endpoints if ep["listen_args"]
    }


def _apache_front(name: str, front: dict[str, Any]) -> None:
    """Check an apache front's MPM and typed tuning keys; fill in defaults, instance and MPM directives."""
    mpm = front.setdefault("mpm", "event")
    if mpm not in APACHE_MPMS:
        raise _err(name, "front.mpm", f"must be one of {', '.join(APACHE_MPMS)}, not {mpm!r}")
    options = APACHE_MPM_OPTIONS[mpm]
    _typed_keys(
        name,
        "front",
        front,
        f"key of an apache front with mpm {mpm}",
        keys={"kind", "mpm"},
        options={key: (int, lo, hi, default) for key, (_directive, lo, hi, default) in options.items()},
    )
    workers = front["max_request_workers"]
    if mpm == "prefork":
        if front["min_spare_servers"] > front["max_spare_servers"]:
            raise _err(name, "front.max_spare_servers", "must be at least front.min_spare_servers")
        # Apache caps MaxRequestWorkers at ServerLimit (default 256) with only a warning.
        limits = [("ServerLimit", max(256, workers))]
    else:
        per_child = front["threads_per_child"]
        if workers % per_child:
            raise _err(
                name,
                "front.max_request_workers",
                f"must be a multiple of front.threads_per_child ({per_child}); Apache would round "
                f"{workers} down to {workers - workers % per_child}",
            )
        if front["max_spare_threads"] < front["min_spare_threads"] + per_child:
            raise _err(
                name,
                "front.max_spare_threads",
                "must be at least front.min_spare_threads + front.threads_per_child "
                f"({front['min_spare_threads'] + per_child}); Apache would raise it itself",
            )
        # ServerLimit and ThreadLimit cap the other values (defaults 16 and 64) with only a warning.
        limits = [
            ("ServerLimit", max(16, math.ceil(workers / per_child))),
            ("ThreadLimit", max(64, per_child)),
        ]
    front["instance"] = f"bench-{name}"
    front["mpm_directives"] = [[d, v] for d, v in limits] + [
        [directive, front[key]] for key, (directive, *_rest) in options.items()
    ]


def _apache_handler(name: str, front: dict[str, Any], handler: str) -> None:
    """Set what the stack's Apache instance does and the modules it needs (and must not have)."""
    if handler == "mod_php" and front["mpm"] != "prefork":
        raise _err(
            name,
            "front.mpm",
            "mod_php needs the prefork MPM (the distributions build PHP without thread safety), "
            f"not {front['mpm']}",
        )
    front["handler"] = handler
    front["modules"] = [f"mpm_{front['mpm']}", *APACHE_HANDLER_MODULES[handler]]
    front["modules_off"] = [f"mpm_{m}" for m in APACHE_MPMS if m != front["mpm"]]
    if handler != "mod_php":
        front["modules_off"].append("php")


# A Ruby version rbenv can install (3.1.2, 3.3.0-preview1, ...); it names a folder on the target.
RUBY_VERSION_RE = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(-[a-z0-9]+)?$")
RUNTIME_KEYS = {"kind", "version"}


def _runtime_version(name: str, runtime: dict[str, Any]) -> None:
    """Check ``runtime.version``: only Ruby stacks may name one (the ruby role's rbenv method installs it)."""
    _typed_keys(name, "runtime", runtime, "key", keys=RUNTIME_KEYS, options={})
    if "version" not in runtime:
        return
    version = runtime["version"]
    if runtime["kind"] != "ruby":
        raise _err(name, "runtime.version", "only a ruby runtime takes a version (installed with rbenv)")
    if not isinstance(version, str) or not RUBY_VERSION_RE.match(version):
        raise _err(name, "runtime.version", f"must be a Ruby version string such as '3.1.2', not {version!r}")


# A typed option of a stack section: (type, minimum, maximum, default). An int is bounded (minimum and maximum
# included); a bool is true or false (no bounds).
TypedOption = tuple[type, Any, Any, Any]


def _server_options(name: str, server: dict[str, Any], options: dict[str, TypedOption]) -> None:
    """Check the server's own options against its kind's typed options and fill in their defaults."""
    _typed_keys(
        name,
        "server",
        server,
        f"option of {server['kind']}",
        keys=SERVER_COMMON_KEYS,
        options=options,
    )


def _typed_keys(
    name: str,
    section: str,
    mapping: dict[str, Any],
    what: str,
    *,
    keys: set[str],
    options: dict[str, TypedOption],
) -> None:
    """Check the keys of a stack's ``section`` (``server``, ``front``, ``runtime``); fill in typed defaults.

    A key that is none of ``keys`` and the typed ``options`` is an error naming ``section.key``, what it is
    not (``what``: "option of unicorn") and the allowed keys.
    Each typed option gets its default when absent and must be of its type (and within its range).
    """
    allowed = keys | set(options)
    unknown = sorted(set(mapping) - allowed, key=str)
    if unknown:
        raise _err(name, f"{section}.{unknown[0]}", f"unknown {what} (allowed: {', '.join(sorted(allowed))})")
    for key, (typ, lo, hi, default) in options.items():
        value = mapping.setdefault(key, default)
        if value is None and default is None:
            continue  # an optional option left unset
        if typ is bool:
            if not isinstance(value, bool):
                raise _err(name, f"{section}.{key}", f"must be true or false, not {value!r}")
        elif not is_int(value) or not lo <= value <= hi:
            raise _err(name, f"{section}.{key}", f"must be an integer from {lo} to {hi}, not {value!r}")


def resolve_stacks(stacks: object, roots: Roots = DEFAULT_ROOTS) -> list[dict[str, Any]]:
    """Resolve every stack and check that names and every listening port are unique on the target;
    StackError listing every problem of every stack otherwise."""
    note("resolve")
    if not isinstance(stacks, list) or not stacks:
        raise StackError("stacks: must be a non-empty list of stacks")
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    for i, stack in enumerate(stacks):
        try:
            out.append(resolve_stack(stack, roots))
        except StackError as exc:
            problems += [p if p.startswith("stack ") else f"stacks[{i}]: {p}" for p in exc.problems]
    names: set[str] = set()
    ports: dict[int, str] = {}
    for s in out:
        if s["name"] in names:
            problems.append(f"stack {s['name']!r}: name: used by two stacks")
        names.add(s["name"])
        listening = {s["port"]} | {ep["port"] for ep in s["endpoints"] if ep["port"] is not None}
        for p in sorted(listening):
            if p in ports and ports[p] != s["name"]:
                problems.append(f"stack {s['name']!r}: port: {p} is also used by stack {ports[p]!r}")
            ports[p] = s["name"]
    if problems:
        raise StackError(problems)
    return out


def port_warnings(stacks: list[dict[str, Any]]) -> list[str]:
    """Stacks listening on ports that usually belong to another service on a host."""
    return [
        f"stack {s['name']!r}: port {s['port']} is usually {WELL_KNOWN_PORTS[s['port']]}'s: "
        "the stack will not start if that service runs on the target"
        for s in stacks
        if s["port"] in WELL_KNOWN_PORTS
    ]


GEMS_BY_APP: dict[str, list[str]] = {"sinatra": ["rack", "sinatra"]}
GEMS_BY_SERVER: dict[str, list[str]] = {
    "thin": ["thin"],
    "webrick": ["webrick"],
    "unicorn": ["unicorn"],
    "puma": ["puma"],
    # The Starlet handler requires pico_http_parser itself; prefork_engine brings proc-wait3. Both compile C.
    "starlet": ["pico_http_parser", "prefork_engine"],
}
# Perl modules (CPAN distributions, installed by the perl role) each server kind needs: Starman runs on
# Perl; the Ruby Starlet runs under Server::Starter's start_server, a Perl program.
PERL_BY_SERVER: dict[str, list[str]] = {
    "starman": ["Starman", "Server-Starter"],
    "starlet": ["Server-Starter"],
}
# Python packages (installed into the python role's venv) each server kind needs.
PIP_BY_SERVER: dict[str, list[str]] = {"gunicorn": ["gunicorn"], "uvicorn": ["uvicorn"]}


def needs(stacks: list[dict[str, Any]]) -> dict[str, Any]:
    """What a target must have installed for these resolved stacks: runtimes, gems, apps, fronts."""
    gems: list[str] = []
    pips: list[str] = []
    perls: list[str] = []
    for s in stacks:
        skind = s["server"]["kind"] if s["server"] else None
        for pkg in PIP_BY_SERVER.get(skind, []) if skind else []:
            if pkg not in pips:
                pips.append(pkg)
        for module in PERL_BY_SERVER.get(skind, []) if skind else []:
            if module not in perls:
                perls.append(module)
        for gem in GEMS_BY_APP.get(s["app"]["kind"], []) + (GEMS_BY_SERVER.get(skind, []) if skind else []):
            if gem not in gems:
                gems.append(gem)
    return {
        "runtimes": sorted({s["runtime"]["kind"] for s in stacks} - {"none"}),
        "ruby_gems": gems,
        "ruby_versions": sorted({s["runtime"]["version"] for s in stacks if "version" in s["runtime"]}),
        "python_packages": pips,
        "perl_modules": perls,
        # Apps with files to deploy (lua-inline lives in the Apache config).
        "app_kinds": sorted({s["app"]["kind"] for s in stacks if s["app"]["entry"]}),
        "fronts": sorted({s["front"]["kind"] for s in stacks} - {"none"}),
        "servers": sorted({s["server"]["kind"] for s in stacks if s["server"]}),
        "apache_handlers": sorted({s["front"]["handler"] for s in stacks if s["front"]["kind"] == "apache"}),
    }


def instance_checks(stacks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One request per app server instance and expected answer of resolved stacks, asked on the target.

    Asking every instance directly proves that every member of a pool serves, not just the one a
    front happens to pick.
    """
    out = []
    for s in stacks:
        for ep in s["endpoints"]:
            for check in s["app"]["checks"]:
                host = "127.0.0.1" if ep["socket"] or ep["host"] == "0.0.0.0" else ep["host"]
                port = f":{ep['port']}" if ep["port"] else ""
                item: dict[str, Any] = {
                    "stack": s["name"],
                    "via": f"{ep['unit']} ({'unix:' + ep['socket'] if ep['socket'] else host + port})",
                    "url": f"http://{'localhost' if ep['socket'] else host + port}{check['path']}",
                    "unix_socket": ep["socket"],
                    "body": check["body"],
                    "protocol": s["server"]["protocol"],
                }
                if item["protocol"] == "fastcgi":
                    # A FastCGI server is asked as a front would: the script and the request URI.
                    item["fastcgi"] = {
                        "connect": ep["socket"] or f"{host}{port}",
                        "script": f"{s['app']['dir']}/{s['app']['entry']}",
                        "uri": check["path"],
                    }
                out.append(item)
    return out


def front_checks(stacks: list[dict[str, Any]], host: str) -> list[dict[str, Any]]:
    """One request per resolved stack and check through its public port, as a loadgen reaches ``host``."""
    return [
        {
            "stack": s["name"],
            "via": f"port {s['port']} ({' '.join([s['front']['kind'], s['front'].get('mpm', '')]).strip()})",
            "url": http_url(host, s["port"], check["path"]),
            "unix_socket": None,
            "body": check["body"],
        }
        for s in stacks
        for check in s["app"]["checks"]
    ]
