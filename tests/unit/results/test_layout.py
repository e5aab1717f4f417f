"""The run folder's names are defined once, in benchstack.results.layout."""

import ast
from pathlib import Path

from benchstack.results import layout

PACKAGE = Path(layout.__file__).resolve().parents[1]
NAMES = {value for key, value in vars(layout).items() if key.isupper() and isinstance(value, str)}


def defined_elsewhere(package: Path) -> list[str]:
    """Module-level constants outside layout.py whose value is one of the run folder's names."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "layout.py" and path.parent.name == "results":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant):
                if node.value.value in NAMES:
                    found.append(f"{path.relative_to(package.parent)}:{node.lineno} {node.value.value!r}")
    return found


def test_the_run_folder_names_are_defined_only_in_layout() -> None:
    assert defined_elsewhere(PACKAGE) == []


def test_a_second_definition_is_found(tmp_path: Path) -> None:
    (tmp_path / "benchstack" / "measure").mkdir(parents=True)
    (tmp_path / "benchstack" / "measure" / "merge.py").write_text('RAW_DIR = "raw"\n', encoding="utf-8")
    assert defined_elsewhere(tmp_path / "benchstack") == ["benchstack/measure/merge.py:1 'raw'"]


def test_the_layout_names_every_folder_a_run_writes() -> None:
    assert {"run.json", "cells", "raw", "loadgens", "hdr", "plots", ".bench-stack.lock"} <= NAMES
    assert layout.loadgen_dir(Path("/r"), "lg-1") == Path("/r/loadgens/lg-1")
