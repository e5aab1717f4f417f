"""What each role made, as it is now on a host: run ON the host (``python3 -c <this file's source> <json>``).

Standard library only, Python 3.6 and later (the hosts' interpreters, RHEL 8's platform Python included): the
controller sends this file's text in the one command that reads the provisioning record
(benchstack.provision.hostcommand).

A role's *manifest* names what it made: ``files`` (paths or globs), ``packages``, ``binaries`` (path ->
owning package, "" when no package owns it), ``units`` and ``sysctls``. Its *state* is one string per item:

* ``file PATH``: the file's sha256 (``missing`` when a listed path is gone; a glob lists what it matches);
* ``package NAME``: the installed version (``absent`` when not installed);
* ``binary PATH``: ``present`` or ``missing``;
* ``unit NAME``: ``<UnitFileState> <ActiveState>`` (``enabled active``);
* ``sysctl KEY``: the value now, whitespace collapsed.

The argument is a JSON object; its modes:

* ``{"marker": PATH}``: the record at PATH as it is on disk, then :data:`SEPARATOR` and, for each unit of
  ``active`` (the units the roles keep running), ``active`` or another ActiveState, one a line, then
  :data:`STATE_SEPARATOR` and each role's state now, for the manifests the record holds;
* ``{"manifests": {role: manifest}}`` (at the end of provisioning): each manifest resolved (packages not
  installed dropped: virtual names; every file the packages put in a bin folder added to ``binaries``) and
  its state;
* ``"found": true`` beside ``marker``: then also :data:`FOUND_SEPARATOR` and what bench-stack made for any
  stack, planned or not (:func:`found`), so the controller can tell the units, front configs, env files and
  app folders no stack of the plan owns (benchstack.provision.sweep.stale); in the same Python, which costs
  more to start than the reads. ``paths`` and ``links`` beside it: globs of what bench-stack writes under its
  roots (benchstack.provision.sweep.stack_paths), matches of ``links`` counted only when they are symbolic
  links; ``made`` beside it: the path of the record of what bench-stack made (benchstack.provision.made),
  given back as it is (null when missing or not JSON); ``accounts`` (``{"users": [...], "groups": [...]}``):
  each one's ids (:func:`accounts`);
* ``"identity": true`` beside ``marker``: then also :data:`HOST_SEPARATOR` and the host's identity
  (:func:`identity`): while it stays the same, the OS facts recorded with the roles' hashes still describe
  the host, and the controller decides without gathering facts (benchstack.provision.hostrecord.host_facts);
* ``"lock": {"op": ..., "me": ..., "over": ...}`` beside ``marker`` or alone: the host's lock (:func:`lock`),
  taken FIRST, so that what is read is what the holder may change; then :data:`LOCK_SEPARATOR` and its
  answer come last. When ``take`` does not get it, nothing else is read (the controller judges the holder
  and asks again, benchstack.measure.runlock.take_host): one command per host reads the host and holds it.

With ``manifests`` it prints ``{role: {"made": manifest, "state": state}}`` (one JSON line).

The host's lock, :data:`LOCK_PATH`: one bench-stack run at a time provisions and measures a host, whatever
run folder or controller it comes from (a second run's provisioning would stop the first one's stacks; its
cells would load the first one's). It is JSON naming the holder (``host``: its controller's host name,
``pid`` and ``started``: the controller process, ``run``: its run folder, ``at``: since when); empty or
unreadable means free (a writer killed half way). It is read and written under ``flock``, so two runs
asking at once cannot both take it; the controller judges who holds it (benchstack.measure.runlock). ``op``:
``take`` writes ``me`` when the lock is free or still exactly ``over`` (a holder the controller found
ended); ``read`` writes nothing (check mode); ``release`` empties it when it is ``me``'s. ``path``: another
lock file (the tests). The answer: ``{"held": bool, "was": the holder found before (null when free)}``,
``held`` whether ``me`` holds it now (for ``release``: held it).

Every role is probed at once: one ``dpkg-query -W`` (or ``rpm -q``) for the packages of all roles (and one
more for their files when recording), one ``systemctl show`` for all units (the roles' services, what the
roles made and what any stack left), each path hashed once in this process. Each probe costs tens of
milliseconds to start, which per role made the read several times slower (scripts/measure-drift-read.py).
"""

