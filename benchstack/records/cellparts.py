"""The objects inside a stored cell, typed: its latency, its hosts' CPU (``system``, ``interference``), its
window and how it was merged (docs/results-format.md, "A cell"; :class:`benchstack.results.cell.Cell`).

Each is read from the cell's JSON by ``from_dict`` and written back by ``to_dict`` to the same JSON: the
same keys in the same order (``json_keys``: a merged cell has ``merged`` last), and a key the JSON left out
(``p99.9`` in a cell from before distributions, a v1 cell's ``interference``) stays out, so that a cell read
and written again is the same text.
``from_dict`` takes JSON the schema accepted (:func:`benchstack.results.cell.stored_cell_problems`): it
checks only that the keys are the record's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields, is_dataclass
from datetime import datetime
from typing import Any, ClassVar, Self

__all__ = [
    "CpuUsage",
    "Interference",
    "JsonObject",
    "Latency",
    "LoadgenFigures",
    "MergeCut",
    "Merged",
    "SystemStats",
    "Vmstat",
    "Window",
    "keys_field",
    "copied",
    "part",
]

# Values a cell's JSON holds that need no copy.
_ATOMS = frozenset({str, int, float, bool, type(None)})


def copied(value: Any) -> Any:
    """``value`` as JSON: records as their dicts, new dicts and lists all the way down (a change to it leaves
    the record as it was). By hand: :func:`copy.deepcopy` passes every number through a call, ~3 ms a cell
    with a latency distribution of 1,600 pairs."""
    kind = type(value)
    if kind is list or kind is tuple:
        return [v if type(v) in _ATOMS else copied(v) for v in value]
    if kind is dict:
        return {k: v if type(v) in _ATOMS else copied(v) for k, v in value.items()}
    if kind in _ATOMS:
        return value
    if isinstance(value, JsonObject):
        return value.to_dict()
    return copy.deepcopy(value)


def keys_field() -> Any:
    """The ``json_keys`` field every record has: its JSON's keys in their order, as ``to_dict`` writes them;
    None (the default) for every field's key in the order the fields are declared."""
    return field(default=None, kw_only=True, repr=False, compare=False)


# Each key order read, once: a run's cells share a few.
_ORDERS: dict[tuple[str, ...], tuple[str, ...]] = {}


def _key(f: Field[Any]) -> str:
    return str(f.metadata.get("key", f.name))


class JsonObject:
    """A record read from a JSON object and written back to it, key for key (the module's docstring).

    A field's JSON key is its name, or ``metadata["key"]``; ``metadata["part"]`` names the record class of a
    nested object (or null), ``metadata["each"]`` that of a list's items, ``metadata["by_name"]`` that of an
    object's values (each or null)."""

    json_keys: tuple[str, ...] | None
    _keys: ClassVar[dict[type, dict[str, Field[Any]]]] = {}

    @classmethod
    def json_fields(cls) -> dict[str, Field[Any]]:
        """The record's fields by their JSON keys, in the order they are written."""
        found = JsonObject._keys.get(cls)
        if found is None:
            assert is_dataclass(cls)
            found = {_key(f): f for f in fields(cls) if f.name != "json_keys"}
            JsonObject._keys[cls] = found
        return found

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record of a JSON object; ValueError for a key that is not the record's, or a missing one
        that has no default."""
        keys = cls.json_fields()
        unknown = sorted(set(data) - set(keys))
        if unknown:
            raise ValueError(f"not a {cls.__name__}: unknown keys {', '.join(map(str, unknown))}")
        values = {f.name: _read(f, data[key]) for key, f in keys.items() if key in data}
        order = tuple(data)
        values["json_keys"] = None if order == tuple(keys) else _ORDERS.setdefault(order, order)
        try:
            return cls(**values)
        except TypeError as exc:  # a required key is missing
            raise ValueError(f"not a {cls.__name__}: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object the record was read from: its keys (:func:`keys_field`) in their order."""
        fields_ = self.json_fields()
        order = fields_ if self.json_keys is None else self.json_keys
        return {key: copied(getattr(self, fields_[key].name)) for key in order}

    def has(self, key: str) -> bool:
        """Whether the record's JSON holds ``key`` (a key left out reads as the field's default)."""
        return key in self.json_fields() if self.json_keys is None else key in self.json_keys


def _read(f: Field[Any], value: Any) -> Any:
    """One field's value from its JSON: nested records read, lists and objects copied."""
    if value is None:
        return None
    if "part" in f.metadata:
        return f.metadata["part"].from_dict(value)
    if "each" in f.metadata:
        return [f.metadata["each"].from_dict(v) for v in value]
    if "by_name" in f.metadata:
        return {k: None if v is None else f.metadata["by_name"].from_dict(v) for k, v in value.items()}
    return value if type(value) in _ATOMS else copied(value)


