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
  planned or not (:func:`found`), so the controller can tell the units and front configs no stack of the
  plan owns (benchstack.provision.stale); in the same Python, which costs more to start than the reads.

Prints one JSON line: ``{role: state}`` (then SEPARATOR and ``{"units": {unit: state}, "files": [path]}``)
or ``{role: {"made": manifest, "state": state}}``.
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


def package_binaries(names: list) -> dict:
    """path -> package, for every file the installed packages ``names`` put in a bin folder."""
    if not names:
        return {}
    if _dpkg():
        text = _out(["dpkg-query", "-W", "-f", "${Package}\n${db-fsys:Files}\n", *names])
    else:
        text = _out(["rpm", "-q", "--qf", "%{NAME}\n[ %{FILENAMES}\n]", *names])
    binaries = {}
    package = ""
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            package = line.strip()
            continue
        path = line.strip()
        if os.path.dirname(path) + "/" in BIN_DIRS and os.path.lexists(path) and not os.path.isdir(path):
            binaries[path] = package
    return binaries


def units_state(units: list) -> dict:
    if not units:
        return {}
    text = _out(["systemctl", "show", "--property=Id,UnitFileState,ActiveState", *units])
    blocks = [b for b in text.split("\n\n") if b.strip()]
    state = {}
    for unit, block in zip(units, blocks + [""] * (len(units) - len(blocks))):  # noqa: B905 (3.6)
        props = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
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


def state_of(manifest: dict) -> dict:
    state = files_state(manifest.get("files") or [])
    state.update({"package " + n: v for n, v in package_versions(manifest.get("packages") or []).items()})
    for path in sorted(manifest.get("binaries") or {}):
        state["binary " + path] = "present" if os.path.lexists(path) else "missing"
    state.update(units_state(manifest.get("units") or []))
    state.update(sysctls_state(manifest.get("sysctls") or []))
    return state


def resolve(manifest: dict) -> dict:
    """The manifest as recorded: installed packages only, their binaries added."""
    installed = [n for n, v in package_versions(manifest.get("packages") or []).items() if v != "absent"]
    binaries = package_binaries(installed)
    binaries.update({p: "" for p in manifest.get("binaries") or [] if p not in binaries})
    return {
        "files": list(manifest.get("files") or []),
        "packages": installed,
        "binaries": binaries,
        "units": list(manifest.get("units") or []),
        "sysctls": list(manifest.get("sysctls") or []),
    }


def found() -> dict:
    """Every stack unit systemd has loaded (:data:`STACK_UNITS`) with its state, nginx.service's too when
    bench-stack's server blocks are there, and every file of :data:`STACK_FILES` that exists."""
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
    state = units_state(units)
    return {"units": {unit[len("unit ") :]: value for unit, value in state.items()}, "files": files}


def main(argv: list) -> None:
    request = json.loads(argv[1])
    if "marker" in request:
        try:
            with open(request["marker"], encoding="utf-8") as handle:
                roles = json.load(handle).get("roles") or {}
        except (OSError, ValueError, AttributeError):
            roles = {}
        answer = {
            role: state_of(entry["made"])
            for role, entry in roles.items()
            if isinstance(entry, dict) and isinstance(entry.get("made"), dict)
        }
    else:
        answer = {}
        for role, manifest in request["manifests"].items():
            made = resolve(manifest)
            answer[role] = {"made": made, "state": state_of(made)}
    sys.stdout.write(json.dumps(answer, sort_keys=True) + "\n")
    if request.get("found"):
        sys.stdout.write(request["found"] + "\n" + json.dumps(found(), sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv)
