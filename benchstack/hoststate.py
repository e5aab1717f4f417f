"""What each role made, as it is now on a host: run ON the host (``python3 -c <this file's source> <json>``).

Standard library only, Python 3.6 and later (the hosts' interpreters, RHEL 8's platform Python included): the
controller sends this file's text in the one command that reads the provisioning record
(benchstack.provision).

A role's *manifest* names what it made: ``files`` (paths or globs), ``packages``, ``binaries`` (path ->
owning package, "" when no package owns it), ``units`` and ``sysctls``. Its *state* is one string per item:

* ``file PATH``: the file's sha256 (``missing`` when a listed path is gone; a glob lists what it matches);
* ``package NAME``: the installed version (``absent`` when not installed);
* ``binary PATH``: ``present`` or ``missing``;
* ``unit NAME``: ``<UnitFileState> <ActiveState>`` (``enabled active``);
* ``sysctl KEY``: the value now, whitespace collapsed.

Two modes, the argument a JSON object:

* ``{"marker": PATH}``: each role's state now, for the manifests the record at PATH holds;
* ``{"manifests": {role: manifest}}`` (at the end of provisioning): each manifest resolved (packages not
  installed dropped: virtual names; every file the packages put in a bin folder added to ``binaries``) and
  its state;
* ``"found": SEPARATOR`` beside ``marker``: then also SEPARATOR and what bench-stack made for any stack,
  planned or not (:func:`found`), so the controller can tell the units, front configs, env files and app
  folders no stack of the plan owns (benchstack.provision.stale); in the same Python, which costs more to
  start than the reads. ``paths`` and ``links`` beside it: globs of what bench-stack writes under its roots
  (benchstack.provision.stack_paths), matches of ``links`` counted only when they are symbolic links.

Prints one JSON line: ``{role: state}`` (then SEPARATOR and ``{"units": {unit: state}, "files": [path],
"paths": [path]}``) or ``{role: {"made": manifest, "state": state}}``.

Every role is probed at once: one ``dpkg-query -W`` (or ``rpm -q``) for the packages of all roles (and one
more for their files when recording), one ``systemctl show`` for all units, each path hashed once in this
process. Each probe costs tens of milliseconds to start, which per role made the read several times slower
(scripts/measure-drift-read.py).
"""

import glob
import hashlib
import json
import os
import subprocess
import sys

BIN_DIRS = ("/usr/bin/", "/usr/sbin/", "/bin/", "/sbin/", "/usr/local/bin/")
# The names bench-stack gives what it runs for a stack: app server instances (bench-NAME@I, php-fpm pools
# included) and Apache instances (apache2@bench-NAME on Debian, httpd@bench-NAME on RedHat).
STACK_UNITS = ("bench-*@*.service", "apache2@bench-*.service", "httpd@bench-*.service")
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


def _out(argv: list) -> str:
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


def files_state(patterns: list) -> dict:
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


def package_versions(names: list) -> dict:
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


def package_files(names: list) -> dict:
    """package -> the files it put in a bin folder (and that are there), for the installed packages
    ``names``, in one query."""
    if not names:
        return {}
    if _dpkg():
        text = _out(["dpkg-query", "-W", "-f", "${Package}\n${db-fsys:Files}\n", *names])
    else:
        text = _out(["rpm", "-q", "--qf", "%{NAME}\n[ %{FILENAMES}\n]", *names])
    files = {}
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


def show_blocks(text: str) -> list:
    """``systemctl show`` output as one dict of property -> value per unit, in the order shown (a blank line
    parts two units). The one reader of that output: here for the drift read, on the controller for the
    state lines around a cell (benchstack.hostevents)."""
    return [
        dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        for block in text.split("\n\n")
        if block.strip()
    ]


def units_state(units: list) -> dict:
    if not units:
        return {}
    blocks = show_blocks(_out(["systemctl", "show", "--property=Id,UnitFileState,ActiveState", *units]))
    state = {}
    for unit, props in zip(units, blocks + [{}] * (len(units) - len(blocks))):  # noqa: B905 (3.6)
        state["unit " + unit] = (
            f"{props.get('UnitFileState') or 'none'} {props.get('ActiveState') or 'unknown'}"
        )
    return state


def sysctls_state(keys: list) -> dict:
    state = {}
    for key in keys:
        try:
            with open("/proc/sys/" + key.replace(".", "/"), encoding="utf-8") as handle:
                state["sysctl " + key] = " ".join(handle.read().split())
        except OSError:
            state["sysctl " + key] = "missing"
    return state


def _union(manifests: list, key: str) -> list:
    """Every item of ``key`` in ``manifests``, once each, in first-seen order."""
    seen = {}
    for manifest in manifests:
        for item in manifest.get(key) or []:
            seen.setdefault(item, None)
    return list(seen)


def states_of(manifests: dict) -> dict:
    """role -> state for every manifest, probed together: one package query and one ``systemctl show``
    for all roles (each costs tens of milliseconds to start, and roles share packages and units), each
    path hashed once."""
    listed = list(manifests.values())
    versions = package_versions(_union(listed, "packages"))
    units = units_state(_union(listed, "units"))
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


def resolve_all(manifests: dict) -> dict:
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


def found(paths: tuple = (), links: tuple = ()) -> dict:
    """Every stack unit systemd has loaded (:data:`STACK_UNITS`) with its state, nginx.service's too when
    bench-stack's server blocks are there, every file of :data:`STACK_FILES` that exists, and what the globs
    ``paths`` match, with the symbolic links the globs ``links`` match."""
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
    made = {path for pattern in paths for path in glob.glob(pattern)}
    made |= {path for pattern in links for path in glob.glob(pattern) if os.path.islink(path)}
    state = units_state(units)
    return {
        "units": {unit[len("unit ") :]: value for unit, value in state.items()},
        "files": files,
        "paths": sorted(made),
    }


def main(argv: list) -> None:
    request = json.loads(argv[1])
    if "marker" in request:
        try:
            with open(request["marker"], encoding="utf-8") as handle:
                roles = json.load(handle).get("roles") or {}
        except (OSError, ValueError, AttributeError):
            roles = {}
        answer = states_of(
            {
                role: entry["made"]
                for role, entry in roles.items()
                if isinstance(entry, dict) and isinstance(entry.get("made"), dict)
            }
        )
    else:
        made = resolve_all(request["manifests"])
        states = states_of(made)
        answer = {role: {"made": made[role], "state": states[role]} for role in made}
    sys.stdout.write(json.dumps(answer, sort_keys=True) + "\n")
    if request.get("found"):
        made = found(tuple(request.get("paths") or ()), tuple(request.get("links") or ()))
        sys.stdout.write(request["found"] + "\n" + json.dumps(made, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv)
