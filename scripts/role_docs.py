#!/usr/bin/env python3
"""Generate each role's README.md from its meta/argument_specs.yml and defaults/main.yml.

Where each fact comes from:
- meta/argument_specs.yml says which variables a role takes (every entry point), their type, choices,
  whether they are required, and what they mean: the descriptions are the role's documentation.
- defaults/main.yml holds the default values. Ansible applies role defaults; a ``default:`` in
  argument_specs is never applied (it only documents), so the README shows defaults/main.yml's value.
  A variable without one there shows its per-OS value (``__NAME`` in vars/<OS>.yml, or in its
  os_family's file when the OS has none, as the roles' first_found reads them), else "required" or "unset".

So they cannot drift, these are errors (the check fails, and nothing is written):
- a variable in defaults/main.yml that no entry point of argument_specs documents;
- an argument_specs ``default:`` that differs from defaults/main.yml's value, or that defaults/main.yml
  lacks (Ansible would never apply it);
- a comment in defaults/main.yml longer than MAX_COMMENT_LINES lines (explanations go into the
  argument_specs description, which feeds the README).

``python scripts/role_docs.py`` writes the READMEs; ``--check`` writes nothing and exits 1 when a README
is missing or out of date, or on any error above (``./run lint`` runs it).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
MAX_COMMENT_LINES = 2
# The systems a README names -> their Ansible os_family, whose vars file serves them when they have none.
OS_VARS = {"Debian": "Debian", "RedHat": "RedHat", "Amazon": "RedHat"}
GENERATOR = "scripts/role_docs.py"
_MARKUP = {"C": "`{}`", "I": "*{}*", "B": "**{}**", "O": "`{}`", "V": "`{}`", "U": "{}"}
_MARKUP_RE = re.compile(r"\b([CIBOVU])\(([^()]*(?:\([^()]*\)[^()]*)*)\)")


class RoleDocError(ValueError):
    """A role's argument_specs and defaults disagree; ``problems`` lists every disagreement."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass
class Variable:
    name: str
    spec: dict[str, Any]
    entry_points: list[str] = field(default_factory=list)


@dataclass
class Role:
    name: str
    description: str
    entry_points: dict[str, dict[str, Any]]
    defaults: dict[str, Any]
    per_os: dict[str, dict[str, Any]]
    defaults_text: str
    tags: list[str] = field(default_factory=list)


