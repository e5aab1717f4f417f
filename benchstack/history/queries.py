"""What the history database answers: the runs (:func:`runs`), a load point or a comparison over time
(:func:`trend`), and whether a run is slower than the previous runs of its experiment on a comparable host
(:func:`regression`).

Comparable (:func:`comparable_key`, docs/history.md): the same experiment (name and hash: the same stacks
and load plan), the same mode (loopback or network), and targets with the same CPU model, CPU count,
architecture and kernel major version. A run on another machine type, or after a kernel upgrade, starts
its own line of history.

The regression check holds each load point's median req/s and its 95 % interval (as the report shows them)
against the previous comparable runs': their medians' median is the reference, and the envelope of their
intervals its range. The ratio's interval is the current interval over that range, so it is wide where
either side is uncertain: a load point is ``slower`` only when the whole interval lies below
``1 - margin``, ``faster`` above ``1 + margin``, ``within`` inside ``1 +- margin``, else ``unresolved``.
Absolute figures move with the host's own speed between sittings (docs/verdict.md); the margin absorbs
that drift, and the comparisons' ratios over time (``bench-stack trend``) do not depend on it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, selectinload

from benchstack.common.numbers import median
from benchstack.history.database import HistoryError
from benchstack.history.defaults import DEFAULT_MARGIN, DEFAULT_PREVIOUS, SLOWER, state_of
from benchstack.history.schema import HostRow, LoadPointRow, RunRow


def utc(when: datetime | None) -> datetime | None:
    """A stored time as UTC: SQLite hands back naive datetimes, PostgreSQL aware ones."""
    if when is None:
        return None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _loaded() -> tuple[Any, ...]:
    return (
        selectinload(RunRow.hosts),
        selectinload(RunRow.load_points),
        selectinload(RunRow.comparisons),
    )


def runs(
    engine: Engine,
    experiment: str | None = None,
    stack: str | None = None,
    host: str | None = None,
    limit: int | None = None,
) -> list[RunRow]:
    """The recorded runs, oldest first (the newest ``limit``), with their hosts, load points and comparisons
    loaded: of ``experiment``, measuring ``stack``, on (or loaded from) the host named ``host``."""
    query = select(RunRow).options(*_loaded())
    if experiment:
        query = query.where(RunRow.experiment == experiment)
    if stack:
        query = query.where(RunRow.load_points.any(LoadPointRow.stack == stack))
    if host:
        query = query.where(RunRow.hosts.any(HostRow.name == host))
    query = query.order_by(RunRow.started_at.desc(), RunRow.id.desc())
    if limit:
        query = query.limit(limit)
    with Session(engine) as session:
        found = list(session.scalars(query))
        session.expunge_all()
    return found[::-1]


def find_run(engine: Engine, key: str) -> RunRow:
    """The run whose uid starts with ``key``, or whose folder name or path is ``key`` (the newest)."""
    query = select(RunRow).options(*_loaded()).order_by(RunRow.started_at.desc(), RunRow.id.desc())
    with Session(engine) as session:
        found = [
            run
            for run in session.scalars(query)
            if run.name == key or run.path == key or (len(key) >= 6 and run.uid.startswith(key))
        ]
        session.expunge_all()
    if not found:
        raise HistoryError(f"{key}: no such run in the history (bench-stack history lists them)")
    return found[0]


def kernel_major(kernel: str | None) -> str | None:
    """``6`` of ``6.18.44-fc-v1252``."""
    return kernel.split(".", 1)[0] if kernel else None


def targets_of(run: RunRow) -> list[HostRow]:
    return [h for h in run.hosts if h.role in ("target", "both")]


def comparable_key(run: RunRow) -> tuple[object, ...]:
    """What two runs must share for their absolute figures to be compared (module docstring)."""
    hosts = tuple(
        sorted(
            (h.cpu_model or "", h.cpu_count or 0, h.architecture or "", kernel_major(h.kernel) or "")
            for h in targets_of(run)
        )
    )
    return (run.experiment, run.experiment_sha256, run.mode, hosts)


def previous_comparable(engine: Engine, run: RunRow, count: int = DEFAULT_PREVIOUS) -> list[RunRow]:
    """The ``count`` newest runs before ``run`` that are comparable to it, oldest first."""
    before = [
        other
        for other in runs(engine, experiment=run.experiment)
        if other.uid != run.uid
        and other.started_at is not None
        and run.started_at is not None
        and utc(other.started_at) < utc(run.started_at)  # type: ignore[operator]
        and comparable_key(other) == comparable_key(run)
    ]
    return before[-count:] if count > 0 else before


PointKey = tuple[str, str, str, bool, int]


def point_key(p: LoadPointRow) -> PointKey:
    return (p.target, p.stack, p.tool, p.keepalive, p.level)


@dataclass(frozen=True)
class PointCheck:
    key: PointKey
    median: float | None
    reference: float | None  # the previous runs' medians' median
    previous: int  # how many previous runs measured the load point
    ratio: float | None
    low: float | None
    high: float | None
    state: str


def _bounds(p: LoadPointRow) -> tuple[float, float] | None:
    """A load point's interval, else its median alone (fewer than 6 counted cells)."""
    if p.ci_low is not None and p.ci_high is not None:
        return p.ci_low, p.ci_high
    if p.median_rps is not None:
        return p.median_rps, p.median_rps
    return None


