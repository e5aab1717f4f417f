"""How an app reaches its target: the bundled app of its kind (the webapp role's files), a folder already on
the target (``app.dir``), or a user's app deployed from a folder on the controller (``app.src``) or a git
repository (``app.git``) to ``APPS/user/NAME``, once for every stack that shares it (``app.name``).

A source folder is read here, on the controller (:func:`benchstack.kinds.apps.userapp.scan`); a git app is
resolved on the target. :func:`user_apps` is what the webapp role needs to deploy each one.
"""

from __future__ import annotations

import hashlib
import json
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchstack.common.inputs import (
    MAX_DEPENDENCY_FILE_BYTES,
    InputError,
    read_bounded,
    shown,
    shown_key,
    user_path,
)
from benchstack.kinds.apps.section import (
    BUNDLED_DEPLOYS,
    USER_DEPLOYS,
    App,
    Deployment,
    GitSource,
    Runtime,
    SourceFolder,
)
from benchstack.kinds.apps.userapp import (
    DEPENDENCY_FILES,
    INSTALLED_DEPENDENCY_FILES,
    LOCK_FILES,
    REFUSED_DEPENDENCY_FILES,
    SUPPORTED_DEPENDENCY_FILES,
    AppSourceError,
    scan,
)
from benchstack.kinds.servers import by_name as server_kind
from benchstack.kinds.stackfields import DEFAULT_ROOTS, NAME_RE, Roots, safe_path_problem

if TYPE_CHECKING:
    from benchstack.kinds.apps.base import AppKind
    from benchstack.plan.stacks import Stack

__all__ = [
    "BUNDLED_DEPLOYS",
    "USER_DEPLOYS",
    "bundle_problems",
    "check_user_app",
    "shared_app_problems",
    "user_apps",
]

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


def check_user_app(
    kind: AppKind,
    who: str,
    app: Mapping[str, Any],
    deploy: str,
    app_name: object,
    roots: Roots,
    base_dir: Path | None,
) -> tuple[Deployment | None, list[str]]:
    """Check an app deployed from ``app.src`` or ``app.git`` (``deploy``) named ``app_name``; its folders on
    the target. A source folder is read here, on the controller: it must hold the kind's entry file, fit the
    size limit and hold no dependency file the runtime cannot install."""
    where = f"{who}: app.{deploy}"
    if not isinstance(app_name, str) or not NAME_RE.fullmatch(app_name):
        return None, [
            f"{who}: app.name: must be 1-48 lowercase letters, digits or '-' (it names the app's "
            f"folder on the target), not {shown(app_name)}"
        ]
    if kind.entry is None:
        return None, [f"{where}: app {kind.name} has no files to deploy (its code is in the front's config)"]
    user = f"{roots.apps.rstrip('/')}/user"
    app_dir = f"{user}/{app_name}"
    if problem := safe_path_problem(app_dir):
        return None, [f"{where}: the app's folder {problem} (bench_app_root)"]
    src: SourceFolder | None = None
    git: GitSource | None = None
    if deploy == "src":
        src, problems = _check_src(kind, where, app["src"], base_dir)
    else:
        git, problems = _check_git(where, app["git"])
    if problems:
        return None, problems
    return Deployment(dir=app_dir, src=src, git=git, bundle=kind.bundle(user, app_name, app_dir)), []


def _check_src(
    kind: AppKind, where: str, src: object, base_dir: Path | None
) -> tuple[SourceFolder | None, list[str]]:
    # A control character (a newline, a NUL) is no folder's name anyone meant.
    if not isinstance(src, str) or not src.strip() or any(ord(c) < 32 or ord(c) == 127 for c in src):
        return None, [f"{where}: must be the path of a folder on the controller, not {shown(src)}"]
    if not src.startswith(("/", "~")) and base_dir is None:
        return None, [f"{where}: {shown(src)} is relative, and there is no experiment file to be relative to"]
    try:
        path = user_path(src, base_dir, what="folder")
    except InputError as exc:
        return None, [f"{where}: {shown(src)}: {exc}"]
    try:
        found = scan(path)
    except AppSourceError as exc:
        return None, [f"{where}: {exc}"]
    if kind.entry not in found.files:
        return None, [f"{where}: {path} has no {kind.entry}, the entry file of a {kind.name} app"]
    entry_problem = _entry_file_problem(path / kind.entry)
    if entry_problem:
        return None, [f"{where}: {path}/{kind.entry}, the entry file of a {kind.name} app, {entry_problem}"]
    runtime = kind.runtime
    refused = [f for f in REFUSED_DEPENDENCY_FILES.get(runtime, ()) if f in found.dependency_files]
    if refused:
        return None, [
            f"{where}: {path} holds {', '.join(refused)}: {runtime} dependency files are not installed "
            f"here ({SUPPORTED_DEPENDENCY_FILES}); install the modules on the target another way and "
            "leave the file out"
        ]
    # Bundler and pip on the target read these: a dangling link or a link to a folder fails there, after
    # the hosts were touched (and the plan's own readers, pyreqs and bundle_gems, read them next).
    for name in found.dependency_files:
        try:
            _dependency_text(path / name)
        except InputError as exc:
            return None, [f"{where}: {exc}"]
    folder = SourceFolder(
        path=str(path),
        sha256=found.sha256,
        bytes=found.bytes,
        files=len(found.files),
        dependency_files=tuple(found.dependency_files),
        lock_sha256=found.lock_sha256,
    )
    return folder, []


