"""A user's own app: a folder on the controller (``app.src``) or a git repository (``app.git``), deployed to
the target by the webapp role.

A source folder is read once at plan time (:func:`scan`): its files, their size (bounded by
:data:`MAX_APP_BYTES` and :data:`MAX_APP_FILES`), one content hash over paths, modes and contents, and the
dependency files it holds. The webapp role compares that hash with the target's deployment record, so an
unchanged app costs one task execution; :func:`write_archive` packs exactly the hashed files (and refuses a
folder that changed since the plan), so what runs on the target is what the hash names.

Left out of the copy and the hash: ``.git``, ``node_modules`` and ``__pycache__`` folders anywhere, and the
top-level ``log/``, ``tmp/`` and ``vendor/`` (what a development checkout writes or installs itself).
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import re
import stat
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchstack.common.inputs import shown

EXCLUDED_ANYWHERE = frozenset({".git", "node_modules", "__pycache__"})
EXCLUDED_AT_TOP = frozenset({"log", "tmp", "vendor"})
MAX_APP_BYTES = 64 * 1024 * 1024
MAX_APP_FILES = 20_000
# Links followed to resolve one link (Linux's own limit is 40).
MAX_LINK_HOPS = 40

# What each runtime's dependency files are: installed ones (by the webapp role), and known ones that are
# refused with the list of supported files (no source for them is configured here).
INSTALLED_DEPENDENCY_FILES: dict[str, tuple[str, ...]] = {
    "ruby": ("Gemfile",),  # with or without Gemfile.lock: Bundler into a per-app path
    "python": ("requirements.txt",),  # pip into the stacks' venv
}
REFUSED_DEPENDENCY_FILES: dict[str, tuple[str, ...]] = {
    "perl": ("cpanfile", "Makefile.PL", "Build.PL"),
    "php": ("composer.json",),
}
SUPPORTED_DEPENDENCY_FILES = (
    "supported dependency files: Gemfile with or without Gemfile.lock (ruby: Bundler from ruby_gem_source), "
    "requirements.txt (python: pip into the venv from python_pip_index_url)"
)
# Files whose hashes the deployment record and the fingerprint keep: they pin what was installed.
LOCK_FILES = ("Gemfile.lock", "requirements.txt")
# Every dependency file a release is inspected for (the plan for a source folder, the target for git).
DEPENDENCY_FILES = tuple(
    sorted(
        {f for files in INSTALLED_DEPENDENCY_FILES.values() for f in files}
        | {f for files in REFUSED_DEPENDENCY_FILES.values() for f in files}
        | set(LOCK_FILES)
    )
)


class AppSourceError(ValueError):
    """An app source folder cannot be deployed; the message says why and what to change."""


@dataclass(frozen=True)
class Scan:
    """What a source folder holds, as the plan records it."""

    root: str
    files: tuple[str, ...]
    bytes: int
    sha256: str
    # Top-level dependency files present (a subset of DEPENDENCY_FILES).
    dependency_files: tuple[str, ...] = ()
    lock_sha256: dict[str, str] = field(default_factory=dict)


def _excluded(rel_parts: tuple[str, ...], is_dir: bool) -> bool:
    name = rel_parts[-1]
    if is_dir and name in EXCLUDED_ANYWHERE:
        return True
    return is_dir and len(rel_parts) == 1 and name in EXCLUDED_AT_TOP


def _walk(root: Path) -> list[tuple[str, os.stat_result]]:
    """Every file and symlink to deploy, as (posix relative path, lstat), sorted; AppSourceError for special
    files and links that leave the folder."""
    out: list[tuple[str, os.stat_result]] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=_raise, followlinks=False):
        here = Path(dirpath)
        rel_here = here.relative_to(root).parts
        kept = []
        for d in dirnames:
            full = here / d
            if full.is_symlink():
                filenames.append(d)  # a link to a folder is copied as a link
            elif not _excluded((*rel_here, d), True):
                kept.append(d)
        dirnames[:] = sorted(kept)
        for f in filenames:
            full = here / f
            st = full.lstat()
            rel = "/".join((*rel_here, f))
            _utf8_name(rel)
            if stat.S_ISLNK(st.st_mode):
                _utf8_name(os.readlink(full), f"{shown(rel)} is a link to a name")
                escape = link_escape(root, rel)
                if escape:
                    raise AppSourceError(f"{rel} is a link to {os.readlink(full)}, {escape}")
            elif not stat.S_ISREG(st.st_mode):
                raise AppSourceError(f"{rel} is not a regular file, folder or link")
            out.append((rel, st))
    return sorted(out)


def _raise(exc: OSError) -> None:
    """os.walk's errors (a folder it cannot list) raised, not skipped: a folder left out of the hash and the
    copy without a word would deploy another app than the user's."""
    raise exc


