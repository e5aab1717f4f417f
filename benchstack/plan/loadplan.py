"""The load section of an experiment, typed: :class:`Load` and one :class:`LoadPlan` per ``load.plans`` entry.

Built once, from a load section that validation accepted
(:func:`benchstack.plan.experiment.experiment_from_dict`), with every default filled in; frozen. The code that
plans and repeats cells (:mod:`benchstack.plan.experiment`, :mod:`benchstack.measure.repetitions`,
:mod:`benchstack.plan.resolved`) reads its fields. Where the load section crosses into the plan fact, YAML and
run.json it becomes a mapping again (:meth:`Load.as_dict`): the section as written plus its defaults, exactly
the mapping run.json has always recorded as ``experiment.load``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchstack.kinds.loadtools import LoadTool, by_name, warmup_tool
from benchstack.records.cellplan import DEFAULT_MAX_INTERFERENCE, DEFAULT_PAUSE_S

DEFAULT_MAX_CV = 0.05
DEFAULT_MAX_ERROR_RATE = 0.01
# Half-width of a load point's 95 % interval of the median req/s, over the median, that ends its extra rounds.
DEFAULT_TARGET_PRECISION = 0.05
# A comparison whose interval of the ratio lies within 1 +- this (holding 1 or not) is "equivalent"
# (benchstack.analysis.comparison). 5 %: on the 2-core test VM a pair of cells spreads by 5-14 % (log ratio),
# so an interval within +-3 % takes 30-170 pairs of each comparison, more than a 5-minute run has; +-5 % takes
# 9-35 (docs/how-it-works.md, "Comparisons").
DEFAULT_EQUIVALENCE = 0.05
# The confidence of each look's interval of a comparison, before Holm's adjustment over the run's comparisons:
# 99 % per look keeps a comparison's false differences over a run of repeated looks near 5 %
# (scripts/simulate-comparisons.py).
DEFAULT_CONFIDENCE = 0.99
# Two starts of one stack serve a few per cent apart for as long as they run (the A/A check,
# docs/how-it-works.md): "run" restarts the stacks' units before a run's first cell, so that no run inherits
# an earlier run's processes; "never" measures them as they are (long-running processes on purpose).
RESTART_STACKS = ("run", "never")
DEFAULT_RESTART_STACKS = "run"

Levels = int | tuple[int, ...]

# What a threshold (load.thresholds) can hold a load point to, each figure as the report shows it over the
# counted cells (benchstack.analysis.thresholds): req/s (median), error rate (mean share), latency in ms
# (percentiles of the pooled distribution, else the median of the cells'), and the ratio of a stack's req/s to
# the baseline's (the comparison's Hodges-Lehmann estimate).
LATENCY_METRICS = ("mean_ms", "p50_ms", "p90_ms", "p99_ms", "p99.9_ms")
THRESHOLD_METRICS = ("rps", "error_rate", *LATENCY_METRICS, "ratio")

# Cells in all, disturbed ones included, per counted cell allowed: the bound on measuring again.
MAX_CELLS_PER_COUNTED = 2


def _levels(value: object) -> Levels | None:
    """A level field as written (one integer, or a list kept as a tuple); None when absent."""
    if value is None:
        return None
    return tuple(value) if isinstance(value, list | tuple) else int(value)  # type: ignore[call-overload]


def _written(levels: Levels | None) -> int | list[int] | None:
    return list(levels) if isinstance(levels, tuple) else levels


@dataclass(frozen=True)
class Warmup:
    """An unrecorded run before each cell: a number of requests or a duration (exactly one is set)."""

    requests: int | None = None
    duration_s: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Warmup:
        return cls(requests=d.get("requests"), duration_s=d.get("duration_s"))

    def as_dict(self) -> dict[str, int]:
        """As written: the one bound given (what cell plans and the load tools' warm-ups read)."""
        if self.requests is not None:
            return {"requests": self.requests}
        return {"duration_s": self.duration_s} if self.duration_s is not None else {}


@dataclass(frozen=True)
class LoadPlan:
    """One entry of ``load.plans``: a tool and its levels (concurrencies, or offered rates for an open-loop
    tool) and how each run is bounded. A field not written is None (``concurrency`` and ``rate`` keep the
    written form: an integer, or a tuple for a list)."""

    tool: str
    concurrency: Levels | None = None
    rate: Levels | None = None
    requests: int | None = None
    duration_s: int | None = None
    threads: int | None = None
    keepalive: bool | None = None
    timeout_s: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LoadPlan:
        return cls(
            tool=d["tool"],
            concurrency=_levels(d.get("concurrency")),
            rate=_levels(d.get("rate")),
            requests=d.get("requests"),
            duration_s=d.get("duration_s"),
            threads=d.get("threads"),
            keepalive=d.get("keepalive"),
            timeout_s=d.get("timeout_s"),
        )

    def as_dict(self) -> dict[str, Any]:
        """The plan as written: only the fields given."""
        fields = {
            "tool": self.tool,
            "concurrency": _written(self.concurrency),
            "rate": _written(self.rate),
            "requests": self.requests,
            "duration_s": self.duration_s,
            "threads": self.threads,
            "keepalive": self.keepalive,
            "timeout_s": self.timeout_s,
        }
        return {k: v for k, v in fields.items() if v is not None}

    @property
    def adapter(self) -> LoadTool:
        return by_name(self.tool)

    @property
    def levels(self) -> tuple[int, ...]:
        """The load levels, in plan order: offered rates for an open-loop tool, else concurrencies."""
        given = self.rate if self.adapter.open_loop else self.concurrency
        if given is None:
            return ()
        return given if isinstance(given, tuple) else (given,)

    @property
    def keeps_alive(self) -> bool:
        """Whether this plan's cells keep connections alive (a tool may fix it: wrk always does)."""
        return self.adapter.keepalive(self)


@dataclass(frozen=True)
class Threshold:
    """One entry of ``load.thresholds``: a metric held to ``min`` and/or ``max`` (both inclusive) on every
    load point its scope matches (``stack``, ``tool``, ``level``; None matches any). Like k6's thresholds: a
    threshold that fails, or finds no value to judge, fails the run with its own exit code
    (:mod:`benchstack.common.exitcodes`)."""

    metric: str
    min: float | None = None
    max: float | None = None
    stack: str | None = None
    tool: str | None = None
    level: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Threshold:
        return cls(
            metric=d["metric"],
            min=d.get("min"),
            max=d.get("max"),
            stack=d.get("stack"),
            tool=d.get("tool"),
            level=d.get("level"),
        )

    def as_dict(self) -> dict[str, Any]:
        """The threshold as written: only the fields given."""
        fields = {
            "metric": self.metric,
            "min": self.min,
            "max": self.max,
            "stack": self.stack,
            "tool": self.tool,
            "level": self.level,
        }
        return {k: v for k, v in fields.items() if v is not None}

    @property
    def text(self) -> str:
        """``p99_ms <= 300``, ``ratio >= 0.9``, ``0.9 <= ratio <= 1.1``, with its scope:
        ``(stack x2, tool ab, level 8)``."""
        low = f"{self.min:g} <= " if self.min is not None else ""
        high = f" <= {self.max:g}" if self.max is not None else ""
        if self.min is not None and self.max is None:
            limit = f"{self.metric} >= {self.min:g}"
        else:
            limit = f"{low}{self.metric}{high}"
        scope = [
            f"{name} {value}"
            for name, value in (("stack", self.stack), ("tool", self.tool), ("level", self.level))
            if value is not None
        ]
        return limit + (f" ({', '.join(scope)})" if scope else "")

    def passes(self, value: float) -> bool:
        """Whether ``value`` lies within the limits (both inclusive)."""
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)


