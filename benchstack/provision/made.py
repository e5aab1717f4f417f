"""The record of what bench-stack itself made on a host (:data:`PATH`, schema :data:`SCHEMA`): the sweep
removes only what it names, and an account, group or app folder that exists without it is refused.

Its entries, written by the provisioning decision (bench_provision_state) *before* the roles make them, so
that a run stopped half way still knows what it made:

* ``paths``: a *key* per thing bench-stack made under its roots (:func:`benchstack.provision.sweep.path_key`):
  a stack's files under ``bench_unit_config_dir`` (its env file and server configs: key ``UNITS/NAME.env``),
  a bundled app's folder (``APPS/KIND``), a user app's deployment (its folder link, releases, record, gems
  and clone: key ``APPS/user/NAME``). What the roots' globs match
  (:func:`benchstack.provision.sweep.stack_paths`) is bench-stack's only when its key is here;
* ``users`` and ``groups``: the accounts bench-stack created (the benchmark user and group) or was told to
  adopt (``host_adopt_user``): the only ones the host role may change.

A key is written when the plan is about to make it and it does not exist yet (:func:`planned_keys`); it is
dropped once nothing of it is left on the host. Something that exists and is not recorded was made by someone
else: the sweep leaves it and names it (``foreign``), and the plan may not write into it
(:func:`foreign_planned`).

Upgrade: a host provisioned by a bench-stack from before this record has the provisioning record
(:data:`benchstack.provision.hostrecord.MARKER`) and no record of this kind. :func:`migrated` takes from the
provisioning record what it proves bench-stack made: every path a role recorded as made (with its state), and
the folder of a bundled app or user app such a path lies in; the benchmark account of the host role's
default names, which every earlier version made on every host it provisioned, and an account whose home is
under bench-stack's own folder with its primary group (another ``host_user`` an earlier version made). Nothing
else is taken: what cannot be proven is left alone.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from benchstack.kinds.apps import BUNDLED_KINDS
from benchstack.provision import sweep

PATH = "/var/lib/bench-stack/made.json"
SCHEMA = "bench-stack/made/v1"
# The host role's own names for the benchmark account (roles/host/defaults/main.yml): every bench-stack
# before this record created them on each host it provisioned.
DEFAULT_ACCOUNT = "bench"


def empty() -> dict[str, Any]:
    return {"schema": SCHEMA, "paths": [], "users": [], "groups": []}


def parse(value: Any) -> dict[str, Any] | None:
    """The record as the host keeps it (the ``made`` of :func:`benchstack.provision.hoststate.found`), or None
    when there is none or it is not one (then :func:`migrated` decides)."""
    if not isinstance(value, dict) or value.get("schema") != SCHEMA:
        return None
    out = empty()
    for key in ("paths", "users", "groups"):
        items = value.get(key)
        out[key] = sorted({str(i) for i in items}) if isinstance(items, list) else []
    return out


def existing_keys(found_paths: Iterable[str], roots: Mapping[str, str]) -> dict[str, list[str]]:
    """Key -> the paths found of it (what exists of each key on the host)."""
    out: dict[str, list[str]] = {}
    for path in sorted(found_paths):
        key = sweep.path_key(path, roots)
        if key is not None:
            out.setdefault(key, []).append(path)
    return out


def planned_keys(owned: Mapping[str, Any], roles: Iterable[str]) -> list[str]:
    """The keys of what this plan makes on a host that runs ``roles`` (the plan's ``owned``,
    :func:`benchstack.plan.roles.owned`): the stacks' files (app_server), the bundled apps' folders and
    the users' apps (webapp)."""
    roles, roots = set(roles), owned["roots"]
    apps = roots["apps"].rstrip("/")
    keys = []
    if "app_server" in roles:
        keys += [sweep.path_key(path, roots) for path in owned.get("app_server") or []]
    if "webapp" in roles:
        app = owned.get("app") or {}
        keys += [f"{apps}/{kind}" for kind in app.get("kinds") or [] if kind in BUNDLED_KINDS]
        keys += [f"{apps}/user/{name}" for name in app.get("user_apps") or []]
    return sorted({key for key in keys if key})


def migrated(
    record: Mapping[str, Any],
    roots: Mapping[str, str] | None,
    host_role: bool,
    accounts: Mapping[str, list[str]] | None = None,
) -> dict[str, Any]:
    """What the provisioning record of an earlier bench-stack proves it made (module docstring): the keys of
    every file a role recorded as made, and the default benchmark account when the host role ran to the end
    (``host_role``: its entry is in the record), with ``accounts`` (users, groups) only bench-stack makes
    (:func:`benchstack.provision.accounts.proven`)."""
    out = empty()
    roles = v if isinstance(v := record.get("roles"), dict) else {}
    files = [
        str(path)
        for entry in roles.values()
        if isinstance(entry, dict) and isinstance(entry.get("made"), dict)
        for path in entry["made"].get("files") or []
    ]
    if roots:
        out["paths"] = sorted({key for path in files if (key := sweep.path_key(path, roots))})
    if host_role and "host" in roles:
        out["users"], out["groups"] = [DEFAULT_ACCOUNT], [DEFAULT_ACCOUNT]
    out["users"] = sorted({*out["users"], *(accounts or {}).get("users", [])})
    out["groups"] = sorted({*out["groups"], *(accounts or {}).get("groups", [])})
    return out


def foreign_planned(
    planned: Iterable[str], existing: Mapping[str, list[str]], made: Mapping[str, Any]
) -> list[str]:
    """The paths found of planned keys that exist without being bench-stack's: the plan would write into
    another program's folder or files."""
    ours = set(made.get("paths") or [])
    return sorted(path for key in planned if key not in ours for path in existing.get(key, []))


def after(
    made: Mapping[str, Any],
    existing: Mapping[str, list[str]] | None,
    planned: Iterable[str],
    users: Iterable[str] = (),
    groups: Iterable[str] = (),
) -> dict[str, Any]:
    """The record to keep: the recorded keys of which something is left (all of them when ``existing`` is
    None: the roots were not looked at), the planned keys that do not exist yet (made by the roles that run
    next), and the accounts recorded, created or adopted now."""
    ours = set(made.get("paths") or [])
    if existing is None:
        keys = ours
    else:
        keys = {key for key in ours if key in existing} | {key for key in planned if key not in existing}
    return {
        "schema": SCHEMA,
        "paths": sorted(keys),
        "users": sorted({*(made.get("users") or []), *users}),
        "groups": sorted({*(made.get("groups") or []), *groups}),
    }


def write_command(made: Mapping[str, Any]) -> str:
    """One shell command that replaces the record atomically."""
    text = json.dumps(dict(made), sort_keys=True, indent=1)
    folder = shlex.quote(str(PurePosixPath(PATH).parent))
    return f"mkdir -p {folder} && printf '%s\\n' {shlex.quote(text)} > {PATH}.tmp && mv {PATH}.tmp {PATH}"
