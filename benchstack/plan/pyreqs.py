"""A Python user app's ``requirements.txt`` against the versions bench-stack pins in the stacks' venv.

The python role installs every server of the plan (gunicorn, uvicorn) into the venv first, at the versions
of ``python_constraints``; the webapp role then runs
``pip install -r requirements.txt -c <those constraints>`` in the same venv. So a server missing from the
file cannot break anything (pip never removes it), but a line that contradicts a pin does: pip refuses the
whole file on the target ("Cannot install gunicorn==19.0 because these package versions have conflicting
dependencies ... ResolutionImpossible"), after the hosts were touched. This module finds those lines on the
controller, before any host is touched.

The file is read as pip reads it: ``\\`` continues a line, ``#`` after whitespace starts a comment, option
lines (``--index-url``, ``--hash=...`` after a requirement) are left alone, ``-r``/``-c`` files are followed
within the app folder (a URL, a path outside it or a file that is not deployed is refused: pip would fetch
it or fail on the target), and each requirement is parsed by ``packaging`` (names compared after PEP 503
normalization; extras do not change the version). A requirement whose environment marker is false on every
Python the target may run (``pythons``) is left out, as pip leaves it out. Only direct requirements are
checked: a dependency's own pins (``httpcore==1.0.5`` needs ``h11<0.15``) are pip's to find on the target.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from benchstack.common.inputs import (
    MAX_DEPENDENCY_FILE_BYTES,
    InputError,
    clipped,
    read_bounded,
    shown,
)
from benchstack.kinds.apps.userapp import AppSourceError, deployed_files
from benchstack.kinds.servers import REGISTRY as SERVERS
from benchstack.plan.roles import role_default

if TYPE_CHECKING:
    from benchstack.plan.stacks import Stack

FILE = "requirements.txt"
# The python3 of each distribution the support matrix lists (Amazon Linux 2023, Ubuntu 22.04, Debian 12,
# Ubuntu 24.04, Debian 13), for python_method system: the plan runs before any host is asked.
SYSTEM_PYTHONS = ("3.9.16", "3.10.12", "3.11.2", "3.12.3", "3.13.5")
MACHINES = ("x86_64", "aarch64")
# pip's own comment rule (pip/_internal/req/req_file.py): '#' at the start or after whitespace.
COMMENT_RE = re.compile(r"(^|\s+)#.*$")
INCLUDES = {
    "-r": "requirement",
    "--requirement": "requirement",
    "-c": "constraint",
    "--constraint": "constraint",
}
# What pip takes as a path or URL rather than a name (an archive, a folder, a VCS or http URL).
_PATH_LIKE_RE = re.compile(r"(^\.|/|\\|://|\.(whl|zip|tar\.gz|tgz|tar\.bz2|tar\.xz)$)")


def _first_line(exc: Exception) -> str:
    """packaging's reason, without the lines after it: they quote the whole requirement line again (a
    5 MB line was echoed three times, issue 44)."""
    return clipped(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


class RequirementsError(ValueError):
    """A requirements file that pip would refuse or fetch from elsewhere; the message says where and why."""


@dataclass(frozen=True)
class Line:
    """One requirement as pip reads it: the file (relative to the app folder), its first physical line,
    the text as written (options and comment left out), and where it was included from."""

    file: str
    number: int
    text: str
    requirement: Requirement
    constraint: bool = False
    via: str = ""

    @property
    def where(self) -> str:
        return f"{self.file} line {self.number}" + (f" (included from {self.via})" if self.via else "")


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each logical line: continuations joined, comments removed, blanks
    dropped (pip's join_lines and ignore_comments)."""
    out: list[tuple[int, str]] = []
    pending: list[str] = []
    first = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.endswith("\\") and not COMMENT_RE.match(line):
            if not pending:
                first = number
            pending.append(line[:-1])
            continue
        if pending:
            pending.append(line)
            number, line = first, "".join(pending)
            pending = []
        line = COMMENT_RE.sub("", line).strip()
        if line:
            out.append((number, line))
    if pending:
        line = COMMENT_RE.sub("", "".join(pending)).strip()
        if line:
            out.append((first, line))
    return out


def _include(tokens: list[str]) -> tuple[str, str] | None:
    """(kind, path) when the option line includes another file (``-r F``, ``-rF``, ``--requirement=F``)."""
    head = tokens[0]
    for flag, kind in INCLUDES.items():
        if head == flag and len(tokens) > 1:
            return kind, tokens[1]
        if flag.startswith("--") and head.startswith(flag + "="):
            return kind, head[len(flag) + 1 :]
        if (
            not flag.startswith("--")
            and head.startswith(flag)
            and len(head) > 2
            and not head.startswith("--")
        ):
            return kind, head[2:]
    return None


