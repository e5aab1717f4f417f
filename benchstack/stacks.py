"""Stacks: the data that names one serving path, and everything derived from it.

The app_server role (units, sockets), the nginx and apache roles (upstreams, instances, modules),
verification and the benchmark all need the same socket paths, ports and expected answers. They are computed
here, once, from the stack data, so they cannot drift apart. Ansible reaches this module through the
``bench_stacks`` filter.

An Apache front is one Apache instance per stack (``apache2@bench-NAME`` on Debian, ``httpd@bench-NAME`` on
RedHat), so stacks with different MPMs and tuning run side by side on one target. Its ``handler`` says what
the instance does: ``proxy`` (mod_proxy_balancer to the app server pool), ``static``, ``mod_php``,
``lua-inline`` or ``lua-file`` (mod_lua, the app runs inside Apache).
"""

from __future__ import annotations

import copy
import math
import re
from typing import Any

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
    "thin": {"runtime": "ruby", "apps": ["sinatra"], "upstream_keepalive": True, "options": {}},
    # rackup's WEBrick handler only listens on TCP.
    "webrick": {"runtime": "ruby", "apps": ["sinatra"], "binds": ["tcp"], "options": {}},
    "unicorn": {
        "runtime": "ruby",
        "apps": ["sinatra"],
        "options": {"workers": _WORKERS, "preload": (bool, None, None, True)},
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
    },
    "starman": {
        "runtime": "perl",
        "apps": ["psgi"],
        "options": {"workers": _WORKERS, "max_requests": (int, 1, 10_000_000, 1000)},
    },
    "gunicorn": {
        "runtime": "python",
        "apps": ["wsgi"],
        "options": {"workers": _WORKERS, "max_requests": _MAX_REQUESTS},
    },
    "uvicorn": {
        "runtime": "python",
        "apps": ["asgi"],
        "upstream_keepalive": True,
        "options": {"workers": (int, 1, 64, 1)},
    },
    # php-fpm speaks FastCGI, so it always sits behind a front.
    "php-fpm": {
        "runtime": "php",
        "apps": ["php"],
        "protocol": "fastcgi",
        "options": {"workers": _WORKERS, "max_requests": _MAX_REQUESTS},
    },
}
SERVER_COMMON_KEYS = {"kind", "instances", "bind", "port_base"}
# Keys normalize_stack derives itself (normalizing a normalized stack gives the same stack).
SERVER_DERIVED_KEYS = {"unit", "protocol", "upstream_keepalive"}
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
# Keys normalize_stack derives for an apache front (normalizing a normalized stack gives the same stack).
APACHE_DERIVED_KEYS = {"instance", "handler", "modules", "modules_off", "mpm_directives"}
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


class StackError(ValueError):
    """A stack definition is invalid; the message names the stack and the field."""


def _err(name: object, field: str, msg: str) -> StackError:
    return StackError(f"stack {name!r}: {field}: {msg}")


def _mapping(s: dict[str, Any], key: str, default: dict[str, Any]) -> dict[str, Any]:
    """``s[key]`` (set to ``default`` when absent); a StackError naming the field when it is not a mapping."""
    value = s.setdefault(key, default)
    if not isinstance(value, dict):
        raise _err(s.get("name"), key, f"must be a mapping, not {type(value).__name__}")
    return value


