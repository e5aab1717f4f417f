"""Experiment files: load, validate, expand into cells.

An experiment names its stacks and a load plan (see ``experiments/*.yml``). Validation reports every problem
at once, each naming its field (``load.plans[1].duration_s: ...``). Stacks are validated by
:func:`benchstack.stacks.resolve_stacks`, the one stack validator, so this command line and the playbook's
plan (:mod:`benchstack.plan`) accept and refuse exactly the same experiments.

Cells are measured in rounds (repetitions): every load point once before any twice, so slow drift on the
hosts spreads over every stack instead of biasing one. A run takes each round's load points in a random
order drawn from its seed (:func:`cells`; recorded in run.json); without a seed the stacks are rotated round
by round (r1: A B C, r2: B C A). Cell ids do not depend on the order.

``load.max_cv`` (default 0.05) is the coefficient of variation of req/s over a load point's repetitions above
which the report marks it noisy; ``load.max_repetitions`` (default: ``repetitions``) is how many repetitions
a noisy load point may get in all (see :mod:`benchstack.repetitions`). ``load.max_error_rate`` (default
0.01) is the share of failed requests (:mod:`benchstack.model`, slow ones over ``threshold_ms`` included)
above which a cell's numbers count as invalid in the run's verdict (:mod:`benchstack.verdict`); 1 turns the
check off, for an experiment that looks for the breaking point on purpose.
"""

from __future__ import annotations

import codecs
import os
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchstack.cell import cell_id
from benchstack.inputs import MAX_EXPERIMENT_BYTES, InputError, load_yaml, read_bounded, shown, shown_key
from benchstack.loadcmd import build_command
from benchstack.loadtools import MAX_CONCURRENCY as TOOL_MAX_CONCURRENCY
from benchstack.loadtools import REGISTRY, TOOLS, by_name, find
from benchstack.loadtools.base import MAX_DURATION_S, MAX_REQUESTS, bounded_int
from benchstack.numbers import is_finite_number, is_int, is_number
from benchstack.stacks import DEFAULT_ROOTS, Roots, StackError, resolve_stacks, url_path_problem
from benchstack.trace import note

MAX_REPETITIONS = 100
DEFAULT_MAX_CV = 0.05
DEFAULT_MAX_ERROR_RATE = 0.01
# Half-width of a load point's 95 % interval of the median req/s, over the median, that ends its extra rounds.
DEFAULT_TARGET_PRECISION = 0.05
# Foreign CPU (host busy minus our processes, plus steal), as a share of all the host's CPU time during a
# cell, above which the cell is disturbed: kept, not counted, measured again (benchstack.interference).
DEFAULT_MAX_INTERFERENCE = 0.10
MAX_SECONDS = 7 * 24 * 3600
# The name ends the run folder's name (<UTC timestamp>-<name>): 300 characters passed every check and
# failed at 'Write run.json', 22 s into a run, as "File name too long".
MAX_NAME = 64
NAME_RE = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_NAME - 1}}}$")
# Closed loop: at most this many concurrent connections. It is ab's own compiled-in limit, and it keeps wrk
# (one socket and about 10 kB per connection) inside the benchmark user's 65,536 open files
# (bench_host_nofile) and one loadgen address's 64,511 ports to a target port, even in loopback mode where
# both ends of every connection are on one host. A billion made wrk abort out of memory.
MAX_CONCURRENCY = TOOL_MAX_CONCURRENCY
# Open loop: at most this many new connections a second. httperf is one process on one core that watches
# its connections with select() (1,024 descriptors): at 20,000/s an answer of 50 ms already holds 1,000 of
# them, so above it the cell measures httperf's limits, not the stack's.
MAX_RATE = 20_000
# A slow request's limit: above the longest timeout (MAX_DURATION_S) no request waits that long.
MAX_THRESHOLD_MS = MAX_DURATION_S * 1000
# Unknown fields listed by name; past these, counted. A file that is not an experiment has many.
MAX_UNKNOWN_LISTED = 5

