#!/usr/bin/env python3
"""Rename the roles ``app`` -> ``webapp`` and ``bench_host`` -> ``host`` (issue 26, item 5), with their
variables, tags and every reference to them.

Why: a role's variables are every name with its prefix (benchstack.provision.markers.role_variables hashes
them to decide whether the role runs again). ``app_`` is a prefix of ``app_server_``, and ``bench_host_``
falls under the project's own ``bench_*`` (bench_plan, bench_user ...), so code that selects a role's
variables had to special-case both. After the rename no role's prefix is another's, and the host role's tag is
``bench_host``: the ``bench_<role>`` of every other role.

What it does, each step skipped when already done, so it can run again on a newer main (or on a branch that
still has the old names) and a second run changes nothing:

1. ``git mv roles/app roles/webapp`` and ``roles/bench_host roles/host`` (refused when both exist).
2. Reads the roles' own names from their files (old or new folder): every variable (``app_*``, ``__app_*``,
   ``bench_host_*``, ``__bench_host_*``: defaults, vars, argument_specs, registers, facts, templates, README)
   and every tag (``bench_app*``, ``bench_host*`` on a ``tags`` line).
3. Checks every tracked text file for a name that starts like an old one (``app_x``, ``__app_x``,
   ``bench_host_x``) and that is none of those and none of :data:`KEEP` (names that merely start so:
   the app_server role's, plan and stack fields such as ``app_env_lines``, the ``bench_host_lock`` action):
   it refuses, naming each, and writes nothing. Add the name to :data:`KEEP`, or to the role, then run again.
4. Rewrites every tracked text file: each variable to its new prefix; each tag of the app role
   (``bench_app`` -> ``bench_webapp``; the host role's stay ``bench_host*``, so a tag line keeps
   ``bench_host_user`` while a variable ``bench_host_user`` becomes ``host_user``); the role names where they
   name the role: ``roles/app/`` paths, ``the app role``, role lists (``"bench_host", "ruby", "app"``),
   ``role_name: app``; ``bench_host`` alone everywhere but on a tag line and the ``bench_host`` filter plugin.
   Python identifiers are left alone (a parameter ``app_kinds`` is the plan's, not the role's) except those
   of :data:`IDENTIFIERS` and keyword arguments (``dict(bench_host_profile="tuned")`` names a variable).
   Never a line that says ``rename-roles: keep`` (an old name on purpose: the migration check and its
   tests), nor the files of :data:`EXEMPT`; a plan field that is also a variable's name keeps it
   (:data:`FIELD_FILES`).
5. Writes each renamed role's README again (scripts/role_docs.py), the golden plan where there is one
   (tests/unit/plan_cases.py: the plan names the roles), and formats the Python files it changed (ruff,
   from .venv when there).

Usage: ``scripts/rename-roles.py`` (from anywhere in the checkout); ``--check`` lists what it would change,
exits 1 if anything, and writes nothing. It prints each file it changed and the count of names rewritten.
"""

from __future__ import annotations