def task_tags(tasks_dir: Path) -> list[str]:
    """Every tag the role's task files give (tests/unit/roles/test_role_tags.py proves each task carries
    them)."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            tags = node.get("tags")
            found.update([tags] if isinstance(tags, str) else tags if isinstance(tags, list) else [])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in sorted(tasks_dir.glob("*.yml")):
        walk(_yaml_file(path))
    return sorted(found - {"always", "never"})


# libyaml's safe loader where PyYAML has it: yaml.safe_load's reading of the roles' ~220 files, in a fifth
# of the time.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml_file(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER) if path.is_file() else None


def _os_vars(vars_dir: Path, os_name: str, family: str) -> dict[str, Any]:
    own = vars_dir / f"{os_name}.yml"
    return _yaml_file(own if own.is_file() else vars_dir / f"{family}.yml") or {}


def load_role(path: Path) -> Role:
    specs = (_yaml_file(path / "meta" / "argument_specs.yml") or {}).get("argument_specs") or {}
    meta = (_yaml_file(path / "meta" / "main.yml") or {}).get("galaxy_info") or {}
    defaults_path = path / "defaults" / "main.yml"
    per_os = {os_name: _os_vars(path / "vars", os_name, family) for os_name, family in OS_VARS.items()}
    return Role(
        name=path.name,
        description=str(meta.get("description", "")),
        entry_points=specs,
        defaults=_yaml_file(defaults_path) or {},
        per_os=per_os,
        defaults_text=defaults_path.read_text(encoding="utf-8") if defaults_path.is_file() else "",
        tags=task_tags(path / "tasks"),
    )


def variables(role: Role) -> list[Variable]:
    """Every variable once, in argument_specs order (main first), with the entry points that take it."""
    order = sorted(role.entry_points, key=lambda e: (e != "main", list(role.entry_points).index(e)))
    seen: dict[str, Variable] = {}
    for entry in order:
        for name, spec in (role.entry_points[entry].get("options") or {}).items():
            seen.setdefault(name, Variable(name, spec or {})).entry_points.append(entry)
    return list(seen.values())


def problems(role: Role) -> list[str]:
    """Every way the role's argument_specs and defaults/main.yml disagree (see the module docstring)."""
    found: list[str] = []
    where = f"roles/{role.name}"
    documented = {v.name: v for v in variables(role)}
    for name in role.defaults:
        if name not in documented:
            found.append(f"{where}: {name} is in defaults/main.yml but in no entry point of argument_specs")
    for var in documented.values():
        if "default" not in var.spec:
            continue
        if var.name not in role.defaults:
            found.append(
                f"{where}: {var.name} has a default in argument_specs only; Ansible never applies it: "
                "put it in defaults/main.yml"
            )
        elif var.spec["default"] != role.defaults[var.name]:
            found.append(
                f"{where}: {var.name}: argument_specs says default {var.spec['default']!r}, "
                f"defaults/main.yml has {role.defaults[var.name]!r} (the value the role runs with); "
                "make them equal, or drop the argument_specs default and describe the value"
            )
    block: list[int] = []
    for number, line in enumerate([*role.defaults_text.splitlines(), ""], start=1):
        if line.lstrip().startswith("#"):
            block.append(number)
            continue
        if len(block) > MAX_COMMENT_LINES:
            found.append(
                f"{where}/defaults/main.yml:{block[0]}: a {len(block)}-line comment; keep defaults' comments "
                f"to {MAX_COMMENT_LINES} lines and explain in the argument_specs description"
            )
        block = []
    return found


def markup(text: str) -> str:
    """Ansible's documentation markup (C(), I(), B(), ...) as Markdown."""
    return _MARKUP_RE.sub(lambda m: _MARKUP[m.group(1)].format(m.group(2)), text)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _nested(spec: dict[str, Any]) -> bool:
    """Sub-options with sub-options of their own (a stack): listed under the table, not in its cell."""
    return any((sub or {}).get("options") for sub in (spec.get("options") or {}).values())


def _description(spec: dict[str, Any], keys: bool = True) -> str:
    desc = spec.get("description", "")
    text = " ".join(desc) if isinstance(desc, list) else str(desc)
    if spec.get("choices"):
        text += " One of: " + ", ".join(f"`{c}`" for c in spec["choices"]) + "."
    if spec.get("options") and keys and _nested(spec):
        text += " Keys: listed below the table."
    elif spec.get("options") and keys:
        described = [
            f"`{key}` ({_type(sub)}{', required' if sub.get('required') else ''}): "
            + _description(sub).rstrip(".")
            for key, sub in spec["options"].items()
        ]
        text += " Keys: " + "; ".join(described) + "."
    return markup(text)


def _type(spec: dict[str, Any]) -> str:
    kind = str(spec.get("type", "str"))
    return f"{kind} of {spec['elements']}" if kind == "list" and "elements" in spec else kind


def show(value: Any) -> str:
    """A value as it would be written in YAML, on one line, in backticks."""
    if isinstance(value, str):
        text = value if value and value.strip() == value and "\n" not in value else repr(value)
        text = text if value else '""'
    else:
        text = yaml.safe_dump(value, default_flow_style=True, width=10**6, sort_keys=False).strip()
        text = text.removesuffix("...").strip()
    return f"`{text}`"


def default_of(role: Role, var: Variable) -> str:
    if var.name in role.defaults:
        return show(role.defaults[var.name])
    by_value: dict[str, list[str]] = {}
    for os_name, values in role.per_os.items():
        if f"__{var.name}" in values:
            by_value.setdefault(show(values[f"__{var.name}"]), []).append(os_name)
    if by_value:
        return "per OS: " + "; ".join(f"{v} ({', '.join(oses)})" for v, oses in by_value.items())
    return "required" if var.spec.get("required") else "unset"