def read(
    root: str | Path,
    deployed: Iterable[str],
    name: str = FILE,
    *,
    constraint: bool = False,
    via: str = "",
    seen: tuple[str, ...] = (),
) -> list[Line]:
    """Every requirement of ``root``/``name`` and of the files it includes (``deployed``: the app's files,
    relative POSIX paths, as the plan scanned them); RequirementsError for an include pip cannot follow
    inside the app or a line pip cannot read."""
    root = Path(root)
    files = set(deployed)
    try:
        data = read_bounded(root / name, MAX_DEPENDENCY_FILE_BYTES)
    except InputError as exc:  # a dangling link, a link to a folder: pip on the target would fail too
        raise RequirementsError(f"{name}" + (f" (included from {via})" if via else "") + f": {exc}") from None
    text = data.decode("utf-8-sig", errors="replace")
    out: list[Line] = []
    for number, line in logical_lines(text):
        where = f"{name} line {number}" + (f" (included from {via})" if via else "")
        if line.startswith("-"):
            try:
                tokens = shlex.split(line)
            except ValueError as exc:
                raise RequirementsError(
                    f"{where}: {shown(line)} is not an option line pip reads ({exc})"
                ) from None
            found = _include(tokens) if tokens else None
            if found is None:
                continue  # --index-url, -e, --hash ...: no version of a pinned package
            kind, target = found
            rel = _included(root, name, target, files, where)
            if rel in seen or rel == name:
                raise RequirementsError(f"{where}: {clipped(target)} is already being read (an include loop)")
            out += read(
                root,
                files,
                rel,
                constraint=constraint or kind == "constraint",
                via=f"{name} line {number}",
                seen=(*seen, name),
            )
            continue
        # Options after a requirement (--hash=..., --config-settings) belong to it (pip's break_args_options).
        words = line.split(" ")
        cut = next((i for i, w in enumerate(words) if w.startswith("-")), len(words))
        args = " ".join(" ".join(words[:cut]).split())
        try:
            req = Requirement(args)
        except InvalidRequirement as exc:
            if _PATH_LIKE_RE.search(args.split(";")[0].strip()):
                continue  # a local path, an archive or a URL: pip installs what it names
            raise RequirementsError(
                f"{where}: {shown(args)} is not a requirement pip reads ({_first_line(exc)})"
            ) from None
        out.append(Line(name, number, args, req, constraint, via))
    return out


def _included(root: Path, name: str, target: str, files: set[str], where: str) -> str:
    """The app-relative path of an included file; RequirementsError when pip could not read it there."""
    if "://" in target:
        raise RequirementsError(
            f"{where}: {clipped(target)} is fetched by pip on the target: put the file in the app folder"
        )
    if target.startswith("/"):
        raise RequirementsError(
            f"{where}: {clipped(target)} is an absolute path: give a path inside the app folder"
        )
    parts: list[str] = []
    for part in (*PurePosixPath(name).parent.parts, *PurePosixPath(target).parts):
        if part == "..":
            if not parts:
                raise RequirementsError(
                    f"{where}: {clipped(target)} is outside the app folder, which is all that is deployed"
                )
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    rel = "/".join(parts)
    if rel not in files:
        # Through a link to a folder of the app (links were checked to stay inside it).
        real, top = (root / rel).resolve(), root.resolve()
        if real.is_relative_to(top) and real.relative_to(top).as_posix() in files:
            return real.relative_to(top).as_posix()
        raise RequirementsError(
            f"{where}: {clipped(target)} is not in the app folder (or is left out of the copy: .git, "
            "node_modules, "
            "__pycache__, top-level log/, tmp/, vendor/)"
        )
    return rel


def pins(constraints: Iterable[str]) -> dict[str, Requirement]:
    """python_constraints by normalized name."""
    out: dict[str, Requirement] = {}
    for text in constraints:
        try:
            req = Requirement(str(text))
        except InvalidRequirement:
            continue  # refused with the other role variables (benchstack.plan.rolevars)
        out[canonicalize_name(req.name)] = req
    return out


def role_constraints() -> list[str]:
    """The python role's default python_constraints."""
    return [str(c) for c in role_default("python", "python_constraints") or []]


