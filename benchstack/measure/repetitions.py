"""Extra rounds: measure again until every comparison with the baseline is resolved, or the budget ends.

A run is for its comparisons (:mod:`benchstack.analysis.comparison`: each ends faster, slower, equivalent or
unresolved), so they decide the rounds. Every load point first gets ``load.repetitions`` rounds. Then, round
by round, :func:`due` picks the load points of the next round:

* the two load points of every **unresolved** comparison: the stack's and the baseline's of the same tool and
  level (a comparison pairs their cells by round), until it has ``load.max_repetitions`` pairs or either load
  point reaches its bound of cells in all (:func:`pairs_below_bounds`). A resolved comparison
  stops its stack; the baseline goes on while any comparison at its load point is unresolved. A load point's
  own median precision neither stops nor starts rounds of a load point that takes part in a comparison;
* a load point with fewer than ``load.repetitions`` counted cells: a disturbed cell
  (:func:`benchstack.results.cell.is_disturbed`) is kept as evidence and measured again, with its baseline's
  cell beside it so the round still pairs;
* a load point that takes part in no comparison (a run of one stack, or a load point the baseline lacks)
  while its median's precision is not known or not good enough: the half-width of the distribution-free 95 %
  interval of its median req/s over the median (:func:`benchstack.analysis.stats.relative_half_width`) is
  unknown (fewer than 6 counted cells) or above ``load.target_precision``.

An extra cell's repetition number is its round's, the same for every cell of the round (one more than the
target's highest so far), so a repetition number names one stretch of time: a load point that skipped rounds
has gaps in its numbers, and never pairs cells measured minutes apart. A round takes its load points in a
random order drawn from the run's seed, each baseline cell in the middle of its load point's others
(:func:`benchstack.plan.experiment.paired`), so a pair's cells are one or two cells apart; when one
comparison is left, a round is its two cells, in alternating order.

Bounds: at most ``load.max_repetitions`` pairs per comparison, and counted cells per load point outside
comparisons (a baseline, or a stack whose partner cells were disturbed, may count more: its cells pair with
its comparisons' rounds), at most twice max_repetitions cells in all per load point (a host that disturbs
every cell ends the rounds), and no round starts once ``load.max_seconds`` have passed
since the target's first cell. The playbook asks for the next round with :func:`extra_cells` and measures
it, until the answer is empty.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from benchstack.analysis.comparison import Comparison, Settings, compare_to_baseline
from benchstack.analysis.loadpoints import by_load_point, point_figures
from benchstack.plan.experiment import Experiment, LoadPoint, cell_plan, load_points, paired
from benchstack.plan.loadplan import MAX_CELLS_PER_COUNTED, Load
from benchstack.plan.targets import for_target
from benchstack.records.cellplan import CellPlan
from benchstack.results.cell import Cell, counted, load_cells


def precision(cells_of_point: Sequence[Cell]) -> float | None:
    """The load point's precision: the relative half-width of its median's 95 % interval over the counted
    cells (None below 6 of them)."""
    return point_figures(counted(list(cells_of_point))).precision


def below_bounds(cells_of_point: Sequence[Cell], load: Load) -> bool:
    """Whether one load point may get another cell: below ``load.max_repetitions`` counted cells and twice
    that many in all."""
    cells = list(cells_of_point)
    cap = load.repetition_cap
    return len(counted(cells)) < cap and len(cells) < MAX_CELLS_PER_COUNTED * cap


def pairs_below_bounds(c: Comparison, cells: Sequence[Cell], base_cells: Sequence[Cell], load: Load) -> bool:
    """Whether an unresolved comparison may have another round: fewer than ``load.max_repetitions`` pairs,
    and both load points below their bound of cells in all. Pairs, not counted cells: a stack's counted cell
    whose baseline cell of the same round was disturbed pairs with nothing, so under a busy host both sides
    reached max_repetitions counted cells with 5 pairs each and the comparison could never resolve (e2e in CI,
    2026-12-04: 58 of 133 cells disturbed by the other lane)."""
    cap = load.repetition_cap
    bound = MAX_CELLS_PER_COUNTED * cap
    return c.pairs < cap and len(cells) < bound and len(base_cells) < bound


def more_needed(cells_of_point: Sequence[Cell], load: Load) -> bool:
    """Whether one load point's stored cells call for another round (module docstring)."""
    cells = list(cells_of_point)
    good = counted(cells)
    if not below_bounds(cells, load):
        return False
    if len(good) < load.repetitions:
        return True
    reached = precision(good)
    return reached is None or reached > load.target_precision


