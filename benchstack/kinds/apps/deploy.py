"""How an app reaches its target: the bundled app of its kind (the app role's files), a folder already on
the target (``app.dir``), or a user's app deployed from a folder on the controller (``app.src``) or a git
repository (``app.git``) to ``APPS/user/NAME``, once for every stack that shares it (``app.name``).

A source folder is read here, on the controller (:func:`benchstack.plan.userapp.scan`); a git app is resolved
on the target. :func:`user_apps` is what the app role needs to deploy each one.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchstack.common.inputs import shown, shown_key
from benchstack.kinds.servers import by_name as server_kind
from benchstack.kinds.stackfields import DEFAULT_ROOTS, NAME_RE, Roots, safe_path_problem
from benchstack.plan.userapp import (
    DEPENDENCY_FILES,
    INSTALLED_DEPENDENCY_FILES,
    LOCK_FILES,
    REFUSED_DEPENDENCY_FILES,
    SUPPORTED_DEPENDENCY_FILES,
    AppSourceError,
    scan,
)

if TYPE_CHECKING:
    from benchstack.kinds.apps.base import AppKind

# Stacks whose app.dir is the bundled app's folder (or the user's own folder already on the target).
BUNDLED_DEPLOYS = ("bundled", "dir")
# Deployed by the app role from the controller or a repository, to APPS/user/NAME.
USER_DEPLOYS = ("src", "git")
GIT_KEYS = {"repo", "version", "moving_ref"}
# A commit given by its (abbreviated) sha: pinned by construction.
GIT_SHA_RE = re.compile(r"^[0-9a-f]{7,40}$")
# A git ref name or sha as `git ls-remote` and `git fetch` take it (no spaces, no '..', not an option).
GIT_VERSION_RE = re.compile(r"^(?!-)(?!.*\.\.)[A-Za-z0-9._/+@-]{1,200}$")
# A repository URL or path as git takes it: no spaces, quotes or control characters, not an option.
GIT_REPO_RE = re.compile(r"^(?!-)[!#-&(-~]{1,500}$")
# A Gemfile's `gem "name"` line, and a Gemfile.lock's spec line (four spaces, name, version in brackets).
GEMFILE_GEM_RE = re.compile(r"""^\s*gem\s*\(?\s*["']([A-Za-z0-9_.-]+)["']""")
LOCK_SPEC_RE = re.compile(r"^    ([A-Za-z0-9_.-]+) \(")


def user_app_problems(
    kind: AppKind, who: str, app: dict[str, Any], roots: Roots, base_dir: Path | None
) -> list[str]:
    """Check an app deployed from ``app.src`` or ``app.git``; derive its folders on the target. A source
    folder is read here, on the controller: it must hold the kind's entry file, fit the size limit and hold
    no dependency file the runtime cannot install."""
    deploy = app["deploy"]
    where = f"{who}: app.{deploy}"
    app_name = app["name"]
    if not isinstance(app_name, str) or not NAME_RE.fullmatch(app_name):
        return [
            f"{who}: app.name: must be 1-48 lowercase letters, digits or '-' (it names the app's "
            f"folder on the target), not {shown(app_name)}"
        ]
    if app["entry"] is None:
        return [f"{where}: app {kind.name} has no files to deploy (its code is in the front's config)"]
    user = f"{roots.apps.rstrip('/')}/user"
    app["dir"] = f"{user}/{app_name}"
    if problem := safe_path_problem(app["dir"]):
        return [f"{where}: the app's folder {problem} (bench_app_root)"]
    problems: list[str] = []
    if deploy == "src":
        problems += _src_problems(kind, where, app, base_dir)
    else:
        problems += _git_problems(where, app)
    app["bundle"] = kind.bundle(user, app_name, app["dir"])
    return problems


def _src_problems(kind: AppKind, where: str, app: dict[str, Any], base_dir: Path | None) -> list[str]:
    src = app["src"]
    if not isinstance(src, str) or not src.strip() or "\n" in src:
        return [f"{where}: must be the path of a folder on the controller, not {shown(src)}"]
    path = Path(src).expanduser()
    if not path.is_absolute():
        if base_dir is None:
            return [f"{where}: {shown(src)} is relative, and there is no experiment file to be relative to"]
        path = base_dir / path
    path = path.resolve()
    try:
        found = scan(path)
    except AppSourceError as exc:
        return [f"{where}: {exc}"]
    entry = app["entry"]
    if entry not in found.files:
        return [f"{where}: {path} has no {entry}, the entry file of a {kind.name} app"]
    runtime = kind.runtime
    refused = [f for f in REFUSED_DEPENDENCY_FILES.get(runtime, ()) if f in found.dependency_files]
    if refused:
        return [
            f"{where}: {path} holds {', '.join(refused)}: {runtime} dependency files are not installed "
            f"here ({SUPPORTED_DEPENDENCY_FILES}); install the modules on the target another way and "
            "leave the file out"
        ]
    app.update(
        src=str(path),
        sha256=found.sha256,
        bytes=found.bytes,
        files=len(found.files),
        dependency_files=list(found.dependency_files),
        lock_sha256=found.lock_sha256,
    )
    return []


def _git_problems(where: str, app: dict[str, Any]) -> list[str]:
    git = app["git"]
    if not isinstance(git, dict):
        return [f"{where}: must be a mapping {{repo, version}}, not {shown(git)}"]
    problems = [
        f"{where}.{shown_key(key)}: unknown field (allowed: {', '.join(sorted(GIT_KEYS))})"
        for key in sorted(set(git) - GIT_KEYS, key=str)
    ]
    repo, version = git.get("repo"), git.get("version")
    moving = git.setdefault("moving_ref", False)
    if not isinstance(repo, str) or not GIT_REPO_RE.fullmatch(repo):
        problems.append(
            f"{where}.repo: must be a repository URL or path without spaces or quotes, not {shown(repo)}"
        )
    if not isinstance(version, str) or not GIT_VERSION_RE.fullmatch(version):
        problems.append(
            f"{where}.version: must be a tag or a commit sha (a branch with moving_ref: true), "
            f"not {shown(version)}"
        )
    if not isinstance(moving, bool):
        problems.append(f"{where}.moving_ref: must be true or false, not {shown(moving)}")
    elif not moving and version == "HEAD":
        problems.append(
            f"{where}.version: HEAD is a moving ref: pin a tag or a commit, or set moving_ref: true"
        )
    app["dependency_files"] = None  # known once cloned, on the target
    return problems


def bundle_gems(app_dir: Path) -> tuple[str, set[str]]:
    """The gems ``bundle exec`` can load from a user app's folder: Gemfile.lock's specs when it has one
    (Bundler runs frozen then), else the Gemfile's ``gem`` lines; and which file said so."""
    lock = app_dir / "Gemfile.lock"
    if lock.is_file():
        text = lock.read_text(encoding="utf-8", errors="replace")
        return "Gemfile.lock", {m.group(1) for m in map(LOCK_SPEC_RE.match, text.splitlines()) if m}
    text = (app_dir / "Gemfile").read_text(encoding="utf-8", errors="replace")
    return "Gemfile", {m.group(1) for m in map(GEMFILE_GEM_RE.match, text.splitlines()) if m}


def bundle_problems(s: dict[str, Any]) -> list[str]:
    """A user app's server runs through ``bundle exec``, which loads only the bundle's gems: a server gem the
    app's Gemfile (or Gemfile.lock) lacks would crash-loop the unit. Read on the controller (app.src)."""
    app, server = s["app"], s["server"]
    gems = server_kind(server["kind"]).bundle_gems if server else ()
    if not gems or not app.get("bundle") or "Gemfile" not in (app.get("dependency_files") or []):
        return []
    which, bundled = bundle_gems(Path(app["src"]))
    missing = [g for g in gems if g not in bundled]
    if not missing:
        return []
    lines = "; ".join(f"gem {json.dumps(g)}" for g in missing)
    then = " and run `bundle lock` so Gemfile.lock has it" if which == "Gemfile.lock" else ""
    return [
        f"stack {shown(s['name'])}: server.kind {server['kind']} runs through `bundle exec` from the app's "
        f"bundle, and {app['src']}/{which} does not have {', '.join(missing)}: add to "
        f"{app['src']}/Gemfile the line: {lines}{then}"
    ]


def _app_identity(s: dict[str, Any]) -> tuple[Any, ...]:
    """What must be equal for two stacks to share one deployed user app."""
    app = s["app"]
    git = app.get("git") or {}
    return (
        app["kind"],
        app.get("src"),
        git.get("repo"),
        git.get("version"),
        git.get("moving_ref"),
        s["runtime"].get("version"),
    )


def shared_app_problems(stacks: list[dict[str, Any]]) -> list[str]:
    """Stacks that name one user app (``app.name``) must deploy the same one."""
    first: dict[str, dict[str, Any]] = {}
    problems = []
    for s in stacks:
        app = s["app"]
        if app["deploy"] not in USER_DEPLOYS:
            continue
        other = first.setdefault(app["name"], s)
        if _app_identity(other) != _app_identity(s):
            problems.append(
                f"stack {shown(s['name'])}: app.name: {shown(app['name'])} is also the app of stack "
                f"{shown(other['name'])}, "
                "with another kind, source, version or runtime.version: stacks share an app only when those "
                "are equal (give this one another app.name)"
            )
    return problems


def user_apps(stacks: list[dict[str, Any]], roots: Roots = DEFAULT_ROOTS) -> list[dict[str, Any]]:
    """One entry per user app deployed from ``app.src`` or ``app.git`` of resolved stacks: what the app role
    needs to deploy it and what the target's deployment record and the fingerprint keep.

    ``key`` names the deployed content: the source folder's content hash, or for a pinned git version a
    hash of repository and version (a moving ref has none: it is resolved on the target each run). The app
    role deploys an app only when its record's key differs.
    """
    user = f"{roots.apps.rstrip('/')}/user"
    out: dict[str, dict[str, Any]] = {}
    for s in stacks:
        app = s["app"]
        if app["deploy"] not in USER_DEPLOYS:
            continue
        if app["name"] in out:
            out[app["name"]]["stacks"].append(s["name"])
            continue
        name, runtime = app["name"], s["runtime"]["kind"]
        entry: dict[str, Any] = {
            "name": name,
            "kind": app["kind"],
            "runtime": runtime,
            "ruby_version": s["runtime"].get("version"),
            "stacks": [s["name"]],
            "dir": app["dir"],
            "releases": f"{user}/.releases",
            "record": f"{user}/.records/{name}.json",
            "bundle": app["bundle"],
            "installs": list(INSTALLED_DEPENDENCY_FILES.get(runtime, ())),
            "refuses": list(REFUSED_DEPENDENCY_FILES.get(runtime, ())),
            # What a git app's release is looked at for, and the lock files its record hashes.
            "look_for": list(DEPENDENCY_FILES),
            "lock_files": list(LOCK_FILES),
            "supported": SUPPORTED_DEPENDENCY_FILES,
        }
        if app["deploy"] == "src":
            entry.update(
                source={
                    "type": "src",
                    "path": app["src"],
                    "sha256": app["sha256"],
                    "files": app["files"],
                    "bytes": app["bytes"],
                },
                key=f"src:{app['sha256']}",
                release=f"{user}/.releases/{name}-{app['sha256'][:16]}",
                dependency_files=app["dependency_files"],
            )
        else:
            git = app["git"]
            pinned = hashlib.sha256(f"{git['repo']}\0{git['version']}".encode()).hexdigest()
            entry.update(
                source={"type": "git", **git},
                key=None if git["moving_ref"] else f"git:{pinned}",
                release=None,  # named after the commit it resolves to, on the target
                git_cache=f"{user}/.git/{name}.git",
                dependency_files=None,
            )
        entry["folders"] = sorted(
            {f"{user}/.releases", f"{user}/.records"}
            | ({app["bundle"]["path"]} if app["bundle"] else set())
            | ({f"{user}/.git"} if app["deploy"] == "git" else set())
        )
        out[name] = entry
    return list(out.values())