import argparse
import functools
import io
import re
import shutil
import subprocess
import sys
import tokenize
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROLES: dict[str, str] = {"app": "webapp", "bench_host": "host"}
MARK = "rename-roles: keep"
# pyproject.toml's ruff line-length, .yamllint's line-length.
LINE_LIMITS = {".py": 110, ".yml": 120}
# Files that name the old names on purpose: this script, and the migration note with its old -> new table.
EXEMPT = {
    "scripts/rename-roles.py",
    "docs/upgrading.md",
    "benchstack/common/renamed.py",
    "tests/bad-inputs/variables/renamed-variables.yml",
    "tests/unit/plan/test_renamed_variables.py",
    "tests/unit/project/test_rename_roles.py",
    # Generated from the plan (tests/unit/plan_cases.py): written again after the rename, not rewritten.
    "tests/data/plan/golden.json",
}
# Names that start like an old role's variables and are not (never rewritten).
KEEP: dict[str, set[str]] = {
    "app": {
        # plan, stack and record fields, Python names
        "app_config",
        "app_dir",
        "app_env_lines",
        "app_kind",
        "app_name",
        "app_of",
        "app_ok",
        "app_problems",
        "app_record",
        "app_source",
        "app_state",
        "_app_identity",
    },
    # the action that gives up a host's lock (the bench_ prefix of every action)
    "bench_host": {"bench_host_lock"},
}
# A name that is also a field of the plan (bench_plan.needs.app_kinds), in the files that mean the field: it
# keeps its name there, as every plan field does. Anywhere, a name after a dot is a field, never a variable.
FIELD_FILES: dict[str, set[str]] = {
    "app_kinds": {
        "benchstack/plan/readers.py",
        "benchstack/plan/resolved.py",
        "benchstack/plan/roles.py",
        "tests/unit/plan/test_stacks.py",
        "tests/unit/plan/test_stacks_user_apps.py",
    }
}
# Prefixes of other roles' names (the app_server role's variables, internal variables and tags).
KEEP_PREFIXES: dict[str, tuple[str, ...]] = {"app": ("app_server", "__app_server")}
# Python identifiers that name a role (the rest are left alone).
IDENTIFIERS = {"bench_host_sysctls": "host_sysctls"}
# Where ``bench_host`` alone is not the role: the filter plugin of that name.
BARE_KEEP = [re.compile(r'"filter", "bench_host"'), re.compile(r"filter/bench_host\.py")]
# ... and a list of filter plugins ("filters bench_apps, bench_host").
FILTERS_BEFORE = re.compile(r"\bfilters\b[^|.;()]*$")
# Where a quoted "app" is the role, not the stack's field: beside another quoted role in a list, a key
# that maps to a tuple (EXPORTS, DEPENDS), a record's entry, a role function's argument. The plan's
# ``owned`` keeps its key "app" (a plan field, like the stack's "app").
ROLE_NAMES = (
    "bench_host",
    "host",
    "ruby",
    "python",
    "perl",
    "php",
    "app_server",
    "nginx",
    "apache",
    "loadgen",
)
_QUOTED = r"[\"'](?:{}|webapp)[\"']".format("|".join(ROLE_NAMES))
APP_BEFORE = re.compile(
    rf"(?:{_QUOTED},\s*|\[\"roles\"\]\[|\b\w*(?:role|hash)\w*\(|\{{\*\*HASHES, "
    r"|\brole == |\"made\": \{|\bmanifests\[)$"
)
APP_AFTER = re.compile(rf"^(?:,\s*{_QUOTED}|: \()")
APP_ROLE_LINES = [re.compile(r'^\s*"app",\s*$')]
OLD_TOKEN = re.compile(r"(?<![\w$])(_{0,2})(app|bench_host)((?:_\w+)?)(?!\w)")
# A line of tags (a task's, a README's), and a tag given on a command line.
TAG_LINE = re.compile(r"^\s*(?:- )?tags:|\bTags \(")
TAG_BEFORE = re.compile(
    r"(?:--(?:skip-)?tags[ =]|tags=[\"'\[]*|\"ansible_(?:run|skip)_tags\": \[[^]]*"
    r"|\"bench_\w+\", \"|\btag: )$"
)


class RenameError(Exception):
    """Something the script cannot classify: nothing was written."""


def tracked(root: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p]


def read_text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def role_dir(root: Path, old: str) -> Path:
    new = root / "roles" / ROLES[old]
    return new if new.is_dir() else root / "roles" / old


def move_roles(root: Path, write: bool) -> list[str]:
    """``git mv`` each old role folder to its new name; what it did (or would do)."""
    done = []
    for old, new in ROLES.items():
        src, dst = root / "roles" / old, root / "roles" / new
        if src.is_dir() and dst.is_dir():
            raise RenameError(f"roles/{old} and roles/{new} both exist: merge them by hand, then run again")
        if src.is_dir():
            done.append(f"git mv roles/{old} roles/{new}")
            if write:
                subprocess.run(["git", "mv", f"roles/{old}", f"roles/{new}"], cwd=root, check=True)
    return done


def kept(old: str, name: str) -> bool:
    return name in KEEP[old] or name.startswith(KEEP_PREFIXES.get(old, ()))