TOP_KEYS = {"name", "description", "stacks", "load"}
LOAD_KEYS = {
    "path", "threshold_ms", "warmup", "pause_s", "repetitions", "max_repetitions", "max_cv", "max_error_rate",
    "plans", "baseline", "target_precision", "max_seconds", "max_interference", "seed",
}  # fmt: skip
# Seconds between a cell's warm-up and its measurement by default: closed connections leave TIME_WAIT and
# the servers finish their backlog, so the measurement does not start on the warm-up's tail.
DEFAULT_PAUSE_S = 1
MAX_PAUSE_S = 60
PLAN_KEYS = {"tool", "concurrency", "rate", "requests", "duration_s", "threads", "keepalive", "timeout_s"}
WARMUP_KEYS = {"requests", "duration_s"}


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
class CellPlan:
    """One cell to measure: a stack, a load point and a repetition."""

    cell_id: str
    stack: str
    port: int
    tool: str
    # Closed loop (ab, wrk): the number of concurrent clients. Open loop (httperf): None, and ``rate``
    # is the offered requests per second.
    concurrency: int | None
    requests: int | None
    duration_s: int | None
    threads: int | None
    keepalive: bool
    timeout_s: int | None
    repetition: int
    path: str
    threshold_ms: float | None
    warmup: dict[str, int] | None
    pause_s: float = DEFAULT_PAUSE_S
    rate: int | None = None
    # The target the cell is measured on: set by the run's plan (benchstack.targets), None without an
    # inventory (bench-stack experiment).
    target: str | None = None
    # Foreign + steal CPU share above which the cell is disturbed (load.max_interference).
    max_interference: float = DEFAULT_MAX_INTERFERENCE


@dataclass
class Experiment:
    name: str
    description: str
    stacks: list[dict[str, Any]]
    load: dict[str, Any]
    source: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    # The stacks with everything derived (benchstack.stacks.resolve_stacks).
    resolved: list[dict[str, Any]] = field(default_factory=list, repr=False)


def _unknown(problems: list[str], where: str, d: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(d) - allowed, key=str)
    for key in unknown[:MAX_UNKNOWN_LISTED]:
        problems.append(f"{where}{shown_key(key)}: unknown field (allowed: {', '.join(sorted(allowed))})")
    if len(unknown) > MAX_UNKNOWN_LISTED:
        more = len(unknown) - MAX_UNKNOWN_LISTED
        problems.append(f"{where.rstrip('.') or 'the experiment'}: {more} more unknown fields")


def validate_experiment(data: object, roots: Roots = DEFAULT_ROOTS) -> list[str]:
    """Every problem with an experiment mapping, each naming its field; empty when valid."""
    return _validated(data, roots)[0]


def _validated(
    data: object, roots: Roots, base_dir: Path | None = None
) -> tuple[list[str], list[dict[str, Any]]]:
    """Every problem with an experiment mapping, and its stacks resolved (when they are valid); a relative
    ``app.src`` is taken from ``base_dir``, the experiment file's folder."""
    if not isinstance(data, dict):
        return [f"an experiment must be a mapping, not {type(data).__name__}"], []
    problems: list[str] = []
    _unknown(problems, "", data, TOP_KEYS)
    name = data.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        problems.append(
            f"name: must be a word of 1 to {MAX_NAME} letters, digits, '.', '_' or '-' (it names the run "
            f"folder), not {shown(name)}"
        )
    if "description" in data and not isinstance(data["description"], str):
        problems.append("description: must be a string")
    # The one stack validator, the one the playbook's plan uses too.
    resolved: list[dict[str, Any]] = []
    try:
        resolved = resolve_stacks(data.get("stacks"), roots, base_dir)
    except StackError as exc:
        problems += exc.problems
    problems += _validate_load(data.get("load"))
    baseline = data.get("load", {}).get("baseline") if isinstance(data.get("load"), dict) else None
    if baseline is not None:
        names = [s.get("name") for s in data.get("stacks") or [] if isinstance(s, dict)]
        if baseline not in names:
            problems.append(
                f"load.baseline: must name one of the stacks ({', '.join(map(shown_key, names))}), "
                f"not {shown(baseline)}"
            )
    return problems, resolved


