"""Apache: one instance per stack (``apache2@bench-NAME`` on Debian, ``httpd@bench-NAME`` on RedHat), so
stacks with different MPMs and tuning run side by side on one target (roles/apache). Its ``handler`` says
what the instance does: ``proxy`` (mod_proxy_balancer to the app server pool), ``static``, ``mod_php``, or
an app that runs inside Apache: ``lua-inline``, ``lua-file`` (mod_lua), ``mruby-inline``, ``mruby-file``
(mod_mruby); the app kind names its handler (:attr:`benchstack.kinds.apps.AppKind.apache_handler`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchstack.common.inputs import shown
from benchstack.kinds.fronts.base import Bounded, Choice, Front, FrontKind, FrontSpec
from benchstack.kinds.stackfields import err, typed_keys

if TYPE_CHECKING:
    from benchstack.kinds.apps import AppKind
    from benchstack.kinds.servers import ServerKind
    from benchstack.plan.stacks import Stack

MPMS = ("prefork", "worker", "event")
MPM = Choice(MPMS, "event", "Apache's MPM (default event).")
# Typed MPM tuning keys of an apache front: the directive each sets, its bounds and default (Debian's shipped
# mods-available/mpm_*.conf).
_PREFORK = {
    "start_servers": Bounded("StartServers", 1, 1024, 5),
    "min_spare_servers": Bounded("MinSpareServers", 1, 1024, 5),
    "max_spare_servers": Bounded("MaxSpareServers", 1, 1024, 10, "at least min_spare_servers"),
    "max_request_workers": Bounded("MaxRequestWorkers", 1, 20000, 150),
    "max_connections_per_child": Bounded("MaxConnectionsPerChild", 0, 10_000_000, 0),
}
_THREADED = {
    "start_servers": Bounded("StartServers", 1, 1024, 2),
    "min_spare_threads": Bounded("MinSpareThreads", 1, 20000, 25),
    "max_spare_threads": Bounded("MaxSpareThreads", 1, 20000, 75, "at least min + threads_per_child"),
    "threads_per_child": Bounded("ThreadsPerChild", 1, 1024, 25),
    "max_request_workers": Bounded("MaxRequestWorkers", 1, 20000, 150, "a multiple of threads_per_child"),
    "max_connections_per_child": Bounded("MaxConnectionsPerChild", 0, 10_000_000, 0),
}
MPM_OPTIONS: dict[str, dict[str, Bounded]] = {
    "prefork": _PREFORK,
    "worker": _THREADED,
    "event": _THREADED,
}
# Apache modules (Debian a2enmod names; the apache role maps them per OS) each handler needs besides the MPM.
HANDLER_MODULES: dict[str, list[str]] = {
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


@dataclass(frozen=True)
class ApacheSpec(FrontSpec):
    mpm: str
    # The MPM's tuning keys and values, in MPM_OPTIONS' order (defaults filled in).
    tuning: tuple[tuple[str, int], ...]

    def fields(self) -> dict[str, Any]:
        return {"kind": self.kind, "mpm": self.mpm, **dict(self.tuning)}


@dataclass(frozen=True)
class ApacheFront(Front):
    """The stack's Apache instance, its MPM directives, and what it does (its handler) with the modules that
    needs and the ones it must not have."""

    spec: ApacheSpec
    instance: str
    mpm_directives: tuple[tuple[str, int], ...]
    handler: str
    modules: tuple[str, ...]
    modules_off: tuple[str, ...]

    def derived(self) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "mpm_directives": [[directive, value] for directive, value in self.mpm_directives],
            "handler": self.handler,
            "modules": list(self.modules),
            "modules_off": list(self.modules_off),
        }


class Apache(FrontKind):
    name = "apache"
    order = 30
    role = "apache"
    role_fields = ("instance", "mpm", "mpm_directives", "handler", "modules", "modules_off")
    called = "an apache front"
    choices = {"mpm": MPM}
    variant = "mpm"
    integers = MPM_OPTIONS

    def check(self, front: Mapping[str, Any], who: str) -> ApacheSpec:
        """Check the MPM and its typed tuning keys; fill in their defaults."""
        mpm = front.get("mpm", MPM.default)
        if mpm not in MPMS:
            raise err(who, "front.mpm", f"must be one of {', '.join(MPMS)}, not {shown(mpm)}")
        options = MPM_OPTIONS[mpm]
        tuning = typed_keys(
            who,
            "front",
            front,
            self.key_of(mpm),
            keys={"kind", *self.choices},
            options={key: (int, b.low, b.high, b.default) for key, b in options.items()},
        )
        workers = tuning["max_request_workers"]
        if mpm == "prefork":
            if tuning["min_spare_servers"] > tuning["max_spare_servers"]:
                raise err(who, "front.max_spare_servers", "must be at least front.min_spare_servers")
        else:
            per_child = tuning["threads_per_child"]
            if workers % per_child:
                raise err(
                    who,
                    "front.max_request_workers",
                    f"must be a multiple of front.threads_per_child ({per_child}); Apache would round "
                    f"{workers} down to {workers - workers % per_child}",
                )
            if tuning["max_spare_threads"] < tuning["min_spare_threads"] + per_child:
                raise err(
                    who,
                    "front.max_spare_threads",
                    "must be at least front.min_spare_threads + front.threads_per_child "
                    f"({tuning['min_spare_threads'] + per_child}); Apache would raise it itself",
                )
        return ApacheSpec(kind=self.name, written=tuple(front), mpm=mpm, tuning=tuple(tuning.items()))

    def serve_problem(self, front: FrontSpec, app: AppKind) -> tuple[str, str] | None:
        assert isinstance(front, ApacheSpec)
        if app.apache_handler == "mod_php" and front.mpm != "prefork":
            return (
                "front.mpm",
                "mod_php needs the prefork MPM (the distributions build PHP without thread safety), "
                f"not {front.mpm}",
            )
        return None

    def proxy_problem(self, front: FrontSpec, server: ServerKind) -> tuple[str, str] | None:
        if server.protocol != "http":
            return (
                "front.kind",
                f"{server.name} speaks {server.protocol}; the apache front proxies HTTP only "
                "(for PHP under Apache leave out the server: mod_php runs it)",
            )
        return None

    def resolve(
        self, front: FrontSpec, stack_name: str, app: AppKind, server: ServerKind | None
    ) -> ApacheFront:
        """The stack's instance, its MPM directives (with the limits that cap them), and its handler: the
        app's own when Apache serves it, else ``proxy`` (mod_proxy_balancer to the app server's pool)."""
        assert isinstance(front, ApacheSpec)
        tuning = dict(front.tuning)
        workers = tuning["max_request_workers"]
        if front.mpm == "prefork":
            # Apache caps MaxRequestWorkers at ServerLimit (default 256) with only a warning.
            limits = [("ServerLimit", max(256, workers))]
        else:
            per_child = tuning["threads_per_child"]
            # ServerLimit and ThreadLimit cap the other values (defaults 16 and 64) with only a warning.
            limits = [
                ("ServerLimit", max(16, math.ceil(workers / per_child))),
                ("ThreadLimit", max(64, per_child)),
            ]
        options = MPM_OPTIONS[front.mpm]
        handler = "proxy" if server else str(app.apache_handler)
        return ApacheFront(
            spec=front,
            instance=f"bench-{stack_name}",
            mpm_directives=(*limits, *((bounded.sets, tuning[key]) for key, bounded in options.items())),
            handler=handler,
            modules=(f"mpm_{front.mpm}", *HANDLER_MODULES[handler]),
            modules_off=(
                *(f"mpm_{m}" for m in MPMS if m != front.mpm),
                *(() if handler == "mod_php" else ("php",)),
            ),
        )

    def label(self, front: Front) -> str:
        assert isinstance(front, ApacheFront)
        return f"apache {front.spec.mpm}"

    def needs(self, stacks: Sequence[Stack]) -> dict[str, list[str]]:
        return {
            "apache_handlers": sorted({s.front.handler for s in stacks if isinstance(s.front, ApacheFront)})
        }


KIND = Apache()