def role_names(root: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Each role's variables and tags, by their old names, read from the role's own files."""
    variables: dict[str, set[str]] = {}
    tags: dict[str, set[str]] = {}
    for old, new in ROLES.items():
        folder = role_dir(root, old)
        names: set[str] = set()
        role_tags: set[str] = set()
        token = re.compile(rf"(?<![\w$])(_{{0,2}})({old}|{new})(_\w+)(?!\w)")
        # A role's tags are bench_<role>...: bench_app, bench_webapp; bench_host for both host roles.
        prefixes = "|".join({f"bench_{old.removeprefix('bench_')}", f"bench_{new}"})
        tag = re.compile(rf"(?<![\w$])(?:{prefixes})(?:_\w+)?(?!\w)")
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and "files" not in p.parts):
            text = read_text(path) or ""
            for line in text.splitlines():
                if TAG_LINE.search(line):
                    # Known by their old names: bench_webapp_user is bench_app_user.
                    role_tags.update(
                        re.sub(rf"^bench_{new}(?=_|$)", f"bench_{old.removeprefix('bench_')}", found)
                        for found in tag.findall(line)
                    )
                    continue
                for under, _, rest in token.findall(line):
                    name = f"{under}{old}{rest}"
                    if not kept(old, name):
                        names.add(name)
        variables[old] = names
        tags[old] = role_tags
    return variables, tags


def python_names(text: str) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """(line, column) of every identifier in Python source (``text``), 1-based lines, and of those that are
    keyword arguments (``f(bench_host_profile="tuned")``: a variable's name as a dict key, as the tests hand
    roles' variables)."""
    spots: set[tuple[int, int]] = set()
    kwargs: set[tuple[int, int]] = set()
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in skip]
    except (tokenize.TokenError, SyntaxError):
        return spots, kwargs
    for i, tok in enumerate(tokens):
        if tok.type != tokenize.NAME:
            continue
        spots.add(tok.start)
        before = tokens[i - 1].string if i else ""
        after = tokens[i + 1].string if i + 1 < len(tokens) else ""
        if before in ("(", ",") and after == "=":
            kwargs.add(tok.start)
    return spots, kwargs


def app_is_role(line: str, start: int, end: int, where: str) -> bool:
    """Whether ``app`` at line[start:end] names the role (the word is everywhere else too: app.dir ...)."""
    before, after = line[:start], line[end:]
    if re.search(r"(?:roles/|role_yaml\(\"|ROLES / \"|\"roles\" / \")$", before):
        return True
    if re.search(r"(?:role_name|role):\s*$", before):
        return True
    if re.match(r"(?:'s)? role\b|\]\(roles/", after) or (before.endswith("[") and after.startswith("](")):
        return True
    if before.endswith('"') and after.startswith('"'):
        if any(p.search(line) for p in APP_ROLE_LINES) and (
            where == "benchstack/plan/roles.py" or where.startswith("tests/unit/provision/")
        ):
            return True
        if APP_BEFORE.search(before[:-1]) or APP_AFTER.match(after[1:]):
            return True
        return bool(re.match(r'"app" (?:not )?in (?:roles\b|\w+\.(?:run|skip)\b)', line[start - 1 :]))
    # A plain list of roles: "bench_host, ruby, app, app_server".
    words = r"(?:bench_host|host|ruby|python|perl|php|app_server|nginx|apache|loadgen)"
    return bool(
        re.search(rf"\b{words}(?:, | and |, and )$", before)
        or re.match(rf"(?:, | and |, and ){words}\b", after)
    )


# (line, column) of a Python file's identifiers and of its keyword arguments (python_names), made when a line
# first needs them; None for a file that is not Python.
Names = Callable[[], tuple[set[tuple[int, int]], set[tuple[int, int]]]] | None


def rewrite_line(
    line: str,
    lineno: int,
    names: Names,
    variables: dict[str, set[str]],
    tags: dict[str, set[str]],
    unknown: list[str],
    where: str,
) -> tuple[str, int]:
    """The line with the old names rewritten, and how many."""
    if MARK in line:
        return line, 0
    whole = bool(TAG_LINE.search(line))
    count = 0

    def is_tag(start: int) -> bool:
        return whole or bool(TAG_BEFORE.search(line[:start]))

    def tag(match: re.Match[str]) -> str:
        nonlocal count
        old = match.group(0)
        if old in tags["app"]:
            count += 1
            return old.replace("bench_app", "bench_webapp", 1)
        return old

    line = re.sub(
        r"(?<![\w$])bench_app(?:_\w+)?(?!\w)", lambda m: tag(m) if is_tag(m.start()) else m.group(0), line
    )

    def one(match: re.Match[str]) -> str:
        nonlocal count
        under, role, rest = match.groups()
        token = match.group(0)
        new = ROLES[role]
        spot = (lineno, match.start())

        def is_name() -> bool:
            if names is None:
                return False
            spots, kwargs = names()
            # A keyword argument named as a role variable is that variable; any other Python name stays.
            return spot in spots and not (spot in kwargs and token in variables[role])

        if not rest:
            if role == "bench_host":
                if (
                    under
                    or is_tag(match.start())
                    or FILTERS_BEFORE.search(line[: match.start()])
                    or any(
                        (hit := p.search(line)) and hit.start() <= match.start() < hit.end()
                        for p in BARE_KEEP
                    )
                ):
                    return token
                count += 1
                return new
            if not under and app_is_role(line, match.start(), match.end(), where) and not is_name():
                count += 1
                return new
            return token
        if token in IDENTIFIERS:
            count += 1
            return IDENTIFIERS[token]
        if is_tag(match.start()) and token in tags[role]:
            return token
        if kept(role, token) or where in FIELD_FILES.get(token, ()) or line[: match.start()].endswith("."):
            return token
        if is_name():
            return token
        if token in variables[role]:
            count += 1
            return f"{under}{new}{rest}"
        unknown.append(f"{where}:{lineno}: {token}")
        return token

    return OLD_TOKEN.sub(one, line), count


def rewrite_text(
    text: str,
    rel: str,
    variables: dict[str, set[str]],
    tags: dict[str, set[str]],
    unknown: list[str],
    long: list[str] | None = None,
) -> tuple[str, int]:
    """``text`` (the file ``rel``) with the old names rewritten, and how many; what it cannot classify is
    added to ``unknown``, a line it made longer than the limit to ``long``."""
    # Tokenized only when a line needs it (most files' old-looking names are settled before): ~0.9 s for the
    # whole tree otherwise.
    names = functools.cache(lambda: python_names(text)) if rel.endswith(".py") else None
    limit = LINE_LIMITS.get(Path(rel).suffix)
    lines = text.split("\n")
    total = 0
    for i, line in enumerate(lines):
        lines[i], n = rewrite_line(line, i + 1, names, variables, tags, unknown, rel)
        total += n
        if long is not None and limit and n and len(lines[i]) > limit >= len(line):
            long.append(f"{rel}:{i + 1}: {len(lines[i])} characters now (limit {limit})")
    return "\n".join(lines), total


def rewrite_all(root: Path, write: bool, long: list[str] | None = None) -> tuple[dict[str, int], list[str]]:
    """File -> names rewritten (or that would be), and the names it cannot classify (nothing written then);
    the lines it made too long are added to ``long``."""
    variables, tags = role_names(root)
    changed: dict[str, str] = {}
    counts: dict[str, int] = {}
    unknown: list[str] = []
    for rel in tracked(root):
        if rel in EXEMPT:
            continue
        path = root / rel
        text = read_text(path)
        if text is None or not OLD_TOKEN.search(text):
            continue
        new_text, total = rewrite_text(text, rel, variables, tags, unknown, long)
        if new_text != text:
            changed[rel] = new_text
            counts[rel] = total
    if unknown:
        return counts, unknown
    if write:
        for rel, new_text in changed.items():
            (root / rel).write_text(new_text, encoding="utf-8")
    return counts, []


def tools(root: Path, changed: list[str]) -> None:
    """The renamed roles' READMEs written again from their argument_specs, the changed Python formatted;
    a tool that cannot run is named, to be run by hand."""
    python = root / ".venv" / "bin" / "python"
    runner = str(python) if python.exists() else sys.executable
    ruff = root / ".venv" / "bin" / "ruff"
    ruff_cmd = str(ruff) if ruff.exists() else shutil.which("ruff")
    py = [p for p in changed if p.endswith(".py")]
    commands = []
    if (root / "scripts" / "role_docs.py").exists():
        commands.append([runner, "scripts/role_docs.py"])
    # The plan names the roles (each host's roles, role_made, role_units): its golden copy follows them.
    if (root / "tests" / "unit" / "plan_cases.py").exists():
        commands.append([runner, "tests/unit/plan_cases.py"])
    if ruff_cmd and py:
        commands.append([ruff_cmd, "format", "-q", *py])
    for command in commands:
        try:
            subprocess.run(command, cwd=root, check=False)
        except OSError as exc:
            print(f"rename-roles: could not run {' '.join(command[:2])} ({exc}): run it yourself")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="list what would change; write nothing")
    args = parser.parse_args(argv)
    root = Path(
        subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout.strip()
    )
    try:
        # Classify every name before moving anything: a refusal leaves the tree as it was.
        counts, unknown = rewrite_all(root, write=False)
        if unknown:
            raise RenameError(
                "names that start like an old role's and are in no table (add them to KEEP in "
                "scripts/rename-roles.py, or to the role), nothing written:\n  " + "\n  ".join(unknown)
            )
        moves = move_roles(root, write=not args.check)
    except RenameError as exc:
        print(f"rename-roles: {exc}", file=sys.stderr)
        return 2
    long: list[str] = []
    if not args.check:
        counts, _ = rewrite_all(root, write=True, long=long)
    for line in moves:
        print(line)
    for rel, n in sorted(counts.items()):
        print(f"{rel}: {n} name{'s' if n != 1 else ''}")
    if not moves and not counts:
        print("rename-roles: nothing to do")
        return 0
    if args.check:
        return 1
    tools(root, list(counts))
    names = sum(counts.values())
    print(f"rename-roles: {len(moves)} role folder(s) moved, {names} names in {len(counts)} files")
    # Longer names make longer lines: left to a person (ruff E501 in Python, yamllint elsewhere).
    for line in long:
        print(f"rename-roles: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
