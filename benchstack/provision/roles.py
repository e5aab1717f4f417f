"""Provisioning markers: skip a role whose inputs did not change since it last ran to the end on a host.

A re-run with nothing changed should cost what a plain playbook costs (docs/how-it-works.md, "Provisioning
markers"). Each role's inputs are hashed on the controller: the role's own files (and the internal roles it
includes), the project's plugins, every variable with the role's prefix as the play sees it (the plan's part
for the role included, since provision hands it over as role variables), and the host facts that choose per-OS
paths. The host keeps, in one JSON file, the hash each role last ran with to the end and the facts the role
exports (``ruby_bin_dir``, ...). On the next run a role runs when:

* its hash differs, or the host has no record of it;
* a role it depends on runs (app_server needs the runtimes' facts and the app's changes);
* a service it manages is not active now (its ActiveState, in the same command that reads the file);
* what it made drifted: at the end of provisioning each role that ran records its manifest (the files it
  manages, units included; its OS packages and the binaries they install; its units; the sysctls it set) and
  their state (:mod:`benchstack.provision.hoststate`); the same command computes that state again, and a role
  whose state differs runs (the packages of a binary now missing are reinstalled first: ``reinstall``);
* the run is limited by tags, or ``bench_provision_skip_unchanged`` is false: then every role runs.

The host facts the decision needs (those hashed, and the vCPUs that playbooks/vars/bench.yml's CPU split
reads) are kept in the record too, with the host's identity
(:func:`benchstack.provision.hoststate.identity`: its release files, architecture and CPU count): while the
same command finds the same identity, the decision takes them from there (:func:`host_facts`) and
provision.yml gathers facts only on hosts where a role runs.

A skipped role's exported facts are restored from the record, so later roles see them. Before a role runs
with other inputs, its record is removed from the host, so a run that stops half way never leaves a record of
a state the host is not in; after provisioning the new hashes are written (nothing is written when they are
the same). The record lives at
``/var/lib/bench-stack/provisioned.json`` (:data:`MARKER`) and says when each role last ran.

The same command lists what bench-stack made for any stack on the host
(:func:`benchstack.provision.hoststate.found`): units and front configs that no stack of this plan owns (an
earlier experiment's) are :func:`stale`. Their CPU would be interference in every cell and their ports may be
the ones a new stack takes, so provisioning stops and disables them and removes their front configs and unit
files before the app servers and fronts are set up (provision.yml); the roles themselves only ever see the
stacks of the plan. What bench-stack wrote for a stack under the roots goes too (:func:`stack_paths`,
:func:`owned`): env files and server configs no planned instance reads, bundled app folders of kinds no stack
of the plan runs, users' apps (folder link, releases, record, gems, clone) no stack deploys; never a path
outside those names, nor a folder a planned stack serves.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from benchstack.common.renamed import ROLES as RENAMED_ROLES
from benchstack.kinds.apps import BUNDLED_KINDS
from benchstack.kinds.fronts.apache import ApacheFront
from benchstack.kinds.servers import REGISTRY as SERVERS
from benchstack.kinds.stackfields import Roots
from benchstack.plan.rolecontract import served
from benchstack.plan.stacks import NAME_RE, Needs, Stack
from benchstack.provision import hoststate

MARKER = "/var/lib/bench-stack/provisioned.json"
SCHEMA = "bench-stack/provisioned/v1"
# Separate the record, the services' states, the state of what the roles made, what any stack left and the
# host's lock in the output of the one command that reads them all (benchstack.provision.hoststate).
SEPARATOR = hoststate.SEPARATOR
STATE_SEPARATOR = hoststate.STATE_SEPARATOR
FOUND_SEPARATOR = hoststate.FOUND_SEPARATOR
HOST_SEPARATOR = hoststate.HOST_SEPARATOR
LOCK_SEPARATOR = hoststate.LOCK_SEPARATOR
# Runs on the host (standard library only), sent as ``python3 -c``.
HOSTSTATE = Path(hoststate.__file__)

# Facts that choose per-OS paths, packages and units in the roles.
HASHED_FACTS = ("distribution", "distribution_major_version", "os_family", "architecture")
# The facts the decision reads (those hashed, and the vCPUs of playbooks/vars/bench.yml's CPU split, which
# the roles' variables read), kept in the record with the host's identity (:func:`host_facts`).
DECISION_FACTS = (*HASHED_FACTS, "processor_vcpus")
# What each role exports as facts that describe the host (restored when the role is skipped), and the roles
# whose run makes it run. The webapp role's webapp_changed_dirs says what changed in this run: not a state,
# so a skipped webapp role leaves it unset (nothing changed).
EXPORTS: dict[str, tuple[str, ...]] = {
    "ruby": ("ruby_bin_dir", "ruby_bin_dirs"),
    "python": ("python_bin_dir",),
    "perl": ("perl_bin_dir",),
    "php": ("php_fpm_bin",),
    # Users' apps with a Gemfile, whose servers run through `bundle exec` (a state of the deployed folders).
    "webapp": ("webapp_bundled_dirs",),
}
# Roles with a `packages` entry point, whose OS packages provision.yml installs in one transaction
# (:func:`package_roles`).
PACKAGED = ("host", "ruby", "python", "perl", "php", "nginx", "apache", "loadgen")
# Roles that name, at their end, what they made beyond the plan's role_made (``<role>_made``: files,
# binaries; the files of a bundled app, a Ruby's or Python's executable, wrk built from source), recorded
# with it (bench_provision_record).
DECLARES_MADE = ("webapp", "ruby", "python", "loadgen")
# Facts a role sets that are not its inputs (kept out of its hash): the webapp role's changes in this run, the
# OS packages each `packages` entry point names, and what a role says it made.
RUN_FACTS: dict[str, tuple[str, ...]] = {
    role: (
        *(("webapp_changed_dirs",) if role == "webapp" else ()),
        *((f"{role}_os_packages",) if role in PACKAGED else ()),
        *((f"{role}_made",) if role in DECLARES_MADE else ()),
    )
    for role in dict.fromkeys((*PACKAGED, *DECLARES_MADE))
}
DEPENDS: dict[str, tuple[str, ...]] = {
    "app_server": ("ruby", "python", "perl", "php", "webapp"),
    "apache": ("php",),
}
# Internal roles a role includes (their files count as the role's).
INCLUDES: dict[str, tuple[str, ...]] = {"ruby": ("build_archive",), "python": ("build_archive",)}


def tree_hash(paths: Iterable[Path]) -> str:
    """sha256 over every file under ``paths`` (relative names and contents, in a stable order)."""
    digest = hashlib.sha256()
    for root in paths:
        files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        for path in files:
            digest.update(str(path.relative_to(root.parent)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def role_variables(role: str, variables: Mapping[str, Any]) -> dict[str, Any]:
    """The variables of ``role`` (its prefix) as the play sees them, without the facts it exports itself.
    No role's prefix starts another's, nor the project's ``bench_`` (test_provision.py holds them to it)."""
    prefix = f"{role}_"
    own = EXPORTS.get(role, ()) + RUN_FACTS.get(role, ())
    return {name: value for name, value in variables.items() if name.startswith(prefix) and name not in own}


