"""The published results format: JSON Schemas for a cell and for run.json, and the one checker that uses them.

The schemas are package data, ``benchstack/schemas/cell.schema.json`` (``bench-stack/cell/v2``, reading
v1) and ``run.schema.json`` (``bench-stack/run/v6``, reading v1 to v5), JSON Schema draft 2020-12,
documented field by field in docs/results-format.md. :func:`benchstack.results.cell.validate_cell` and
:func:`validate_run_info` check a document against its schema first and add only what a schema cannot say
(rules across fields), so the published files and the code cannot drift apart.

Beyond JSON Schema, this checker refuses two things Python's json module reads but the format never holds: an
integer written with a fraction (``2.0`` where an integer is due; JSON Schema counts it as an integer) and
NaN or Infinity (not JSON at all).

One message per problem, naming the field by its path (``latency_ms.p99``, ``merged.loadgens``,
``notes[2]``): the schema's ``errorMessage`` for the part that failed, then the value found. Missing and
unexpected keys are listed together per object; a problem repeated down a long list is told once, with a
count.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, validators

from benchstack.results.layout import RUN_INFO

CELL_SCHEMA_FILE = "cell.schema.json"
RUN_SCHEMA_FILE = "run.schema.json"
RUN_SCHEMA = "bench-stack/run/v6"
# Longest value quoted in a message (a whole latency distribution would fill a screen).
SHOWN_CHARS = 60

Path_ = tuple[str | int, ...]


def _is_integer(_checker: object, value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(_checker: object, value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


TYPES = Draft202012Validator.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_number})

# Keywords a long list's items may use and still be checked by a plain Python predicate (_quick), and each
# type's test there: exact types, as json.loads makes them (a subclass fails the test and goes to jsonschema).
_QUICK_KEYWORDS = {"type", "minimum", "maximum", "prefixItems", "minItems", "maxItems", "errorMessage"}
QUICK_TYPES: dict[str, tuple[type, ...]] = {
    "integer": (int,),
    "number": (int, float),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "array": (list,),
    "object": (dict,),
}


@dataclass(frozen=True)
class _Quick:
    """What a schema of :data:`_QUICK_KEYWORDS` demands, for :func:`_holds`."""

    exact: frozenset[type]
    low: float
    high: float
    fewest: float
    most: float
    prefix: tuple[_Quick, ...]


def _quick(schema: object) -> _Quick | None:
    """The demands of ``schema`` when it uses only :data:`_QUICK_KEYWORDS` (a distribution's
    ``[value_us, count]`` pair), else None."""
    if not isinstance(schema, dict) or set(schema) - _QUICK_KEYWORDS:
        return None
    prefix = [_quick(s) for s in schema.get("prefixItems", [])]
    if any(p is None for p in prefix):
        return None
    kinds = schema.get("type")
    return _Quick(
        exact=frozenset(
            t for k in ([kinds] if isinstance(kinds, str) else kinds or []) for t in QUICK_TYPES[k]
        ),
        low=schema.get("minimum", -math.inf),
        high=schema.get("maximum", math.inf),
        fewest=schema.get("minItems", 0),
        most=schema.get("maxItems", math.inf),
        prefix=tuple(p for p in prefix if p is not None),
    )


def _holds(q: _Quick, value: Any) -> bool:
    """True only when the schema holds for ``value``; False may be wrong (a subclass, a bool out of bounds):
    jsonschema then decides."""
    kind = type(value)
    if q.exact and kind not in q.exact:
        return False
    if kind is int:
        return bool(q.low <= value <= q.high)
    if kind is float:
        return math.isfinite(value) and q.low <= value <= q.high
    if kind is list:
        if not q.fewest <= len(value) <= q.most:
            return False
        for sub, item in zip(q.prefix, value, strict=False):
            # An integer inline: a pair's two numbers cost no call each.
            if type(item) is int and (not sub.exact or int in sub.exact):
                if not sub.low <= item <= sub.high:
                    return False
            elif not _holds(sub, item):
                return False
    return True


_plain_items = Draft202012Validator.VALIDATORS["items"]
# id(items schema) -> (that schema, its _Quick): the schema kept so its id cannot be reused by another.
_quick_items: dict[int, tuple[Any, _Quick | None]] = {}


def _items(validator: Any, items: Any, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
    """``items``, with a fast path: jsonschema takes ~60 µs a pair for a distribution's 2,000 pairs, a
    predicate ~1 µs. Only when an item fails does jsonschema look again, for its exact errors."""
    if validator.is_type(instance, "array"):
        if id(items) not in _quick_items:
            _quick_items[id(items)] = (items, _quick(items))
        quick = _quick_items[id(items)][1]
        rest = instance[len(schema.get("prefixItems", [])) :]
        if quick is not None and all(_holds(quick, v) for v in rest):
            return
    yield from _plain_items(validator, items, instance, schema)


_plain_ref = Draft202012Validator.VALIDATORS["$ref"]
# What ``$ref`` found valid: (id of the schema holding the $ref, sha256 of the value's repr). The schemas are
# kept (by id) so an id cannot be reused by another; the set is emptied when it reaches _VALID_REFS_MAX.
_valid_refs: set[tuple[int, bytes]] = set()
_ref_schemas: dict[int, Any] = {}
_VALID_REFS_MAX = 100_000


def _ref(validator: Any, ref: str, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
    """``$ref``, remembering the values it found valid: a document checked again (a cell written, then
    read back), or one that differs from another in one place (an experiment and its variants), skips the
    parts found valid before. A part's validity depends on nothing but its schema and its value (the schemas
    use no $dynamicRef or unevaluated keywords), and a value as JSON and YAML readers make it is told by its
    repr (1, 1.0, True and '1' apart; a tuple from a list): only the time changes."""
    yield from _remembered(schema, instance, _plain_ref(validator, ref, instance, schema))


def _remembered(schema: Any, instance: Any, errors: Iterator[Any]) -> Iterator[Any]:
    """``errors`` (the lazy check of ``instance`` against ``schema``), skipped when that value was found
    valid against that schema before, and remembered when it yields none."""
    key = (id(schema), hashlib.sha256(repr(instance).encode("utf-8", "surrogatepass")).digest())
    if key in _valid_refs:
        return
    found = False
    for error in errors:
        found = True
        yield error
    if not found:
        if len(_valid_refs) >= _VALID_REFS_MAX:
            _valid_refs.clear()
        _ref_schemas.setdefault(id(schema), schema)
        _valid_refs.add(key)


_Validator = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"items": _items, "$ref": _ref}, type_checker=TYPES
)


def _first_bad_items(validator: Any, items: Any, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
    """``items`` that tells, of the items a quick schema refuses, only the first: for documents whose message
    names the list rather than each item (an experiment's list of levels: 90,000 wrong levels took 3 s to
    tell one by one, for one line)."""
    quick = _quick(items) if validator.is_type(instance, "array") else None
    if quick is None:
        yield from _plain_items(validator, items, instance, schema)
        return
    start = len(schema.get("prefixItems", []))
    for index, value in enumerate(instance[start:], start):
        if not _holds(quick, value):
            errors = list(validator.descend(value, items, path=index))
            if errors:
                yield from errors
                return


def _properties(validator: Any, properties: Any, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
    """``properties``, remembering as :func:`_ref` does the values each property's schema found valid: an
    experiment that differs from another in one field descends only along that field (each descent builds
    a new validator); the valid rest is skipped at the first level it is."""
    if not validator.is_type(instance, "object"):
        return
    for name, subschema in properties.items():
        if name in instance:
            value = instance[name]
            descent = validator.descend(value, subschema, path=name, schema_path=name)
            yield from _remembered(subschema, value, descent)


_FirstValidator = validators.extend(  # type: ignore[no-untyped-call]
    _Validator, {"items": _first_bad_items, "properties": _properties}
)


def schema_text(name: str) -> str:
    """The text of a published schema file (``cell.schema.json`` or ``run.schema.json``)."""
    return resources.files("benchstack").joinpath("schemas", name).read_text(encoding="utf-8")


def load_schema(name: str) -> dict[str, Any]:
    """A published schema, parsed (a new copy each time: callers may change it)."""
    schema: dict[str, Any] = json.loads(schema_text(name))
    return schema


# The published schemas are package data, checked against the draft 2020-12 meta-schema by the unit tests
# (test_results_format, conftest's schema_file_validator), not by every process that reads a document:
# that took 35-60 ms a schema, each plan and report run's and each `bench-stack` command's.
@cache
def _validator(name: str) -> Any:
    return _Validator(load_schema(name))


@cache
def first_error_validator(name: str) -> Any:
    """The checker of the published schema ``name`` that tells one item of a list of scalars that fails (the
    first), not each: for the experiment schema, whose messages name a list of levels as a whole."""
    return _FirstValidator(load_schema(name))


@dataclass(frozen=True)
class Problem:
    """One problem with a document: where (``path``, keys and list indices) and the message naming it."""

    path: Path_
    message: str

    @property
    def field(self) -> str | None:
        """The top-level key the problem is in; None for the document as a whole."""
        return str(self.path[0]) if self.path else None


def field_name(path: Path_) -> str:
    """``latency_ms.p99``, ``merged.per_loadgen[1].rps``: a path as a reader writes it."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def check(name: str, document: object, what: str) -> list[Problem]:
    """Problems of ``document`` against the published schema ``name``; ``what`` names the whole document
    in a message (``a cell``, ``run.json``). Ordered as the schema lists the fields."""
    missing: dict[Path_, list[str]] = {}
    extra: dict[Path_, list[str]] = {}
    values: dict[tuple[str, str], list[Problem]] = {}
    for error in _validator(name).iter_errors(document):
        path: Path_ = tuple(error.absolute_path)
        instance = error.instance
        if error.validator == "required" and isinstance(instance, dict):
            missing[path] = [k for k in error.validator_value if k not in instance]
        elif error.validator == "additionalProperties" and error.validator_value is False:
            known = set(error.schema.get("properties", {}))
            extra[path] = sorted((k for k in instance if k not in known), key=str)
        else:
            where = field_name(path) or what
            message = error.schema.get("errorMessage") if isinstance(error.schema, dict) else None
            text = f"{where} {message}, not {shown(instance)}" if message else f"{where}: {error.message}"
            # The same problem down a list (every pair of a distribution) is one problem with a count.
            like = field_name(tuple("[]" if isinstance(p, int) else p for p in path))
            values.setdefault((like, message or error.message), []).append(Problem(path, text))
    found: list[Problem] = []
    for path, keys in missing.items():
        listed = ", ".join(keys)
        text = f"{field_name(path)} lacks {listed}" if path else f"missing keys: {listed}"
        found.append(Problem(path, text))
    for path, names in extra.items():
        listed = ", ".join(map(str, names))
        text = f"{field_name(path)} has unexpected keys {listed}" if path else f"unexpected keys: {listed}"
        found.append(Problem(path, text))
    for same in values.values():
        first = same[0]
        more = f" (and {len(same) - 1} more like it)" if len(same) > 1 else ""
        if first.message not in (p.message for p in found):
            found.append(Problem(first.path, first.message + more))
    order = {key: i for i, key in enumerate(_validator(name).schema.get("properties", {}))}
    return sorted(found, key=lambda p: -1 if p.field is None else order.get(p.field, len(order)))


def validate_run_info(d: object) -> list[str]:
    """Problems with a run.json document; empty when valid."""
    if not isinstance(d, dict):
        return [f"{RUN_INFO} must be a JSON object, not {type(d).__name__}"]
    return [p.message for p in check(RUN_SCHEMA_FILE, d, RUN_INFO)]