def _entry_file_problem(entry: Path) -> str | None:
    """Why the entry file ``entry`` (links followed) cannot start the app, or None: a dangling link was
    deployed and the server crash-looped on the target (issue 44)."""
    try:
        mode = entry.stat().st_mode
    except OSError as exc:
        if entry.is_symlink():
            return f"is a link to nothing ({exc.strerror}): point it at a file, or copy the file in"
        return f"cannot be read ({exc.strerror})"
    if not stat.S_ISREG(mode):
        return "is not a regular file"
    return None


def _check_git(where: str, git: object) -> tuple[GitSource | None, list[str]]:
    if not isinstance(git, dict):
        return None, [f"{where}: must be a mapping {{repo, version}}, not {shown(git)}"]
    problems = [
        f"{where}.{shown_key(key)}: unknown field (allowed: {', '.join(sorted(GIT_KEYS))})"
        for key in sorted(set(git) - GIT_KEYS, key=str)
    ]
    repo, version = git.get("repo"), git.get("version")
    moving = git.get("moving_ref", False)
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
    if problems:
        return None, problems
    assert isinstance(repo, str) and isinstance(version, str) and isinstance(moving, bool)
    return GitSource(repo=repo, version=version, moving_ref=moving, written=tuple(git)), []


def bundle_gems(app_dir: Path) -> tuple[str, set[str]]:
    """The gems ``bundle exec`` can load from a user app's folder: Gemfile.lock's specs when it has one
    (Bundler runs frozen then), else the Gemfile's ``gem`` lines; and which file said so. Each is read
    within bounds: a Gemfile that is a dangling link, a folder or a FIFO is InputError (one line)."""
    lock = app_dir / "Gemfile.lock"
    if lock.is_file():
        text = _dependency_text(lock)
        return "Gemfile.lock", {m.group(1) for m in map(LOCK_SPEC_RE.match, text.splitlines()) if m}
    text = _dependency_text(app_dir / "Gemfile")
    return "Gemfile", {m.group(1) for m in map(GEMFILE_GEM_RE.match, text.splitlines()) if m}


def _dependency_text(path: Path) -> str:
    try:
        return read_bounded(path, MAX_DEPENDENCY_FILE_BYTES).decode("utf-8", errors="replace")
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def bundle_problems(stack_name: str, app: App, server: str | None) -> list[str]:
    """A user app's server (of kind ``server``) runs through ``bundle exec``, which loads only the bundle's
    gems: a server gem the app's Gemfile (or Gemfile.lock) lacks would crash-loop the unit. Read on the
    controller (app.src)."""
    gems = server_kind(server).bundle_gems if server else ()
    if not gems or not app.bundle or not app.src or "Gemfile" not in app.src.dependency_files:
        return []
    src = app.src.path
    try:
        which, bundled = bundle_gems(Path(src))
    except InputError as exc:
        return [f"stack {shown(stack_name)}: app.src: {exc}"]
    missing = [g for g in gems if g not in bundled]
    if not missing:
        return []
    lines = "; ".join(f"gem {json.dumps(g)}" for g in missing)
    then = " and run `bundle lock` so Gemfile.lock has it" if which == "Gemfile.lock" else ""
    return [
        f"stack {shown(stack_name)}: server.kind {server} runs through `bundle exec` from the app's "
        f"bundle, and {src}/{which} does not have {', '.join(missing)}: add to "
        f"{src}/Gemfile the line: {lines}{then}"
    ]


def _app_identity(app: App, runtime: Runtime) -> tuple[object, ...]:
    """What must be equal for two stacks to share one deployed user app."""
    git = app.git
    return (
        app.kind,
        app.src.path if app.src else None,
        git.repo if git else None,
        git.version if git else None,
        git.moving_ref if git else None,
        runtime.version,
    )


