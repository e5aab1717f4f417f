"""What ``ansible-playbook bench-stack.yml`` prints at default verbosity: the words and numbers of the console
(plugins/callback/bench_stack.py is the thin glue that feeds Ansible's events in here).

One line per phase (plan, hosts, provision, verify, cells, report), and while the cells are measured a
progress line: cells done against planned, the extra rounds and what they are for, the time used against
``load.max_seconds`` and an estimate of what is left. The estimate is honest about what it knows: the
regular rounds' rest at the pace measured so far (before the first cell, the plan's least time), and with a
budget the latest the extra rounds can end (no round starts once the budget is spent; the round running
then ends after it). Pure functions of what the events carried and of ``now``: tested without Ansible.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath

# Each playbook of bench-stack.yml is one phase; dns_check.yml is part of verifying.
PHASE_OF_PLAYBOOK = {
    "plan": "plan",
    "hosts": "hosts",
    "images": "hosts",
    "provision": "provision",
    "dns_check": "verify",
    "verify": "verify",
    "benchmark": "cells",
    "report": "report",
}
# The width of the phase column.
PHASE_WIDTH = 10

# A planned cell's progress label (benchstack.plan.resolved.progress), as tasks/cell.yml's loop shows it.
_REGULAR = re.compile(r"\((\d+)/(\d+), at least (\d+) s left after it\)$")


def phase_of(path: str | None, play_name: str = "") -> str:
    """The phase of a play, from the playbook file it is written in (``playbooks/provision.yml:11``): its
    file's name for a playbook bench-stack.yml does not import, the play's name without a file."""
    if not path:
        return play_name or "play"
    stem = PurePath(path.rsplit(":", 1)[0]).stem
    return PHASE_OF_PLAYBOOK.get(stem, stem)


def seconds_text(seconds: float) -> str:
    """``0.4 s``, ``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    if seconds < 10:
        return f"{max(0.0, seconds):.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def phase_line(phase: str, text: str, seconds: float | None = None) -> str:
    """``provision bench-local: host, nginx (1 min 12 s)``."""
    took = f" ({seconds_text(seconds)})" if seconds is not None else ""
    return f"{phase:<{PHASE_WIDTH}}{text}{took}".rstrip()


def regular_position(label: str) -> tuple[int, int, int] | None:
    """(i, n, at least s left after it) of a planned cell's loop label, None for an extra cell's."""
    found = _REGULAR.search(label or "")
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