def _exact(spec: SpecifierSet) -> str | None:
    """The one version ``spec`` allows when it is ``==V`` (no wildcard) or ``===V``."""
    only = list(spec)
    if len(only) == 1 and only[0].operator in ("==", "===") and not only[0].version.endswith(".*"):
        return only[0].version
    return None


def conflicts_with(req: Requirement, pin: Requirement) -> bool:
    """Whether no version satisfies both (decidable when one of them names one version)."""
    if (version := _exact(pin.specifier)) is not None:
        return not req.specifier.contains(version, prereleases=True)
    if (version := _exact(req.specifier)) is not None:
        return not pin.specifier.contains(version, prereleases=True)
    return False


def environments(pythons: Sequence[str]) -> list[dict[str, str]]:
    """Marker environments of a Linux target running CPython ``pythons``, on either machine."""
    return [
        {
            "implementation_name": "cpython",
            "implementation_version": version,
            "os_name": "posix",
            "platform_machine": machine,
            "platform_python_implementation": "CPython",
            "platform_release": "",
            "platform_system": "Linux",
            "platform_version": "",
            "python_full_version": version,
            "python_version": ".".join(version.split(".")[:2]),
            "sys_platform": "linux",
            "extra": "",
        }
        for version in pythons
        for machine in MACHINES
    ]


def applies(marker: Marker | None, pythons: Sequence[str]) -> bool:
    """Whether pip on the target may use a requirement with ``marker``."""
    return marker is None or any(marker.evaluate(env) for env in environments(pythons))


def conflicts(
    lines: Sequence[Line], pinned: Mapping[str, Requirement], pythons: Sequence[str]
) -> list[tuple[Line, Requirement]]:
    """The lines that contradict a pin, with that pin. A constraint file's line counts only for a package
    the requirements themselves name (pip applies constraints to what it installs)."""
    named = {canonicalize_name(line.requirement.name) for line in lines if not line.constraint}
    out = []
    for line in lines:
        key = canonicalize_name(line.requirement.name)
        pin = pinned.get(key)
        if pin is None or (line.constraint and key not in named):
            continue
        if applies(line.requirement.marker, pythons) and conflicts_with(line.requirement, pin):
            out.append((line, pin))
    return out


def problems(
    root: str | Path,
    deployed: Iterable[str],
    pinned: Mapping[str, Requirement],
    pythons: Sequence[str],
    servers: Mapping[str, str],
) -> list[str]:
    """What to change in the app's requirements, one line each (without the stack's name). ``servers``:
    normalized package name -> the server kind that runs from it."""
    try:
        lines = read(root, deployed)
    except RequirementsError as exc:
        return [f"{root}/{exc}"]
    out = []
    for line, pin in conflicts(lines, pinned, pythons):
        key = canonicalize_name(pin.name)
        why = f"server.kind {servers[key]} runs from it; " if key in servers else ""
        fix = (
            f"`{pin.name}{pin.specifier}` (or plain `{pin.name}`)"
            if _exact(pin.specifier)
            else f"plain `{pin.name}`"
        )
        out.append(
            f"{root}/{line.where}: `{clipped(line.text)}` contradicts {pin}, the version pinned in the "
            "stacks' venv "
            f"({why}python_constraints), so pip refuses the whole file on the target "
            f"(ResolutionImpossible): write that line as {fix}, or set python_constraints to a version "
            f"of {pin.name} the app runs on"
        )
    return out


def stack_problems(stacks: Sequence[Stack], constraints: Iterable[str], pythons: Sequence[str]) -> list[str]:
    """The problems of every Python user app from ``app.src`` with a requirements.txt among resolved
    ``stacks``, read on the controller, against ``constraints`` (python_constraints) on ``pythons``. An app
    from ``app.git`` is cloned on the target: pip's own message says it there."""
    pinned = pins(constraints)
    servers: dict[str, str] = {
        canonicalize_name(pkg): name for name, kind in SERVERS.items() for pkg in kind.pip
    }
    out: list[str] = []
    done: set[str] = set()
    for s in stacks:
        app, src = s.app, s.app.src
        if (
            src is None
            or s.runtime.kind != "python"
            or FILE not in src.dependency_files
            or app.name is None
            or app.name in done
        ):
            continue
        done.add(app.name)
        who = f"stack {shown(s.name)}: app.src"
        try:
            deployed = deployed_files(src.path)
        except AppSourceError as exc:
            out.append(f"{who}: {exc}")
            continue
        out += [f"{who}: {p}" for p in problems(src.path, deployed, pinned, pythons, servers)]
    return out
