"""What the plan reads off the resolved stacks (:func:`benchstack.plan.stacks.resolve_stacks`): what a target
must install for them (:func:`needs`), the requests verify sends to every app server instance
(:func:`instance_checks`) and through every front (:func:`front_checks`), and the ports that are probably a
slip (:func:`port_warnings`). Each reads the typed stacks' fields; its record becomes the plan's dict only in
``to_dict``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from benchstack.common.inputs import shown
from benchstack.kinds import apps, fronts
from benchstack.kinds.apps.deploy import BUNDLED_DEPLOYS, USER_DEPLOYS
from benchstack.kinds.loadtools.loadcmd import http_url
from benchstack.kinds.servers import by_name
from benchstack.kinds.stackfields import FIRST_USER_PORT
from benchstack.plan.stacks import Stack

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


def port_warnings(stacks: Sequence[Stack]) -> list[str]:
    """Stacks listening on ports that usually belong to another service on a host, or on a system port."""
    warnings = []
    for s in stacks:
        if s.port in WELL_KNOWN_PORTS:
            warnings.append(
                f"stack {shown(s.name)}: port {s.port} is usually {WELL_KNOWN_PORTS[s.port]}'s: "
                "the stack will not start if that service runs on the target"
            )
        elif s.port < FIRST_USER_PORT:
            warnings.append(
                f"stack {shown(s.name)}: port {s.port} is a system port (below {FIRST_USER_PORT}): the "
                "stack will not start if another service holds it on the target"
            )
    return warnings


def _add(found: list[str], names: Iterable[str]) -> None:
    """Append to ``found`` each of ``names`` it does not hold yet, in order."""
    for name in names:
        if name not in found:
            found.append(name)


@dataclass(frozen=True)
class Needs:
    """What a target must have installed for the run's stacks (:func:`needs`): the roles it runs follow
    from it (:func:`benchstack.plan.roles.target_roles`), and each role reads its part of the plan's
    ``needs``."""

    runtimes: tuple[str, ...]
    ruby_gems: tuple[str, ...]
    ruby_versions: tuple[str, ...]
    python_packages: tuple[str, ...]
    perl_modules: tuple[str, ...]
    # Bundled apps with files to deploy.
    app_kinds: tuple[str, ...]
    fronts: tuple[str, ...]
    servers: tuple[str, ...]
    # What each front's role needs to know of its stacks (:meth:`benchstack.kinds.fronts.FrontKind.needs`),
    # by the plan's key (``apache_handlers``).
    front_roles: Mapping[str, tuple[str, ...]]
    # The fronts whose access logs the log_shipper role ships (an experiment's ``logs``,
    # benchstack.plan.logship); empty: the targets ship nothing and run no log_shipper.
    log_shipping: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The plan's ``needs`` (``log_shipping`` only when the run ships access logs)."""
        shipping = {"log_shipping": list(self.log_shipping)} if self.log_shipping else {}
        return {
            "runtimes": list(self.runtimes),
            "ruby_gems": list(self.ruby_gems),
            "ruby_versions": list(self.ruby_versions),
            "python_packages": list(self.python_packages),
            "perl_modules": list(self.perl_modules),
            "app_kinds": list(self.app_kinds),
            "fronts": list(self.fronts),
            "servers": list(self.servers),
            **{key: list(value) for key, value in self.front_roles.items()},
            **shipping,
        }


def needs(stacks: Sequence[Stack]) -> Needs:
    """What a target must have installed for these resolved stacks: runtimes, gems, apps, fronts."""
    gems: list[str] = []
    pips: list[str] = []
    perls: list[str] = []
    for s in stacks:
        app = apps.by_name(s.app.kind)
        server = by_name(s.server.kind) if s.server else None
        # A user's app brings its own gems (Bundler, from its Gemfile) when it has a Gemfile.
        user = app.user_gems if s.app.deploy in USER_DEPLOYS else ()
        _add(pips, [*app.pip, *(server.pip if server else ())])
        _add(perls, [*app.perl, *(server.perl if server else ())])
        _add(gems, [*app.gems, *(server.gems if server else ()), *user])
    direct = {k for k, f in fronts.REGISTRY.items() if f.direct}
    return Needs(
        runtimes=tuple(sorted({s.runtime.kind for s in stacks} - {"none"})),
        ruby_gems=tuple(gems),
        ruby_versions=tuple(sorted({s.runtime.version for s in stacks if s.runtime.version is not None})),
        python_packages=tuple(pips),
        perl_modules=tuple(perls),
        # Bundled apps with files to deploy (lua-inline lives in the Apache config; a user's app from
        # app.src or app.git is deployed instead of the bundled one).
        app_kinds=tuple(
            sorted({s.app.kind for s in stacks if s.app.entry and s.app.deploy in BUNDLED_DEPLOYS})
        ),
        fronts=tuple(sorted({s.front.kind for s in stacks} - direct)),
        servers=tuple(sorted({s.server.kind for s in stacks if s.server})),
        # What each front's role needs to know of its stacks (the apache role: the handlers, for mod_php's
        # and mod_mruby's packages).
        front_roles=MappingProxyType(
            {
                key: tuple(value)
                for front in fronts.REGISTRY.values()
                for key, value in front.needs([s for s in stacks if s.front.kind == front.name]).items()
            }
        ),
    )


