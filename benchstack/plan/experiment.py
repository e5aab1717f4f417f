"""Experiment files: load, validate, expand into cells.

An experiment names its stacks and a load plan (see ``experiments/*.yml``). Validation reports every problem
at once, each naming its field (``load.plans[1].duration_s: ...``): the published schema's first
(:mod:`benchstack.plan.experiment_schema`), then the rules across fields, the stacks' in
:func:`benchstack.plan.stacks.resolve_stacks` (the one stack validator) and the load section's here. This
command line and the playbook's plan (:mod:`benchstack.plan.resolved`) run the same validation, so they accept
and refuse exactly the same experiments. Validation never changes its input; an accepted load section becomes
a :class:`benchstack.plan.loadplan.Load`.

Cells are measured in rounds (repetitions): every load point once before any twice, so slow drift on the
hosts spreads over every stack instead of biasing one. A run takes each round's load points in a random
order drawn from its seed (:func:`cells`; recorded in run.json), each baseline cell in the middle of its load
point's others (:func:`paired`: a comparison's pairs are one or two cells apart); without a seed the stacks
are rotated round by round (r1: A B C, r2: B C A). Cell ids do not depend on the order.

``load.max_cv`` (default 0.05) is the coefficient of variation of req/s over a load point's repetitions above
which the report marks it noisy; ``load.max_repetitions`` (default: ``repetitions``) is how many repetitions
a noisy load point may get in all (see :mod:`benchstack.measure.repetitions`). ``load.max_error_rate``
(default 0.01) is the share of failed requests (:mod:`benchstack.records.model`, slow ones over
``threshold_ms`` included) above which a cell's numbers count as invalid in the run's verdict
(:mod:`benchstack.analysis.verdict`); 1 turns the check off, for an experiment that looks for the breaking
point on purpose.
"""

from __future__ import annotations

import codecs
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from benchstack.common.inputs import (
    MAX_EXPERIMENT_BYTES,
    InputError,
    load_yaml,
    read_bounded,
    shown,
    shown_key,
)
from benchstack.common.numbers import is_int
from benchstack.kinds.loadtools import MAX_CONCURRENCY as TOOL_MAX_CONCURRENCY
from benchstack.kinds.loadtools import REGISTRY, by_name
from benchstack.kinds.loadtools.base import MAX_DURATION_S, MAX_REQUESTS, ClosedRun
from benchstack.kinds.loadtools.loadcmd import build_command
from benchstack.kinds.stackfields import DEFAULT_ROOTS, Roots, StackError
from benchstack.plan import logship
from benchstack.plan.experiment_schema import experiment_schema, schema_problems, stack_prefix
from benchstack.plan.loadplan import Load, LoadPlan
from benchstack.plan.stacks import Stack, resolve_stacks
from benchstack.plan.trace import note
from benchstack.records.cellplan import CellPlan
from benchstack.results.cell import cell_id

T = TypeVar("T")

__all__ = [
    "Experiment",
    "ExperimentError",
    "ExperimentFileError",
    "LoadPoint",
    "MAX_STACKS",
    "cell_plan",
    "cells",
    "experiment_from_dict",
    "load_experiment",
    "load_points",
    "paired",
    "validate_experiment",
]

# The limits below are the published schema's too (benchstack/schemas/experiment.schema.json; a test holds
# the schema to them).
MAX_REPETITIONS = 100
# Each stack is a port, its units and configs on every target: 10,000 stacks were refused as "an alias
# bomb?" by the YAML reader (issue 44); this names the limit.
MAX_STACKS = 1000
MAX_SECONDS = 7 * 24 * 3600
# The name ends the run folder's name (<UTC timestamp>-<name>): 300 characters passed every check and
# failed at 'Write run.json', 22 s into a run, as "File name too long".
MAX_NAME = 64
NAME_RE = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_NAME - 1}}}\Z")
# Closed loop: at most this many concurrent connections. It is ab's own compiled-in limit, and it keeps wrk
# (one socket and about 10 kB per connection) inside the benchmark user's 65,536 open files
# (host_nofile) and one loadgen address's 64,511 ports to a target port, even in loopback mode where
# both ends of every connection are on one host. A billion made wrk abort out of memory.
MAX_CONCURRENCY = TOOL_MAX_CONCURRENCY
# Open loop: at most this many new connections a second. httperf is one process on one core that watches
# its connections with select() (1,024 descriptors): at 20,000/s an answer of 50 ms already holds 1,000 of
# them, so above it the cell measures httperf's limits, not the stack's.
MAX_RATE = 20_000
# A slow request's limit: above the longest timeout (MAX_DURATION_S) no request waits that long.
MAX_THRESHOLD_MS = MAX_DURATION_S * 1000
MAX_PAUSE_S = 60

