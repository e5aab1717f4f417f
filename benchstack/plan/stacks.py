"""Stacks: the data that names one serving path, validated and resolved into everything derived from it.

The app_server role (units, sockets, env and config files), the nginx and apache roles (upstreams, pool
members, instances, modules), verification and the benchmark all need the same socket paths, ports, unit
names and expected answers. They are computed here, once per run, from the stack data
(:func:`resolve_stacks`, called by :mod:`benchstack.plan.resolved`), so no template rebuilds a path or an
address.

This module is the orchestration, in two steps. :func:`check` reads a stack as written, changes nothing, and
returns it typed (:class:`StackSpec`) or every problem: its identity (name, port, path), then its app,
runtime, front and server, each through its kind's adapter (:mod:`benchstack.kinds.apps`,
:mod:`benchstack.kinds.fronts`, :mod:`benchstack.kinds.servers`), each section a frozen dataclass of its
kind's package. :func:`derive` is pure: from a checked stack it builds the resolved :class:`Stack` (the
front's fields, units, endpoints, start command, env file). :func:`resolve_stacks` adds the checks across
stacks and hands the plan its typed stacks; what the plan reads off them (:mod:`benchstack.plan.readers`)
takes their fields, and a stack becomes a dict only when the plan becomes the fact (:meth:`Stack.to_dict`).
What a kind is and what it checks is its adapter's; the checks every field shares (names, paths, typed
keys) are :mod:`benchstack.kinds.stackfields`'.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from benchstack.common.inputs import shown, shown_key
from benchstack.common.numbers import is_int
from benchstack.kinds import apps, fronts
from benchstack.kinds.apps.deploy import (
    bundle_problems,
    shared_app_problems,
)
from benchstack.kinds.apps.fields import env_file_line
from benchstack.kinds.apps.section import App, Runtime
from benchstack.kinds.fronts.base import Front, FrontSpec
from benchstack.kinds.servers import BINDS, REGISTRY, ServerKind, by_name
from benchstack.kinds.servers.section import Server, ServerSpec, Start, Units
from benchstack.kinds.stackfields import (
    DEFAULT_ROOTS,
    FIRST_USER_PORT,
    NAME_RE,
    Roots,
    StackError,
    err,
    mapping,
    one_of,
    ordered,
    typed_keys,
    url_path_problem,
)
from benchstack.plan.trace import note

SERVER_COMMON_KEYS = {"kind", "instances", "bind", "port_base"}
STACK_KEYS = {"name", "port", "path", "app", "runtime", "server", "front"}
APP_KEYS = {"kind", "dir", "checks", "src", "git", "env", "name"}
# Backends behind a front listen on 127.0.0.1:BASE + (port % 1000) * 10 + instance when bound to TCP
# and no port_base is given: distinct for stacks whose ports differ modulo 1000, up to 9 instances.
TCP_BACKEND_BASE = 20000
MAX_INSTANCES = 64
T = TypeVar("T")


@dataclass(frozen=True)
class Endpoint:
    """One instance of a stack's app server: its unit and where it listens, as every role and check that
    reaches it prints it (a unix socket, or a host and port)."""

    instance: int
    unit: str
    socket: str | None
    host: str | None
    port: int | None
    # The upstream `server` nginx prints (unix:/run/... or 127.0.0.1:PORT).
    address: str
    # The BalancerMember URL Apache prints.
    balancer_member: str
    runtime_directory: str
    config_file: str | None
    # The instance's line of the stack's env file ($BENCH_LISTEN_i), or the listen value its config file
    # prints.
    listen_args: str
    config_listen: str | None

    def to_dict(self) -> dict[str, Any]:
        """The endpoint as the plan holds it (``stacks[].endpoints[]``)."""
        return asdict(self)


@dataclass(frozen=True)
class StackSpec:
    """A stack as written, checked (:func:`check`): its sections typed with their defaults, the app's derived
    fields included (:class:`~benchstack.kinds.apps.section.App`); nothing of its units and endpoints is
    derived yet. ``server`` is None when the front serves the app."""

    name: str
    port: int
    app: App
    runtime: Runtime
    front: FrontSpec
    server: ServerSpec | None
    path: str | None = None
    # The stack's keys as written, in their order (the plan keeps it).
    written: tuple[str, ...] = ()


@dataclass(frozen=True)
class Stack:
    """A resolved stack: every field filled in, checked and derived (:func:`resolve`). ``app``, ``runtime``,
    ``server`` (None when the front serves the app) and ``front`` are its typed sections with their defaults
    and derived fields; ``upstream`` names the front's pool of its endpoints (None without a front or
    server)."""

    name: str
    port: int
    app: App
    runtime: Runtime
    front: Front
    server: Server | None
    upstream: str | None
    endpoints: tuple[Endpoint, ...]
    # The URL path the load asks for, when the stack names its own.
    path: str | None = None
    # The stack's keys as written, in their order: to_dict prints them first, then the derived ones, so the
    # plan reads like the experiment.
    written: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The stack as the plan holds it (``stacks[]``): a dict of its own, its sections as theirs
        (the one place a resolved stack becomes the plan's dict)."""
        fields: dict[str, Any] = {
            "name": self.name,
            "port": self.port,
            **({"path": self.path} if self.path is not None else {}),
            "app": self.app.as_dict(),
            "runtime": self.runtime.as_dict(),
            "front": self.front.as_dict(),
            "upstream": self.upstream,
            "server": self.server.as_dict() if self.server else None,
            "endpoints": [ep.to_dict() for ep in self.endpoints],
        }
        return ordered(self.written, fields)


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
    """The stack resolved (:func:`resolve`), as the plan's fact holds it (what its roles and templates
    read)."""
    return resolve(stack, roots, base_dir, where).to_dict()