def _validate_load(load: object) -> list[str]:
    if not isinstance(load, dict):
        return ["load: must be a mapping with plans"]
    problems: list[str] = []
    _unknown(problems, "load.", load, LOAD_KEYS)
    path = load.get("path", "/")
    if problem := url_path_problem(path):
        problems.append(f"load.path: {problem}")
    threshold = load.get("threshold_ms")
    if threshold is not None and (not is_finite_number(threshold) or not 0 < threshold <= MAX_THRESHOLD_MS):
        problems.append(
            "load.threshold_ms: must be a positive number of milliseconds (finite, at most "
            f"{MAX_THRESHOLD_MS:_}), not {shown(threshold)}"
        )
    pause = load.get("pause_s", DEFAULT_PAUSE_S)
    if not is_number(pause) or not 0 <= pause <= MAX_PAUSE_S:
        problems.append(
            f"load.pause_s: must be a number of seconds from 0 to {MAX_PAUSE_S}, not {shown(pause)}"
        )
    reps_ok = bounded_int(problems, "load.repetitions", load.get("repetitions", 1), MAX_REPETITIONS)
    if "max_repetitions" in load:
        cap = load["max_repetitions"]
        if bounded_int(problems, "load.max_repetitions", cap, MAX_REPETITIONS) and reps_ok:
            reps = load.get("repetitions", 1)
            if cap < reps:
                problems.append(
                    f"load.max_repetitions: must be at least load.repetitions ({reps}), not {cap}"
                )
    if "max_cv" in load:
        max_cv = load["max_cv"]
        if not is_number(max_cv) or not 0 < max_cv <= 10:
            problems.append(
                f"load.max_cv: must be a coefficient of variation above 0 (0.05 = 5 %), not {shown(max_cv)}"
            )
    if "max_error_rate" in load:
        rate = load["max_error_rate"]
        if not is_number(rate) or not 0 <= rate <= 1:
            problems.append(
                f"load.max_error_rate: must be a share from 0 to 1 (0.01 = 1 %), not {shown(rate)}"
            )
    precision = load.get("target_precision", DEFAULT_TARGET_PRECISION)
    if not is_number(precision) or not 0 < precision < 1:
        problems.append(
            "load.target_precision: must be a share above 0 and below 1 (0.05 = +-5 %), "
            f"not {shown(precision)}"
        )
    interference = load.get("max_interference", DEFAULT_MAX_INTERFERENCE)
    if not is_number(interference) or not 0 < interference <= 1:
        problems.append(
            "load.max_interference: must be a share of the host's CPU above 0 and at most 1 (0.1 = 10 %, "
            f"1 = never disturbed), not {shown(interference)}"
        )
    if load.get("max_seconds") is not None:
        bounded_int(problems, "load.max_seconds", load["max_seconds"], MAX_SECONDS)
    if "seed" in load and (not is_int(load["seed"]) or not 0 <= load["seed"] < 2**32):
        problems.append(f"load.seed: must be an integer from 0 to {2**32 - 1}, not {shown(load['seed'])}")
    warmup = load.get("warmup")
    if warmup is not None:
        if not isinstance(warmup, dict) or len(set(warmup) & WARMUP_KEYS) != 1:
            problems.append("load.warmup: must be a mapping with one of requests or duration_s")
        else:
            _unknown(problems, "load.warmup.", warmup, WARMUP_KEYS)
            if "requests" in warmup:
                bounded_int(problems, "load.warmup.requests", warmup["requests"], MAX_REQUESTS)
            if "duration_s" in warmup:
                bounded_int(problems, "load.warmup.duration_s", warmup["duration_s"], MAX_DURATION_S)
    plans = load.get("plans")
    if not isinstance(plans, list) or not plans:
        problems.append("load.plans: must be a non-empty list of load plans")
        return problems
    seen: dict[tuple[str, bool, int], int] = {}
    for i, plan in enumerate(plans):
        problems += _validate_plan(i, plan, seen)
    return problems