_SCHEMA = experiment_schema()
TOP_KEYS = frozenset(_SCHEMA["properties"])
LOAD_KEYS = frozenset(_SCHEMA["$defs"]["load"]["properties"])
PLAN_KEYS = frozenset(_SCHEMA["$defs"]["load"]["properties"]["plans"]["items"]["properties"])
WARMUP_KEYS = frozenset(_SCHEMA["$defs"]["load"]["properties"]["warmup"]["properties"])


class ExperimentError(ValueError):
    """An experiment file is invalid; ``problems`` lists every problem found."""

    def __init__(self, problems: list[str], source: str | None = None) -> None:
        self.problems = problems
        self.source = source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}invalid experiment:\n  - " + "\n  - ".join(problems))


class ExperimentFileError(ExperimentError):
    """The file holds no experiment text at all (missing, a folder, binary, UTF-16): one line, no list."""

    def __init__(self, reason: str, source: str) -> None:
        super().__init__([reason], source)
        self.args = (f"{source}: {reason}",)


@dataclass(frozen=True)
class Experiment:
    """An experiment that validation accepted: its stacks as written, its load section typed."""

    name: str
    description: str
    stacks: list[dict[str, Any]]
    load: Load
    source: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    # The stacks with everything derived (benchstack.plan.stacks.resolve_stacks); empty for an experiment
    # taken back from a plan's fact (benchstack.plan.resolved.experiment_of), which reads the stacks as
    # written only.
    resolved: tuple[Stack, ...] = field(default=(), repr=False)
    # The opt-in shipping of the fronts' access logs (``logs``; benchstack.plan.logship), None without it.
    logs: logship.Shipping | None = None


@dataclass(frozen=True)
class LoadPoint:
    """One load point, measured on every stack: a load plan at one of its levels (a concurrency, or an
    offered rate for an open-loop tool)."""

    plan: LoadPlan
    level: int

    @property
    def key(self) -> tuple[str, bool, int]:
        """What tells it from the experiment's other load points (no two plans measure one: load.plans'
        check): its tool, keep-alive and level, as a cell's load point ends
        (:func:`benchstack.analysis.loadpoints.by_load_point`)."""
        return (self.plan.tool, self.plan.keeps_alive, self.level)


def validate_experiment(data: object, roots: Roots = DEFAULT_ROOTS) -> list[str]:
    """Every problem with an experiment mapping, each naming its field; empty when valid."""
    return _validated(data, roots)[0]


def _validated(
    data: object, roots: Roots, base_dir: Path | None = None
) -> tuple[list[str], tuple[Stack, ...]]:
    """Every problem with an experiment mapping, and its stacks resolved (when they are valid); a relative
    ``app.src`` is taken from ``base_dir``, the experiment file's folder.

    The published schema first (:mod:`benchstack.plan.experiment_schema`), then the rules across fields: the
    stacks' (:func:`benchstack.plan.stacks.resolve_stacks`, the one stack validator, which the playbook's plan
    uses too) for every stack the schema let through, and the load section's."""
    if not isinstance(data, dict):
        return [f"an experiment must be a mapping, not {type(data).__name__}"], ()
    stacks = data.get("stacks")
    if isinstance(stacks, list) and len(stacks) > MAX_STACKS:
        # The schema's message alone: checking 10,000 stacks one by one first took 6 s to say so.
        text = _SCHEMA["properties"]["stacks"]["errorMessage"]["maxItems"]
        return [f"stacks: {text.replace('{length}', f'{len(stacks):_}')}"], ()
    found = schema_problems(data)
    problems = [p.message for p in found]
    resolved: tuple[Stack, ...] = ()
    # A stack the schema refused is not checked again: its problems would be told twice, worded apart.
    if not any(p.path[:1] == ("stacks",) and p.stack is None for p in found):
        try:
            resolved = resolve_stacks(data["stacks"], roots, base_dir)
        except StackError as exc:
            refused = tuple(
                f"{stack_prefix(data, i)}: " for i in {p.stack for p in found if p.stack is not None}
            )
            problems += [p for p in exc.problems if not p.startswith(refused)]
    load = data.get("load")
    if isinstance(load, dict):
        refused_plans = {p.path[2] for p in found if p.path[:2] == ("load", "plans") and len(p.path) > 2}
        # The thresholds' scope is checked against the plans once the schema accepted them all.
        refused_thresholds = any(p.path[:2] in (("load", "thresholds"), ("load", "plans")) for p in found)
        problems += _load_problems(load, data.get("stacks"), refused_plans, refused_thresholds)
    logs = data.get("logs")
    if isinstance(logs, dict) and not any(p.path[:1] == ("logs",) for p in found):
        problems += logship.problems(logs, data.get("stacks"))
    return problems, resolved