def part(kind: type[JsonObject], *, required: bool = False) -> Any:
    """A field holding a nested record (``kind``), or None (its default unless ``required``)."""
    if required:
        return field(metadata={"part": kind})
    return field(default=None, metadata={"part": kind})


@dataclass(frozen=True)
class Latency(JsonObject):
    """``latency_ms``: in ms; None where the tool gave no figure and no distribution gives it. The keys are
    :data:`benchstack.records.model.LATENCY_KEYS`, then the optional ``TAIL_KEYS`` (absent in old cells)."""

    mean: float | None = None
    stdev: float | None = None
    min: float | None = None
    max: float | None = None
    p50: float | None = None
    p75: float | None = None
    p90: float | None = None
    p99: float | None = None
    p99_9: float | None = field(default=None, metadata={"key": "p99.9"})
    p99_99: float | None = field(default=None, metadata={"key": "p99.99"})
    json_keys: tuple[str, ...] | None = keys_field()

    def value(self, key: str) -> float | None:
        """The figure under its JSON key (``p99``, ``p99.9``), None for one the cell does not hold."""
        f = self.json_fields().get(key)
        if f is None or not self.has(key):
            return None
        found: float | None = getattr(self, f.name)
        return found


@dataclass(frozen=True)
class Vmstat(JsonObject):
    """One host's vmstat means during the cell (:mod:`benchstack.results.sysstats`); ``cpu_steal`` where
    vmstat printed it."""

    samples: int | None = None
    cpu_user: float | None = None
    cpu_system: float | None = None
    cpu_idle: float | None = None
    cpu_iowait: float | None = None
    cpu_steal: float | None = None
    cpu_idle_median: float | None = None
    run_queue: float | None = None
    context_switches_s: float | None = None
    interrupts_s: float | None = None
    json_keys: tuple[str, ...] | None = keys_field()


@dataclass(frozen=True)
class SystemStats(JsonObject):
    """``system``: each side's vmstat means, None where none was taken."""

    loadgen: Vmstat | None = part(Vmstat)
    target: Vmstat | None = part(Vmstat)
    json_keys: tuple[str, ...] | None = keys_field()


@dataclass(frozen=True)
class CpuUsage(JsonObject):
    """One host's CPU seconds during the cell (:mod:`benchstack.measure.interference`)."""

    boot_id: str
    seconds: float
    cpu_s: float
    busy_s: float
    steal_s: float
    ours_s: float | None
    ours_from: str | None
    tool_s: float | None
    json_keys: tuple[str, ...] | None = keys_field()


@dataclass(frozen=True)
class Interference(JsonObject):
    """``interference``: the CPU time that was not ours, as shares, the limit judged by and each host's CPU
    (None where it could not be read)."""

    foreign: float | None
    steal: float | None
    limit: float | None
    hosts: dict[str, CpuUsage | None] = field(default_factory=dict, metadata={"by_name": CpuUsage})
    json_keys: tuple[str, ...] | None = keys_field()


@dataclass(frozen=True)
class Window(JsonObject):
    """``window``: when the tool started and ended on the loadgen's clock (UTC, to the millisecond)."""

    start: str
    end: str
    json_keys: tuple[str, ...] | None = keys_field()

    def span(self) -> tuple[float, float]:
        """(start, end) as POSIX times."""
        return datetime.fromisoformat(self.start).timestamp(), datetime.fromisoformat(self.end).timestamp()


@dataclass(frozen=True)
class MergeCut(JsonObject):
    """``merged.cut``: the requests of all loadgens, and those kept (started in the common window)."""

    requests: int
    kept: int
    json_keys: tuple[str, ...] | None = keys_field()


@dataclass(frozen=True)
class LoadgenFigures(JsonObject):
    """One entry of ``merged.per_loadgen``: a loadgen's own figures, as in its own cell."""

    loadgen: str | None = None
    rps: float | None = None
    requests_completed: int | None = None
    error_count: int | None = None
    started_at: str | None = None
    elapsed_s: float | None = None
    window: Window | None = part(Window)
    latency_ms: Latency | None = part(Latency)
    system: Vmstat | None = part(Vmstat)
    json_keys: tuple[str, ...] | None = keys_field()


@dataclass(frozen=True, kw_only=True)
class Merged(JsonObject):
    """``merged``: a cell merged from several loadgens' cells (:mod:`benchstack.measure.merge`);
    ``total_rate`` only for an open-loop tool (left out of ``json_keys`` otherwise)."""

    loadgens: list[str]
    total_concurrency: int | None = None
    total_rate: int | None = None
    latency: str
    cut: MergeCut | None = part(MergeCut)
    start_skew_s: float | None = None
    cells: list[str] | None = None
    per_loadgen: list[LoadgenFigures] = field(default_factory=list, metadata={"each": LoadgenFigures})
    json_keys: tuple[str, ...] | None = keys_field()
