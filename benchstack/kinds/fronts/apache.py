"""Apache: one instance per stack (``apache2@bench-NAME`` on Debian, ``httpd@bench-NAME`` on RedHat), so
stacks with different MPMs and tuning run side by side on one target (roles/apache). Its ``handler`` says
what the instance does: ``proxy`` (mod_proxy_balancer to the app server pool), ``static``, ``mod_php``, or
an app that runs inside Apache: ``lua-inline``, ``lua-file`` (mod_lua), ``mruby-inline``, ``mruby-file``
(mod_mruby); the app kind names its handler (:attr:`benchstack.kinds.apps.AppKind.apache_handler`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from benchstack.common.inputs import shown
from benchstack.kinds.fronts.base import FrontKind
from benchstack.kinds.stackfields import err, typed_keys

if TYPE_CHECKING:
    from benchstack.kinds.apps import AppKind
    from benchstack.kinds.servers import ServerKind

MPMS = ("prefork", "worker", "event")
# Typed MPM tuning keys of an apache front: key -> (directive, minimum, maximum, default). The defaults are
# Debian's shipped mods-available/mpm_*.conf.
_PREFORK: dict[str, tuple[str, int, int, int]] = {
    "start_servers": ("StartServers", 1, 1024, 5),
    "min_spare_servers": ("MinSpareServers", 1, 1024, 5),
    "max_spare_servers": ("MaxSpareServers", 1, 1024, 10),
    "max_request_workers": ("MaxRequestWorkers", 1, 20000, 150),
    "max_connections_per_child": ("MaxConnectionsPerChild", 0, 10_000_000, 0),
}
_THREADED: dict[str, tuple[str, int, int, int]] = {
    "start_servers": ("StartServers", 1, 1024, 2),
    "min_spare_threads": ("MinSpareThreads", 1, 20000, 25),
    "max_spare_threads": ("MaxSpareThreads", 1, 20000, 75),
    "threads_per_child": ("ThreadsPerChild", 1, 1024, 25),
    "max_request_workers": ("MaxRequestWorkers", 1, 20000, 150),
    "max_connections_per_child": ("MaxConnectionsPerChild", 0, 10_000_000, 0),
}
MPM_OPTIONS: dict[str, dict[str, tuple[str, int, int, int]]] = {
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


class Apache(FrontKind):
    name = "apache"
    role = "apache"
    role_fields = ("instance", "mpm", "mpm_directives", "handler", "modules", "modules_off")

    def resolve(self, front: dict[str, Any], who: str, stack_name: object) -> None:
        """Check the MPM and its typed tuning keys; fill in defaults, the instance and the MPM directives."""
        mpm = front.setdefault("mpm", "event")
        if mpm not in MPMS:
            raise err(who, "front.mpm", f"must be one of {', '.join(MPMS)}, not {shown(mpm)}")
        options = MPM_OPTIONS[mpm]
        typed_keys(
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
                raise err(who, "front.max_spare_servers", "must be at least front.min_spare_servers")
            # Apache caps MaxRequestWorkers at ServerLimit (default 256) with only a warning.
            limits = [("ServerLimit", max(256, workers))]
        else:
            per_child = front["threads_per_child"]
            if workers % per_child:
                raise err(
                    who,
                    "front.max_request_workers",
                    f"must be a multiple of front.threads_per_child ({per_child}); Apache would round "
                    f"{workers} down to {workers - workers % per_child}",
                )
            if front["max_spare_threads"] < front["min_spare_threads"] + per_child:
                raise err(
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
        front["instance"] = f"bench-{stack_name}"
        front["mpm_directives"] = [[d, v] for d, v in limits] + [
            [directive, front[key]] for key, (directive, *_rest) in options.items()
        ]

    def serve(self, front: dict[str, Any], who: str, app: AppKind) -> None:
        self._handler(front, who, str(app.apache_handler))

    def proxy(self, front: dict[str, Any], who: str, server: ServerKind) -> None:
        if server.protocol != "http":
            raise err(
                who,
                "front.kind",
                f"{server.name} speaks {server.protocol}; the apache front proxies HTTP only "
                "(for PHP under Apache leave out the server: mod_php runs it)",
            )
        self._handler(front, who, "proxy")

    def _handler(self, front: dict[str, Any], who: str, handler: str) -> None:
        """Set what the stack's Apache instance does and the modules it needs (and must not have)."""
        if handler == "mod_php" and front["mpm"] != "prefork":
            raise err(
                who,
                "front.mpm",
                "mod_php needs the prefork MPM (the distributions build PHP without thread safety), "
                f"not {front['mpm']}",
            )
        front["handler"] = handler
        front["modules"] = [f"mpm_{front['mpm']}", *HANDLER_MODULES[handler]]
        front["modules_off"] = [f"mpm_{m}" for m in MPMS if m != front["mpm"]]
        if handler != "mod_php":
            front["modules_off"].append("php")

    def label(self, front: dict[str, Any]) -> str:
        return f"apache {front['mpm']}"

    def needs(self, stacks: list[dict[str, Any]]) -> dict[str, Any]:
        return {"apache_handlers": sorted({s["front"]["handler"] for s in stacks})}


KIND = Apache()
