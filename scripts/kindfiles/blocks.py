"""Helpers for the sections of scripts/kind_files.py: a generated block between two marker lines of a
YAML, Python or Markdown file, and the text of a JSON or YAML value as the project writes it.

A block is the lines between ``# BEGIN NAME ...`` and ``# END NAME`` (``<!-- ... -->`` in Markdown), at the
BEGIN line's indentation. Only those lines are generated: the file around them stays hand-written and stays
plain YAML (Ansible reads the role files as they are, without running the generator).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

GENERATOR = "scripts/kind_files.py"


class BlockError(ValueError):
    """A file lacks the markers of a block its section writes."""


def read(root: Path, path: str) -> str:
    return (root / path).read_text(encoding="utf-8")


def _comment(path: str, text: str) -> str:
    return f"<!-- {text} -->" if path.endswith(".md") else f"# {text}"


def replace_block(text: str, path: str, name: str, lines: Sequence[str], source: str) -> str:
    """``text`` (the file ``path``) with the lines of each of its blocks ``name`` (a file may hold several, as
    an argument_specs' two entry points do) replaced by ``lines``, indented as that block's BEGIN marker,
    which names ``source`` (where the lines come from)."""
    lead = r"<!--" if path.endswith(".md") else r"#"
    begin = re.compile(rf"^([ \t]*){lead} BEGIN {re.escape(name)}\b.*\n", re.MULTILINE)
    end = re.compile(rf"^[ \t]*{lead} END {re.escape(name)}\b.*\n", re.MULTILINE)
    head = _comment(path, f"BEGIN {name}: written by {GENERATOR} from {source}")
    tail = _comment(path, f"END {name}")
    out, pos = [], 0
    while (found := begin.search(text, pos)) and (closed := end.search(text, found.end())):
        indent = found[1]
        body = [f"{indent}{line}" if line else "" for line in lines]
        out += [text[pos : found.start()], "\n".join([indent + head, *body, indent + tail]) + "\n"]
        pos = closed.end()
    if not out:
        raise BlockError(f"{path}: no BEGIN {name} ... END {name} marker lines around the generated block")
    return "".join(out) + text[pos:]


class _Dumper(yaml.SafeDumper):
    """A list inside a mapping indented under its key, as yamllint's default wants it."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def yaml_lines(value: list[Any] | dict[str, Any]) -> list[str]:
    """A list's items (``- x``) or a mapping's entries (``k: v``), as lines of a block."""
    text = yaml.dump(value, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)
    return text.splitlines()


def json_text(data: Any) -> str:
    """A JSON file's text as the project writes its schemas: two spaces, ASCII, a final newline."""
    return json.dumps(data, indent=2) + "\n"
