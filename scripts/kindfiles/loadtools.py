"""The load tools' parts of the files that name every tool, from the adapters' registry
(:mod:`benchstack.kinds.loadtools`): the schemas' tool enums and messages, the cell schema's distribution
rule per source, the loadgen role's packages per OS family and choices, the host fingerprint's packages and
the plan table of docs/experiment.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchstack.kinds.loadtools import REGISTRY, TOOLS
from benchstack.kinds.loadtools.base import PLAN_FIELDS
from scripts.kindfiles.blocks import json_text, read, replace_block
from scripts.kindfiles.textedit import get, put, replace_json, walk

BLOCK = "kind_files loadtools"
SOURCE = "benchstack.kinds.loadtools"
FAMILIES = ("Debian", "RedHat", "Amazon")
SCHEMAS = (
    "benchstack/schemas/experiment.schema.json",
    "benchstack/schemas/cell.schema.json",
    "benchstack/schemas/run.schema.json",
)
DIST = "/$defs/latency_dist"
EXPERIMENT_SCHEMA = SCHEMAS[0]


def one_of() -> str:
    return f"must be one of {', '.join(TOOLS)}"


def tool_description() -> str:
    return "The load tool: " + "; ".join(f"{t.name}: {t.summary}" for t in REGISTRY.values()) + "."


def schema_values(document: Any) -> dict[str, Any]:
    """Pointer -> wanted value for every tool part of a schema: each ``tool`` property's enum and message,
    a plan's ``tool`` description, the messages for a missing ``tool``."""
    values: dict[str, Any] = {}

    def visit(pointer: str, node: Any) -> None:
        if not isinstance(node, dict):
            return
        tool = node.get("tool")
        if isinstance(tool, dict) and "enum" in tool:
            values[f"{pointer}/tool/enum"] = list(TOOLS)
            if isinstance(tool.get("errorMessage"), str):
                values[f"{pointer}/tool/errorMessage"] = one_of()
            if str(tool.get("description", "")).startswith("The load tool:"):
                values[f"{pointer}/tool/description"] = tool_description()
        message = node.get("errorMessage")
        if isinstance(message, dict) and isinstance(message.get("required"), dict):
            if "tool" in message["required"]:
                values[f"{pointer}/errorMessage/required/tool"] = one_of()

    walk(document, visit)
    return values


def distribution_values(document: Any) -> dict[str, Any]:
    """The cell schema's ``latency_dist``: its sources and each source's unit, bits and correction."""
    get(document, DIST)  # KeyError when the schema moved it
    rules = []
    for tool in REGISTRY.values():
        r = tool.resolution
        fixed = {"unit_us": r.unit_us, "significant_bits": r.bits, "corrected": r.corrected}
        rules.append(
            {
                "if": {"properties": {"source": {"const": tool.name}}, "required": ["source"]},
                "then": {
                    "properties": {
                        key: {"const": value, "errorMessage": f"must be {json.dumps(value)} for {tool.name}"}
                        for key, value in fixed.items()
                    }
                },
            }
        )
    return {
        f"{DIST}/properties/source": {"enum": list(TOOLS), "errorMessage": one_of()},
        f"{DIST}/allOf": rules,
    }


def flow(items: list[str] | None) -> str:
    return "null" if items is None else "[" + ", ".join(items) + "]"


def loadgen_vars(family: str) -> list[str]:
    lines = ["__loadgen_packages:"]
    for name, tool in REGISTRY.items():
        packages = tool.packages[family]
        lines.append(f"  {name}: {flow(None if packages is None else list(packages))}")
    return lines


def fingerprint_packages() -> list[str]:
    seen: list[str] = []
    for tool in REGISTRY.values():
        for family in FAMILIES:
            seen += [p for p in tool.packages[family] or () if p not in seen]
    return [f"- {p}" for p in seen]


def plan_table() -> list[str]:
    names = list(TOOLS)
    rows = [
        "| field | " + " | ".join(names) + " |",
        "|---" * (len(names) + 1) + "|",
        "| `tool` | " + " | ".join(f"`{n}`" for n in names) + " |",
    ]
    for field in PLAN_FIELDS:
        rows.append(f"| `{field}` | " + " | ".join(REGISTRY[n].plan_docs[field] for n in names) + " |")
    return rows


def wanted(root: Path) -> dict[str, str]:
    """Project-relative path -> the file's whole wanted text."""
    out: dict[str, str] = {}
    for path in SCHEMAS:
        text = (root / path).read_text(encoding="utf-8")
        document = json.loads(text)
        values = schema_values(document)
        if path.endswith("cell.schema.json"):
            values |= distribution_values(document)
        if path == EXPERIMENT_SCHEMA:
            # The servers' section writes this one whole (blocks.json_text): the same layout, or the two
            # sections would undo each other's.
            for pointer, value in values.items():
                put(document, pointer, value)
            out[path] = json_text(document)
        else:
            out[path] = replace_json(text, values)
    blocks = {f"roles/loadgen/vars/{family}.yml": loadgen_vars(family) for family in FAMILIES}
    blocks["roles/loadgen/meta/argument_specs.yml"] = [f"choices: {flow(list(TOOLS))}"]
    blocks["roles/host/defaults/main.yml"] = fingerprint_packages()
    blocks["docs/experiment.md"] = plan_table()
    for path, lines in blocks.items():
        out[path] = replace_block(read(root, path), path, BLOCK, lines, SOURCE)
    return out
