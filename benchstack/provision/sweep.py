"""What no stack of the plan owns on a host, swept before the app servers and fronts are set up.

The command that reads a host (:func:`benchstack.provision.hostcommand.read_command`) lists what bench-stack
made for any stack on it (:func:`benchstack.provision.hoststate.found`): units and front configs that no stack
of this plan owns (an earlier experiment's) are :func:`stale`. Their CPU would be interference in every cell
and their ports may be the ones a new stack takes, so provisioning stops and disables them and removes their
front configs and unit files before the app servers and fronts are set up (provision.yml); the roles
themselves only ever see the stacks of the plan. What bench-stack wrote for a stack under the roots goes too
(:func:`stack_paths`, :func:`benchstack.plan.roles.owned`): env files and server configs no planned
instance reads, bundled app folders of kinds no stack of the plan runs, users' apps (folder link, releases,
record, gems, clone) no stack deploys; never a path outside those names, nor a folder a planned stack serves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from benchstack.kinds.apps import BUNDLED_KINDS
from benchstack.kinds.servers import REGISTRY as SERVERS
from benchstack.kinds.stackfields import NAME_RE

# The server configs' extensions (bundled apps: one folder each under the apps root, BUNDLED_KINDS).
CONFIG_EXTENSIONS = tuple(kind.config for kind in SERVERS.values() if kind.config)
# A stack's or user app's name, inside a pattern.
NAME = NAME_RE.pattern.strip("^$")
_NAME = NAME


def stack_paths(roots: Mapping[str, str]) -> dict[str, list[str]]:
    """The globs of what bench-stack writes for a stack under ``roots`` (the plan's ``roots``), for the host's
    :func:`benchstack.provision.hoststate.found`: ``paths`` (env files, server configs, bundled app folders,
    users' releases, records, gems and clones) and ``links`` (a user app's folder is a link to its release: a
    real folder there is not bench-stack's)."""
    units, user = roots["units"].rstrip("/"), f"{roots['apps'].rstrip('/')}/user"
    return {
        "paths": [
            f"{units}/*.env",
            *(f"{units}/*-*.{ext}" for ext in CONFIG_EXTENSIONS),
            *(f"{roots['apps'].rstrip('/')}/{kind}" for kind in BUNDLED_KINDS),
            f"{user}/.releases/*",
            f"{user}/.records/*.json",
            f"{user}/.bundle/*",
            f"{user}/.git/*.git",
        ],
        "links": [f"{user}/*"],
    }


def path_owner(path: str, roots: Mapping[str, str]) -> tuple[str, str] | None:
    """Who a path of :func:`stack_paths` belongs to: ``("file", path)`` for an env file or server config,
    ``("kind", KIND)`` for a bundled app's folder, ``("app", NAME)`` for what a user app's deployment made;
    None for a name bench-stack does not give (left alone)."""
    units, apps = re.escape(roots["units"].rstrip("/")), re.escape(roots["apps"].rstrip("/"))
    configs = "|".join(re.escape(ext) for ext in CONFIG_EXTENSIONS)
    if re.fullmatch(rf"{units}/{_NAME}\.env|{units}/{_NAME}-[0-9]+\.(?:{configs})", path):
        return ("file", path)
    kinds = "|".join(re.escape(kind) for kind in BUNDLED_KINDS)
    if match := re.fullmatch(rf"{apps}/({kinds})", path):
        return ("kind", match.group(1))
    user = rf"{apps}/user"
    for pattern in (
        rf"{user}/({_NAME})",
        # A release is named after the content hash or commit (16 hex), being written while .partial.
        rf"{user}/\.releases/({_NAME})-[0-9a-f]{{16}}(?:\.partial)?",
        rf"{user}/\.records/({_NAME})\.json",
        rf"{user}/\.bundle/({_NAME})",
        rf"{user}/\.git/({_NAME})\.git",
    ):
        if match := re.fullmatch(pattern, path):
            return ("app", match.group(1))
    return None


def path_key(path: str, roots: Mapping[str, str]) -> str | None:
    """The key under which the host's record of what bench-stack made (:mod:`benchstack.provision.made`)
    names a path of :func:`stack_paths`, or a path inside a bundled app's folder or a user app's release:
    ``UNITS/NAME.env`` for a stack's env file and server configs, ``APPS/KIND`` for a bundled app's folder,
    ``APPS/user/NAME`` for everything a user app's deployment made; None for a name bench-stack does not
    give."""
    units, apps = roots["units"].rstrip("/"), roots["apps"].rstrip("/")
    for candidate in (path, *(str(p) for p in PurePosixPath(path).parents)):
        owner = path_owner(candidate, roots)
        if owner is None:
            continue
        kind, name = owner
        if kind == "kind":
            return f"{apps}/{name}"
        if kind == "app":
            return f"{apps}/user/{name}"
        if candidate != path:  # a file of the units root has nothing inside it
            return None
        match = re.fullmatch(rf"{re.escape(units)}/({NAME})(?:-[0-9]+\.[a-z.-]+|\.env)", candidate)
        return f"{units}/{match.group(1)}.env" if match else None
    return None


def _stale_paths(paths: Iterable[str], owned: Mapping[str, Any], roles: Iterable[str]) -> list[str]:
    """The paths of :func:`stack_paths` found on a host that no stack of the plan owns
    (:func:`benchstack.plan.roles.owned`;
    ``roles``: those the host runs, without which it owns nothing of theirs), whoever made them
    (:func:`stale` keeps those bench-stack made)."""
    roles = set(roles)
    files = set(owned.get("app_server") or []) if "app_server" in roles else set()
    app = (owned.get("app") or {}) if "webapp" in roles else {}
    kinds, apps = set(app.get("kinds") or []), set(app.get("user_apps") or [])
    dirs = [d.rstrip("/") for d in app.get("dirs") or []]
    out = []
    for path in sorted(paths):
        owner = path_owner(path, owned["roots"])
        if owner is None or any(
            path == d or d.startswith(path + "/") or path.startswith(d + "/") for d in dirs
        ):
            continue
        kind, name = owner
        if (kind == "file" and name not in files) or (kind == "kind" and name not in kinds):
            out.append(path)
        elif kind == "app" and name not in apps:
            out.append(path)
    return out


# A unit in one of these states runs (or is about to: a crashed one waiting to restart is activating).
RUNNING = ("active", "activating", "reloading", "deactivating")
APACHE_INSTANCE_RE = re.compile(r"(bench-[a-z0-9-]+)(?:\.vhost)?(?:\.conf)?$")
NGINX_FILES = (
    "/etc/nginx/conf.d/bench-stack.conf",
    "/etc/systemd/system/nginx.service.d/bench-stack-cpus.conf",
)


def stale(
    found: Mapping[str, Any],
    planned_units: Iterable[str],
    nginx_planned: bool,
    owned_paths: Mapping[str, Any] | None = None,
    roles: Iterable[str] = (),
    made: Mapping[str, Any] | None = None,
) -> dict[str, list[str]]:
    """What no stack of the plan owns (``found``: :func:`benchstack.provision.hostcommand.parse_found`):
    ``units`` to stop and disable (they run or start at boot) and ``files`` to remove (front configs, app
    server template units, and with ``owned_paths``, the plan's :func:`benchstack.plan.roles.owned`, the
    ``paths`` found under its roots that no stack of the plan on this host, which runs ``roles``, owns:
    :func:`_stale_paths`). Of those, only the paths whose key (:func:`path_key`)
    the host's record of what bench-stack made lists (``made``, :mod:`benchstack.provision.made`; None:
    nothing) are ``files``; the others were made by someone else: ``foreign``, left alone (and named).

    A stack's units are its app server instances (``bench-NAME@I.service``) and its Apache instance
    (``apache2@bench-NAME.service`` or ``httpd@bench-NAME.service``, its files all that Debian's
    setup-instance made, ``/etc/apache2-bench-NAME`` and the rest, or ``/etc/httpd/conf/bench-NAME*.conf``);
    ``planned_units`` are those of this plan on this host. nginx serves every nginx stack from one file,
    which the nginx role rewrites when the stacks change: it is stale, with nginx itself, only when no stack
    of the plan is behind nginx. A unit is stale when it runs or starts at boot; one stopped and disabled
    already is left alone."""
    planned = set(planned_units)
    templates = {u.partition("@")[0] for u in planned if u.startswith("bench-")}
    apaches = {u.partition("@")[2].removesuffix(".service") for u in planned if not u.startswith("bench-")}
    units = []
    for unit, state in sorted((found.get("units") or {}).items()):
        enabled, _, active = str(state).partition(" ")
        owned = nginx_planned if unit == "nginx.service" else unit in planned
        if not owned and (active in RUNNING or enabled == "enabled"):
            units.append(unit)
    files = []
    for path in sorted(found.get("files") or []):
        name = path.rpartition("/")[2]
        if path in NGINX_FILES:
            owned = nginx_planned
        elif path.startswith("/etc/systemd/system/"):
            owned = name.removesuffix("@.service") in templates
        else:  # an Apache instance's: /etc/apache2-bench-NAME, a2enmod-bench-NAME, bench-NAME.vhost.conf ...
            instance = APACHE_INSTANCE_RE.search(name)
            owned = instance is not None and instance.group(1) in apaches
        if not owned:
            files.append(path)
    foreign: list[str] = []
    if owned_paths is not None:
        ours = set((made or {}).get("paths") or [])
        for path in _stale_paths(found.get("paths") or [], owned_paths, roles):
            (files if path_key(path, owned_paths["roots"]) in ours else foreign).append(path)
    return {"units": units, "files": files, "foreign": foreign}