def resolve(
    stack: object,
    roots: Roots = DEFAULT_ROOTS,
    base_dir: Path | None = None,
    where: str | None = None,
) -> Stack:
    """The stack checked (:func:`check`) and derived (:func:`derive`); StackError listing every problem
    otherwise. The stack as written is not changed."""
    return derive(check(stack, roots, base_dir, where), roots)


def check(
    stack: object,
    roots: Roots = DEFAULT_ROOTS,
    base_dir: Path | None = None,
    where: str | None = None,
) -> StackSpec:
    """The stack as written, checked, with its sections typed and their defaults filled in; StackError
    listing every problem otherwise. A relative ``app.src`` is taken from ``base_dir`` (the experiment
    file's folder); ``where`` (``stacks[2]``) names a stack without a name in messages. Nothing is changed.

    Independent parts (name and port, app, runtime, front) are each checked even when another one failed, so
    one run reports every problem of the stack; the server is checked once the app and front are valid, and
    what it derives from the name and port (its backend ports) only when they are valid.
    """
    if not isinstance(stack, dict):
        raise StackError(f"a stack must be a mapping, not {type(stack).__name__}")
    who = stack_label(stack, where)
    problems: list[str] = []

    def part(check_part: Callable[[], T]) -> T | None:
        try:
            return check_part()
        except StackError as exc:
            problems.extend(exc.problems)
            return None

    identity_ok = part(lambda: _check_identity(stack, who)) is not None
    app = part(lambda: _check_app(stack, who, roots, base_dir))
    runtime = part(lambda: apps.by_name(app.kind).check_runtime(stack, who)) if app else None
    front = part(lambda: _check_front(stack, who))
    server: tuple[ServerSpec | None] | None = None
    if app and front:
        server = part(lambda: (_check_server(stack, who, app, front, ports=identity_ok),))
    if problems:
        raise StackError(problems)
    assert app and runtime and front and server
    return StackSpec(
        name=stack["name"],
        port=stack["port"],
        app=app,
        runtime=runtime,
        front=front,
        server=server[0],
        path=stack.get("path"),
        written=tuple(stack),
    )


def _check_identity(s: Mapping[str, Any], who: str) -> bool:
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
    return True


def _check_app(s: Mapping[str, Any], who: str, roots: Roots, base_dir: Path | None) -> App:
    app = mapping(s, "app", {}, who)
    problems = [
        f"{who}: app.{shown_key(key)}: unknown field (allowed: {', '.join(sorted(APP_KEYS))})"
        for key in sorted(set(app) - APP_KEYS, key=str)
    ]
    kind = app.get("kind")
    if not one_of(kind, apps.REGISTRY):
        raise StackError(
            [*problems, f"{who}: app.kind: must be one of {', '.join(apps.REGISTRY)}, not {shown(kind)}"]
        )
    checked, more = apps.by_name(kind).check_app(app, who, roots, base_dir, s.get("name"))
    problems += more
    if problems or checked is None:
        raise StackError(problems)
    return checked


def _check_front(s: Mapping[str, Any], who: str) -> FrontSpec:
    front = mapping(s, "front", {"kind": "none"}, who)
    if not one_of(front.get("kind"), fronts.REGISTRY):
        raise err(
            who,
            "front.kind",
            f"must be one of {', '.join(fronts.REGISTRY)}, not {shown(front.get('kind'))}",
        )
    spec = fronts.by_name(front["kind"]).check(front, who)
    return spec if "front" in s else replace(spec, written=())