def role_hash(files_hash: str, role_vars: Mapping[str, Any], facts: Mapping[str, Any]) -> str:
    """One role's input hash: its files, its variables and the facts that choose per-OS paths."""
    content = {
        "files": files_hash,
        "vars": role_vars,
        "facts": {name: facts.get(name) for name in HASHED_FACTS},
    }
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def host_python(variables: Mapping[str, Any]) -> str:
    """The host's Python as Ansible runs it (what the roles' modules run on)."""
    facts = variables.get("ansible_facts") or {}
    found = variables.get("ansible_python_interpreter") or facts.get("discovered_interpreter_python")
    return str(found) if found and "{{" not in str(found) else "python3"


def hoststate_command(python: str, request: Mapping[str, Any]) -> str:
    """The shell command that runs :mod:`benchstack.provision.hoststate` on the host with ``request``."""
    source = HOSTSTATE.read_text(encoding="utf-8")
    return f"{shlex.quote(python)} -c {shlex.quote(source)} {shlex.quote(json.dumps(request))}"


def read_command(
    units: Sequence[str],
    python: str = "python3",
    roots: Mapping[str, str] | None = None,
    lock: Mapping[str, Any] | None = None,
) -> str:
    """One command, one Python on the host: with ``lock`` (a request of
    :func:`benchstack.measure.runlock.take_host`) the host's lock first, then the record (or nothing), each
    unit's ActiveState, the state now of what each recorded role made, then what bench-stack made for any
    stack (:func:`parse_found`), its files under ``roots`` included (:func:`stack_paths`), and the lock's
    answer (:func:`parse_lock`)."""
    return hoststate_command(python, read_request(units, roots, lock))