@dataclass(frozen=True)
class FastCgiRequest:
    """How a FastCGI server is asked, as a front would: where it listens, the script and the request URI."""

    connect: str
    script: str
    uri: str


@dataclass(frozen=True)
class InstanceCheck:
    """One request to one app server instance and the answer it must give (verify, bench_http_check)."""

    stack: str
    via: str
    # Its journal is shown when the instance does not answer (bench_http_check).
    unit: str
    url: str
    unix_socket: str | None
    body: str
    protocol: str
    fastcgi: FastCgiRequest | None = None

    def to_dict(self) -> dict[str, Any]:
        """The check as the plan holds it (``instance_checks[]``)."""
        fields: dict[str, Any] = {
            "stack": self.stack,
            "via": self.via,
            "unit": self.unit,
            "url": self.url,
            "unix_socket": self.unix_socket,
            "body": self.body,
            "protocol": self.protocol,
        }
        if self.fastcgi:
            fields["fastcgi"] = asdict(self.fastcgi)
        return fields


def instance_checks(stacks: Sequence[Stack]) -> list[InstanceCheck]:
    """One request per app server instance and expected answer of resolved stacks, asked on the target.

    Asking every instance directly proves that every member of a pool serves, not just the one a
    front happens to pick.
    """
    out = []
    for s in stacks:
        if s.server is None:
            continue
        for ep in s.endpoints:
            for check in s.app.checks:
                host = "127.0.0.1" if ep.socket or ep.host == "0.0.0.0" else str(ep.host)
                port = f":{ep.port}" if ep.port else ""
                protocol = s.server.protocol
                out.append(
                    InstanceCheck(
                        stack=s.name,
                        via=f"{ep.unit} ({'unix:' + ep.socket if ep.socket else host + port})",
                        unit=ep.unit,
                        url=f"http://{'localhost' if ep.socket else host + port}{check.path}",
                        unix_socket=ep.socket,
                        body=check.body,
                        protocol=protocol,
                        # A FastCGI server is asked as a front would: the script and the request URI.
                        fastcgi=FastCgiRequest(
                            connect=ep.socket or f"{host}{port}",
                            script=f"{s.app.dir}/{s.app.entry}",
                            uri=check.path,
                        )
                        if protocol == "fastcgi"
                        else None,
                    )
                )
    return out


@dataclass(frozen=True)
class FrontCheck:
    """One request through a stack's public port, as a loadgen reaches its target, and the answer it must
    give (verify, bench_http_check)."""

    stack: str
    via: str
    url: str
    body: str
    # Asked over TCP: bench_http_check takes the same items as the instance checks.
    unix_socket: None = None

    def to_dict(self) -> dict[str, Any]:
        """The check as the plan holds it (``hosts[].front_checks[]``)."""
        return {
            "stack": self.stack,
            "via": self.via,
            "url": self.url,
            "unix_socket": self.unix_socket,
            "body": self.body,
        }


def front_checks(stacks: Sequence[Stack], host: str) -> list[FrontCheck]:
    """One request per resolved stack and check through its public port, as a loadgen reaches ``host``."""
    return [
        FrontCheck(
            stack=s.name,
            via=f"port {s.port} ({fronts.by_name(s.front.kind).label(s.front)})",
            url=http_url(host, s.port, check.path),
            body=check.body,
        )
        for s in stacks
        for check in s.app.checks
    ]


def is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def stack_names(stacks: Sequence[Stack], target_host: str | None) -> list[str]:
    """Host names (not addresses) the resolved stacks depend on: the target as a loadgen reaches it, and every
    app server endpoint's host. Addresses need no resolution and are left out."""
    names: list[str] = []
    hosts = [ep.host for s in stacks for ep in s.endpoints if ep.host]
    if target_host:
        hosts += [urlsplit(c.url).hostname or "" for c in front_checks(stacks, target_host)]
    for host in hosts:
        if host and not is_ip(host) and host not in names:
            names.append(host)
    return names
