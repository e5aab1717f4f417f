"""The files derived from the app kinds (benchstack.kinds.apps.REGISTRY): the experiment schema's ``app.kind``
and ``runtime.kind``, the webapp role's bundled kinds, the docs table of the app kinds and the golden matrix's
app kinds, written from each kind's module (docs/adding-a-kind.md)."""

from __future__ import annotations

import json
from pathlib import Path

from benchstack.kinds.apps import BUNDLED_KINDS, REGISTRY, AppKind, EmbeddedApp
from scripts.kindfiles.blocks import json_text, read, replace_block, yaml_lines
from scripts.kindfiles.servers import SCHEMA, one_of

BLOCK = "app-kinds"
SOURCE = "benchstack.kinds.apps"


def schema(text: str) -> str:
    data = json.loads(text)
    stack = data["$defs"]["stack"]["properties"]
    one_of(stack["app"], list(REGISTRY))
    one_of(stack["runtime"], sorted({app.runtime for app in REGISTRY.values()}), required=False)
    return json_text(data)


def _holds(kind: AppKind) -> str:
    return " ".join(filter(None, [f"`{kind.entry}`" if kind.entry else "—", kind.entry_note]))


def _served_by(kind: AppKind) -> str:
    fronts = " or ".join(f"`{front}`" for front in kind.fronts)
    if kind.front_only:
        inside = f" ({kind.module})" if isinstance(kind, EmbeddedApp) else ""
        return f"its front: {fronts}{inside}"
    article = "an" if str(kind.interface)[:1] in "aeiou" else "a"
    server = f"{article} `{kind.interface}` server"
    return f"{server}, or without one front {fronts} (`{kind.apache_handler}`)" if fronts else server


def docs_table() -> list[str]:
    holds = "what a user app folder (`app: {kind: K, dir: /abs/path}`) must hold"
    rows = [f"| app kind (runtime) | {holds} | served by |", "|---|---|---|"]
    rows += [f"| `{k.name}` ({k.runtime}) | {_holds(k)} | {_served_by(k)} |" for k in REGISTRY.values()]
    return rows


def stack_cases() -> list[str]:
    line = f'APPS = tuple("{" ".join(REGISTRY)}".split())'
    if len(line) <= 110:
        return [line]
    return ["APPS = (", *(f'    "{name}",' for name in REGISTRY), ")"]


def wanted(root: Path) -> dict[str, str]:
    docs = "docs/experiment.md"
    cases = "tests/unit/stack_cases.py"
    spec = "roles/webapp/meta/argument_specs.yml"
    return {
        SCHEMA: schema(read(root, SCHEMA)),
        spec: replace_block(read(root, spec), spec, BLOCK, yaml_lines(list(BUNDLED_KINDS)), SOURCE),
        docs: replace_block(read(root, docs), docs, BLOCK, docs_table(), SOURCE),
        cases: replace_block(read(root, cases), cases, BLOCK, stack_cases(), SOURCE),
    }