def first_extra_round(planned: Sequence[CellPlan], exp: Experiment) -> bool:
    """Whether ``planned`` (an answer of :func:`extra_cells`) is the run's first extra round: it holds the
    first repetition after the regular ones. Later rounds hold none: every cell of a round carries the
    round's number, one more than the highest stored."""
    return bool(planned) and min(int(c.repetition) for c in planned) == exp.load.repetitions + 1


def _budget_left(stored: Sequence[Cell], load: Load, now: datetime | None) -> float | None:
    """Seconds of ``load.max_seconds`` left since the target's first cell (None without a budget or cells)."""
    budget = load.max_seconds
    started = [c.started_at for c in stored if c.started_at]
    if not budget or not started:
        return None
    first = min(datetime.fromisoformat(str(s).replace("Z", "+00:00")) for s in started)
    return float(budget) - ((now or datetime.now(UTC)) - first).total_seconds()


Key = tuple[str, str, bool, int]  # (stack, tool, keep-alive, level): a load point on one target


def settings_of(load: Load) -> Settings:
    return Settings(margin=load.equivalence, confidence=load.confidence)


def due(stored: Sequence[Cell], exp: Experiment, ready: Sequence[Key]) -> dict[Key, str]:
    """The load points of the next round among ``ready`` (those whose regular rounds are stored), each with
    why (module docstring), as the run's progress line says it: an unresolved comparison (its ratio so far),
    the baseline of unresolved comparisons, a disturbed cell measured again, or a median not yet precise."""
    load = exp.load
    groups = by_load_point(list(stored))
    ready_set = set(ready)
    found: dict[Key, str] = {}

    def cells_of(key: Key) -> list[Cell]:
        return groups.get(key, [])

    def base_of(key: Key) -> Key:
        return (str(load.baseline), *key[1:])

    compared: set[Key] = set()
    waiting: dict[Key, int] = {}  # the baseline's load points: how many unresolved comparisons wait for them
    order = [str(s["name"]) for s in exp.stacks]
    for c in compare_to_baseline(list(stored), str(load.baseline), order, settings_of(load)):
        key: Key = (c.stack, c.tool, c.keepalive, c.level)
        if key not in ready_set or base_of(key) not in ready_set:
            continue
        compared |= {key, base_of(key)}
        if not c.resolved and pairs_below_bounds(c, cells_of(key), cells_of(base_of(key)), load):
            found.setdefault(key, _unresolved_label(c))
            waiting[base_of(key)] = waiting.get(base_of(key), 0) + 1
    for key, n in waiting.items():
        found.setdefault(key, f"the baseline of {n} unresolved comparison{'s' if n > 1 else ''}")
    for key in ready:
        cells = cells_of(key)
        if not below_bounds(cells, load):
            continue
        if len(counted(cells)) < load.repetitions:
            found.setdefault(key, "a disturbed cell measured again")
            base = base_of(key)
            if base != key and base in ready_set and below_bounds(cells_of(base), load):
                found.setdefault(base, "the baseline beside a disturbed cell measured again")
        elif key not in compared:
            reached = precision(cells)
            if reached is None or reached > load.target_precision:
                shown = "unknown" if reached is None else f"+-{100 * reached:.1f} %"
                wanted = f"+-{100 * load.target_precision:g} %"
                found.setdefault(key, f"its median known to {shown}, {wanted} wanted")
    return found


def _unresolved_label(c: Comparison) -> str:
    if c.low is None or c.high is None:
        return f"unresolved against {c.baseline}: {c.pairs} pairs, {c.pairs_needed} needed for an interval"
    return (
        f"unresolved against {c.baseline}: {c.ratio:.2f}x ({c.low:.2f}-{c.high:.2f}) over {c.pairs} pairs, "
        f"about {c.pairs_needed} needed"
    )


