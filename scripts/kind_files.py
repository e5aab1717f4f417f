#!/usr/bin/env python3
"""Write every file derived from the kinds' registries (benchstack.kinds.*): the experiment schema's
per-kind parts, the roles' choices, packages and pins, the host fingerprint's package list, the docs tables
and the test case lists. A kind is declared once, in its module; these files follow it.

Each section (a module of scripts/kindfiles/, listed in SECTIONS) has ``wanted(root) -> {path: text}``: the
project-relative path of each file it writes and that file's whole wanted text, made from the current file
by replacing only the generated parts (JSON locations in a schema, a marked block in a YAML, Python or
Markdown file: scripts/kindfiles/blocks.py). Several sections may write parts of one file: each replaces
only its own, so the files are up to date when every section's text equals the file, and writing applies the
sections in turn until they all agree.

``python scripts/kind_files.py`` writes the stale files (then the role READMEs, scripts/role_docs.py);
``--check`` writes nothing, prints each stale file and exits 1 (``./run lint`` runs it).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# In the order they are applied.
SECTIONS = [
    "servers",
    "loadtools",
    "apps",
    "fronts",
]
# Writing stops after this many rounds: sections that keep undoing each other's parts are a bug.
MAX_ROUNDS = 3


def sections() -> list[ModuleType]:
    return [importlib.import_module(f"scripts.kindfiles.{name}") for name in SECTIONS]


def wanted(root: Path) -> Iterator[tuple[str, str]]:
    """(path, wanted text) of every generated file, section by section (a path may come more than once)."""
    for section in sections():
        yield from section.wanted(root).items()


def current(root: Path, path: str) -> str | None:
    file = root / path
    return file.read_text(encoding="utf-8") if file.is_file() else None


def stale(root: Path) -> list[str]:
    """The generated files whose text is not what some section wants, in the order found."""
    return list(dict.fromkeys(path for path, text in wanted(root) if current(root, path) != text))


def write(root: Path) -> list[str]:
    """Write the stale files until every section agrees with them; the files written."""
    written: list[str] = []
    for _ in range(MAX_ROUNDS):
        changed = False
        for section in sections():
            for path, text in section.wanted(root).items():
                if current(root, path) != text:
                    (root / path).write_text(text, encoding="utf-8")
                    written.append(path)
                    changed = True
        if not changed:
            return list(dict.fromkeys(written))
    raise RuntimeError(f"the sections still disagree after {MAX_ROUNDS} rounds: {', '.join(stale(root))}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; fail when a file is stale")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.check:
        found = stale(args.root)
        for path in found:
            print(f"{path} is out of date: run python scripts/kind_files.py", file=sys.stderr)
        return 1 if found else 0
    for path in write(args.root):
        print(f"wrote {path}")
    from scripts import role_docs

    problems = role_docs.run(args.root / "roles", check=False)
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
