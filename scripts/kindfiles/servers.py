"""The files derived from the app server kinds (benchstack.kinds.servers.REGISTRY): what the experiment
schema, the roles and the docs say of each kind, written from the kind's module (docs/adding-a-kind.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchstack.kinds.servers import BINDS, REGISTRY, ServerKind
from scripts.kindfiles.blocks import json_text, read, replace_block, yaml_lines

BLOCK = "server-kinds"
SOURCE = "benchstack.kinds.servers"
SCHEMA = "benchstack/schemas/experiment.schema.json"
PROTOCOLS = {"fastcgi": "FastCGI"}
# What a kind installs -> the runtime role whose vars/<family>.yml maps it to a package (__ruby_gem_packages,
# __perl_module_packages).
RUNTIME_PACKAGES = {"gems": "ruby", "perl": "perl"}


def kinds() -> list[ServerKind]:
    return list(REGISTRY.values())


def unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


# ---------------------------------------------------------------- the experiment schema


def one_of(node: dict[str, Any], names: list[str], required: bool = True) -> None:
    """``node``'s ``kind``: its enum and the messages that list it."""
    message = f"must be one of {', '.join(names)}"
    if required:
        node["errorMessage"]["required"]["kind"] = message
    node["properties"]["kind"]["enum"] = names
    node["properties"]["kind"]["errorMessage"] = message


def _shown(value: object) -> str:
    return "unset" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _option(kind: ServerKind, option: str) -> dict[str, Any]:
    typ, low, high, default = kind.options[option]
    description = f"{kind.name} option (default {_shown(default)})"
    if typ is bool:
        return {"description": description, "type": "boolean", "errorMessage": "must be true or false"}
    if typ is not int:
        raise TypeError(f"{kind.name}.{option}: the schema knows int and bool options, not {typ.__name__}")
    return {
        "description": description,
        "type": "integer",
        "minimum": low,
        "maximum": high,
        "errorMessage": f"must be an integer from {low} to {high}",
    }


def _branch(kind: ServerKind) -> dict[str, Any]:
    bind: object = True
    if kind.binds != BINDS:
        only = f"{kind.name} listens on {' and '.join(kind.binds)} only"
        bind = {"enum": list(kind.binds), "errorMessage": only}
    properties = {"kind": True, "instances": True, "bind": bind, "port_base": True}
    properties |= {option: _option(kind, option) for option in kind.options}
    return {
        "if": {"properties": {"kind": {"const": kind.name}}, "required": ["kind"]},
        "then": {
            "properties": properties,
            "additionalProperties": False,
            "errorMessage": {"additionalProperties": f"unknown option of {kind.name}"},
        },
    }


def schema(text: str) -> str:
    data = json.loads(text)
    stack = data["$defs"]["stack"]["properties"]
    one_of(stack["server"], list(REGISTRY))
    stack["server"]["allOf"] = [_branch(kind) for kind in kinds()]
    return json_text(data)


# ---------------------------------------------------------------- the roles


def agreed(pairs: list[tuple[str, str, str]], what: str) -> dict[str, str]:
    """{name: value} from (kind, name, value), in order; ValueError when two kinds say different values."""
    found: dict[str, tuple[str, str]] = {}
    for kind, name, value in pairs:
        if name in found and found[name][1] != value:
            raise ValueError(f"{what} {name}: {found[name][0]} says {found[name][1]}, {kind} says {value}")
        found.setdefault(name, (kind, value))
    return {name: value for name, (_kind, value) in found.items()}


def runtime_packages(root: Path) -> dict[str, str]:
    """roles/<runtime>/vars/<family>.yml: each gem's or Perl distribution's package, for each family a kind
    names one for."""
    files: dict[str, str] = {}
    families = unique([family for kind in kinds() for family in kind.packages])
    for attribute, role in RUNTIME_PACKAGES.items():
        for family in families:
            pairs = [
                (kind.name, name, package)
                for kind in kinds()
                for name, package in kind.packages.get(family, {}).items()
                if name in getattr(kind, attribute)
            ]
            if pairs:
                path = f"roles/{role}/vars/{family}.yml"
                entries = agreed(pairs, f"{family} package of")
                files[path] = replace_block(read(root, path), path, BLOCK, yaml_lines(entries), SOURCE)
    return files


def pins() -> list[str]:
    """python_constraints: every kind's pins, one version per package."""
    pairs = [
        (kind.name, name, version)
        for kind in kinds()
        for name, version in (pin.split("==", 1) for pin in kind.pins)
    ]
    return [f"{name}=={version}" for name, version in agreed(pairs, "pin of").items()]


def fingerprint() -> list[str]:
    """The packages whose versions the host fingerprint records for the server kinds."""
    return unique(
        [p for kind in kinds() for family in kind.packages.values() for p in family.values()]
        + [p for kind in kinds() for p in kind.fingerprint]
    )


def roles(root: Path) -> dict[str, str]:
    lists = {
        "roles/app_server/meta/argument_specs.yml": list(REGISTRY),
        "roles/ruby/vars/main.yml": unique([g for kind in kinds() for g in kind.native_gems]),
        "roles/python/defaults/main.yml": pins(),
        "roles/python/meta/argument_specs.yml": pins(),
        "roles/host/defaults/main.yml": fingerprint(),
    }
    files = {
        path: replace_block(read(root, path), path, BLOCK, yaml_lines(items), SOURCE)
        for path, items in lists.items()
    }
    return files | runtime_packages(root)


# ---------------------------------------------------------------- docs and tests


def _bounds(low: object, high: object) -> str:
    return f"{low:,}-{high:,}" if isinstance(low, int) and isinstance(high, int) else ""


def _options(kind: ServerKind) -> str:
    cells = []
    for option, (typ, low, high, default) in kind.options.items():
        notes = [] if typ is bool else [_bounds(low, high)]
        notes += [kind.option_notes[option]] if option in kind.option_notes else []
        cells.append(f"`{option}` {_shown(default)}" + (f" ({'; '.join(notes)})" if notes else ""))
    return ", ".join(cells) or "—"


def docs_table() -> list[str]:
    rows = [
        "| server kind | serves (runtime) | binds | options: default (bounds) | front keeps idle conns |",
        "|---|---|---|---|---|",
    ]
    for kind in kinds():
        speaks = "" if kind.protocol == "http" else f", over {PROTOCOLS[kind.protocol]} (needs a front)"
        rows.append(
            f"| `{kind.name}` | `{kind.interface}` apps ({kind.runtime}){speaks} | {', '.join(kind.binds)} |"
            f" {_options(kind)} | {'yes' if kind.upstream_keepalive else 'no'} |"
        )
    return rows


def stack_cases() -> list[str]:
    line = f'SERVERS = tuple("{" ".join(REGISTRY)}".split())'
    if len(line) <= 110:
        return [line]
    return ["SERVERS = (", *(f'    "{name}",' for name in REGISTRY), ")"]


def wanted(root: Path) -> dict[str, str]:
    docs = "docs/experiment.md"
    cases = "tests/unit/stack_cases.py"
    return {
        SCHEMA: schema(read(root, SCHEMA)),
        **roles(root),
        docs: replace_block(read(root, docs), docs, BLOCK, docs_table(), SOURCE),
        cases: replace_block(read(root, cases), cases, BLOCK, stack_cases(), SOURCE),
    }