import fcntl
import glob
import grp
import hashlib
import json
import os
import pwd
import subprocess
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple  # 3.6: no built-in generics, no X | None

# The sections of the marker mode's output, in order (benchstack.provision.hostcommand parses them).
SEPARATOR = "--- bench-stack units ---"
STATE_SEPARATOR = "--- bench-stack made ---"
FOUND_SEPARATOR = "--- bench-stack found ---"
HOST_SEPARATOR = "--- bench-stack host ---"
LOCK_SEPARATOR = "--- bench-stack lock ---"
LOCK_PATH = "/var/lib/bench-stack/run.lock"
IDENTITY = ("host", "pid", "started")

BIN_DIRS = ("/usr/bin/", "/usr/sbin/", "/bin/", "/sbin/", "/usr/local/bin/")
# The names bench-stack gives what it runs for a stack: app server instances (bench-NAME@I, php-fpm pools
# included) and Apache instances (apache2@bench-NAME on Debian, httpd@bench-NAME on RedHat); and fluentd
# shipping the fronts' access logs (the log_shipper role's), which a run that ships nothing stops: it would
# tail and upload on the target during every cell.
STACK_UNITS = (
    "bench-*@*.service",
    "apache2@bench-*.service",
    "httpd@bench-*.service",
    "bench-fluentd.service",
)
# What makes a front listen on a stack's port, and the app servers' template units. An Apache instance on
# Debian is everything its setup-instance made (which refuses to run again while any of it is left).
STACK_FILES = (
    "/etc/nginx/conf.d/bench-stack.conf",
    "/etc/systemd/system/nginx.service.d/bench-stack-cpus.conf",
    "/etc/systemd/system/bench-*@.service",
    "/etc/apache2-bench-*",
    "/etc/logrotate.d/apache2-bench-*",
    "/etc/default/apache-htcacheclean-bench-*",
    "/usr/local/sbin/a2*-bench-*",
    "/usr/local/sbin/apache2ctl-bench-*",
    "/var/log/apache2-bench-*",
    "/etc/httpd/conf/bench-*.conf",
)
NGINX_CONF = STACK_FILES[0]
# What Ansible's distribution facts are read from (Debian, Ubuntu, Amazon Linux, RHEL): an upgrade or another
# OS changes one of them.
RELEASE_FILES = (
    "/etc/os-release",
    "/etc/debian_version",
    "/etc/lsb-release",
    "/etc/system-release",
    "/etc/redhat-release",
)


def _out(argv: List[str]) -> str:
    try:
        return subprocess.run(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            universal_newlines=True,  # noqa: UP021 (Python 3.6 hosts)
            check=False,
        ).stdout
    except OSError:
        return ""


def _dpkg() -> bool:
    return os.path.exists("/usr/bin/dpkg-query")


def sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def files_state(patterns: List[str]) -> Dict[str, Any]:
    state = {}
    for pattern in patterns:
        is_glob = any(c in pattern for c in "*?[")
        for path in sorted(glob.glob(pattern)) if is_glob else [pattern]:
            if os.path.isdir(path):
                continue
            try:
                state["file " + path] = sha256(path)
            except OSError:
                state["file " + path] = "missing"
    return state


def package_versions(names: List[str]) -> Dict[str, Any]:
    versions = dict.fromkeys(names, "absent")
    if not names:
        return versions
    if _dpkg():
        text = _out(["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status} ${Version}\n", *names])
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] in versions and parts[1] == "installed":
                versions[parts[0]] = parts[2]
    else:
        text = _out(["rpm", "-q", "--qf", "%{NAME} %{VERSION}-%{RELEASE}\n", *names])
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] in versions:
                versions[parts[0]] = parts[1]
    return versions


