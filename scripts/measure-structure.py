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
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
TREES = ("benchstack", "plugins")


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


def _test_imports() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "test_imports", ROOT / "tests" / "unit" / "project" / "test_imports.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def back_imports() -> tuple[str, list[str]]:
    """The layers (tests/unit/project/test_imports.py's LAYERS, the one definition) and every import of a
    module of a later layer, as ``importer -> imported``."""
    test_imports = _test_imports()
    order = " < ".join(p[0].removeprefix("benchstack.") for p in test_imports.LAYERS)
    return order, test_imports.imports_back_up(test_imports.import_graph())


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
    order, back = back_imports()
    print(f"back imports ({order}): {len(back)}")
    for back_import in back:
        print(f"  {back_import}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