@dataclass(frozen=True)
class ExtraRound:
    """The next round's cells, in measuring order, and why each is measured (by cell id)."""

    cells: list[CellPlan]
    why: dict[str, str]
    left_s: float | None = None  # of load.max_seconds, when the round was planned

    def labels(self, budget: int | None) -> dict[str, str]:
        """Each cell's progress label: ``extra round 12: <why>; 95 s of the 240 s budget left``."""
        left = ""
        if budget and self.left_s is not None:
            left = f"; {max(0.0, self.left_s):.0f} s of the {budget} s budget left"
        return {c.cell_id: f"extra round {c.repetition}: {self.why[c.cell_id]}{left}" for c in self.cells}

    @property
    def number(self) -> int | None:
        """The round's repetition number (every cell of a round has it), None for no round."""
        return int(self.cells[0].repetition) if self.cells else None

    def serves(self) -> list[str]:
        """What the round is for, once per load point that needs it (the baseline's cells serve those):
        ``sinatra-thin-x4-nginx wrk c32: unresolved against sinatra-thin-x1: 1.08x (0.99-1.17) over 10
        pairs, about 13 needed``. Only baseline cells (beside a disturbed cell): each with its reason."""
        mine = [c for c in self.cells if not self.why[c.cell_id].startswith("the baseline")]
        return [f"{point_of(c.cell_id)}: {self.why[c.cell_id]}" for c in mine or self.cells]


def point_of(cell_id: str) -> str:
    """A cell's load point as a person reads it: ``nginx-static wrk c32`` (cell ``...__r11``)."""
    head, sep, tail = cell_id.rpartition("__r")
    return (head if sep and tail.isdigit() else cell_id).replace("__", " ")


def extra_cells(
    run_dir: str | os.PathLike[str],
    exp: Experiment,
    target: str | None = None,
    targets: Sequence[str] = (),
    seed: int | None = None,
    now: datetime | None = None,
) -> list[CellPlan]:
    """The cells of :func:`extra_round`."""
    return extra_round(run_dir, exp, target, targets, seed, now).cells


def extra_round(
    run_dir: str | os.PathLike[str],
    exp: Experiment,
    target: str | None = None,
    targets: Sequence[str] = (),
    seed: int | None = None,
    now: datetime | None = None,
) -> ExtraRound:
    """The next round: one more cell of every load point that needs one (:func:`due`), in the round's order
    (``seed``: :func:`benchstack.plan.experiment.paired`; without one, in stack and plan order).

    Only load points whose first ``load.repetitions`` repetitions are all stored are considered (the regular
    rounds come first). Every cell of the round has the round's repetition number. ``target``: only that
    target's load points, planned on it (with ``targets``, the run's: the ids start with the target when
    there are several, :mod:`benchstack.plan.targets`).
    """
    load = exp.load
    stored = [c for c in load_cells(run_dir) if c.experiment in (None, exp.name)]
    if target is not None:
        stored = [c for c in stored if c.target == target]
    left = _budget_left(stored, load, now)
    if left is not None and left < 0:
        return ExtraRound([], {})
    groups = by_load_point(stored)
    points = [(stack, point) for stack in exp.stacks for point in load_points(exp)]

    def key_of(stack: dict[str, Any], point: LoadPoint) -> Key:
        return (stack["name"], *point.key)

    # The round's number, shared by its cells: comparisons pair cells by it (module docstring).
    this_round = 1 + max((c.repetition for c in stored if c.repetition is not None), default=0)
    regular = set(range(1, load.repetitions + 1))

    def is_ready(key: Key) -> bool:
        cells = groups.get(key, [])
        return regular <= {c.repetition for c in cells if c.repetition is not None}

    ready = [key_of(*pair) for pair in points if is_ready(key_of(*pair))]
    wanted = due(stored, exp, ready)
    order = [pair for pair in points if key_of(*pair) in wanted]
    if seed is not None and order:
        order = paired(
            order, seed, this_round, str(load.baseline), lambda p: p[0]["name"], lambda p: p[1].key
        )
    planned = [cell_plan(exp, stack, point, this_round) for stack, point in order]
    if target is not None:
        planned = [for_target(p, target, several=len(targets) > 1) for p in planned]
    why = {p.cell_id: wanted[key_of(stack, point)] for p, (stack, point) in zip(planned, order, strict=True)}
    return ExtraRound(planned, why, left)
