"""The measuring core's structure, in figures (issue #43): long functions, loose dicts, back imports.

Prints every function or method in benchstack/ and plugins/ over LIMIT lines (path:line name length, longest
first), the longest, the number of ``dict[str, Any]`` in each tree, and every package-level import against
the order the packages depend in (a lower package importing a higher one). Reads the files only (ast): rerun
it after a change to compare.

    python scripts/measure-structure.py [--limit 60]
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREES = ("benchstack", "plugins")
# The packages of benchstack/ from the lowest: each may import those before it, not those after.
ORDER = (
    "common",
    "results",
    "kinds",
    "plan",
    "provision",
    "measure",
    "analysis",
    "history",
    "report",
    "cli",
)


def functions(path: Path) -> Iterator[tuple[int, str, int]]:
    """(first line, qualified name, lines) of every function or method in ``path``, decorators included."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[int, str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                name = f"{prefix}{child.name}"
                yield first, name, (child.end_lineno or child.lineno) - first + 1
                yield from walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def long_functions(limit: int) -> list[tuple[str, int, str, int]]:
    """(path, line, name, lines) of the functions over ``limit`` lines in TREES, longest first."""
    found = [
        (str(path.relative_to(ROOT)), line, name, n)
        for tree in TREES
        for path in sorted((ROOT / tree).rglob("*.py"))
        for line, name, n in functions(path)
        if n > limit
    ]
    return sorted(found, key=lambda f: (-f[3], f[0], f[1]))


def loose_dicts(tree: str) -> int:
    """How many times ``dict[str, Any]`` is written in ``tree``."""
    return sum(p.read_text(encoding="utf-8").count("dict[str, Any]") for p in (ROOT / tree).rglob("*.py"))


def _package(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None
    return parts[1] if parts[1] in ORDER else None


def back_imports() -> list[tuple[str, str]]:
    """(importer, imported) where a package's module imports a module of a package later in ORDER."""
    spec = importlib.util.spec_from_file_location(
        "test_imports", ROOT / "tests" / "unit" / "project" / "test_imports.py"
    )
    assert spec is not None and spec.loader is not None
    test_imports = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(test_imports)
    graph: dict[str, set[str]] = test_imports.import_graph()
    found = []
    for module, deps in sorted(graph.items()):
        own = _package(module)
        for dep in sorted(deps):
            other = _package(dep)
            if own and other and ORDER.index(other) > ORDER.index(own):
                found.append((module, dep))
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=60, help="lines a function may have (60)")
    limit = parser.parse_args(argv).limit
    long = long_functions(limit)
    print(f"functions over {limit} lines: {len(long)}")
    for path, line, name, n in long:
        print(f"  {path}:{line} {name} {n}")
    every = [
        (str(p.relative_to(ROOT)), line, name, n)
        for t in TREES
        for p in sorted((ROOT / t).rglob("*.py"))
        for line, name, n in functions(p)
    ]
    path, line, name, n = max(every, key=lambda f: f[3])
    print(f"longest: {path}:{line} {name} {n}")
    for tree in TREES:
        print(f"dict[str, Any] in {tree}/: {loose_dicts(tree)}")
    back = back_imports()
    print(f"back imports ({' < '.join(ORDER)}): {len(back)}")
    for module, dep in back:
        print(f"  {module} -> {dep}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
