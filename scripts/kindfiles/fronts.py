"""The files derived from the front kinds (benchstack.kinds.fronts.REGISTRY): the experiment schema's
``front`` section (the kinds, each kind's own keys with their types and bounds), the apache role's handler
choices, the docs tables of the fronts and the golden matrix's front kinds, written from each front's
declared keys (docs/adding-a-kind.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchstack.kinds.fronts import REGISTRY, FrontKind
from benchstack.kinds.fronts.apache import HANDLER_MODULES
from benchstack.kinds.fronts.base import Bounded, Choice
from scripts.kindfiles.blocks import json_text, read, replace_block, yaml_lines
from scripts.kindfiles.servers import SCHEMA, one_of

BLOCK = "front-kinds"
SOURCE = "benchstack.kinds.fronts"


def kinds() -> list[FrontKind]:
    return list(REGISTRY.values())


# ---------------------------------------------------------------- the experiment schema


def _choice(choice: Choice) -> dict[str, Any]:
    return {
        "description": choice.description,
        "enum": list(choice.values),
        "errorMessage": f"must be one of {', '.join(choice.values)}",
    }


def _integer(bounded: Bounded) -> dict[str, Any]:
    return {
        "description": f"{bounded.sets} (default {bounded.default})",
        "type": "integer",
        "minimum": bounded.low,
        "maximum": bounded.high,
        "errorMessage": f"must be an integer from {bounded.low} to {bounded.high}",
    }


def _keys(kind: FrontKind, value: str, properties: dict[str, Any]) -> dict[str, Any]:
    """The ``then`` of a section whose keys are ``properties`` and the integers of ``value``: no other key."""
    properties |= {key: _integer(bounded) for key, bounded in kind.integers.get(value, {}).items()}
    return {
        "properties": properties,
        "additionalProperties": False,
        "errorMessage": {"additionalProperties": f"unknown {kind.key_of(value)}"},
    }


def _if(field: str, value: str, required: bool = True) -> dict[str, Any]:
    return {"properties": {field: {"const": value}}} | ({"required": [field]} if required else {})


def _branch(kind: FrontKind) -> dict[str, Any]:
    """The kind's keys; with a variant, its choices, then a branch per value of it (the default's applies
    when the variant is not written) with the integer keys of that value."""
    choices = {key: _choice(choice) for key, choice in kind.choices.items()}
    if not kind.variant:
        return {"if": _if("kind", kind.name), "then": _keys(kind, "", {"kind": True, **choices})}
    variant = kind.choices[kind.variant]
    return {
        "if": _if("kind", kind.name),
        "then": {
            "properties": choices,
            "allOf": [
                {
                    "if": _if(kind.variant, value, required=value != variant.default),
                    "then": _keys(kind, value, {"kind": True, **dict.fromkeys(kind.choices, True)}),
                }
                for value in variant.values
            ],
        },
    }


def schema(text: str) -> str:
    data = json.loads(text)
    front = data["$defs"]["stack"]["properties"]["front"]
    one_of(front, list(REGISTRY))
    front["allOf"] = [_branch(kind) for kind in kinds()]
    return json_text(data)


# ---------------------------------------------------------------- docs and tests


def _integers(integers: dict[str, Bounded]) -> str:
    cells = []
    for key, b in integers.items():
        notes = [f"{b.low:,}-{b.high:,}", *([b.note] if b.note else [])]
        cells.append(f"`{key}` {b.default} ({'; '.join(notes)})")
    return ", ".join(cells)


def docs_table() -> list[str]:
    """Each front kind with its keys; a kind with a variant, a row per set of integer keys."""
    rows = ["| front kind | run by | keys: default (values or bounds) |", "|---|---|---|"]
    for kind in kinds():
        keys = [f"`{key}` {c.default} ({', '.join(c.values)})" for key, c in kind.choices.items()]
        if kind.integers.get(""):
            keys.append(_integers(kind.integers[""]))
        role = f"the `{kind.role}` role" if kind.role else "— (the server answers on the stack's port)"
        rows.append(f"| `{kind.name}` | {role} | {', '.join(keys) or '—'} |")
        if not kind.variant:
            continue
        # The values that take the same keys share a row.
        by_keys: dict[str, list[str]] = {}
        for value in kind.choices[kind.variant].values:
            by_keys.setdefault(_integers(kind.integers[value]), []).append(f"`{value}`")
        for integers, values in by_keys.items():
            rows.append(f"| `{kind.name}`, {kind.variant} {', '.join(values)} | | {integers} |")
    return rows


def stack_cases() -> list[str]:
    return [f'FRONT_KINDS = tuple("{" ".join(REGISTRY)}".split())']


def wanted(root: Path) -> dict[str, str]:
    docs = "docs/experiment.md"
    cases = "tests/unit/stack_cases.py"
    handlers = "roles/apache/meta/argument_specs.yml"
    return {
        SCHEMA: schema(read(root, SCHEMA)),
        handlers: replace_block(
            read(root, handlers), handlers, BLOCK, yaml_lines(list(HANDLER_MODULES)), SOURCE
        ),
        docs: replace_block(read(root, docs), docs, BLOCK, docs_table(), SOURCE),
        cases: replace_block(read(root, cases), cases, BLOCK, stack_cases(), SOURCE),
    }