def normalize_stack(
    stack: dict[str, Any], run_root: str = "/run/bench-stack", app_root: str = "/opt/bench-stack/apps"
) -> dict[str, Any]:
    """Fill in defaults and derive units, endpoints and checks; raise StackError on bad input."""
    if not isinstance(stack, dict):
        raise StackError(f"a stack must be a mapping, not {type(stack).__name__}")
    s = copy.deepcopy(stack)
    name = s.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise _err(name, "name", "must be 1-48 lowercase letters, digits or '-' (it names units and sockets)")
    port = s.get("port")
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise _err(name, "port", f"must be an integer from 1 to 65535, not {port!r}")

    app = _mapping(s, "app", {})
    kind = app.get("kind")
    if kind in UNAVAILABLE_APP_KINDS:
        raise _err(name, "app.kind", f"{kind}: {UNAVAILABLE_APP_KINDS[kind]}")
    if kind not in APP_KINDS:
        raise _err(name, "app.kind", f"must be one of {', '.join(APP_KINDS)}, not {kind!r}")
    app_dir = app.setdefault("dir", f"{app_root}/{kind}")
    if not isinstance(app_dir, str) or not app_dir.startswith("/") or ".." in app_dir.split("/"):
        raise _err(name, "app.dir", f"must be an absolute path on the target, not {app_dir!r}")
    app["entry"] = APP_KINDS[kind]["entry"]
    app.setdefault("checks", copy.deepcopy(APP_KINDS[kind]["checks"]))
    runtime = _mapping(s, "runtime", {"kind": APP_KINDS[kind]["runtime"]})
    runtime.setdefault("kind", APP_KINDS[kind]["runtime"])
    if runtime.get("kind") != APP_KINDS[kind]["runtime"]:
        raise _err(name, "runtime.kind", f"app {kind} runs on {APP_KINDS[kind]['runtime']}")
    _runtime_version(name, runtime)

    front = _mapping(s, "front", {"kind": "none"})
    if front.get("kind") not in FRONT_KINDS:
        raise _err(name, "front.kind", f"must be one of {', '.join(FRONT_KINDS)}, not {front.get('kind')!r}")
    if front["kind"] == "nginx":
        front.setdefault("profile", "tuned")
        if front["profile"] not in FRONT_PROFILES:
            raise _err(name, "front.profile", f"must be one of {', '.join(FRONT_PROFILES)}")
    elif front["kind"] == "apache":
        _apache_front(name, front)

    server = s.get("server")
    embedded = APP_KINDS[kind].get("embedded", False)
    mod_php = kind == "php" and front["kind"] == "apache" and not server
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
        return s
    if not isinstance(server, dict):
        hint = " (or front.kind apache, which runs it with mod_php)" if kind == "php" else ""
        raise _err(name, "server", f"app {kind} needs an app server (one of {', '.join(SERVER_KINDS)}){hint}")
    skind = server.get("kind")
    if skind not in SERVER_KINDS:
        raise _err(name, "server.kind", f"must be one of {', '.join(SERVER_KINDS)}, not {skind!r}")
    if kind not in SERVER_KINDS[skind]["apps"]:
        raise _err(name, "server.kind", f"{skind} cannot serve app {kind}")
    instances = server.setdefault("instances", 1)
    if not isinstance(instances, int) or isinstance(instances, bool) or not 1 <= instances <= MAX_INSTANCES:
        raise _err(name, "server.instances", f"must be an integer from 1 to {MAX_INSTANCES}")
    spec = SERVER_KINDS[skind]
    binds = spec.get("binds", list(BINDS))
    bind = server.setdefault("bind", "tcp" if front["kind"] == "none" else binds[0])
    if bind not in BINDS:
        raise _err(name, "server.bind", f"must be one of {', '.join(BINDS)}, not {bind!r}")
    if bind not in binds:
        raise _err(name, "server.bind", f"{skind} listens on {' or '.join(binds)} only, not {bind}")
    server["protocol"] = spec.get("protocol", "http")
    server["upstream_keepalive"] = spec.get("upstream_keepalive", False)
    if server["protocol"] != "http" and front["kind"] == "none":
        raise _err(name, "front.kind", f"{skind} speaks {server['protocol']}, not HTTP: it needs a front")
    if front["kind"] == "apache":
        if server["protocol"] != "http":
            raise _err(
                name,
                "front.kind",
                f"{skind} speaks {server['protocol']}; the apache front proxies HTTP only "
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

    base = server.get("port_base", TCP_BACKEND_BASE + (port % 1000) * 10)
    if bind == "tcp" and front["kind"] != "none":
        if (
            not isinstance(base, int)
            or isinstance(base, bool)
            or not 1 <= base + 1 <= base + instances <= 65535
        ):
            raise _err(
                name,
                "server.port_base",
                f"must be an integer that keeps ports base+1..base+{instances} in 1-65535, not {base!r}",
            )
        if base < port <= base + instances:
            raise _err(name, "server.port_base", f"a backend would listen on the stack's own port {port}")

    server["unit"] = f"bench-{name}@.service"
    endpoints = []
    for i in range(1, instances + 1):
        ep: dict[str, Any] = {"instance": i, "unit": f"bench-{name}@{i}.service"}
        if front["kind"] == "none":
            ep.update(socket=None, host="0.0.0.0", port=port)
        elif bind == "unix":
            ep.update(socket=f"{run_root}/{name}-{i}/server.sock", host=None, port=None)
        else:
            ep.update(socket=None, host="127.0.0.1", port=base + i)
        endpoints.append(ep)
    s["endpoints"] = endpoints
    return s


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
        derived=APACHE_DERIVED_KEYS,
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
    _typed_keys(name, "runtime", runtime, "key", keys=RUNTIME_KEYS, derived=set(), options={})
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
        derived=SERVER_DERIVED_KEYS,
        options=options,
    )


