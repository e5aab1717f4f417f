"""No backslash escape inside a Jinja expression of a task file: ansible-core 2.19 keeps a Jinja string
literal's '\\n' as a backslash and an n, so `to_nice_json ~ '\\n'` wrote `}\\n` into original.json and
the next tuned run failed to parse it (dns-check's idempotence step, in CI). A newline belongs outside the
braces, in a double-quoted YAML scalar ("{{ x }}\\n"), where YAML turns it into a real one."""

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(
    path
    for folder in ("roles", "playbooks", "molecule")
    for path in (ROOT / folder).rglob("*.yml")
    if "files" not in path.parts
)
JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
ESCAPE = re.compile(r"\\[ntr]")


def escapes_in(value: Any, where: str = "") -> list[str]:
    """Where a parsed YAML value holds a Jinja expression with a backslash escape in it."""
    if isinstance(value, dict):
        return [hit for key, item in value.items() for hit in escapes_in(item, f"{where}/{key}")]
    if isinstance(value, list):
        return [hit for i, item in enumerate(value) for hit in escapes_in(item, f"{where}/{i}")]
    if isinstance(value, str):
        return [f"{where}: {m.group(0)[:80]!r}" for m in JINJA.finditer(value) if ESCAPE.search(m.group(0))]
    return []


def test_the_check_finds_the_escape_that_broke_original_json() -> None:
    task = yaml.safe_load("- copy:\n    content: >-\n      {{ {'a': 1} | to_nice_json ~ '\\n' }}\n")
    assert escapes_in(task) == ["/0/copy/content: \"{{ {'a': 1} | to_nice_json ~ '\\\\n' }}\""]
    fixed = yaml.safe_load("- copy:\n    content: \"{{ {'a': 1} | to_nice_json }}\\n\"\n")
    assert escapes_in(fixed) == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_backslash_escape_inside_jinja(path: Path) -> None:
    hits = [hit for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) for hit in escapes_in(doc)]
    assert hits == [], f"{path.relative_to(ROOT)}: {hits}"