def shared_app_problems(stacks: Iterable[tuple[str, App, Runtime]]) -> list[str]:
    """Stacks (name, app, runtime) that name one user app (``app.name``) must deploy the same one."""
    first: dict[str, tuple[str, App, Runtime]] = {}
    problems = []
    for name, app, runtime in stacks:
        if app.deploy not in USER_DEPLOYS or app.name is None:
            continue
        other_name, other_app, other_runtime = first.setdefault(app.name, (name, app, runtime))
        if _app_identity(other_app, other_runtime) != _app_identity(app, runtime):
            problems.append(
                f"stack {shown(name)}: app.name: {shown(app.name)} is also the app of stack "
                f"{shown(other_name)}, "
                "with another kind, source, version or runtime.version: stacks share an app only when those "
                "are equal (give this one another app.name)"
            )
    return problems


def git_credentials(stacks: Sequence[Stack]) -> dict[str, str]:
    """App name -> the repository URL of its ``app.git`` as written, for each whose URL holds credentials
    (``https://user:token@host/...``): the one place of the plan that holds them, which only the clone task
    reads (the stacks, user apps and run.json hold the URL masked, and -v prints them)."""
    return {
        s.app.name: s.app.git.repo
        for s in stacks
        if s.app.git and s.app.name and s.app.git.shown_repo != s.app.git.repo
    }


def user_apps(stacks: Sequence[Stack], roots: Roots = DEFAULT_ROOTS) -> list[dict[str, Any]]:
    """One entry per user app deployed from ``app.src`` or ``app.git`` of resolved stacks: what the webapp
    role needs to deploy it and what the target's deployment record and the fingerprint keep.

    ``key`` names the deployed content: the source folder's content hash, or for a pinned git version a
    hash of repository and version (a moving ref has none: it is resolved on the target each run). The app
    role deploys an app only when its record's key differs.
    """
    user = f"{roots.apps.rstrip('/')}/user"
    out: dict[str, dict[str, Any]] = {}
    for s in stacks:
        app = s.app
        if app.deploy not in USER_DEPLOYS or app.name is None:
            continue
        if app.name in out:
            out[app.name]["stacks"].append(s.name)
            continue
        name, runtime = app.name, s.runtime.kind
        entry: dict[str, Any] = {
            "name": name,
            "kind": app.kind,
            "runtime": runtime,
            "ruby_version": s.runtime.version,
            "stacks": [s.name],
            "dir": app.dir,
            "releases": f"{user}/.releases",
            "record": f"{user}/.records/{name}.json",
            "bundle": app.bundle.as_dict() if app.bundle else None,
            "installs": list(INSTALLED_DEPENDENCY_FILES.get(runtime, ())),
            "refuses": list(REFUSED_DEPENDENCY_FILES.get(runtime, ())),
            # What a git app's release is looked at for, and the lock files its record hashes.
            "look_for": list(DEPENDENCY_FILES),
            "lock_files": list(LOCK_FILES),
            "supported": SUPPORTED_DEPENDENCY_FILES,
        }
        entry.update(_source(app, user))
        entry["folders"] = sorted(
            {f"{user}/.releases", f"{user}/.records"}
            | ({app.bundle.path} if app.bundle else set())
            | ({f"{user}/.git"} if app.git else set())
        )
        out[name] = entry
    return list(out.values())


def _source(app: App, user: str) -> dict[str, Any]:
    """Where a user app's content comes from (its source folder, or its repository and version), the key
    that names it, and its release folder (a git app's is named after the commit, on the target)."""
    if app.src:
        return {
            "source": {
                "type": "src",
                "path": app.src.path,
                "sha256": app.src.sha256,
                "files": app.src.files,
                "bytes": app.src.bytes,
            },
            "key": f"src:{app.src.sha256}",
            "release": f"{user}/.releases/{app.name}-{app.src.sha256[:16]}",
            "dependency_files": list(app.src.dependency_files),
        }
    if app.git:
        git = app.git
        # Of the masked URL: a new token for the same repository deploys nothing again.
        pinned = hashlib.sha256(f"{git.shown_repo}\0{git.version}".encode()).hexdigest()
        return {
            "source": {"type": "git", **git.as_dict()},
            "key": None if git.moving_ref else f"git:{pinned}",
            "release": None,  # named after the commit it resolves to, on the target
            "git_cache": f"{user}/.git/{app.name}.git",
            "dependency_files": None,
        }
    return {}