def check_point(current: LoadPointRow, previous: Sequence[LoadPointRow], margin: float) -> PointCheck:
    """One load point against the same load point of the previous runs (module docstring)."""
    medians = [p.median_rps for p in previous if p.median_rps is not None]
    reference = median(medians)
    mine = _bounds(current)
    theirs = [b for b in (_bounds(p) for p in previous) if b is not None]
    ratio = low = high = None
    if current.median_rps is not None and reference:
        ratio = current.median_rps / reference
    if mine is not None and theirs:
        ref_low, ref_high = min(b[0] for b in theirs), max(b[1] for b in theirs)
        if ref_low > 0 and ref_high > 0:
            low, high = mine[0] / ref_high, mine[1] / ref_low
    return PointCheck(
        point_key(current),
        current.median_rps,
        reference,
        len(medians),
        ratio,
        low,
        high,
        state_of(low, high, margin),
    )


@dataclass(frozen=True)
class Regression:
    run: RunRow
    previous: list[RunRow]
    checks: list[PointCheck]
    margin: float

    @property
    def slower(self) -> list[PointCheck]:
        return [c for c in self.checks if c.state == SLOWER]


def regression(
    engine: Engine, run: RunRow, margin: float = DEFAULT_MARGIN, count: int = DEFAULT_PREVIOUS
) -> Regression:
    """``run``'s load points against the previous comparable runs' (module docstring)."""
    previous = previous_comparable(engine, run, count)
    by_key: dict[PointKey, list[LoadPointRow]] = {}
    for other in previous:
        for p in other.load_points:
            by_key.setdefault(point_key(p), []).append(p)
    checks = [
        check_point(p, by_key[point_key(p)], margin)
        for p in sorted(run.load_points, key=point_key)
        if point_key(p) in by_key
    ]
    return Regression(run, previous, checks, margin)


@dataclass(frozen=True)
class TrendRow:
    run: RunRow
    point: LoadPointRow
    comparison_state: str | None
    ratio: float | None
    low: float | None
    high: float | None
    pairs: int | None
    baseline: str | None


def trend(
    engine: Engine,
    experiment: str,
    stack: str,
    tool: str | None = None,
    level: int | None = None,
    host: str | None = None,
) -> list[TrendRow]:
    """``stack``'s load points in every run of ``experiment`` (of ``tool`` at ``level`` when given, on the
    target ``host``), oldest first, each with its comparison against the baseline when it has one."""
    rows = []
    for run in runs(engine, experiment=experiment, stack=stack, host=host):
        compared = {(c.target, c.stack, c.tool, c.keepalive, c.level): c for c in run.comparisons}
        for p in sorted(run.load_points, key=point_key):
            if p.stack != stack or (tool and p.tool != tool) or (level is not None and p.level != level):
                continue
            if host and p.target not in (host, "-"):
                continue
            c = compared.get(point_key(p))
            rows.append(
                TrendRow(
                    run,
                    p,
                    c.state if c else None,
                    c.ratio if c else None,
                    c.low if c else None,
                    c.high if c else None,
                    c.pairs if c else None,
                    c.baseline if c else None,
                )
            )
    return rows