def _check_server(
    s: Mapping[str, Any], who: str, app: App, front: FrontSpec, ports: bool = True
) -> ServerSpec | None:
    """Check the stack's server against its app and front: None when the front serves the app. Its backend
    ports are checked only when the stack's name and port are valid (``ports``)."""
    port = s.get("port")
    app_kind, front_kind = apps.by_name(app.kind), fronts.by_name(front.kind)
    server = s.get("server")
    if app_kind.served_by_front(front.kind, server):
        _check_front_served(who, app, front, server)
        return None
    if not isinstance(server, dict):
        raise err(
            who,
            "server",
            f"app {app.kind} needs an app server (one of {', '.join(REGISTRY)}){app_kind.server_hint}",
        )
    skind = server.get("kind")
    if not one_of(skind, REGISTRY):
        raise err(who, "server.kind", f"must be one of {', '.join(REGISTRY)}, not {shown(skind)}")
    spec = by_name(skind)
    if spec.interface != app_kind.interface:
        raise err(who, "server.kind", f"{skind} cannot serve app {app.kind}")
    instances = server.get("instances", 1)
    if not is_int(instances) or not 1 <= instances <= MAX_INSTANCES:
        raise err(who, "server.instances", f"must be an integer from 1 to {MAX_INSTANCES}")
    binds = spec.binds
    bind = server.get("bind", "tcp" if front_kind.direct else binds[0])
    if bind not in BINDS:
        raise err(who, "server.bind", f"must be one of {', '.join(BINDS)}, not {shown(bind)}")
    if bind not in binds:
        raise err(who, "server.bind", f"{skind} listens on {' or '.join(binds)} only, not {bind}")
    if found := front_kind.proxy_problem(front, spec):
        raise err(who, *found)
    options = typed_keys(
        who, "server", server, f"option of {skind}", keys=SERVER_COMMON_KEYS, options=spec.options
    )
    for field, message in spec.option_problems(options):
        raise err(who, field, message)
    checked = ServerSpec(
        kind=skind,
        instances=instances,
        bind=bind,
        options=MappingProxyType(options),
        written=tuple(server),
        port_base=server.get("port_base"),
    )
    front_kind.check_server(checked, port, who)
    if is_int(port) and ports:
        # Else the name's or port's own problem is reported; the backend ports follow from them.
        _check_backend_ports(checked, port, who, front_kind.direct)
    return checked


def _check_front_served(who: str, app: App, front: FrontSpec, server: Any) -> None:
    """An app its front serves: no app server, no env file, and a front that can serve it."""
    app_kind, front_kind = apps.by_name(app.kind), fronts.by_name(front.kind)
    if server:
        raise err(who, "server", f"app {app.kind} is served by its front, not by an app server")
    if app.env:
        raise err(who, "app.env", f"app {app.kind} is served by its front: no app server reads an env file")
    if problem := app_kind.front_problem(front.kind):
        raise err(who, "front.kind", problem)
    if found := front_kind.serve_problem(front, app_kind):
        raise err(who, *found)


def _check_backend_ports(server: ServerSpec, port: int, who: str, direct: bool) -> None:
    """A proxied TCP server's backend ports: all in the user ports, none the stack's own."""
    base = _port_base(server, port)
    if server.bind != "tcp" or direct:
        return
    instances = server.instances
    if not is_int(base) or not FIRST_USER_PORT <= base + 1 <= base + instances <= 65535:
        raise err(
            who,
            "server.port_base",
            f"must be an integer that keeps ports base+1..base+{instances} in {FIRST_USER_PORT}-65535 "
            f"(the app server listens on them as the benchmark user), not {shown(base)}",
        )
    if base < port <= base + instances:
        raise err(who, "server.port_base", f"a backend would listen on the stack's own port {port}")


def _port_base(server: ServerSpec, port: int) -> Any:
    """Where the server's TCP backends count from: its port_base as written, else from the stack's port."""
    return server.port_base if "port_base" in server.written else TCP_BACKEND_BASE + (port % 1000) * 10