def _load_problems(
    load: dict[str, Any], stacks: object, refused_plans: set[str | int], refused_thresholds: bool = False
) -> list[str]:
    """What the schema cannot say about a load section: rules across its fields, and each plan's fields
    against its tool (the plans the schema refused are left out)."""
    problems: list[str] = []
    reps, cap = load.get("repetitions", 1), load.get("max_repetitions")
    if all(is_int(v) and 1 <= v <= MAX_REPETITIONS for v in (reps, cap)) and cap < reps:
        problems.append(f"load.max_repetitions: must be at least load.repetitions ({reps}), not {cap}")
    baseline = load.get("baseline")
    if isinstance(baseline, str) and isinstance(stacks, list):
        names = [s.get("name") for s in stacks if isinstance(s, dict)]
        if baseline not in names:
            problems.append(
                f"load.baseline: must name one of the stacks ({', '.join(map(shown_key, names))}), "
                f"not {shown(baseline)}"
            )
    plans = load.get("plans")
    if not isinstance(plans, list):
        return problems
    seen: dict[tuple[str, bool, int], int] = {}
    for i, plan in enumerate(plans):
        if i not in refused_plans and isinstance(plan, dict):
            problems += _plan_problems(i, plan, seen)
    thresholds = load.get("thresholds")
    if isinstance(thresholds, list) and isinstance(stacks, list) and not refused_thresholds:
        problems += _threshold_problems(thresholds, stacks, baseline, plans)
    return problems


def _threshold_problems(
    thresholds: list[Any], stacks: list[Any], baseline: object, plans: list[Any]
) -> list[str]:
    """What the schema cannot say about ``load.thresholds`` (each entry the schema accepted): its scope names
    a stack, tool and level the experiment measures, a ratio has a stack to compare, min is not above max."""
    names = [s.get("name") for s in stacks if isinstance(s, dict)]
    base = baseline if isinstance(baseline, str) else (names[0] if names else None)
    levels: dict[str, set[int]] = {}
    for plan in plans:
        if isinstance(plan, dict) and plan.get("tool") in REGISTRY:
            try:
                levels.setdefault(plan["tool"], set()).update(LoadPlan.from_dict(plan).levels)
            except (TypeError, ValueError):
                continue
    problems: list[str] = []
    for i, t in enumerate(thresholds):
        where = f"load.thresholds[{i}]"
        if not isinstance(t, dict):
            continue
        low, high = t.get("min"), t.get("max")
        if low is not None and high is not None and low > high:
            problems.append(f"{where}: min ({low}) must not be above max ({high})")
        stack, tool, level = t.get("stack"), t.get("tool"), t.get("level")
        if stack is not None and stack not in names:
            problems.append(
                f"{where}.stack: must name one of the stacks ({', '.join(map(shown_key, names))}), "
                f"not {shown(stack)}"
            )
        if t.get("metric") == "ratio":
            if len(names) < 2:
                problems.append(f"{where}: a ratio needs a stack besides the baseline; there is one stack")
            elif stack is not None and stack == base:
                problems.append(
                    f"{where}.stack: {shown(stack)} is the baseline: a ratio holds another stack to it"
                )
        if tool is not None and tool not in levels:
            problems.append(
                f"{where}.tool: no load plan uses {shown(tool)} "
                f"(the plans' tools: {', '.join(sorted(levels))})"
            )
        elif level is not None:
            offered = levels.get(tool, set()) if tool is not None else set().union(*levels.values())
            if level not in offered:
                problems.append(
                    f"{where}.level: no load plan{f' of {tool}' if tool else ''} measures level {level} "
                    f"(its levels: {', '.join(map(str, sorted(offered)))})"
                )
    return problems