def read_request(
    units: Sequence[str], roots: Mapping[str, str] | None = None, lock: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """What :func:`read_command` asks :mod:`benchstack.provision.hoststate` for."""
    request: dict[str, Any] = {"marker": MARKER, "active": list(units), "found": True, "identity": True}
    request.update(stack_paths(roots) if roots else {})
    if lock is not None:
        request["lock"] = dict(lock)
    return request


def lock_command(python: str, lock: Mapping[str, Any]) -> str:
    """The command that only reads, takes or gives up the host's lock (:func:`parse_lock`)."""
    return hoststate_command(python, {"lock": dict(lock)})


def parse_lock(stdout: str) -> dict[str, Any] | None:
    """The host lock's answer (``held``, ``was``) from :func:`read_command` or :func:`lock_command`'s output;
    None when there is none (the command failed)."""
    _, sep, text = stdout.partition(LOCK_SEPARATOR)
    try:
        answer = json.loads(text) if sep else None
    except ValueError:
        return None
    return answer if isinstance(answer, dict) and "held" in answer else None


def parse_found(stdout: str) -> dict[str, Any]:
    """What bench-stack made for any stack (``units``: unit -> ``<UnitFileState> <ActiveState>``, ``files``),
    from :func:`read_command`'s output (empty when unreadable)."""
    _, _, text = stdout.partition(FOUND_SEPARATOR)
    text = text.partition(HOST_SEPARATOR)[0].partition(LOCK_SEPARATOR)[0]
    try:
        found = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def parse_identity(stdout: str) -> str | None:
    """The host's identity (:func:`benchstack.provision.hoststate.identity`) from :func:`read_command`'s
    output."""
    _, sep, text = stdout.partition(HOST_SEPARATOR)
    found = text.partition(LOCK_SEPARATOR)[0].strip()
    return found if sep and re.fullmatch(r"[0-9a-f]{64}", found) else None


def host_facts(record: Mapping[str, Any], identity: str | None) -> dict[str, Any] | None:
    """The facts the decision needs as the record keeps them, when the host's identity is still the one
    they were taken with (None: gather them)."""
    host = record.get("host")
    if not identity or not isinstance(host, dict) or host.get("identity") != identity:
        return None
    facts = host.get("facts")
    if not isinstance(facts, dict) or any(name not in facts for name in DECISION_FACTS):
        return None
    return {name: facts[name] for name in DECISION_FACTS}


def host_entry(identity: str | None, facts: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the record keeps of the host (:func:`host_facts`); None when ``facts`` lack one of them."""
    if not identity or any(name not in facts for name in DECISION_FACTS):
        return None
    return {"identity": identity, "facts": {name: facts[name] for name in DECISION_FACTS}}


def with_host(record: Mapping[str, Any], host: Mapping[str, Any] | None) -> dict[str, Any]:
    """``record`` keeping ``host`` (:func:`host_entry`), or without one."""
    kept = {k: v for k, v in record.items() if k != "host"}
    return {**kept, "host": dict(host)} if host else kept


# The server configs' extensions (bundled apps: one folder each under the apps root, BUNDLED_KINDS).
CONFIG_EXTENSIONS = tuple(kind.config for kind in SERVERS.values() if kind.config)
_NAME = NAME_RE.pattern.strip("^$")


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


def owned(
    stacks: Sequence[Stack],
    app_kinds: Sequence[str],
    user_apps: Sequence[Mapping[str, Any]],
    roots: Roots,
) -> dict[str, Any]:
    """What the plan's stacks own under ``roots`` (the plan's ``owned``), by the role that writes it:
    ``app_server``, every instance's env file and server config; ``app``, the bundled kinds it deploys
    (``app_kinds``, the plan's needs), the users' apps and every stack's app folder (which no sweep touches,
    nor a folder holding one)."""
    files = []
    for s in stacks:
        if s.server:
            files.append(s.server.units.env_file)
            files += [ep.config_file for ep in s.endpoints if ep.config_file]
    return {
        "roots": {"apps": roots.apps, "units": roots.units},
        "app_server": files,
        "app": {
            "kinds": sorted(app_kinds),
            "user_apps": [app["name"] for app in user_apps],
            "dirs": sorted({s.app.dir for s in stacks if s.app.dir}),
        },
    }


def _stale_paths(paths: Iterable[str], owned: Mapping[str, Any], roles: Iterable[str]) -> list[str]:
    """The paths of :func:`stack_paths` found on a host that no stack of the plan owns (:func:`owned`;
    ``roles``: those the host runs, without which it owns nothing of theirs)."""
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
) -> dict[str, list[str]]:
    """What no stack of the plan owns (``found``: :func:`parse_found`): ``units`` to stop and disable (they
    run or start at boot) and ``files`` to remove (front configs, app server template units, and with
    ``owned_paths``, the plan's :func:`owned`, the ``paths`` found under its roots that no stack of the
    plan on this host, which runs ``roles``, owns: :func:`_stale_paths`).

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
    if owned_paths is not None:
        files += _stale_paths(found.get("paths") or [], owned_paths, roles)
    return {"units": units, "files": files}


def parse_now(stdout: str) -> dict[str, dict[str, str]]:
    """Role -> the state now of what it made, from :func:`read_command`'s output (empty when unreadable)."""
    _, _, text = stdout.partition(STATE_SEPARATOR)
    text = text.partition(FOUND_SEPARATOR)[0].partition(LOCK_SEPARATOR)[0]
    try:
        now = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return now if isinstance(now, dict) else {}


def parse_read(stdout: str, units: Sequence[str]) -> tuple[dict[str, Any], dict[str, bool]]:
    """The record (empty when missing or unreadable) and whether each unit is active, from
    :func:`read_command`'s output."""
    record_text, _, answers = stdout.partition(SEPARATOR)
    answers = answers.partition(STATE_SEPARATOR)[0]
    try:
        record = json.loads(record_text) if record_text.strip() else {}
    except ValueError:
        record = {}
    if not isinstance(record, dict) or record.get("schema") != SCHEMA:
        record = {}
    states = answers.split()
    active = {unit: i < len(states) and states[i] == "active" for i, unit in enumerate(units)}
    return record, active


@dataclass
class Decision:
    """What provisioning does on one host: the roles to run (with why) and the ones skipped."""

    hashes: dict[str, str]
    run: dict[str, str] = field(default_factory=dict)
    skip: list[str] = field(default_factory=list)
    # Facts exported by skipped roles, from their record.
    facts: dict[str, Any] = field(default_factory=dict)
    # Role -> what it made that is not as recorded (one line each).
    drift: dict[str, list[str]] = field(default_factory=dict)
    # OS packages whose binaries are gone: installed again before the roles run.
    reinstall: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "hashes": self.hashes,
            "run": self.run,
            "skip": self.skip,
            "drift": self.drift,
            "reinstall": self.reinstall,
        }