def package_files(names: List[str]) -> Dict[str, Any]:
    """package -> the files it put in a bin folder (and that are there), for the installed packages
    ``names``, in one query."""
    if not names:
        return {}
    if _dpkg():
        text = _out(["dpkg-query", "-W", "-f", "${Package}\n${db-fsys:Files}\n", *names])
    else:
        text = _out(["rpm", "-q", "--qf", "%{NAME}\n[ %{FILENAMES}\n]", *names])
    files: Dict[str, List[str]] = {}
    package = ""
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            package = line.strip()
            files.setdefault(package, [])
            continue
        path = line.strip()
        if os.path.dirname(path) + "/" in BIN_DIRS and os.path.lexists(path) and not os.path.isdir(path):
            files.setdefault(package, []).append(path)
    return files


def show_blocks(text: str) -> List[Dict[str, str]]:
    """``systemctl show`` output as one dict of property -> value per unit, in the order shown (a blank line
    parts two units). The one reader of that output: here for the drift read, on the controller for the
    state lines around a cell (benchstack.measure.hostevents)."""
    return [
        dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        for block in text.split("\n\n")
        if block.strip()
    ]


def show(units: List[str]) -> Dict[str, Any]:
    """unit -> its properties (UnitFileState, ActiveState), for every unit of ``units`` in one
    ``systemctl show``."""
    units = list(dict.fromkeys(units))
    if not units:
        return {}
    blocks = show_blocks(_out(["systemctl", "show", "--property=Id,UnitFileState,ActiveState", *units]))
    return dict(zip(units, blocks + [{}] * (len(units) - len(blocks))))  # noqa: B905 (3.6)