def _validate_plan(i: int, plan: object, seen: dict[tuple[str, bool, int], int]) -> list[str]:
    where = f"load.plans[{i}]"
    if not isinstance(plan, dict):
        return [f"{where}: must be a mapping"]
    problems: list[str] = []
    _unknown(problems, f"{where}.", plan, PLAN_KEYS)
    tool = plan.get("tool")
    adapter = find(tool)
    if adapter is None:
        problems.append(f"{where}.tool: must be one of {', '.join(TOOLS)}, not {shown(tool)}")
        return problems
    if adapter.open_loop:
        return problems + _validate_open_plan(where, plan, seen, i)
    levels = _levels(problems, where, plan, "concurrency", MAX_CONCURRENCY)
    if "rate" in plan:
        open_loop = ", ".join(t.name for t in REGISTRY.values() if t.open_loop)
        problems.append(f"{where}.rate: {tool} is closed loop (concurrency); rate applies to {open_loop}")
    ok = adapter.check_plan(where, plan, problems)
    if "keepalive" in plan and not isinstance(plan["keepalive"], bool):
        problems.append(f"{where}.keepalive: must be true or false")
        ok = False
    if "timeout_s" in plan:
        ok = bounded_int(problems, f"{where}.timeout_s", plan["timeout_s"], MAX_DURATION_S) and ok
    if not ok:
        return problems
    keepalive = plan_keepalive(plan)
    for level in levels:
        try:
            build_command(
                tool,
                "http://127.0.0.1:1/",
                level,
                requests=plan.get("requests"),
                duration_s=plan.get("duration_s"),
                threads=plan.get("threads"),
                keepalive=keepalive,
                timeout_s=plan.get("timeout_s"),
            )
        except ValueError as exc:
            problems.append(f"{where}: at concurrency {level}: {exc}")
        key = (tool, keepalive, level)
        if key in seen:
            problems.append(
                f"{where}: {tool} at concurrency {level} (keep-alive {'on' if keepalive else 'off'}) "
                f"is already measured by load.plans[{seen[key]}]; the cells would collide"
            )
        else:
            seen[key] = i
    return problems


def _levels(problems: list[str], where: str, plan: dict[str, Any], key: str, maximum: int) -> list[int]:
    given = plan.get(key)
    levels = [given] if is_int(given) else given
    if not isinstance(levels, list) or not levels or not all(is_int(c) and 1 <= c <= maximum for c in levels):
        problems.append(
            f"{where}.{key}: must be a positive integer or a list of them (at most {maximum:_}), "
            f"not {shown(given)}"
        )
        return []
    if len(set(levels)) != len(levels):
        twice = sorted(c for c, n in Counter(levels).items() if n > 1)
        problems.append(f"{where}.{key}: lists a level twice: {shown(twice)}")
    return levels


def _validate_open_plan(
    where: str, plan: dict[str, Any], seen: dict[tuple[str, bool, int], int], i: int
) -> list[str]:
    """An open-loop tool: a list of offered rates for a bounded duration (the rest: its adapter)."""
    problems: list[str] = []
    tool = plan["tool"]
    levels = _levels(problems, where, plan, "rate", MAX_RATE)
    by_name(tool).check_plan(where, plan, problems)
    for level in levels:
        if is_int(plan.get("duration_s")) and level * plan["duration_s"] > MAX_REQUESTS:
            problems.append(
                f"{where}: rate {level} for {plan['duration_s']} s is more than {MAX_REQUESTS:_} requests"
            )
        key = (tool, False, level)
        if key in seen:
            problems.append(f"{where}: {tool} at rate {level} is already measured by load.plans[{seen[key]}]")
        else:
            seen[key] = i
    return problems


def plan_keepalive(plan: dict[str, Any]) -> bool:
    return by_name(plan["tool"]).keepalive(plan)


