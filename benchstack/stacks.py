"""Stacks: the data that names one serving path, validated and resolved into everything derived from it.

The app_server role (units, sockets, env and config files), the nginx and apache roles (upstreams, pool
members, instances, modules), verification and the benchmark all need the same socket paths, ports, unit
names and expected answers. They are computed here, once per run, from the stack data
(:func:`resolve_stacks`, called by :mod:`benchstack.plan`), so no template rebuilds a path or an address.
Every value that reaches a config file is validated for its context here too: names, paths and URL paths
are refused when they could break out of a config line (newlines, ``;``, braces, quotes, spaces).

An Apache front is one Apache instance per stack (``apache2@bench-NAME`` on Debian, ``httpd@bench-NAME`` on
RedHat), so stacks with different MPMs and tuning run side by side on one target. Its ``handler`` says what
the instance does: ``proxy`` (mod_proxy_balancer to the app server pool), ``static``, ``mod_php``, or an app
that runs inside Apache: ``lua-inline``, ``lua-file`` (mod_lua), ``mruby-inline``, ``mruby-file`` (mod_mruby).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchstack.inputs import shown, shown_key
from benchstack.loadcmd import http_url
from benchstack.numbers import is_int
from benchstack.paths import system_folder_problem
from benchstack.servers import BINDS, REGISTRY, ServerKind, TypedOption, by_name
from benchstack.trace import note
from benchstack.userapp import (
    DEPENDENCY_FILES,
    INSTALLED_DEPENDENCY_FILES,
    LOCK_FILES,
    REFUSED_DEPENDENCY_FILES,
    SUPPORTED_DEPENDENCY_FILES,
    AppSourceError,
    scan,
)


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
    # Apps that run inside Apache (mod_lua, mod_mruby): no app server, no runtime of their own. The -inline
    # kinds keep their code in the Apache config (lua-inline a LuaQuickHandler block, mruby-inline
    # mrubyHandlerCode), compiled once when Apache reads it, so they have no files; the -file kinds' script is
    # read and compiled on every request (lua-file: LuaCodeCache never; mruby-file: mod_mruby's
    # mruby-script handler, which never caches).
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
    "mruby-inline": {
        "runtime": "none",
        "entry": None,
        "embedded": True,
        "checks": [{"path": "/", "body": "Hello World! I am mruby-inline!"}],
    },
    "mruby-file": {
        "runtime": "none",
        "entry": "hello.rb",
        "embedded": True,
        "checks": [{"path": "/hello.rb", "body": "Hello World! I am mruby-file!"}],
    },
}

# The Apache module an embedded app kind runs in.
EMBEDDED_MODULE = {
    kind: f"mod_{kind.split('-')[0]}" for kind, spec in APP_KINDS.items() if spec.get("embedded")
}

SERVER_COMMON_KEYS = {"kind", "instances", "bind", "port_base"}
STACK_KEYS = {"name", "port", "path", "app", "runtime", "server", "front"}
APP_KEYS = {"kind", "dir", "checks", "src", "git", "env", "name"}
GIT_KEYS = {"repo", "version", "moving_ref"}
# A commit given by its (abbreviated) sha: pinned by construction.
GIT_SHA_RE = re.compile(r"^[0-9a-f]{7,40}$")
# A git ref name or sha as `git ls-remote` and `git fetch` take it (no spaces, no '..', not an option).
GIT_VERSION_RE = re.compile(r"^(?!-)(?!.*\.\.)[A-Za-z0-9._/+@-]{1,200}$")
# A repository URL or path as git takes it: no spaces, quotes or control characters, not an option.
GIT_REPO_RE = re.compile(r"^(?!-)[!#-&(-~]{1,500}$")
# An environment variable as a systemd env file and every runtime take it.
ENV_NAME_RE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
MAX_ENV_VARS = 100
MAX_ENV_VALUE = 4096
# Names bench-stack itself sets in a stack's env file.
RESERVED_ENV_PREFIXES = ("BENCH_", "BUNDLE_")
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
    # mod_alias maps every path to the entry (the vhost's AliasMatch).
    "mod_php": ["php", "alias"],
    "lua-inline": ["lua"],
    "lua-file": ["lua"],
    # mod_mruby is built by the apache role (apache_mod_mruby_repo), which writes its mruby.load.
    "mruby-inline": ["mruby"],
    "mruby-file": ["mruby"],
}
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
# ab builds its whole request, headers and host name included, in 2,048 bytes (support/ab.c of ab 2.3) and
# exits with "Request too long" past it; 1,500 characters leave room for those headers and any host name
# (apache-vs-nginx asks for a path of 1,033). A 10 kB path passed every check.
MAX_URL_PATH = 1500
# Ports below this are the system's: an app server runs as the benchmark user, who cannot listen on them
# on a host that keeps Linux's default (net.ipv4.ip_unprivileged_port_start); containers allow it, so a
# stack would pass on the local Docker hosts and fail on real ones.
FIRST_USER_PORT = 1024
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
    if not isinstance(value, str) or not SAFE_PATH_RE.fullmatch(value):
        return (
            "must be an absolute path of letters, digits, '.', '_', '+', '-' and '/' "
            f"(no spaces, quotes, ';', braces or newlines), not {shown(value)}"
        )
    if ".." in value.split("/"):
        return f"must not contain '..', not {shown(value)}"
    return None


def url_path_problem(value: object) -> str | None:
    """Why ``value`` cannot be a URL path (load path, check path), or None when it can."""
    if not isinstance(value, str) or not URL_PATH_RE.fullmatch(value):
        return (
            f"must be a URL path starting with '/' without spaces or control characters, not {shown(value)}"
        )
    if len(value) > MAX_URL_PATH:
        return f"must be a URL path of at most {MAX_URL_PATH:_} characters, not {len(value):_}"
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
            # Env files, server configs and app folders are written there: /etc itself is no root.
            problem = safe_path_problem(value) or system_folder_problem(value)
            if problem:
                out.append(f"{names[key]}: {problem}")
        if not out and not self.run.rstrip("/").startswith("/run/"):
            out.append(
                "bench_run_root: must be a folder under /run (systemd's RuntimeDirectory=), "
                f"not {shown(self.run)}"
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


def _err(who: str, field: str, msg: str) -> StackError:
    return StackError(f"{who}: {field}: {msg}")


def _mapping(s: dict[str, Any], key: str, default: dict[str, Any], who: str) -> dict[str, Any]:
    """``s[key]`` (set to ``default`` when absent); a StackError naming the field when it is not a mapping."""
    value = s.setdefault(key, default)
    if not isinstance(value, dict):
        raise _err(who, key, f"must be a mapping, not {type(value).__name__}")
    return value


def _one_of(value: object, known: dict[str, Any]) -> bool:
    """Whether ``value`` is a key of ``known`` (a list or mapping is not: ``[] in {}`` raises TypeError)."""
    return isinstance(value, str) and value in known


def stack_label(stack: dict[str, Any], where: str | None = None) -> str:
    """How messages name a stack: ``stack 'NAME'``, or by its place (``stacks[2]``) when its name is
    missing or not a string (``name: no`` is YAML's false, ``name: 8080`` a number)."""
    name = stack.get("name")
    if isinstance(name, str):
        return f"stack {shown(name)}"
    return where or "a stack"


def resolve_stack(
    stack: dict[str, Any],
    roots: Roots = DEFAULT_ROOTS,
    base_dir: Path | None = None,
    where: str | None = None,
) -> dict[str, Any]:
    """The stack with defaults filled in and everything derived (upstream, units, endpoints with their
    addresses, files and listen arguments); StackError listing every problem otherwise. A relative
    ``app.src`` is taken from ``base_dir`` (the experiment file's folder); ``where`` (``stacks[2]``) names a
    stack without a name in messages.

    Independent parts (name and port, app, runtime, front) are each checked even when another one failed, so
    one run reports every problem of the stack; the server is checked once the app and front are valid, and
    its units and addresses are derived only from a valid name.
    """
    if not isinstance(stack, dict):
        raise StackError(f"a stack must be a mapping, not {type(stack).__name__}")
    s = copy.deepcopy(stack)
    who = stack_label(s, where)
    problems: list[str] = []

    def check(part: Any) -> bool:
        try:
            part(s, roots, who)
        except StackError as exc:
            problems.extend(exc.problems)
            return False
        return True

    identity_ok = check(_identity)
    app_ok = check(lambda s, roots, who: _app(s, roots, who, base_dir))
    if app_ok:
        check(_runtime)
    front_ok = check(_front)
    if app_ok and front_ok:
        check(lambda s, roots, who: _server(s, roots, who, derive=identity_ok))
    if problems:
        raise StackError(problems)
    return s


def _identity(s: dict[str, Any], roots: Roots, who: str) -> None:
    name = s.get("name")
    problems = [
        f"{who}: {shown_key(key)}: unknown field (allowed: {', '.join(sorted(STACK_KEYS))})"
        for key in sorted(set(s) - STACK_KEYS, key=str)
    ]
    rule = (
        "1-48 lowercase letters, digits or '-', starting with a letter or digit (it names units, sockets "
        "and config blocks)"
    )
    if name is None:
        problems.append(f"{who}: name: missing: every stack needs a name of {rule}")
    elif not isinstance(name, str):
        # YAML reads `name: no` as false and `name: 8080` as a number: quoting makes them names.
        problems.append(f"{who}: name: must be a string of {rule}, not {shown(name)} (quote it)")
    elif not NAME_RE.fullmatch(name):
        problems.append(f"{who}: name: must be {rule}")
    port = s.get("port")
    if not is_int(port) or not 1 <= port <= 65535:
        problems.append(f"{who}: port: must be an integer from 1 to 65535, not {shown(port)}")
    if "path" in s and (problem := url_path_problem(s["path"])):
        problems.append(f"{who}: path: {problem}")
    if problems:
        raise StackError(problems)


def _app(s: dict[str, Any], roots: Roots, who: str, base_dir: Path | None = None) -> None:
    name = s.get("name")
    app = _mapping(s, "app", {}, who)
    problems = [
        f"{who}: app.{shown_key(key)}: unknown field (allowed: {', '.join(sorted(APP_KEYS))})"
        for key in sorted(set(app) - APP_KEYS, key=str)
    ]
    kind = app.get("kind")
    if not _one_of(kind, APP_KINDS):
        raise StackError(
            [*problems, f"{who}: app.kind: must be one of {', '.join(APP_KINDS)}, not {shown(kind)}"]
        )
    app["entry"] = APP_KINDS[kind]["entry"]
    given = [key for key in ("dir", "src", "git") if key in app]
    if len(given) > 1:
        raise StackError(
            [
                *problems,
                f"{who}: app.{given[0]} and app.{given[1]}: give one: app.dir is a folder already "
                "on the target, app.src a folder on the controller, app.git a repository "
                f"(src and git are deployed to {roots.apps.rstrip('/')}/user/NAME, their app.dir)",
            ]
        )
    deploy = given[0] if given else "bundled"
    app["deploy"] = deploy
    if "name" in app and deploy not in ("src", "git"):
        problems.append(f"{who}: app.name: names an app deployed from app.src or app.git only")
    app.setdefault("name", name if deploy in ("src", "git") else None)
    if deploy in ("src", "git"):
        problems += _user_app(who, app, roots, base_dir)
    else:
        app_dir = app.setdefault("dir", f"{roots.apps.rstrip('/')}/{kind}")
        if problem := safe_path_problem(app_dir):
            problems.append(f"{who}: app.dir: {problem}")
    problems += _env_problems(who, app)
    checks = app.setdefault("checks", copy.deepcopy(APP_KINDS[kind]["checks"]))
    problems += _check_problems(who, checks)
    if problems:
        raise StackError(problems)


def _user_app(who: str, app: dict[str, Any], roots: Roots, base_dir: Path | None) -> list[str]:
    """Check an app deployed from ``app.src`` or ``app.git``; derive its folders on the target. A source
    folder is read here, on the controller: it must hold the kind's entry file, fit the size limit and hold
    no dependency file the runtime cannot install."""
    kind, deploy = app["kind"], app["deploy"]
    where = f"{who}: app.{deploy}"
    app_name = app["name"]
    if not isinstance(app_name, str) or not NAME_RE.fullmatch(app_name):
        return [
            f"{who}: app.name: must be 1-48 lowercase letters, digits or '-' (it names the app's "
            f"folder on the target), not {shown(app_name)}"
        ]
    if app["entry"] is None:
        return [f"{where}: app {kind} has no files to deploy (its code is in the front's config)"]
    user = f"{roots.apps.rstrip('/')}/user"
    app["dir"] = f"{user}/{app_name}"
    if problem := safe_path_problem(app["dir"]):
        return [f"{where}: the app's folder {problem} (bench_app_root)"]
    problems: list[str] = []
    if deploy == "src":
        problems += _src_problems(where, app, base_dir)
    else:
        problems += _git_problems(where, app)
    if APP_KINDS[kind]["runtime"] == "ruby":
        # Bundler reads these from the stack's env file for `bundle exec` and from the install command: a
        # per-app gem folder, and a config folder of its own so no .bundle/config of the app overrides them.
        bundle = f"{user}/.bundle/{app_name}"
        app["bundle"] = {"path": bundle, "gemfile": f"{app['dir']}/Gemfile", "app_config": bundle}
    else:
        app["bundle"] = None
    return problems


def _src_problems(where: str, app: dict[str, Any], base_dir: Path | None) -> list[str]:
    src = app["src"]
    if not isinstance(src, str) or not src.strip() or "\n" in src:
        return [f"{where}: must be the path of a folder on the controller, not {shown(src)}"]
    path = Path(src).expanduser()
    if not path.is_absolute():
        if base_dir is None:
            return [f"{where}: {shown(src)} is relative, and there is no experiment file to be relative to"]
        path = base_dir / path
    path = path.resolve()
    try:
        found = scan(path)
    except AppSourceError as exc:
        return [f"{where}: {exc}"]
    entry = app["entry"]
    if entry not in found.files:
        return [f"{where}: {path} has no {entry}, the entry file of a {app['kind']} app"]
    runtime = APP_KINDS[app["kind"]]["runtime"]
    refused = [f for f in REFUSED_DEPENDENCY_FILES.get(runtime, ()) if f in found.dependency_files]
    if refused:
        return [
            f"{where}: {path} holds {', '.join(refused)}: {runtime} dependency files are not installed "
            f"here ({SUPPORTED_DEPENDENCY_FILES}); install the modules on the target another way and "
            "leave the file out"
        ]
    app.update(
        src=str(path),
        sha256=found.sha256,
        bytes=found.bytes,
        files=len(found.files),
        dependency_files=list(found.dependency_files),
        lock_sha256=found.lock_sha256,
    )
    return []


def _git_problems(where: str, app: dict[str, Any]) -> list[str]:
    git = app["git"]
    if not isinstance(git, dict):
        return [f"{where}: must be a mapping {{repo, version}}, not {shown(git)}"]
    problems = [
        f"{where}.{shown_key(key)}: unknown field (allowed: {', '.join(sorted(GIT_KEYS))})"
        for key in sorted(set(git) - GIT_KEYS, key=str)
    ]
    repo, version = git.get("repo"), git.get("version")
    moving = git.setdefault("moving_ref", False)
    if not isinstance(repo, str) or not GIT_REPO_RE.fullmatch(repo):
        problems.append(
            f"{where}.repo: must be a repository URL or path without spaces or quotes, not {shown(repo)}"
        )
    if not isinstance(version, str) or not GIT_VERSION_RE.fullmatch(version):
        problems.append(
            f"{where}.version: must be a tag or a commit sha (a branch with moving_ref: true), "
            f"not {shown(version)}"
        )
    if not isinstance(moving, bool):
        problems.append(f"{where}.moving_ref: must be true or false, not {shown(moving)}")
    elif not moving and version == "HEAD":
        problems.append(
            f"{where}.version: HEAD is a moving ref: pin a tag or a commit, or set moving_ref: true"
        )
    app["dependency_files"] = None  # known once cloned, on the target
    return problems


def env_file_line(name: str, value: str) -> str:
    """``NAME="VALUE"`` as systemd's EnvironmentFile= reads it back to VALUE exactly (quotes and
    backslashes escaped; no expansion happens in an env file)."""
    return f'{name}="{value.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'


def _env_problems(who: str, app: dict[str, Any]) -> list[str]:
    """Check ``app.env`` (names and values for the stack's env file); store it as strings."""
    env = app.setdefault("env", {})
    where = f"{who}: app.env"
    if not isinstance(env, dict) or len(env) > MAX_ENV_VARS:
        return [f"{where}: must be a mapping of at most {MAX_ENV_VARS} NAME: value pairs, not {shown(env)}"]
    problems = []
    for key, value in env.items():
        if not isinstance(key, str) or not ENV_NAME_RE.fullmatch(key):
            problems.append(
                f"{where}: {shown(key)}: a name must be uppercase letters, digits and '_', not a digit first"
            )
            continue
        field = f"{where}.{shown_key(key)}"
        if key.startswith(RESERVED_ENV_PREFIXES):
            problems.append(
                f"{field}: names starting with {' or '.join(RESERVED_ENV_PREFIXES)} are set by bench-stack"
            )
        elif isinstance(value, bool) or not isinstance(value, str | int | float):
            problems.append(f"{field}: must be a string or a number (quote true/false), not {shown(value)}")
        elif any(c in str(value) for c in "\n\r\0") or len(str(value)) > MAX_ENV_VALUE:
            problems.append(
                f"{field}: must be one line of at most {MAX_ENV_VALUE} characters (no newline or NUL)"
            )
    if not problems:
        app["env"] = {key: str(value) for key, value in env.items()}
    return problems


def _check_problems(who: str, checks: object) -> list[str]:
    """Problems with ``app.checks``: a list of 1 to MAX_CHECKS {path, body} mappings."""
    where = f"{who}: app.checks"
    if not isinstance(checks, list) or not 1 <= len(checks) <= MAX_CHECKS:
        return [f"{where}: must be a list of 1 to {MAX_CHECKS} {{path, body}} mappings, not {shown(checks)}"]
    problems = []
    for i, check in enumerate(checks):
        if not isinstance(check, dict) or set(check) != CHECK_KEYS:
            problems.append(f"{where}[{i}]: must be a mapping with exactly path and body, not {shown(check)}")
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


def _runtime(s: dict[str, Any], roots: Roots, who: str) -> None:
    kind = s["app"]["kind"]
    runtime = _mapping(s, "runtime", {"kind": APP_KINDS[kind]["runtime"]}, who)
    runtime.setdefault("kind", APP_KINDS[kind]["runtime"])
    if runtime.get("kind") != APP_KINDS[kind]["runtime"]:
        raise _err(who, "runtime.kind", f"app {kind} runs on {APP_KINDS[kind]['runtime']}")
    _runtime_version(who, runtime)


def _front(s: dict[str, Any], roots: Roots, who: str) -> None:
    front = _mapping(s, "front", {"kind": "none"}, who)
    if front.get("kind") not in FRONT_KINDS:
        raise _err(
            who, "front.kind", f"must be one of {', '.join(FRONT_KINDS)}, not {shown(front.get('kind'))}"
        )
    if front["kind"] == "nginx":
        _typed_keys(who, "front", front, "key of an nginx front", keys=NGINX_FRONT_KEYS, options={})
        front.setdefault("profile", "tuned")
        if front["profile"] not in FRONT_PROFILES:
            raise _err(who, "front.profile", f"must be one of {', '.join(FRONT_PROFILES)}")
    elif front["kind"] == "apache":
        _apache_front(who, front, f"bench-{s.get('name')}")
    else:
        _typed_keys(who, "front", front, "key of front kind none", keys={"kind"}, options={})


def _server(s: dict[str, Any], roots: Roots, who: str, derive: bool = True) -> None:
    port, app, front = s.get("port"), s["app"], s["front"]
    kind = app["kind"]
    server = s.get("server")
    embedded = APP_KINDS[kind].get("embedded", False)
    mod_php = kind == "php" and front["kind"] == "apache" and not server
    s["upstream"] = None
    if kind == "static" or embedded or mod_php:
        if server:
            raise _err(who, "server", f"app {kind} is served by its front, not by an app server")
        if app["env"]:
            raise _err(who, "app.env", f"app {kind} is served by its front: no app server reads an env file")
        if front["kind"] == "none":
            raise _err(who, "front.kind", f"app {kind} needs a front ({'apache' if embedded else 'nginx'})")
        if embedded and front["kind"] != "apache":
            raise _err(
                who,
                "front.kind",
                f"app {kind} runs inside Apache ({EMBEDDED_MODULE[kind]}): it needs front.kind apache",
            )
        if front["kind"] == "apache":
            _apache_handler(who, front, "mod_php" if mod_php else kind)
        s["server"] = None
        s["endpoints"] = []
        return
    if not isinstance(server, dict):
        hint = " (or front.kind apache, which runs it with mod_php)" if kind == "php" else ""
        raise _err(who, "server", f"app {kind} needs an app server (one of {', '.join(REGISTRY)}){hint}")
    skind = server.get("kind")
    if not _one_of(skind, REGISTRY):
        raise _err(who, "server.kind", f"must be one of {', '.join(REGISTRY)}, not {shown(skind)}")
    spec = by_name(skind)
    if kind not in spec.apps:
        raise _err(who, "server.kind", f"{skind} cannot serve app {kind}")
    instances = server.setdefault("instances", 1)
    if not is_int(instances) or not 1 <= instances <= MAX_INSTANCES:
        raise _err(who, "server.instances", f"must be an integer from 1 to {MAX_INSTANCES}")
    binds = spec.binds
    bind = server.setdefault("bind", "tcp" if front["kind"] == "none" else binds[0])
    if bind not in BINDS:
        raise _err(who, "server.bind", f"must be one of {', '.join(BINDS)}, not {shown(bind)}")
    if bind not in binds:
        raise _err(who, "server.bind", f"{skind} listens on {' or '.join(binds)} only, not {bind}")
    protocol = spec.protocol
    if protocol != "http" and front["kind"] == "none":
        raise _err(who, "front.kind", f"{skind} speaks {protocol}, not HTTP: it needs a front")
    if front["kind"] == "apache":
        if protocol != "http":
            raise _err(
                who,
                "front.kind",
                f"{skind} speaks {protocol}; the apache front proxies HTTP only "
                "(for PHP under Apache leave out the server: mod_php runs it)",
            )
        _apache_handler(who, front, "proxy")
    _server_options(who, server, spec.options)
    for field, message in spec.option_problems(server):
        raise _err(who, field, message)
    if front["kind"] == "none" and (instances != 1 or bind != "tcp"):
        raise _err(
            who, "server", "without a front, the server is one instance bound to TCP on the stack port"
        )
    if front["kind"] == "none" and is_int(port) and port < FIRST_USER_PORT:
        raise _err(
            who,
            "port",
            f"{port} is below {FIRST_USER_PORT}: without a front the app server listens on it as the "
            "benchmark user, which a host does not allow (put a front before it, or use a port from "
            f"{FIRST_USER_PORT})",
        )
    if not is_int(port) or not derive:
        return  # the name's or port's own problem is reported; nothing can be derived from them
    base = server.get("port_base", TCP_BACKEND_BASE + (port % 1000) * 10)
    if bind == "tcp" and front["kind"] != "none":
        if not is_int(base) or not FIRST_USER_PORT <= base + 1 <= base + instances <= 65535:
            raise _err(
                who,
                "server.port_base",
                f"must be an integer that keeps ports base+1..base+{instances} in {FIRST_USER_PORT}-65535 "
                f"(the app server listens on them as the benchmark user), not {shown(base)}",
            )
        if base < port <= base + instances:
            raise _err(who, "server.port_base", f"a backend would listen on the stack's own port {port}")
    _derive_server(s, spec, roots, base)


def _derive_server(s: dict[str, Any], spec: ServerKind, roots: Roots, base: int) -> None:
    """Units, files and every instance's addresses, as the app_server, nginx and apache roles print them."""
    name, server, front = s["name"], s["server"], s["front"]
    units = roots.units.rstrip("/")
    config = spec.config
    server.update(
        protocol=spec.protocol,
        upstream_keepalive=spec.upstream_keepalive,
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
            listen_args=spec.listen[bind].format(**ep) if spec.listen else "",
            config_listen=spec.config_listen[bind].format(**ep) if config else None,
        )
        endpoints.append(ep)
    s["endpoints"] = endpoints
    # The instances' start command (the unit's ExecStart), reload signal and config template: the kind's.
    server.update(spec.plan_fields(s))
    app = s["app"]
    bundle = app.get("bundle") or {}
    server["environment"] = {
        **{f"BENCH_LISTEN_{ep['instance']}": ep["listen_args"] for ep in endpoints if ep["listen_args"]},
        # `bundle exec` finds the app's gems through these (they are unused by an app without a Gemfile).
        **{f"BUNDLE_{key.upper()}": value for key, value in sorted(bundle.items())},
        **({"BUNDLE_FROZEN": "true"} if bundle else {}),
        **app["env"],
    }
    # What the env file holds, line by line (the app_server role prints them; the file is mode 0640).
    server["env_file_lines"] = [env_file_line(k, v) for k, v in server["environment"].items()]


def _apache_front(who: str, front: dict[str, Any], instance: str) -> None:
    """Check an apache front's MPM and typed tuning keys; fill in defaults, instance and MPM directives."""
    mpm = front.setdefault("mpm", "event")
    if mpm not in APACHE_MPMS:
        raise _err(who, "front.mpm", f"must be one of {', '.join(APACHE_MPMS)}, not {shown(mpm)}")
    options = APACHE_MPM_OPTIONS[mpm]
    _typed_keys(
        who,
        "front",
        front,
        f"key of an apache front with mpm {mpm}",
        keys={"kind", "mpm"},
        options={key: (int, lo, hi, default) for key, (_directive, lo, hi, default) in options.items()},
    )
    workers = front["max_request_workers"]
    if mpm == "prefork":
        if front["min_spare_servers"] > front["max_spare_servers"]:
            raise _err(who, "front.max_spare_servers", "must be at least front.min_spare_servers")
        # Apache caps MaxRequestWorkers at ServerLimit (default 256) with only a warning.
        limits = [("ServerLimit", max(256, workers))]
    else:
        per_child = front["threads_per_child"]
        if workers % per_child:
            raise _err(
                who,
                "front.max_request_workers",
                f"must be a multiple of front.threads_per_child ({per_child}); Apache would round "
                f"{workers} down to {workers - workers % per_child}",
            )
        if front["max_spare_threads"] < front["min_spare_threads"] + per_child:
            raise _err(
                who,
                "front.max_spare_threads",
                "must be at least front.min_spare_threads + front.threads_per_child "
                f"({front['min_spare_threads'] + per_child}); Apache would raise it itself",
            )
        # ServerLimit and ThreadLimit cap the other values (defaults 16 and 64) with only a warning.
        limits = [
            ("ServerLimit", max(16, math.ceil(workers / per_child))),
            ("ThreadLimit", max(64, per_child)),
        ]
    front["instance"] = instance
    front["mpm_directives"] = [[d, v] for d, v in limits] + [
        [directive, front[key]] for key, (directive, *_rest) in options.items()
    ]


def _apache_handler(who: str, front: dict[str, Any], handler: str) -> None:
    """Set what the stack's Apache instance does and the modules it needs (and must not have)."""
    if handler == "mod_php" and front["mpm"] != "prefork":
        raise _err(
            who,
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


def _runtime_version(who: str, runtime: dict[str, Any]) -> None:
    """Check ``runtime.version``: only Ruby stacks may name one (the ruby role's rbenv method installs it)."""
    _typed_keys(who, "runtime", runtime, "key", keys=RUNTIME_KEYS, options={})
    if "version" not in runtime:
        return
    version = runtime["version"]
    if runtime["kind"] != "ruby":
        raise _err(who, "runtime.version", "only a ruby runtime takes a version (installed with rbenv)")
    if not isinstance(version, str) or not RUBY_VERSION_RE.fullmatch(version):
        raise _err(
            who, "runtime.version", f"must be a Ruby version string such as '3.1.2', not {shown(version)}"
        )


def _server_options(who: str, server: dict[str, Any], options: dict[str, TypedOption]) -> None:
    """Check the server's own options against its kind's typed options and fill in their defaults."""
    _typed_keys(
        who,
        "server",
        server,
        f"option of {server['kind']}",
        keys=SERVER_COMMON_KEYS,
        options=options,
    )


def _typed_keys(
    who: str,
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
        raise _err(
            who,
            f"{section}.{shown_key(unknown[0])}",
            f"unknown {what} (allowed: {', '.join(sorted(allowed))})",
        )
    for key, (typ, lo, hi, default) in options.items():
        value = mapping.setdefault(key, default)
        if value is None and default is None:
            continue  # an optional option left unset
        if typ is bool:
            if not isinstance(value, bool):
                raise _err(who, f"{section}.{key}", f"must be true or false, not {shown(value)}")
        elif not is_int(value) or not lo <= value <= hi:
            raise _err(who, f"{section}.{key}", f"must be an integer from {lo} to {hi}, not {shown(value)}")


def resolve_stacks(
    stacks: object, roots: Roots = DEFAULT_ROOTS, base_dir: Path | None = None
) -> list[dict[str, Any]]:
    """Resolve every stack and check that names and every listening port are unique on the target, and that
    stacks sharing a user app (``app.name``) deploy the same one; StackError listing every problem of every
    stack otherwise."""
    note("resolve")
    if not isinstance(stacks, list) or not stacks:
        raise StackError("stacks: must be a non-empty list of stacks")
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    for i, stack in enumerate(stacks):
        try:
            out.append(resolve_stack(stack, roots, base_dir, where=f"stacks[{i}]"))
        except StackError as exc:
            problems += [
                p if p.startswith(("stack ", "stacks[")) else f"stacks[{i}]: {p}" for p in exc.problems
            ]
    names: set[str] = set()
    ports: dict[int, str] = {}
    for s in out:
        if s["name"] in names:
            problems.append(f"stack {shown(s['name'])}: name: used by two stacks")
        names.add(s["name"])
        listening = {s["port"]} | {ep["port"] for ep in s["endpoints"] if ep["port"] is not None}
        for p in sorted(listening):
            if p in ports and ports[p] != s["name"]:
                problems.append(
                    f"stack {shown(s['name'])}: port: {p} is also used by stack {shown(ports[p])}"
                )
            ports[p] = s["name"]
    problems += _shared_app_problems(out)
    problems += [p for s in out for p in _bundle_problems(s)]
    if problems:
        raise StackError(problems)
    return out


# A Gemfile's `gem "name"` line, and a Gemfile.lock's spec line (four spaces, name, version in brackets).
GEMFILE_GEM_RE = re.compile(r"""^\s*gem\s*\(?\s*["']([A-Za-z0-9_.-]+)["']""")
LOCK_SPEC_RE = re.compile(r"^    ([A-Za-z0-9_.-]+) \(")


def bundle_gems(app_dir: Path) -> tuple[str, set[str]]:
    """The gems ``bundle exec`` can load from a user app's folder: Gemfile.lock's specs when it has one
    (Bundler runs frozen then), else the Gemfile's ``gem`` lines; and which file said so."""
    lock = app_dir / "Gemfile.lock"
    if lock.is_file():
        text = lock.read_text(encoding="utf-8", errors="replace")
        return "Gemfile.lock", {m.group(1) for m in map(LOCK_SPEC_RE.match, text.splitlines()) if m}
    text = (app_dir / "Gemfile").read_text(encoding="utf-8", errors="replace")
    return "Gemfile", {m.group(1) for m in map(GEMFILE_GEM_RE.match, text.splitlines()) if m}


def _bundle_problems(s: dict[str, Any]) -> list[str]:
    """A user app's server runs through ``bundle exec``, which loads only the bundle's gems: a server gem the
    app's Gemfile (or Gemfile.lock) lacks would crash-loop the unit. Read on the controller (app.src)."""
    app, server = s["app"], s["server"]
    gems = by_name(server["kind"]).bundle_gems if server else ()
    if not gems or not app.get("bundle") or "Gemfile" not in (app.get("dependency_files") or []):
        return []
    which, bundled = bundle_gems(Path(app["src"]))
    missing = [g for g in gems if g not in bundled]
    if not missing:
        return []
    lines = "; ".join(f"gem {json.dumps(g)}" for g in missing)
    then = " and run `bundle lock` so Gemfile.lock has it" if which == "Gemfile.lock" else ""
    return [
        f"stack {shown(s['name'])}: server.kind {server['kind']} runs through `bundle exec` from the app's "
        f"bundle, and {app['src']}/{which} does not have {', '.join(missing)}: add to "
        f"{app['src']}/Gemfile the line: {lines}{then}"
    ]


def _app_identity(s: dict[str, Any]) -> tuple[Any, ...]:
    """What must be equal for two stacks to share one deployed user app."""
    app = s["app"]
    git = app.get("git") or {}
    return (
        app["kind"],
        app.get("src"),
        git.get("repo"),
        git.get("version"),
        git.get("moving_ref"),
        s["runtime"].get("version"),
    )


def _shared_app_problems(stacks: list[dict[str, Any]]) -> list[str]:
    first: dict[str, dict[str, Any]] = {}
    problems = []
    for s in stacks:
        app = s["app"]
        if app["deploy"] not in ("src", "git"):
            continue
        other = first.setdefault(app["name"], s)
        if _app_identity(other) != _app_identity(s):
            problems.append(
                f"stack {shown(s['name'])}: app.name: {shown(app['name'])} is also the app of stack "
                f"{shown(other['name'])}, "
                "with another kind, source, version or runtime.version: stacks share an app only when those "
                "are equal (give this one another app.name)"
            )
    return problems


def user_apps(stacks: list[dict[str, Any]], roots: Roots = DEFAULT_ROOTS) -> list[dict[str, Any]]:
    """One entry per user app deployed from ``app.src`` or ``app.git`` of resolved stacks: what the app role
    needs to deploy it and what the target's deployment record and the fingerprint keep.

    ``key`` names the deployed content: the source folder's content hash, or for a pinned git version a
    hash of repository and version (a moving ref has none: it is resolved on the target each run). The app
    role deploys an app only when its record's key differs.
    """
    user = f"{roots.apps.rstrip('/')}/user"
    out: dict[str, dict[str, Any]] = {}
    for s in stacks:
        app = s["app"]
        if app["deploy"] not in ("src", "git"):
            continue
        if app["name"] in out:
            out[app["name"]]["stacks"].append(s["name"])
            continue
        name, runtime = app["name"], s["runtime"]["kind"]
        entry: dict[str, Any] = {
            "name": name,
            "kind": app["kind"],
            "runtime": runtime,
            "ruby_version": s["runtime"].get("version"),
            "stacks": [s["name"]],
            "dir": app["dir"],
            "releases": f"{user}/.releases",
            "record": f"{user}/.records/{name}.json",
            "bundle": app["bundle"],
            "installs": list(INSTALLED_DEPENDENCY_FILES.get(runtime, ())),
            "refuses": list(REFUSED_DEPENDENCY_FILES.get(runtime, ())),
            # What a git app's release is looked at for, and the lock files its record hashes.
            "look_for": list(DEPENDENCY_FILES),
            "lock_files": list(LOCK_FILES),
            "supported": SUPPORTED_DEPENDENCY_FILES,
        }
        if app["deploy"] == "src":
            entry.update(
                source={
                    "type": "src",
                    "path": app["src"],
                    "sha256": app["sha256"],
                    "files": app["files"],
                    "bytes": app["bytes"],
                },
                key=f"src:{app['sha256']}",
                release=f"{user}/.releases/{name}-{app['sha256'][:16]}",
                dependency_files=app["dependency_files"],
            )
        else:
            git = app["git"]
            pinned = hashlib.sha256(f"{git['repo']}\0{git['version']}".encode()).hexdigest()
            entry.update(
                source={"type": "git", **git},
                key=None if git["moving_ref"] else f"git:{pinned}",
                release=None,  # named after the commit it resolves to, on the target
                git_cache=f"{user}/.git/{name}.git",
                dependency_files=None,
            )
        entry["folders"] = sorted(
            {f"{user}/.releases", f"{user}/.records"}
            | ({app["bundle"]["path"]} if app["bundle"] else set())
            | ({f"{user}/.git"} if app["deploy"] == "git" else set())
        )
        out[name] = entry
    return list(out.values())


def port_warnings(stacks: list[dict[str, Any]]) -> list[str]:
    """Stacks listening on ports that usually belong to another service on a host, or on a system port."""
    warnings = []
    for s in stacks:
        port = s["port"]
        if port in WELL_KNOWN_PORTS:
            warnings.append(
                f"stack {shown(s['name'])}: port {port} is usually {WELL_KNOWN_PORTS[port]}'s: "
                "the stack will not start if that service runs on the target"
            )
        elif port < FIRST_USER_PORT:
            warnings.append(
                f"stack {shown(s['name'])}: port {port} is a system port (below {FIRST_USER_PORT}): the "
                "stack will not start if another service holds it on the target"
            )
    return warnings


# Stacks whose app.dir is the bundled app's folder (or the user's own folder already on the target).
BUNDLED_DEPLOYS = ("bundled", "dir")
GEMS_BY_APP: dict[str, list[str]] = {"sinatra": ["rack", "sinatra"]}


def needs(stacks: list[dict[str, Any]]) -> dict[str, Any]:
    """What a target must have installed for these resolved stacks: runtimes, gems, apps, fronts."""
    gems: list[str] = []
    pips: list[str] = []
    perls: list[str] = []
    for s in stacks:
        skind = s["server"]["kind"] if s["server"] else None
        kind = by_name(skind) if skind else None
        for pkg in kind.pip if kind else ():
            if pkg not in pips:
                pips.append(pkg)
        for module in kind.perl if kind else ():
            if module not in perls:
                perls.append(module)
        # A user's Ruby app brings its own gems (Bundler, from its Gemfile) when it has a Gemfile.
        user_ruby = s["app"]["deploy"] in ("src", "git") and s["runtime"]["kind"] == "ruby"
        app_gems = ["bundler"] if user_ruby else []
        for gem in GEMS_BY_APP.get(s["app"]["kind"], []) + list(kind.gems if kind else ()) + app_gems:
            if gem not in gems:
                gems.append(gem)
    return {
        "runtimes": sorted({s["runtime"]["kind"] for s in stacks} - {"none"}),
        "ruby_gems": gems,
        "ruby_versions": sorted({s["runtime"]["version"] for s in stacks if "version" in s["runtime"]}),
        "python_packages": pips,
        "perl_modules": perls,
        # Bundled apps with files to deploy (lua-inline lives in the Apache config; a user's app from
        # app.src or app.git is deployed instead of the bundled one).
        "app_kinds": sorted(
            {s["app"]["kind"] for s in stacks if s["app"]["entry"] and s["app"]["deploy"] in BUNDLED_DEPLOYS}
        ),
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
                    # Its journal is shown when the instance does not answer (bench_http_check).
                    "unit": ep["unit"],
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