def _plan_problems(i: int, plan: dict[str, Any], seen: dict[tuple[str, bool, int], int]) -> list[str]:
    """A load plan the schema accepted, against its tool: the fields the tool needs and refuses (its
    adapter's rules), a command at every level, and no load point measured by two plans."""
    where = f"load.plans[{i}]"
    adapter = by_name(plan["tool"])
    problems: list[str] = []
    key = "rate" if adapter.open_loop else "concurrency"
    if key not in plan:
        maximum = MAX_RATE if adapter.open_loop else MAX_CONCURRENCY
        problems.append(
            f"{where}.{key}: must be a positive integer or a list of them (at most {maximum:_}), not None"
        )
    if not adapter.open_loop and "rate" in plan:
        open_loop = ", ".join(t.name for t in REGISTRY.values() if t.open_loop)
        problems.append(
            f"{where}.rate: {adapter.name} is closed loop (concurrency); rate applies to {open_loop}"
        )
    if not adapter.check_plan(where, plan, problems) or problems:
        return problems
    typed = LoadPlan.from_dict(plan)
    keepalive = typed.keeps_alive
    for level in typed.levels:
        if adapter.open_loop:
            if level * plan["duration_s"] > MAX_REQUESTS:
                problems.append(
                    f"{where}: rate {level} for {plan['duration_s']} s is more than {MAX_REQUESTS:_} requests"
                )
        else:
            try:
                build_command(
                    adapter.name,
                    ClosedRun(
                        "http://127.0.0.1:1/",
                        level,
                        requests=typed.requests,
                        duration_s=typed.duration_s,
                        threads=typed.threads,
                        keepalive=keepalive,
                        timeout_s=typed.timeout_s,
                    ),
                )
            except ValueError as exc:
                problems.append(f"{where}: at concurrency {level}: {exc}")
        point = (adapter.name, keepalive, level)
        if point in seen:
            problems.append(
                f"{where}: {_point_text(adapter.name, keepalive, level)} is already measured by "
                f"load.plans[{seen[point]}]{'' if adapter.open_loop else '; the cells would collide'}"
            )
        else:
            seen[point] = i
    return problems


def _point_text(tool: str, keepalive: bool, level: int) -> str:
    if by_name(tool).open_loop:
        return f"{tool} at rate {level}"
    return f"{tool} at concurrency {level} (keep-alive {'on' if keepalive else 'off'})"


def experiment_from_dict(data: object, source: str | None = None, roots: Roots = DEFAULT_ROOTS) -> Experiment:
    """An Experiment from a parsed YAML mapping, its stacks resolved under ``roots``; raises ExperimentError
    listing every problem. A relative ``app.src`` is taken from the folder of the file ``source``."""
    problems, resolved = _validated(data, roots, _folder_of(source))
    if problems:
        raise ExperimentError(problems, source)
    assert isinstance(data, dict)
    load = Load.from_dict(data["load"], first_stack=data["stacks"][0]["name"])
    return Experiment(
        name=data["name"],
        description=data.get("description", ""),
        stacks=list(data["stacks"]),
        load=load,
        source=source,
        raw=data,
        resolved=resolved,
        logs=logship.Shipping.from_dict(data["logs"]) if data.get("logs") is not None else None,
    )


def _folder_of(source: str | None) -> Path | None:
    """The folder a relative ``app.src`` is taken from: the experiment file's (None without a file, or
    when its path cannot be resolved: a relative app.src is then refused with its own message)."""
    if not source:
        return None
    try:
        return Path(source).resolve().parent
    except (OSError, RuntimeError):  # RuntimeError: a loop of symbolic links (Python < 3.13)
        return None


def _read_text(path: Path, source: str) -> str:
    try:
        data = read_bounded(path, MAX_EXPERIMENT_BYTES)
    except InputError as exc:
        raise ExperimentFileError(str(exc), source) from None
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise ExperimentFileError("not UTF-8 text (a UTF-16 byte-order mark): save it as UTF-8", source)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ExperimentFileError(
            f"not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x}): a binary file?", source
        ) from None
    if "\x00" in text:
        raise ExperimentFileError("not UTF-8 text (it holds NUL bytes): a binary or UTF-16 file?", source)
    return text


def load_experiment(path: str | os.PathLike[str], roots: Roots = DEFAULT_ROOTS) -> Experiment:
    """Read and validate an experiment YAML file."""
    note("read")
    source = str(path)
    text = _read_text(Path(path), source)
    try:
        data = load_yaml(text)
    except InputError as exc:
        raise ExperimentFileError(str(exc), source) from None
    # A file that is not an experiment at all is named in one line: listing its top-level keys as unknown
    # fields printed every line of /etc/shadow (each line ends in ':', so YAML reads it as a key).
    if data is None:
        raise ExperimentFileError("empty: no experiment in it", source)
    if not isinstance(data, dict):
        raise ExperimentFileError(f"an experiment must be a mapping, not {type(data).__name__}", source)
    if not set(data) & TOP_KEYS:
        raise ExperimentFileError(
            f"not an experiment: a mapping of {len(data)} keys, none of them {', '.join(sorted(TOP_KEYS))}",
            source,
        )
    return experiment_from_dict(data, source, roots)