def units_state(units: List[str], shown: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """``unit UNIT`` -> ``<UnitFileState> <ActiveState>``; ``shown``: :func:`show` for them, done already."""
    if not units:
        return {}
    shown = show(units) if shown is None else shown
    state = {}
    for unit in units:
        props = shown.get(unit) or {}
        state["unit " + unit] = (
            f"{props.get('UnitFileState') or 'none'} {props.get('ActiveState') or 'unknown'}"
        )
    return state


def sysctls_state(keys: List[str]) -> Dict[str, Any]:
    state = {}
    for key in keys:
        try:
            with open("/proc/sys/" + key.replace(".", "/"), encoding="utf-8") as handle:
                state["sysctl " + key] = " ".join(handle.read().split())
        except OSError:
            state["sysctl " + key] = "missing"
    return state


def _union(manifests: List[Dict[str, Any]], key: str) -> List[Any]:
    """Every item of ``key`` in ``manifests``, once each, in first-seen order."""
    seen: Dict[Any, None] = {}
    for manifest in manifests:
        for item in manifest.get(key) or []:
            seen.setdefault(item, None)
    return list(seen)


def states_of(manifests: Dict[str, Any], shown: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """role -> state for every manifest, probed together: one package query and one ``systemctl show``
    for all roles (each costs tens of milliseconds to start, and roles share packages and units; ``shown``:
    that :func:`show`, done already), each path hashed once."""
    listed = list(manifests.values())
    versions = package_versions(_union(listed, "packages"))
    units = units_state(_union(listed, "units"), shown)
    sysctls = sysctls_state(_union(listed, "sysctls"))
    files = {}
    out = {}
    for role, manifest in manifests.items():
        state = {}
        for pattern in manifest.get("files") or []:
            if pattern not in files:
                files[pattern] = files_state([pattern])
            state.update(files[pattern])
        state.update({"package " + n: versions[n] for n in manifest.get("packages") or []})
        for path in sorted(manifest.get("binaries") or {}):
            state["binary " + path] = "present" if os.path.lexists(path) else "missing"
        state.update({"unit " + u: units["unit " + u] for u in manifest.get("units") or []})
        state.update({"sysctl " + k: sysctls["sysctl " + k] for k in manifest.get("sysctls") or []})
        out[role] = state
    return out


def resolve_all(manifests: Dict[str, Any]) -> Dict[str, Any]:
    """role -> the manifest as recorded: installed packages only, their binaries added (one query for the
    versions and one for the files of every role's packages)."""
    listed = list(manifests.values())
    versions = package_versions(_union(listed, "packages"))
    owned = package_files([n for n in _union(listed, "packages") if versions[n] != "absent"])
    out = {}
    for role, manifest in manifests.items():
        installed = [n for n in manifest.get("packages") or [] if versions[n] != "absent"]
        binaries = {path: package for package in installed for path in owned.get(package, [])}
        binaries.update({p: "" for p in manifest.get("binaries") or [] if p not in binaries})
        out[role] = {
            "files": list(manifest.get("files") or []),
            "packages": installed,
            "binaries": binaries,
            "units": list(manifest.get("units") or []),
            "sysctls": list(manifest.get("sysctls") or []),
        }
    return out


def stack_units() -> Tuple[Any, ...]:
    """Every stack unit systemd has loaded (:data:`STACK_UNITS`), nginx.service too when bench-stack's
    server blocks are there, and every file of :data:`STACK_FILES` that exists."""
    text = _out(
        ["systemctl", "list-units", "--all", "--plain", "--no-legend", "--type=service", *STACK_UNITS]
    )
    # A failed unit's line may start with a bullet.
    units = sorted(
        {next((w for w in line.split() if w.endswith(".service")), "") for line in text.splitlines()}
    )
    units = [unit for unit in units if unit]
    files = sorted({path for pattern in STACK_FILES for path in glob.glob(pattern)})
    if NGINX_CONF in files:
        units.append("nginx.service")
    return units, files


def read_json(path: str) -> object:
    """The JSON value of the file at ``path``; None when it is missing or not JSON."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def accounts(users: Sequence[str] = (), groups: Sequence[str] = ()) -> Dict[str, Any]:
    """Each user's ``uid``, ``gid`` and ``home``, each group's ``gid`` (None: there is no such account)."""
    out: Dict[str, Dict[str, Any]] = {"users": {}, "groups": {}}
    for name in users:
        try:
            entry = pwd.getpwnam(name)
            out["users"][name] = {"uid": entry.pw_uid, "gid": entry.pw_gid, "home": entry.pw_dir}
        except KeyError:
            out["users"][name] = None
    for name in groups:
        try:
            out["groups"][name] = {"gid": grp.getgrnam(name).gr_gid}
        except KeyError:
            out["groups"][name] = None
    return out


def found(
    paths: Tuple[Any, ...] = (),
    links: Tuple[Any, ...] = (),
    stack: Optional[Tuple[Any, ...]] = None,
    shown: Optional[Dict[str, Any]] = None,
    made: Optional[str] = None,
    names: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """Every stack unit with its state and every stack file (:func:`stack_units`, or ``stack`` when listed
    already; ``shown``: :func:`show` for its units), and what the globs ``paths`` match, with the symbolic
    links the globs ``links`` match; with ``made`` the record at that path, with ``names`` (users, groups)
    their :func:`accounts`."""
    units, files = stack_units() if stack is None else stack
    matched = {path for pattern in paths for path in glob.glob(pattern)}
    matched |= {path for pattern in links for path in glob.glob(pattern) if os.path.islink(path)}
    state = units_state(units, shown)
    out = {
        "units": {unit[len("unit ") :]: value for unit, value in state.items()},
        "files": files,
        "paths": sorted(matched),
    }
    if made:
        out["made"] = read_json(made)
    if names is not None:
        out["accounts"] = accounts(names.get("users") or [], names.get("groups") or [])
    return out


def identity() -> str:
    """sha256 of what the facts the decision needs come from: the release files (a missing one counts), the
    machine's architecture and its CPU count (distribution, version, OS family, architecture, vCPUs)."""
    digest = hashlib.sha256()
    for path in RELEASE_FILES:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            data = b"\0missing"
        digest.update(path.encode() + b"\0" + data + b"\0")
    digest.update(f"{os.uname().machine} {os.cpu_count()}".encode())
    return digest.hexdigest()


def same(a: object, b: object) -> bool:
    """Whether two holders are the same controller process (when they wrote it does not count)."""
    return isinstance(a, dict) and isinstance(b, dict) and all(a.get(k) == b.get(k) for k in IDENTITY)


def lock(request: Dict[str, Any]) -> Dict[str, Any]:
    """The host's lock: read, taken or given up as ``request`` says (module docstring); the answer."""
    path = request.get("path") or LOCK_PATH
    me, op = request.get("me"), request.get("op")
    if op != "take" and not os.path.exists(path):
        # Nothing to read or release; check mode must not create it.
        return {"held": False, "was": None}
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    with os.fdopen(fd, "r+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        text = handle.read()
        try:
            was = json.loads(text) if text.strip() else None
        except ValueError:
            was = None
        if not isinstance(was, dict):
            was = None
        held = same(was, me)
        write = None
        # Already this run's (benchmark.yml after provision.yml): nothing written.
        if op == "take" and not held and (was is None or same(was, request.get("over"))):
            held, write = True, json.dumps(me, sort_keys=True) + "\n"
        elif op == "release" and held:
            write = ""
        if write is not None:
            handle.seek(0)
            handle.truncate()
            handle.write(write)
            handle.flush()
            os.fsync(handle.fileno())
    return {"held": held, "was": was}


def read(request: Dict[str, Any]) -> None:
    """The marker mode (module docstring), printed."""
    path = request["marker"]
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        text = ""
    try:
        roles = json.loads(text).get("roles") or {}
    except (ValueError, AttributeError):
        roles = {}
    manifests = {
        role: entry["made"]
        for role, entry in (roles.items() if isinstance(roles, dict) else ())
        if isinstance(entry, dict) and isinstance(entry.get("made"), dict)
    }
    active = [str(u) for u in request.get("active") or []]
    stack = stack_units() if request.get("found") else ([], [])
    # One systemctl for the roles' services, what they made and what any stack left.
    shown = show(active + _union(list(manifests.values()), "units") + stack[0])
    out = sys.stdout
    out.write(text.strip() + "\n" + SEPARATOR + "\n")
    # One word a line, as systemctl is-active answered: an empty one would shift the later units' answers.
    out.write("".join(((shown.get(u) or {}).get("ActiveState") or "unknown") + "\n" for u in active))
    out.write(STATE_SEPARATOR + "\n" + json.dumps(states_of(manifests, shown), sort_keys=True) + "\n")
    if request.get("found"):
        made = found(
            tuple(request.get("paths") or ()),
            tuple(request.get("links") or ()),
            stack,
            shown,
            request.get("made"),
            request.get("accounts"),
        )
        out.write(FOUND_SEPARATOR + "\n" + json.dumps(made, sort_keys=True) + "\n")
    if request.get("identity"):
        out.write(HOST_SEPARATOR + "\n" + identity() + "\n")


def main(argv: List[str]) -> None:
    request = json.loads(argv[1])
    held = lock(request["lock"]) if request.get("lock") else None
    if "manifests" in request:
        made = resolve_all(request["manifests"])
        states = states_of(made)
        answer = {role: {"made": made[role], "state": states[role]} for role in made}
        sys.stdout.write(json.dumps(answer, sort_keys=True) + "\n")
    elif "marker" in request and (held is None or held["held"] or request["lock"].get("op") == "read"):
        read(request)
    if held is not None:
        sys.stdout.write(LOCK_SEPARATOR + "\n" + json.dumps(held, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv)