def drift(recorded: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """What differs between a role's recorded state and its state now, one line per item, in order."""
    lines = []
    for item in sorted({*recorded, *now}):
        before, after = recorded.get(item), now.get(item)
        if before == after:
            continue
        if after is None:
            lines.append(f"{item}: gone")
        elif before is None:
            lines.append(f"{item}: new")
        elif item.startswith("file ") and after == "missing":
            lines.append(f"{item}: deleted")
        elif item.startswith("file ") and before != "missing":
            lines.append(f"{item}: changed")
        else:
            lines.append(f"{item}: {before} -> {after}")
    return lines


def missing_packages(entry: Mapping[str, Any], lines: Sequence[str]) -> list[str]:
    """The packages whose binaries ``lines`` (:func:`drift`) say are missing."""
    binaries = (entry.get("made") or {}).get("binaries") or {}
    gone = [line.split(":", 1)[0].removeprefix("binary ") for line in lines if line.startswith("binary ")]
    return sorted({binaries[path] for path in gone if binaries.get(path)})


def decide(
    roles: Sequence[str],
    hashes: Mapping[str, str],
    record: Mapping[str, Any],
    units: Mapping[str, Sequence[str]],
    active: Mapping[str, bool],
    skip_unchanged: bool = True,
    now: Mapping[str, Mapping[str, str]] | None = None,
) -> Decision:
    """Which of ``roles`` (in provisioning order) run, and why; the rest are skipped. ``now``: each role's
    state now (:func:`parse_now`), compared with the state its record holds."""
    decision = Decision(hashes=dict(hashes))
    entries = record.get("roles") or {}
    for role in roles:
        entry = entries.get(role)
        down = [u for u in units.get(role, ()) if not active.get(u, False)]
        deps = [d for d in DEPENDS.get(role, ()) if d in decision.run]
        changed: list[str] = []
        if isinstance(entry, dict) and isinstance(entry.get("state"), dict):
            changed = drift(entry["state"], (now or {}).get(role) or {})
        if changed:
            decision.drift[role] = changed
            # A package removed altogether is installed by the one transaction (dnf cannot reinstall it).
            role_now = (now or {}).get(role) or {}
            gone = [p for p in missing_packages(entry, changed) if role_now.get(f"package {p}") != "absent"]
            decision.reinstall.extend(p for p in gone if p not in decision.reinstall)
        if not skip_unchanged:
            decision.run[role] = "every role runs (bench_provision_skip_unchanged false, or --tags)"
        elif not isinstance(entry, dict):
            decision.run[role] = "no record of it on this host"
        elif entry.get("hash") != hashes[role]:
            decision.run[role] = "its inputs changed"
        elif changed:
            decision.run[role] = "drifted: " + "; ".join(changed)
        elif deps:
            decision.run[role] = f"{', '.join(deps)} runs"
        elif down:
            decision.run[role] = f"not active: {', '.join(down)}"
        else:
            decision.skip.append(role)
            decision.facts.update(entry.get("facts") or {})
    return decision


def current(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record's role entries without those under a renamed role's old name
    (:data:`benchstack.common.renamed.ROLES`): written by an older bench-stack, they describe nothing a role
    of this one is. The renamed role, which has no entry under its new name, runs once and records itself."""
    return {k: v for k, v in (record.get("roles") or {}).items() if k not in RENAMED_ROLES}


def record_after(
    record: Mapping[str, Any],
    decision: Decision,
    variables: Mapping[str, Any],
    finished_at: str,
    made: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The record once the roles that ran have finished: their new hashes, exported facts and what they made
    (``made``: role -> ``{"made": manifest, "state": state}``, :mod:`benchstack.provision.hoststate`), the
    skipped roles' entries as they were; a renamed role's entries under its old name dropped."""
    entries = current(record)
    for role in decision.run:
        entries[role] = {
            "hash": decision.hashes[role],
            "facts": {name: variables[name] for name in EXPORTS.get(role, ()) if name in variables},
            "at": finished_at,
            **((made or {}).get(role) or {}),
        }
    return with_host({"schema": SCHEMA, "roles": entries}, record.get("host"))


def same_state(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two records say the same (hashes, facts and the host's; when each role last ran does not
    count)."""

    def state(record: Mapping[str, Any]) -> dict[str, Any]:
        entries = record.get("roles") or {}
        roles = {role: {k: v for k, v in e.items() if k != "at"} for role, e in entries.items()}
        return {"roles": roles, "host": record.get("host")}

    return state(a) == state(b)


def without(record: Mapping[str, Any], roles: Iterable[str]) -> dict[str, Any]:
    """The record with ``roles`` left out (written before they run), and the entries of renamed roles."""
    gone = set(roles)
    entries = {k: v for k, v in current(record).items() if k not in gone}
    return with_host({"schema": SCHEMA, "roles": entries}, record.get("host"))


def write_command(record: Mapping[str, Any]) -> str:
    """One shell command that replaces the record atomically."""
    text = json.dumps(record, sort_keys=True, indent=1)
    return (
        f"mkdir -p {shlex.quote(str(Path(MARKER).parent))} && printf '%s\\n' {shlex.quote(text)} "
        f"> {MARKER}.tmp && mv {MARKER}.tmp {MARKER}"
    )


# The roles of a host, in provisioning order: the host, the runtimes (Perl runs Starman, and Server::Starter's
# start_server for Starman and the Ruby Starlet), the apps, what starts and fronts them, the load tools.
RUNTIMES = ("ruby", "python", "perl", "php")
# The OS families whose unit names and files the roles know (their vars/Debian.yml, vars/RedHat.yml).
FAMILIES = ("Debian", "RedHat")
# What the host and nginx roles write whatever the stacks (role_made).
BENCH_HOST_FILES = ("/etc/sysctl.d/60-bench-stack.conf", "/etc/security/limits.d/60-bench-stack.conf")
NGINX_MADE = (
    "/etc/nginx/nginx.conf",
    "/etc/nginx/conf.d/bench-stack.conf",
    "/etc/systemd/system/nginx.service.d/bench-stack-cpus.conf",
)


# Provisioning runs the roles in two stages around the sweep of what no stack of the plan owns
# (provision.yml): the host, the runtimes and the apps first (their downloads and builds fail most often,
# and such a failure leaves the host as it was), then what starts and fronts the stacks, and the load tools.
SECOND_STAGE = ("app_server", "nginx", "apache", "loadgen")


def stages(run: Iterable[str]) -> list[list[str]]:
    """The roles that run (``run``, in provisioning order), before and after the sweep."""
    roles = list(run)
    return [[r for r in roles if r not in SECOND_STAGE], [r for r in roles if r in SECOND_STAGE]]


def target_roles(needs: Needs) -> list[str]:
    """The roles a target runs for the plan's ``needs`` (:func:`benchstack.plan.stacks.needs`), in order."""
    runtimes = set(needs.runtimes) | ({"perl"} if needs.perl_modules else set())
    return [
        *(r for r in RUNTIMES if r in runtimes),
        "webapp",
        *(["app_server"] if needs.servers else []),
        *(f for f in ("nginx", "apache") if f in needs.fronts),
    ]


def host_roles(needs: Needs, target: bool, loadgen: bool) -> list[str]:
    """The roles a host runs, in provisioning order: the host's, a target's, a loadgen's."""
    return ["host", *(target_roles(needs) if target else []), *(["loadgen"] if loadgen else [])]


def _apache_instances(stacks: Sequence[Stack]) -> list[str]:
    """The Apache instances of the stacks the apache role serves."""
    return [s.front.instance for s in served("apache", stacks) if isinstance(s.front, ApacheFront)]


def role_units(stacks: Sequence[Stack], family: str) -> dict[str, list[str]]:
    """Role -> the units it keeps running on a host of OS ``family`` for the resolved ``stacks`` (those each
    role serves, :func:`benchstack.plan.rolecontract.served`): a skipped role's units must be active, or it
    runs again. Apache instances are ``apache2@`` units on Debian and ``httpd@`` ones elsewhere (the apache
    role's vars/Debian.yml, vars/RedHat.yml)."""
    apache = "apache2@" if family == "Debian" else "httpd@"
    return {
        "app_server": [ep.unit for s in served("app_server", stacks) for ep in s.endpoints],
        "nginx": ["nginx.service"],
        "apache": [f"{apache}{instance}.service" for instance in _apache_instances(stacks)],
    }


def with_declared(manifest: Mapping[str, Any], declared: Mapping[str, Any] | None) -> dict[str, Any]:
    """``manifest`` (the plan's role_made for a role) with what the role said it made at its end
    (``<role>_made``, :data:`DECLARES_MADE`) added: its ``files`` and ``binaries``, each path once."""
    out = dict(manifest)
    for key in ("files", "binaries"):
        given = list((declared or {}).get(key) or [])
        if given:
            out[key] = list(dict.fromkeys([*(manifest.get(key) or []), *given]))
    return out


def role_made(stacks: Sequence[Stack], family: str) -> dict[str, dict[str, list[str]]]:
    """Role -> what it makes on a host of OS ``family`` (files, units; the plan's ``role_made``), recorded
    with its state at the end of provisioning (:mod:`benchstack.provision.hoststate`): a role whose files
    (sha256), units (enabled, active), sysctls, OS packages or their binaries differ from the record runs
    again. The host role's sysctls depend on the host's profile (:func:`host_sysctls`), each
    role's OS packages on what its ``packages`` entry point named: both are added when recorded
    (bench_provision_record)."""
    units = role_units(stacks, family)
    apache_files = (
        [
            f"/etc/apache2-{instance}/sites-available/bench-stack.conf"
            for instance in _apache_instances(stacks)
        ]
        if family == "Debian"
        else []
    )
    servers = [s.server for s in served("app_server", stacks) if s.server]
    return {
        "host": {"files": list(BENCH_HOST_FILES)},
        "app_server": {
            "files": [f"/etc/systemd/system/{server.units.unit}" for server in servers]
            + [server.units.env_file for server in servers],
            "units": units["app_server"],
        },
        "nginx": {"files": list(NGINX_MADE), "units": units["nginx"]},
        "apache": {"files": apache_files, "units": units["apache"]},
    }


ROLES_DIR = Path(__file__).resolve().parents[2] / "roles"


def role_default(role: str, name: str, roles_dir: Path = ROLES_DIR) -> Any:
    """One of ``role``'s defaults (defaults/main.yml; None when it has no such variable)."""
    text = (roles_dir / role / "defaults" / "main.yml").read_text(encoding="utf-8")
    return (yaml.safe_load(text) or {}).get(name)


def host_sysctls(profile: str, tuned: Mapping[str, Any] | None) -> list[str]:
    """The sysctls the host role sets: those of ``host_tuned_sysctls`` with the profile
    ``tuned``, none with ``stock``."""
    return list(tuned or {}) if profile == "tuned" else []


# A skipped tag names a role: bench_<role> or bench_<role>_install (the host role's tag: bench_host).
_ROLE_TAG = re.compile(r"^bench_(.*?)(?:_install)?$")


def skipped_roles(skip_tags: Iterable[str]) -> list[str]:
    """The roles with a ``packages`` entry point whose ``bench_<role>`` or ``bench_<role>_install`` tag is
    skipped (--skip-tags), in :data:`PACKAGED` order."""
    named = set()
    for tag in skip_tags:
        match = _ROLE_TAG.match(tag)
        named.add(match.group(1) if match else tag)
    return [role for role in PACKAGED if role in named]


def package_roles(run: Iterable[str], run_tags: Sequence[str], skip_tags: Iterable[str]) -> list[str]:
    """The roles that run (``run``, in order) whose OS packages provision.yml installs in one transaction:
    those with a ``packages`` entry point, in a run not limited by --tags (then each role installs its own),
    less those whose install --skip-tags skips."""
    if list(run_tags) != ["all"]:
        return []
    skipped = set(skipped_roles(skip_tags))
    return [role for role in run if role in PACKAGED and role not in skipped]
