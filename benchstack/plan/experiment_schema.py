"""The published experiment schema (``benchstack/schemas/experiment.schema.json``) and its messages.

:func:`benchstack.plan.experiment.validate_experiment` checks an experiment mapping against the schema first
(types, ranges, enums, unknown fields, every one at once) and then, in Python, only the rules across fields
that a schema does not state (a server that cannot serve its app, a port used twice, a tool's own fields).
Editors read the same file (docs/experiment.md), so what an editor flags and what bench-stack refuses agree.

One line per problem, named like the Python checks name theirs: ``load.plans[1].duration_s: ...``,
``stack 'web': server.workers: ...`` (``stacks[2]: ...`` for a stack without a usable name). The text after
the field is the schema's ``errorMessage`` for the keyword that failed, followed by the value found unless
the message places it itself (``{value}``; ``{length}``, a string's length; ``{twice}``, the values a list
holds twice).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from benchstack.common.inputs import shown, shown_key
from benchstack.results.formats import Path_, Problem, first_error_validator, load_schema

EXPERIMENT_SCHEMA_FILE = "experiment.schema.json"
# Unknown fields listed by name per mapping; past these, counted. A file that is not an experiment has many.
MAX_UNKNOWN_LISTED = 5
TOP_ORDER = ("name", "description", "stacks", "load", "logs")


@dataclass(frozen=True)
class SchemaProblem(Problem):
    """A problem the schema found: where it is (keys and list indices) and its message."""

    @property
    def stack(self) -> int | None:
        """The index of the stack the problem is in, None when it is in none."""
        if len(self.path) >= 2 and self.path[0] == "stacks" and isinstance(self.path[1], int):
            return self.path[1]
        return None


def experiment_schema() -> dict[str, Any]:
    """The published experiment schema, parsed (a new copy each time)."""
    return load_schema(EXPERIMENT_SCHEMA_FILE)


def stack_prefix(data: dict[str, Any], index: int) -> str:
    """How messages name stack ``index``: ``stack 'NAME'``, or ``stacks[2]`` without a usable name."""
    stacks = data.get("stacks")
    stack = stacks[index] if isinstance(stacks, list) and index < len(stacks) else None
    name = stack.get("name") if isinstance(stack, dict) else None
    return f"stack {shown(name)}" if isinstance(name, str) else f"stacks[{index}]"


def _dotted(path: Path_) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{shown_key(part)}" if text else shown_key(part))
    return text


def _where(data: dict[str, Any], path: Path_) -> tuple[str, str]:
    """(prefix naming the stack, with ': ', or ''; the field's path within it)."""
    if len(path) >= 2 and path[0] == "stacks" and isinstance(path[1], int):
        return f"{stack_prefix(data, path[1])}: ", _dotted(path[2:])
    return "", _dotted(path)


def _message(schema: object, keyword: str) -> Any:
    """The schema's errorMessage for ``keyword``: the one string, or the entry of its mapping."""
    message = schema.get("errorMessage") if isinstance(schema, dict) else None
    return message.get(keyword) if isinstance(message, dict) else message


def _twice(items: object) -> object:
    """The values a list holds more than once, sorted (the list itself when they cannot be counted)."""
    try:
        return sorted(k for k, n in Counter(items).items() if n > 1)  # type: ignore[call-overload]
    except TypeError:
        return items


def _line(prefix: str, field: str, text: str) -> str:
    if field:
        return f"{prefix}{field}: {text}"
    return f"{prefix.removesuffix(': ')}: {text}" if prefix else text


def schema_problems(data: dict[str, Any]) -> list[SchemaProblem]:
    """Every problem of the experiment mapping ``data`` against the published schema, in the order of its
    fields (name, description, stacks in order, load)."""
    found: list[SchemaProblem] = []
    for error in first_error_validator(EXPERIMENT_SCHEMA_FILE).iter_errors(data):
        path: Path_ = tuple(error.absolute_path)
        prefix, field = _where(data, path)
        instance, keyword = error.instance, str(error.validator)
        if keyword == "required" and isinstance(instance, dict):
            given = _message(error.schema, "required")
            for key in (k for k in error.validator_value if k not in instance):
                text = given.get(key) if isinstance(given, dict) else given
                where = f"{field}.{key}" if field else key
                found.append(SchemaProblem((*path, key), _line(prefix, where, text or "missing")))
        elif keyword == "additionalProperties" and error.validator_value is False:
            allowed = ", ".join(sorted(error.schema.get("properties", {})))
            what = _message(error.schema, "additionalProperties") or "unknown field"
            known = set(error.schema.get("properties", {}))
            unknown = sorted((k for k in instance if k not in known), key=str)
            for key in unknown[:MAX_UNKNOWN_LISTED]:
                where = f"{field}.{shown_key(key)}" if field else shown_key(key)
                found.append(
                    SchemaProblem((*path, key), _line(prefix, where, f"{what} (allowed: {allowed})"))
                )
            if len(unknown) > MAX_UNKNOWN_LISTED:
                more = f"{len(unknown) - MAX_UNKNOWN_LISTED} more unknown fields"
                found.append(
                    SchemaProblem(path, _line(prefix, field or ("" if prefix else "the experiment"), more))
                )
        else:
            text = _message(error.schema, keyword) or error.message
            if "{value}" in text or "{length}" in text or "{twice}" in text:
                length = f"{len(instance):_}" if hasattr(instance, "__len__") else "?"
                text = text.replace("{value}", shown(instance)).replace("{length}", length)
                text = text.replace("{twice}", shown(_twice(instance)))
            else:
                text = f"{text}, not {shown(instance)}"
            found.append(SchemaProblem(path, _line(prefix, field, text)))
    unique: dict[str, SchemaProblem] = {}
    for problem in found:
        unique.setdefault(problem.message, problem)

    def order(problem: SchemaProblem) -> tuple[int, int]:
        top = problem.path[0] if problem.path else None
        rank = TOP_ORDER.index(top) if top in TOP_ORDER else -1
        return rank, problem.stack or 0

    return sorted(unique.values(), key=order)