def _utf8_name(name: str, what: str | None = None) -> None:
    """AppSourceError when ``name`` (as the OS gives it: undecodable bytes as surrogates) is not UTF-8: the
    content hash, the plan's JSON and the archive's names are UTF-8."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        said = what or f"{shown(name)} has a name"
        raise AppSourceError(f"{said} that is not UTF-8: rename it") from None


def deployed_files(root: str | os.PathLike[str]) -> list[str]:
    """The relative paths of the files and links :func:`write_archive` packs (nothing is hashed)."""
    return [rel for rel, _st in _walk(Path(root))]


def link_escape(root: Path, rel: str) -> str | None:
    """Why the link ``rel`` of the tree ``root`` reaches outside it, or None when it stays inside.

    The link is followed as the kernel would on the target, component by component through every other
    link of the tree, with ``..`` taken after the link before it is resolved: one link's text alone says
    nothing (``d/u2 -> u1/..`` looks harmless, but ``d/u1 -> ..`` makes it the folder above the app's).
    Only the tree is read (it is copied as it is), never the folders around it, whose layout differs on
    the target."""
    parts = list(reversed(rel.split("/")))
    here: list[str] = []  # where the walk stands, as components below root
    hops = 0
    while parts:
        part = parts.pop()
        if part in ("", "."):
            continue
        if part == "..":
            if not here:
                return "outside the app folder (through the links of its folders)"
            here.pop()
            continue
        here.append(part)
        path = root.joinpath(*here)
        if not path.is_symlink():
            continue  # a folder, a file, or nothing (a dangling link: served by nothing)
        hops += 1
        if hops > MAX_LINK_HOPS:
            return f"a chain of more than {MAX_LINK_HOPS} links (or a loop)"
        target = os.readlink(path)
        if os.path.isabs(target):
            return "outside the app folder (an absolute path)"
        here.pop()
        parts.extend(reversed(target.split("/")))
    # Into a folder the copy leaves out (issue 44: requirements.txt -> .git/config was read as the app's
    # requirements, and its first line quoted): the link would lead nowhere on the target.
    left_out = next((here[i] for i in range(len(here) - 1) if _excluded(tuple(here[: i + 1]), True)), None)
    if left_out is not None:
        return f"into {left_out}/, which is left out of the copy (the link would lead nowhere on the target)"
    return None


def _file_sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _entry_digest(root: Path, rel: str, st: os.stat_result) -> tuple[bytes, str | None]:
    """One file's line in the content hash, and its own sha256 (None for a link)."""
    if stat.S_ISLNK(st.st_mode):
        return f"l {rel}\0{os.readlink(root / rel)}\n".encode(), None
    digest = _file_sha256(root / rel)
    mode = "x" if st.st_mode & 0o111 else "f"
    return f"{mode} {rel}\0{digest}\n".encode(), digest


def scan(root: str | os.PathLike[str], max_bytes: int | None = None, max_files: int | None = None) -> Scan:
    """Read a source folder: its files, size and content hash; AppSourceError when it cannot be deployed
    (limits: MAX_APP_BYTES and MAX_APP_FILES unless given)."""
    max_bytes = MAX_APP_BYTES if max_bytes is None else max_bytes
    max_files = MAX_APP_FILES if max_files is None else max_files
    path = Path(root)
    try:
        if not stat.S_ISDIR(os.stat(path).st_mode):
            raise AppSourceError(f"{path} is not a folder on the controller")
        return _scan(path, max_bytes, max_files)
    except OSError as exc:
        if exc.errno == errno.ENOENT and exc.filename in (None, str(path)):
            raise AppSourceError(f"{path} does not exist") from None
        # A folder or file it cannot read (permissions, a name too long, a loop): one line, not a traceback.
        where = str(exc.filename) if exc.filename else str(path)
        raise AppSourceError(f"{shown(where)}: cannot read it: {exc.strerror}") from None


def _scan(path: Path, max_bytes: int, max_files: int) -> Scan:
    entries = _walk(path)
    total = sum(st.st_size for _rel, st in entries if stat.S_ISREG(st.st_mode))
    if total > max_bytes or len(entries) > max_files:
        raise AppSourceError(
            f"{path} holds {total / 2**20:.1f} MiB in {len(entries)} files (without .git, node_modules, "
            f"__pycache__, log/, tmp/, vendor/); the limit is {max_bytes / 2**20:.0f} MiB and {max_files} "
            "files: leave build output and data out of the folder, or deploy it from git (app.git)"
        )
    h = hashlib.sha256()
    locks: dict[str, str] = {}
    for rel, st in entries:
        line, digest = _entry_digest(path, rel, st)
        h.update(line)
        if rel in LOCK_FILES and digest:
            locks[rel] = digest
    files = tuple(rel for rel, _st in entries)
    return Scan(
        root=str(path),
        files=files,
        bytes=total,
        sha256=h.hexdigest(),
        dependency_files=tuple(f for f in DEPENDENCY_FILES if f in files),
        lock_sha256=locks,
    )


def write_archive(root: str | os.PathLike[str], expected_sha256: str, dest: str | os.PathLike[str]) -> int:
    """Pack the folder's deployable files into the tar file ``dest`` (owner root, modes 0644 or 0755) and
    return the number of entries; AppSourceError when its content no longer has the planned hash."""
    path = Path(root)
    entries = _walk(path)
    h = hashlib.sha256()
    with tarfile.open(dest, "w", format=tarfile.PAX_FORMAT) as tar:
        for rel, st in entries:
            if stat.S_ISLNK(st.st_mode):
                h.update(_entry_digest(path, rel, st)[0])
                info = tarfile.TarInfo(rel)
                info.type = tarfile.SYMTYPE
                info.linkname = os.readlink(path / rel)
                info.mode = 0o777
                tar.addfile(_owned_by_root(info))
                continue
            # Read once: the bytes hashed are the bytes packed.
            data = (path / rel).read_bytes()
            mode = "x" if st.st_mode & 0o111 else "f"
            h.update(f"{mode} {rel}\0{hashlib.sha256(data).hexdigest()}\n".encode())
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            info.mode = 0o755 if mode == "x" else 0o644
            info.mtime = int(st.st_mtime)
            tar.addfile(_owned_by_root(info), io.BytesIO(data))
    if h.hexdigest() != expected_sha256:
        Path(dest).unlink(missing_ok=True)
        raise AppSourceError(
            f"{path} changed since the run's plan was compiled (content sha256 {h.hexdigest()[:12]}, planned "
            f"{expected_sha256[:12]}): run again"
        )
    return len(entries)


def _owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


# ---------------------------------------------------------------- deployment on the target (the webapp role)

RECORD_SCHEMA = "bench-stack/app-record/v1"
_MISSING_GEM_RE = re.compile(r"Could not find gem '([^']+)'")
_LOCKED_GONE_RE = re.compile(r"Your bundle is locked to (\S+ \([^)]*\))")
_ROOT_WARNING = "Don't run Bundler as root"


def apps_to_deploy(
    user_apps: list[dict[str, Any]], records: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The plan's user apps whose target record (by app name) does not name the planned content: a new or
    changed source or version, or a moving git ref (resolved on the target every run). Each carries its
    ``previous`` record (or None)."""
    out = []
    for app in user_apps:
        previous = records.get(app["name"])
        if app["key"] is None or not previous or previous.get("key") != app["key"]:
            out.append({**app, "previous": previous})
    return out


def releases_to_install(
    todo: list[dict[str, Any]], git_results: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The apps of ``todo`` with their release folder, commit and dependency files: a source folder's from
    the plan, a git app's from its clone (``git_results`` by app name). A moving ref that still resolves to
    the deployed release is left out: nothing changed."""
    out = []
    for app in todo:
        item = dict(app)
        if app["source"]["type"] == "git":
            got = git_results.get(app["name"])
            if got is None:
                continue  # not exported (a check run: the module does not run in check mode)
            item.update(
                release=got["release"], commit=got["commit"], dependency_files=got["dependency_files"]
            )
            previous = app.get("previous") or {}
            if app["key"] is None and previous.get("release") == got["release"]:
                continue
        refused = [f for f in item["dependency_files"] if f in app["refuses"]]
        item["refused_files"] = refused
        bundle = app.get("bundle")
        # Bundler installs from the release folder (the app's folder still points at the running one).
        item["bundle_install_env"] = (
            {
                "BUNDLE_GEMFILE": f"{item['release']}/Gemfile",
                "BUNDLE_PATH": bundle["path"],
                "BUNDLE_APP_CONFIG": bundle["app_config"],
                "BUNDLE_SILENCE_ROOT_WARNING": "1",
                # A lock is installed as it is, never re-resolved.
                **({"BUNDLE_FROZEN": "true"} if "Gemfile.lock" in item["dependency_files"] else {}),
            }
            if bundle and "Gemfile" in item["dependency_files"]
            else None
        )
        out.append(item)
    return out


def app_record(item: dict[str, Any], lock_sha256: dict[str, str]) -> dict[str, Any]:
    """What the target keeps of a deployed app (and the fingerprint reports): its source, the commit or
    content hash, the dependency files and the hashes of its lock files after the install."""
    source = dict(item["source"])
    if source["type"] == "git":
        source["commit"] = item["commit"]
    return {
        "schema": RECORD_SCHEMA,
        "name": item["name"],
        "kind": item["kind"],
        "stacks": item["stacks"],
        "dir": item["dir"],
        "release": item["release"],
        "key": item["key"],
        "source": source,
        "dependency_files": item["dependency_files"],
        "lock_sha256": dict(sorted(lock_sha256.items())),
    }


def app_state(
    user_apps: list[dict[str, Any]], records: dict[str, dict[str, Any]], deployed: list[dict[str, Any]]
) -> dict[str, list[str]]:
    """``changed_dirs``: folders (app.dir) of the apps deployed now, whose instances restart;
    ``bundled_dirs``: folders of the apps with a Gemfile, whose servers run through ``bundle exec``."""
    now = {item["name"]: item for item in deployed}
    bundled = []
    for app in user_apps:
        files = (now.get(app["name"]) or records.get(app["name"]) or {}).get("dependency_files") or []
        if app.get("bundle") and "Gemfile" in files:
            bundled.append(app["dir"])
    return {"changed_dirs": [item["dir"] for item in deployed], "bundled_dirs": bundled}


def bundler_failure(stderr: str, source: str) -> str:
    """Bundler's reason for a failed install, said against the gem source it really asked (Bundler names
    the Gemfile's own ``source`` even when a mirror answered)."""
    if m := _MISSING_GEM_RE.search(stderr):
        return f"the Gemfile needs gem '{m.group(1)}', which the gem source {source} does not have"
    if m := _LOCKED_GONE_RE.search(stderr):
        return f"Gemfile.lock pins {m.group(1)}, which the gem source {source} does not have"
    lines = [line for line in stderr.splitlines() if line.strip() and _ROOT_WARNING not in line]
    return f"bundle install from {source} failed: {' '.join(lines[-6:]) or 'no message'}"