def _typed_keys(
    name: str,
    section: str,
    mapping: dict[str, Any],
    what: str,
    *,
    keys: set[str],
    derived: set[str],
    options: dict[str, TypedOption],
) -> None:
    """Check the keys of a stack's ``section`` (``server``, ``front``, ``runtime``); fill in typed defaults.

    A key that is none of ``keys``, the typed ``options`` and the keys normalize_stack ``derived`` itself is
    an error naming ``section.key``, what it is not (``what``: "option of unicorn") and the allowed keys.
    Each typed option gets its default when absent and must be of its type (and within its range).
    """
    allowed = keys | set(options)
    unknown = sorted(set(mapping) - allowed - derived, key=str)
    if unknown:
        raise _err(name, f"{section}.{unknown[0]}", f"unknown {what} (allowed: {', '.join(sorted(allowed))})")
    for key, (typ, lo, hi, default) in options.items():
        value = mapping.setdefault(key, default)
        if value is None and default is None:
            continue  # an optional option left unset
        if typ is bool:
            if not isinstance(value, bool):
                raise _err(name, f"{section}.{key}", f"must be true or false, not {value!r}")
        elif not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            raise _err(name, f"{section}.{key}", f"must be an integer from {lo} to {hi}, not {value!r}")


def normalize_stacks(
    stacks: list[dict[str, Any]], run_root: str = "/run/bench-stack", app_root: str = "/opt/bench-stack/apps"
) -> list[dict[str, Any]]:
    """Normalize every stack and check that names and every listening port are unique on the target."""
    note("resolve")
    if not isinstance(stacks, list):
        raise StackError("stacks must be a list")
    out = [normalize_stack(s, run_root, app_root) for s in stacks]
    names: set[str] = set()
    ports: dict[int, str] = {}
    for s in out:
        if s["name"] in names:
            raise _err(s["name"], "name", "used by two stacks")
        names.add(s["name"])
        listening = {s["port"]} | {ep["port"] for ep in s["endpoints"] if ep["port"] is not None}
        for p in sorted(listening):
            if p in ports and ports[p] != s["name"]:
                raise _err(s["name"], "port", f"{p} is also used by stack {ports[p]!r}")
            ports[p] = s["name"]
    return out


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
    """What a target must have installed for these stacks: runtimes, gems, apps, fronts."""
    norm = normalize_stacks(stacks)
    gems: list[str] = []
    pips: list[str] = []
    perls: list[str] = []
    for s in norm:
        for pkg in PIP_BY_SERVER.get(s["server"]["kind"], []) if s["server"] else []:
            if pkg not in pips:
                pips.append(pkg)
        for module in PERL_BY_SERVER.get(s["server"]["kind"], []) if s["server"] else []:
            if module not in perls:
                perls.append(module)
        for gem in GEMS_BY_APP.get(s["app"]["kind"], []) + (
            GEMS_BY_SERVER.get(s["server"]["kind"], []) if s["server"] else []
        ):
            if gem not in gems:
                gems.append(gem)
    return {
        "runtimes": sorted({s["runtime"]["kind"] for s in norm} - {"none"}),
        "ruby_gems": gems,
        "ruby_versions": sorted({s["runtime"]["version"] for s in norm if "version" in s["runtime"]}),
        "python_packages": pips,
        "perl_modules": perls,
        # Apps with files to deploy (lua-inline lives in the Apache config).
        "app_kinds": sorted({s["app"]["kind"] for s in norm if s["app"]["entry"]}),
        "fronts": sorted({s["front"]["kind"] for s in norm} - {"none"}),
        "servers": sorted({s["server"]["kind"] for s in norm if s["server"]}),
        "apache_handlers": sorted({s["front"]["handler"] for s in norm if s["front"]["kind"] == "apache"}),
    }


def instance_checks(stacks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One request per app server instance and expected answer, asked on the target itself.

    Asking every instance directly proves that every member of a pool serves, not just the one a
    front happens to pick.
    """
    out = []
    for s in normalize_stacks(stacks):
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
    """One request per stack and check through its public port, as a loadgen reaches ``host``."""
    host_part = f"[{host}]" if ":" in host else host
    return [
        {
            "stack": s["name"],
            "via": f"port {s['port']} ({' '.join([s['front']['kind'], s['front'].get('mpm', '')]).strip()})",
            "url": f"http://{host_part}:{s['port']}{check['path']}",
            "unix_socket": None,
            "body": check["body"],
        }
        for s in normalize_stacks(stacks)
        for check in s["app"]["checks"]
    ]