def rotated(stacks: list[dict[str, Any]], repetition: int) -> list[dict[str, Any]]:
    """The stacks in the order repetition ``repetition`` measures them: rotated left by repetition - 1."""
    if not stacks:
        return []
    k = (repetition - 1) % len(stacks)
    return stacks[k:] + stacks[:k]


def load_points(exp: Experiment) -> list[LoadPoint]:
    """The load points measured on every stack, in plan order."""
    return [LoadPoint(plan, level) for plan in exp.load.plans for level in plan.levels]


def cell_plan(exp: Experiment, stack: dict[str, Any], point: LoadPoint, repetition: int) -> CellPlan:
    """The cell of one stack (as written), one load point and one repetition."""
    load = exp.load
    plan, level = point.plan, point.level
    tool = plan.adapter
    keepalive = plan.keeps_alive
    rate = level if tool.open_loop else None
    return CellPlan(
        cell_id=cell_id(stack["name"], plan.tool, level, repetition, keepalive, open_loop=tool.open_loop),
        stack=stack["name"],
        port=stack["port"],
        tool=plan.tool,
        concurrency=None if tool.open_loop else level,
        rate=rate,
        requests=plan.requests,
        duration_s=plan.duration_s,
        threads=tool.threads(plan, level),
        keepalive=keepalive,
        timeout_s=plan.timeout_s,
        repetition=repetition,
        path=stack.get("path", load.path),
        threshold_ms=load.threshold_ms,
        warmup=load.warmup.as_dict() if load.warmup else None,
        pause_s=load.pause_s,
        max_interference=load.max_interference,
    )


def shuffled(items: list[Any], seed: int, repetition: int) -> list[Any]:
    """``items`` in repetition ``repetition``'s random order, drawn from ``seed`` (the same seed and
    repetition give the same order: a resumed run measures as the first attempt planned)."""
    order = list(items)
    random.Random(f"bench-stack:{seed}:{repetition}").shuffle(order)
    return order


def paired(
    items: list[T],
    seed: int,
    repetition: int,
    baseline: str,
    stack_of: Callable[[T], str],
    point_of: Callable[[T], Any],
) -> list[T]:
    """``items`` (one round's) in the round's random order (:func:`shuffled`), with each load point's baseline
    cell moved to the middle of that load point's other cells: every other stack's cell of the round is then
    one or two cells from the baseline's it is paired with (benchstack.analysis.comparison), rather than up to
    the whole round apart. With an odd number of others the middle alternates round by round (with one other
    stack: AB, BA, AB, ...), so neither side is always measured first. A baseline cell whose load point has no
    other cell in the round keeps its place in the random order."""
    order = shuffled(items, seed, repetition)
    bases = {point_of(i): i for i in order if stack_of(i) == baseline}
    others = [i for i in order if stack_of(i) != baseline]
    counts: dict[Any, int] = {}
    for item in others:
        counts[point_of(item)] = counts.get(point_of(item), 0) + 1
    placed: list[T] = []
    seen: dict[Any, int] = {}
    for item in order:
        if stack_of(item) == baseline:
            if point_of(item) not in counts:
                placed.append(item)
            continue
        point = point_of(item)
        k = counts[point]
        after = k // 2 if k % 2 == 0 else k // 2 + repetition % 2
        if after == seen.get(point, 0) and point in bases:
            placed.append(bases[point])
        placed.append(item)
        seen[point] = seen.get(point, 0) + 1
        if seen[point] == k == after and point in bases:
            placed.append(bases[point])
    return placed


def cells(exp: Experiment, seed: int | None = None) -> list[CellPlan]:
    """Every cell of the experiment in measuring order: round after round (repetition), each measuring every
    load point once. With a ``seed`` each round takes its load points in a random order drawn from it, so
    drift and bursts on the hosts hit every stack alike (Abedi and Brecht, ICPE 2017), with each load point's
    baseline cell in the middle of its others (:func:`paired`); without one, the stacks are rotated round by
    round and each stack's load points kept in plan order."""
    plans: list[CellPlan] = []
    for repetition in range(1, exp.load.repetitions + 1):
        if seed is None:
            plans += [
                cell_plan(exp, stack, point, repetition)
                for stack in rotated(exp.stacks, repetition)
                for point in load_points(exp)
            ]
            continue
        points = [(stack, point) for stack in exp.stacks for point in load_points(exp)]
        order = paired(
            points, seed, repetition, exp.load.baseline, lambda p: p[0]["name"], lambda p: p[1].key
        )
        plans += [cell_plan(exp, *pair, repetition) for pair in order]
    return plans