def derive(spec: StackSpec, roots: Roots = DEFAULT_ROOTS) -> Stack:
    """The checked stack with everything derived from it: its front's fields, and with an app server its
    units, files, every instance's addresses, its start command and env file, as the app_server, nginx
    and apache roles print them. Pure: the same stack and roots give the same Stack."""
    app_kind, front_kind = apps.by_name(spec.app.kind), fronts.by_name(spec.front.kind)
    server_kind = by_name(spec.server.kind) if spec.server else None
    front = front_kind.resolve(spec.front, spec.name, app_kind, server_kind)
    fields: dict[str, Any] = {
        "name": spec.name,
        "port": spec.port,
        "app": spec.app,
        "runtime": spec.runtime,
        "front": front,
        "path": spec.path,
        "written": spec.written,
    }
    if spec.server is None or server_kind is None:
        return Stack(**fields, server=None, upstream=None, endpoints=())
    name, direct = spec.name, front_kind.direct
    units = roots.units.rstrip("/")
    config = server_kind.config
    start = Start(
        server=spec.server,
        units=Units(
            # One systemd template unit per stack; %i is the instance number.
            unit=f"bench-{name}@.service",
            unit_runtime_directory=f"{roots.run_relative}/{name}-%i",
            # One env file per stack: instance i's unit reads its listen arguments as $BENCH_LISTEN_i.
            env_file=f"{units}/{name}.env",
            unit_config_file=f"{units}/{name}-%i.{config}" if config else None,
        ),
        app_dir=spec.app.dir,
        app_entry=spec.app.entry,
        direct=direct,
    )
    endpoints = tuple(_endpoints(spec, server_kind, direct, roots))
    bundle = spec.app.bundle.as_dict() if spec.app.bundle else {}
    environment = {
        **{f"BENCH_LISTEN_{ep.instance}": ep.listen_args for ep in endpoints if ep.listen_args},
        # `bundle exec` finds the app's gems through these (they are unused by an app without a Gemfile).
        **{f"BUNDLE_{key.upper()}": value for key, value in sorted(bundle.items())},
        **({"BUNDLE_FROZEN": "true"} if bundle else {}),
        **spec.app.env,
    }
    # What the env file holds, line by line (the app_server role prints them; the file is mode 0640).
    lines = tuple(env_file_line(k, v) for k, v in environment.items())
    return Stack(
        **fields,
        server=server_kind.resolve(start, MappingProxyType(environment), lines),
        upstream=None if direct else f"bench_{name.replace('-', '_')}",
        endpoints=endpoints,
    )


def _endpoints(spec: StackSpec, kind: ServerKind, direct: bool, roots: Roots) -> Iterator[Endpoint]:
    """Every instance of the stack's app server: its unit, where it listens and how each role reaches it."""
    assert spec.server is not None
    name, config = spec.name, kind.config
    units = roots.units.rstrip("/")
    base = _port_base(spec.server, spec.port)
    for i in range(1, spec.server.instances + 1):
        if direct:
            socket, host, port = None, "0.0.0.0", spec.port
        elif spec.server.bind == "unix":
            socket, host, port = f"{roots.run.rstrip('/')}/{name}-{i}/server.sock", None, None
        else:
            socket, host, port = None, "127.0.0.1", base + i
        where = {"socket": socket, "host": host, "port": port}
        bind = "unix" if socket else "tcp"
        yield Endpoint(
            instance=i,
            unit=f"bench-{name}@{i}.service",
            socket=socket,
            host=host,
            port=port,
            address=f"unix:{socket}" if socket else f"{host}:{port}",
            # Apache names each unix-socket member after '|': members sharing one name merge into one
            # worker.
            balancer_member=f"unix:{socket}|http://{name}-{i}" if socket else f"http://{host}:{port}",
            runtime_directory=f"{roots.run_relative}/{name}-{i}",
            config_file=f"{units}/{name}-{i}.{config}" if config else None,
            listen_args=kind.listen[bind].format(**where) if kind.listen else "",
            config_listen=kind.config_listen[bind].format(**where) if config else None,
        )


def resolve_stacks(
    stacks: object, roots: Roots = DEFAULT_ROOTS, base_dir: Path | None = None
) -> tuple[Stack, ...]:
    """Resolve every stack and check that names and every listening port are unique on the target, and that
    stacks sharing a user app (``app.name``) deploy the same one; StackError listing every problem of every
    stack otherwise. The stacks stay typed: the plan makes its dicts when it becomes the fact
    (:meth:`benchstack.plan.resolved.ResolvedPlan.to_dict`)."""
    note("resolve")
    if not isinstance(stacks, list) or not stacks:
        raise StackError("stacks: must be a non-empty list of stacks")
    resolved: list[Stack] = []
    problems: list[str] = []
    for i, stack in enumerate(stacks):
        try:
            resolved.append(resolve(stack, roots, base_dir, where=f"stacks[{i}]"))
        except StackError as exc:
            problems += [
                p if p.startswith(("stack ", "stacks[")) else f"stacks[{i}]: {p}" for p in exc.problems
            ]
    names: set[str] = set()
    ports: dict[int, str] = {}
    for r in resolved:
        if r.name in names:
            problems.append(f"stack {shown(r.name)}: name: used by two stacks")
        names.add(r.name)
        listening = {r.port} | {ep.port for ep in r.endpoints if ep.port is not None}
        for p in sorted(listening):
            if p in ports and ports[p] != r.name:
                problems.append(f"stack {shown(r.name)}: port: {p} is also used by stack {shown(ports[p])}")
            ports[p] = r.name
    problems += shared_app_problems((r.name, r.app, r.runtime) for r in resolved)
    problems += [
        p for r in resolved for p in bundle_problems(r.name, r.app, r.server.kind if r.server else None)
    ]
    if problems:
        raise StackError(problems)
    return tuple(resolved)