def _key_lines(options: dict[str, Any], depth: int = 0) -> list[str]:
    """A nested list of the keys, one line each: name, type, required, description."""
    out: list[str] = []
    for key, sub in options.items():
        sub = sub or {}
        required = ", required" if sub.get("required") else ""
        text = " ".join(_description(sub, keys=False).split())
        out.append(f"{'  ' * depth}- `{key}` ({_type(sub)}{required}): {text}")
        out += _key_lines(sub.get("options") or {}, depth + 1)
    return out


def _row(role: Role, var: Variable) -> str:
    cells = [f"`{var.name}`", _type(var.spec), default_of(role, var), _description(var.spec)]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _entry_text(spec: dict[str, Any]) -> str:
    short = str(spec.get("short_description", "")).strip().rstrip(".")
    desc = spec.get("description") or []
    parts = ([short + "."] if short else []) + (desc if isinstance(desc, list) else [str(desc)])
    return markup(" ".join(" ".join(parts).split()))


def render(role: Role) -> str:
    """The role's README.md; raises RoleDocError when argument_specs and defaults disagree."""
    found = problems(role)
    if found:
        raise RoleDocError(found)
    out = [
        f"# Role `{role.name}`",
        "",
        f"<!-- Generated by {GENERATOR} from meta/argument_specs.yml (variables, types, descriptions)",
        "     and defaults/main.yml (default values). Edit those and rerun it; ./run lint fails when this",
        "     file is out of date. -->",
        "",
    ]
    if role.description:
        out += [role.description.rstrip(".") + ".", ""]
    if role.tags:
        out += [f"Tags (`--tags`, `--skip-tags`): {', '.join(f'`{t}`' for t in role.tags)}.", ""]
    all_vars = variables(role)
    several = len(role.entry_points) > 1
    for entry, spec in sorted(role.entry_points.items(), key=lambda e: e[0] != "main"):
        out += [f"## Entry point `{entry}`" if several else "## Variables", ""]
        out += [_entry_text(spec), ""] if _entry_text(spec) else []
        if entry != "main":
            out += [f"Include it with `tasks_from: {entry}`.", ""]
        takes = [v for v in all_vars if entry in v.entry_points]
        own = [v for v in takes if v.entry_points[0] == entry]
        shared = [v.name for v in takes if v.entry_points[0] != entry]
        if shared and not own and shared == [v.name for v in all_vars if v.entry_points[0] == "main"]:
            out += ["Takes the same variables as `main`.", ""]
        elif shared:
            out += [f"Also takes {', '.join(f'`{n}`' for n in shared)}, described above.", ""]
        if own:
            out += ["| variable | type | default | description |", "|---|---|---|---|"]
            out += [_row(role, v) for v in own] + [""]
            for var in (v for v in own if _nested(v.spec)):
                out += [f"Keys of `{var.name}`:", "", *_key_lines(var.spec["options"]), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def role_dirs(roles_dir: Path) -> list[Path]:
    return sorted(p for p in roles_dir.iterdir() if (p / "meta" / "argument_specs.yml").is_file())


def run(roles_dir: Path, check: bool) -> list[str]:
    """Write (or, with ``check``, compare) every role's README; the problems found, empty when all is well."""
    found: list[str] = []
    for path in role_dirs(roles_dir):
        try:
            text = render(load_role(path))
        except RoleDocError as exc:
            found += exc.problems
            continue
        readme = path / "README.md"
        current = readme.read_text(encoding="utf-8") if readme.is_file() else None
        if current == text:
            continue
        if check:
            state = "missing" if current is None else "out of date"
            found.append(f"roles/{path.name}/README.md is {state}: run python {GENERATOR}")
        else:
            readme.write_text(text, encoding="utf-8")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; fail when a README is stale")
    parser.add_argument("--roles-dir", type=Path, default=ROOT / "roles")
    args = parser.parse_args(argv)
    found = run(args.roles_dir, args.check)
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