def experiment_from_dict(data: object, source: str | None = None, roots: Roots = DEFAULT_ROOTS) -> Experiment:
    """An Experiment from a parsed YAML mapping, its stacks resolved under ``roots``; raises ExperimentError
    listing every problem. A relative ``app.src`` is taken from the folder of the file ``source``."""
    problems, resolved = _validated(data, roots, _folder_of(source))
    if problems:
        raise ExperimentError(problems, source)
    assert isinstance(data, dict)
    load = dict(data["load"])
    load.setdefault("path", "/")
    load.setdefault("threshold_ms", None)
    load.setdefault("warmup", None)
    load.setdefault("pause_s", DEFAULT_PAUSE_S)
    load.setdefault("repetitions", 1)
    load.setdefault("max_repetitions", load["repetitions"])
    load.setdefault("max_cv", DEFAULT_MAX_CV)
    load.setdefault("max_error_rate", DEFAULT_MAX_ERROR_RATE)
    load.setdefault("target_precision", DEFAULT_TARGET_PRECISION)
    load.setdefault("max_interference", DEFAULT_MAX_INTERFERENCE)
    load.setdefault("max_seconds", None)
    load.setdefault("baseline", data["stacks"][0]["name"])
    return Experiment(
        name=data["name"],
        description=data.get("description", ""),
        stacks=list(data["stacks"]),
        load=load,
        source=source,
        raw=data,
        resolved=resolved,
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


def load_points(exp: Experiment) -> list[tuple[dict[str, Any], int]]:
    """The (plan, level) pairs measured on every stack, in plan order; a level is a concurrency, or an
    offered rate for an open-loop tool."""
    points = []
    for plan in exp.load["plans"]:
        levels = plan["rate"] if by_name(plan["tool"]).open_loop else plan["concurrency"]
        points += [(plan, level) for level in ([levels] if isinstance(levels, int) else levels)]
    return points


def cell_plan(
    exp: Experiment, stack: dict[str, Any], plan: dict[str, Any], level: int, repetition: int
) -> CellPlan:
    """The cell of one stack, one load point and one repetition."""
    load = exp.load
    tool = by_name(plan["tool"])
    keepalive = tool.keepalive(plan)
    threads = tool.threads(plan, level)
    rate = level if tool.open_loop else None
    open_loop = rate is not None
    return CellPlan(
        cell_id=cell_id(stack["name"], plan["tool"], level, repetition, keepalive, open_loop=open_loop),
        stack=stack["name"],
        port=stack["port"],
        tool=plan["tool"],
        concurrency=None if rate is not None else level,
        rate=rate,
        requests=plan.get("requests"),
        duration_s=plan.get("duration_s"),
        threads=threads,
        keepalive=keepalive,
        timeout_s=plan.get("timeout_s"),
        repetition=repetition,
        path=stack.get("path", load["path"]),
        threshold_ms=load["threshold_ms"],
        warmup=load["warmup"],
        pause_s=load["pause_s"],
        max_interference=load.get("max_interference", DEFAULT_MAX_INTERFERENCE),
    )


def shuffled(items: list[Any], seed: int, repetition: int) -> list[Any]:
    """``items`` in repetition ``repetition``'s random order, drawn from ``seed`` (the same seed and
    repetition give the same order: a resumed run measures as the first attempt planned)."""
    order = list(items)
    random.Random(f"bench-stack:{seed}:{repetition}").shuffle(order)
    return order


def cells(exp: Experiment, seed: int | None = None) -> list[CellPlan]:
    """Every cell of the experiment in measuring order: round after round (repetition), each measuring every
    load point once. With a ``seed`` each round takes its load points in a random order drawn from it, so
    drift and bursts on the hosts hit every stack alike (Abedi and Brecht, ICPE 2017); without one, the
    stacks are rotated round by round and each stack's load points kept in plan order."""
    plans: list[CellPlan] = []
    for repetition in range(1, exp.load["repetitions"] + 1):
        if seed is None:
            plans += [
                cell_plan(exp, stack, plan, level, repetition)
                for stack in rotated(exp.stacks, repetition)
                for plan, level in load_points(exp)
            ]
            continue
        points = [(stack, plan, level) for stack in exp.stacks for plan, level in load_points(exp)]
        plans += [cell_plan(exp, *point, repetition) for point in shuffled(points, seed, repetition)]
    return plans