@dataclass(frozen=True)
class Load:
    """An experiment's ``load`` section, defaults filled in (docs/experiment.md)."""

    plans: tuple[LoadPlan, ...]
    baseline: str
    path: str = "/"
    threshold_ms: float | None = None
    warmup: Warmup | None = None
    pause_s: float = DEFAULT_PAUSE_S
    repetitions: int = 1
    # None: as many as ``repetitions`` (from_dict fills it in).
    max_repetitions: int | None = None
    max_cv: float = DEFAULT_MAX_CV
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    target_precision: float = DEFAULT_TARGET_PRECISION
    equivalence: float = DEFAULT_EQUIVALENCE
    confidence: float = DEFAULT_CONFIDENCE
    max_interference: float = DEFAULT_MAX_INTERFERENCE
    max_seconds: int | None = None
    # When the stacks' processes are started afresh: "run" (before a run's first cell) or "never".
    restart_stacks: str = DEFAULT_RESTART_STACKS
    # Set only when the experiment names one (it then orders every run's rounds).
    seed: int | None = None
    # What the report holds the run to (k6-like); recorded only when the experiment has some.
    thresholds: tuple[Threshold, ...] = ()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], first_stack: str | None = None) -> Load:
        """The typed section of a load mapping validation accepted, or of one recorded by :meth:`as_dict`;
        ``first_stack`` is the default baseline."""
        repetitions = d.get("repetitions", 1)
        warmup = d.get("warmup")
        baseline = d.get("baseline") or first_stack
        if baseline is None:
            raise ValueError("load.baseline: no stack to compare against")
        return cls(
            plans=tuple(LoadPlan.from_dict(p) for p in d["plans"]),
            baseline=baseline,
            path=d.get("path", "/"),
            threshold_ms=d.get("threshold_ms"),
            warmup=Warmup.from_dict(warmup) if warmup else None,
            pause_s=d.get("pause_s", DEFAULT_PAUSE_S),
            repetitions=repetitions,
            max_repetitions=d.get("max_repetitions", repetitions),
            max_cv=d.get("max_cv", DEFAULT_MAX_CV),
            max_error_rate=d.get("max_error_rate", DEFAULT_MAX_ERROR_RATE),
            target_precision=d.get("target_precision", DEFAULT_TARGET_PRECISION),
            equivalence=d.get("equivalence", DEFAULT_EQUIVALENCE),
            confidence=d.get("confidence", DEFAULT_CONFIDENCE),
            max_interference=d.get("max_interference", DEFAULT_MAX_INTERFERENCE),
            max_seconds=d.get("max_seconds"),
            restart_stacks=d.get("restart_stacks", DEFAULT_RESTART_STACKS),
            seed=d.get("seed"),
            thresholds=tuple(Threshold.from_dict(t) for t in d.get("thresholds") or ()),
        )

    @property
    def repetition_cap(self) -> int:
        """How many counted repetitions a load point may get in all."""
        return self.repetitions if self.max_repetitions is None else self.max_repetitions

    def as_dict(self) -> dict[str, Any]:
        """The section as the plan fact and run.json record it (``experiment.load``): every field with its
        default, ``seed`` and ``thresholds`` only when the experiment names them (so an experiment without
        thresholds keeps its hash, and a half-finished run of it resumes), the plans as written."""
        d: dict[str, Any] = {
            "path": self.path,
            "threshold_ms": self.threshold_ms,
            "warmup": self.warmup.as_dict() if self.warmup else None,
            "pause_s": self.pause_s,
            "repetitions": self.repetitions,
            "max_repetitions": self.repetition_cap,
            "max_cv": self.max_cv,
            "max_error_rate": self.max_error_rate,
            "target_precision": self.target_precision,
            "equivalence": self.equivalence,
            "confidence": self.confidence,
            "max_interference": self.max_interference,
            "max_seconds": self.max_seconds,
            "restart_stacks": self.restart_stacks,
            "baseline": self.baseline,
            "plans": [p.as_dict() for p in self.plans],
        }
        if self.seed is not None:
            d["seed"] = self.seed
        if self.thresholds:
            d["thresholds"] = [t.as_dict() for t in self.thresholds]
        return d

    def tools(self) -> list[str]:
        """Every tool a loadgen runs for this load: its plans' and their warm-ups'."""
        warmup = self.warmup.as_dict() if self.warmup else None
        tools = {p.tool for p in self.plans}
        tools |= {t for p in self.plans if (t := warmup_tool(p.tool, warmup)) is not None}
        return sorted(tools)