@dataclass
class Cells:
    """The cells phase as the events tell it. Times are seconds on one monotonic clock (the caller's)."""

    planned: int = 0
    # Regular cells seen (measured, or stored by an earlier run and not measured again) and the last
    # position the plan gave (i of planned).
    regular: int = 0
    position: int = 0
    least_left_s: float | None = None
    extra: int = 0
    failed: int = 0
    skipped: int = 0
    skipped_why: str = ""
    measured: int = 0
    # Wall seconds spent in measured cells (each from the previous event of its batch), for the pace.
    measuring_s: float = 0.0
    started: float | None = None
    last_event: float | None = None
    budget_s: float | None = None
    # The extra round being measured: its number, cells, those done, what it is for, and the budget left
    # when it was planned (bench_extra_cells), at the time it was planned.
    round: int | None = None
    rounds: int = 0
    round_cells: int = 0
    round_done: int = 0
    serves: list[str] = field(default_factory=list)
    left_at_plan: tuple[float, float] | None = None
    # Cells already counted: several loadgens of one target each report the same cell.
    seen: set[str] = field(default_factory=set)

    def batch_started(self, now: float) -> None:
        """A measuring task began (tasks/cell.yml): the next cell's time counts from here."""
        if self.started is None:
            self.started = now
        self.last_event = now

    def cell_done(
        self, label: str, measured: bool, now: float, failed: bool = False, cell_id: str = ""
    ) -> None:
        """One cell's result (bench_cell): ``measured`` false for a cell an earlier run stored. A cell id
        seen already (another loadgen's part of the same cell) is not counted again."""
        if cell_id:
            if cell_id in self.seen:
                return
            self.seen.add(cell_id)
        if self.started is None:
            self.started = now
        position = regular_position(label)
        if position is not None:
            self.regular += 1
            self.position, planned, least = position
            self.planned = max(self.planned, planned)
            self.least_left_s = float(least)
        else:
            self.extra += 1
            self.round_done += 1
        if failed:
            self.failed += 1
        if measured:
            self.measured += 1
            self.measuring_s += now - (self.last_event if self.last_event is not None else now)
        self.last_event = now

    def cell_skipped(self, why: str = "the run stopped") -> None:
        """A cell bench_cell did not measure: the run stopped at a failed cell, or check mode."""
        self.skipped += 1
        self.skipped_why = why

    def round_planned(
        self,
        number: int | None,
        cells: int,
        serves: list[str],
        left_s: float | None,
        budget_s: float | None,
        now: float,
    ) -> None:
        """bench_extra_cells' answer: the next extra round (``cells`` 0: the rounds are over)."""
        if budget_s:
            self.budget_s = float(budget_s)
        if left_s is not None:
            self.left_at_plan = (float(left_s), now)
        if cells:
            self.round, self.round_cells, self.round_done = number, cells, 0
            self.rounds += 1
            self.serves = list(serves)
        else:
            self.round, self.round_cells, self.serves = None, 0, []

    @property
    def pace_s(self) -> float | None:
        """Wall seconds per measured cell so far (warm-up, pause, run and the controller's round trips)."""
        return self.measuring_s / self.measured if self.measured else None

    def used_s(self, now: float) -> float:
        """Seconds of measuring so far: of the budget as bench_extra_cells counts it once it answered (from
        the target's first stored cell, an earlier run's on a resume), else since this run's first cell."""
        if self.budget_s and self.left_at_plan is not None:
            return self.budget_s - (self.budget_left_s(now) or 0.0)
        return now - self.started if self.started is not None else 0.0

    def budget_left_s(self, now: float) -> float | None:
        """Seconds of ``load.max_seconds`` left: bench_extra_cells' own count once it answered (it counts
        from the target's first stored cell), else from this run's first cell."""
        if not self.budget_s:
            return None
        if self.left_at_plan is not None:
            left, at = self.left_at_plan
            return max(0.0, left - (now - at))
        started = self.started if self.started is not None else now
        return max(0.0, self.budget_s - (now - started))

    def regular_left_s(self) -> float:
        """The regular rounds' rest: the cells left at the pace so far, or the plan's least time."""
        rest = max(0, self.planned - self.position)
        pace = self.pace_s
        if pace is None:
            return self.least_left_s or 0.0
        return rest * pace

    def estimate(self, now: float) -> str:
        """What is left, as sure as it is: ``about 40 s left; at most 2 min 10 s with extra rounds``."""
        pace = self.pace_s
        budget_left = self.budget_left_s(now)
        if self.round is not None:
            this_round = max(0, self.round_cells - self.round_done) * (pace or 0.0)
            if budget_left is None:
                return f"this round about {seconds_text(this_round)}; more rounds while one is needed"
            return f"at most {seconds_text(max(this_round, budget_left) + this_round)} left (budget)"
        regular = self.regular_left_s()
        word = "about" if pace is not None else "at least"
        said = f"{word} {seconds_text(regular)} left"
        if self.planned and self.position >= self.planned:
            said = "regular rounds done"
        if budget_left is None:
            return f"{said}, more if extra rounds are needed"
        # No extra round starts once the budget is spent; the one running then ends after it.
        if budget_left <= 0:
            return said
        most = max(regular, budget_left) + 2 * (pace or 0.0)
        return f"{said}; at most {seconds_text(most)} with extra rounds"

    def budget_text(self, now: float) -> str:
        used = seconds_text(self.used_s(now))
        if not self.budget_s:
            return used
        return f"{used} of the {seconds_text(self.budget_s)} budget"

    def done_text(self) -> str:
        done = f"{self.regular}/{self.planned}" if self.planned else f"{self.regular}"
        if self.extra:
            done += f" + {self.extra} extra"
        if self.failed:
            done += f", {self.failed} failed"
        return done

    def line(self, now: float) -> str:
        """The progress line: ``cells 23/50 · 1 min 12 s of the 4 min 10 s budget · about 1 min 25 s left``
        (during an extra round: which round, its cells done, and what it is for)."""
        parts = [self.done_text()]
        if self.round is not None:
            parts.append(f"extra round {self.round} ({self.round_done}/{self.round_cells})")
        parts += [self.budget_text(now), self.estimate(now)]
        text = " · ".join(parts)
        if self.round is not None and self.serves:
            text += " · for " + "; ".join(self.serves)
        return text

    def round_line(self, now: float) -> str:
        """The line an extra round gets when it is planned: its number, cells and what they are for."""
        serves = "; ".join(self.serves) or "its load points"
        cells = f"{self.round_cells} cell{'s' if self.round_cells != 1 else ''}"
        return f"extra round {self.round} ({cells}, {self.budget_text(now)}) for {serves}"

    def summary(self, now: float) -> str:
        """The phase's last line: ``54 cells: 50 regular + 4 in 2 extra rounds, 50 s of the 250 s budget``."""
        total = self.regular + self.extra
        text = f"{total} cell{'s' if total != 1 else ''}: {self.regular} regular"
        if self.regular and self.measured < total:
            text += f" ({total - self.measured} stored before)"
        if self.extra:
            text += f" + {self.extra} in {self.rounds} extra round{'s' if self.rounds != 1 else ''}"
        if self.failed:
            text += f", {self.failed} failed"
        if self.skipped:
            text += f", {self.skipped} not measured ({self.skipped_why})"
        if self.budget_s:
            text += f"; {seconds_text(self.budget_s)} budget"
        return text
