"""One planned cell, typed: what the plan makes (:func:`benchstack.plan.experiment.cell_plan`), the plan fact
and run.json hold (``cells``), and the runner and the load tool adapters measure.

JSON is made only by :meth:`CellPlan.to_dict` (the plan fact, run.json, the extra rounds' cells) and read only
by :meth:`CellPlan.from_dict` (the action plugins and the checks that read a cell plan back); everything in
between passes the record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

__all__ = ["DEFAULT_MAX_INTERFERENCE", "DEFAULT_PAUSE_S", "CellPlan", "ConnectionLoad"]

DEFAULT_PAUSE_S = 1
# Foreign CPU (host busy minus our processes, plus steal), as a share of all the host's CPU time during a
# cell, above which the cell is disturbed: kept, not counted, measured again
# (benchstack.measure.interference).
DEFAULT_MAX_INTERFERENCE = 0.10


@dataclass(frozen=True)
class CellPlan:
    """One cell to measure: a stack, a load point and a repetition."""

    cell_id: str
    stack: str
    port: int
    tool: str
    # Closed loop (ab, wrk, siege): the number of concurrent clients. Open loop (httperf): None, and
    # ``rate`` is the offered requests per second.
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
    # The target the cell is measured on: set by the run's plan (benchstack.plan.targets), None without an
    # inventory (bench-stack experiment).
    target: str | None = None
    # Foreign + steal CPU share above which the cell is disturbed (load.max_interference).
    max_interference: float = DEFAULT_MAX_INTERFERENCE

    def connection_load(self) -> ConnectionLoad:
        """What the connections the plan's load tool may hold open depend on."""
        return ConnectionLoad(self.tool, self.concurrency, self.rate, self.threshold_ms, self.timeout_s)

    def to_dict(self) -> dict[str, Any]:
        """The cell plan as the plan fact and run.json hold it: every field, in declaration order."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CellPlan:
        """The cell plan :meth:`to_dict` gave (read back from the plan fact or run.json); ValueError naming
        the keys that are not a cell plan's or a field without a default that is missing."""
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ValueError(f"not a cell plan: unknown keys {', '.join(map(str, unknown))}")
        try:
            return cls(**{k: data[k] for k in names if k in data})
        except TypeError as exc:  # a missing field
            raise ValueError(f"not a cell plan: {exc}") from None


@dataclass(frozen=True)
class ConnectionLoad:
    """What the connections a cell's load tool may hold open depend on (benchstack.analysis.capacity): its
    plan's (:meth:`CellPlan.connection_load`), or for a stored cell whose plan run.json lacks, what the cell
    tells (no timeout)."""

    tool: str
    # Closed loop: the connections; open loop: None, and ``rate`` with the timeout bound them.
    concurrency: int | None
    rate: int | None = None
    threshold_ms: float | None = None
    timeout_s: int | None = None
