"""Replace only the generated part of a file, leaving the rest of its text as it is.

JSON: the value at a JSON pointer, found by its position in the text (:func:`json_spans`), is printed again
(:func:`dump`) in the files' own style: on one line when it fits, else one member per line. (Marked blocks
of YAML and Markdown files: :func:`scripts.kindfiles.blocks.replace_block`.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

WIDTH = 120
_WS = re.compile(r"\s*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_SCALAR = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


class EditError(ValueError):
    """A pointer or a marker that the file does not hold."""


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def json_spans(text: str) -> dict[str, tuple[int, int]]:
    """Every value's JSON pointer -> its (start, end) in ``text``."""
    spans: dict[str, tuple[int, int]] = {}

    def skip(i: int) -> int:
        m = _WS.match(text, i)
        assert m is not None
        return m.end()

    def value(i: int, pointer: str) -> int:
        i = skip(i)
        start = i
        if text[i] == "{":
            i = skip(i + 1)
            if text[i] == "}":
                i += 1
            else:
                while True:
                    m = _STRING.match(text, skip(i))
                    if m is None:
                        raise EditError(f"not JSON at {i}")
                    key = json.loads(m.group(0))
                    i = skip(m.end())
                    if text[i] != ":":
                        raise EditError(f"not JSON at {i}")
                    i = skip(value(i + 1, f"{pointer}/{_escape(key)}"))
                    if text[i] == "}":
                        i += 1
                        break
                    if text[i] != ",":
                        raise EditError(f"not JSON at {i}")
                    i += 1
        elif text[i] == "[":
            i = skip(i + 1)
            n = 0
            if text[i] == "]":
                i += 1
            else:
                while True:
                    i = skip(value(i, f"{pointer}/{n}"))
                    n += 1
                    if text[i] == "]":
                        i += 1
                        break
                    if text[i] != ",":
                        raise EditError(f"not JSON at {i}")
                    i += 1
        else:
            m = _STRING.match(text, i) or _SCALAR.match(text, i)
            if m is None:
                raise EditError(f"not JSON at {i}")
            i = m.end()
        spans[pointer] = (start, i)
        return i

    value(0, "")
    return spans


def dump(value: Any, indent: int, column: int | None = None) -> str:
    """``value`` as the schemas print it, starting at ``column`` of a line indented by ``indent``: on one line
    when that fits in :data:`WIDTH` columns, else an object or list with one member per line, two more spaces
    in."""
    flat = json.dumps(value, ensure_ascii=False)
    start = indent if column is None else column
    if start + len(flat) <= WIDTH or not isinstance(value, dict | list) or not value:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, dict):
        items = []
        for key, member in value.items():
            head = f"{inner}{json.dumps(key, ensure_ascii=False)}: "
            items.append(head + dump(member, indent + 2, len(head)))
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [inner + dump(member, indent + 2) for member in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def get(document: Any, pointer: str) -> Any:
    for part in pointer.split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        document = document[int(key)] if isinstance(document, list) else document[key]
    return document


def put(document: Any, pointer: str, value: Any) -> None:
    """Set the value at ``pointer`` (whose parent must exist) of ``document``."""
    parent, _, key = pointer.rpartition("/")
    holder = get(document, parent)
    holder[int(key) if isinstance(holder, list) else key.replace("~1", "/").replace("~0", "~")] = value


def replace_json(text: str, values: Mapping[str, Any]) -> str:
    """``text`` with the value at each pointer of ``values`` replaced; the rest byte for byte the same."""
    spans = json_spans(text)
    missing = sorted(set(values) - set(spans))
    if missing:
        raise EditError(f"no value at {', '.join(missing)}")
    edits = sorted(((spans[p], v) for p, v in values.items()), reverse=True)
    for (start, end), new in edits:
        line_start = text.rfind("\n", 0, start) + 1
        before = text[line_start:start]
        indent = len(before) - len(before.lstrip(" "))
        if json.loads(text[start:end]) != new:
            text = text[:start] + dump(new, indent, len(before)) + text[end:]
    return text


def walk(node: Any, visit: Callable[[str, Any], None], pointer: str = "") -> None:
    """Call ``visit(pointer, value)`` for every value of a JSON document, parents first."""
    visit(pointer, node)
    if isinstance(node, dict):
        for key, value in node.items():
            walk(value, visit, f"{pointer}/{_escape(key)}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            walk(value, visit, f"{pointer}/{i}")
