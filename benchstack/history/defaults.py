"""The history's defaults, without SQLAlchemy (the command line's parser and the report step read them):
where the database is, and the regression check's margin and rule: when a load point's ratio to the previous
runs is slower, faster, within the margin or unresolved (:mod:`benchstack.history.queries` has the whole
rule)."""

from __future__ import annotations

# A team's database URL (PostgreSQL); without it, DEFAULT_FILE in the results folder (SQLite).
ENV_VAR = "BENCH_STACK_DB"
DEFAULT_FILE = "history.sqlite"
DEFAULT_MARGIN = 0.10
DEFAULT_PREVIOUS = 5
SLOWER, FASTER, WITHIN, UNRESOLVED = "slower", "faster", "within", "unresolved"


def state_of(low: float | None, high: float | None, margin: float) -> str:
    """``slower`` when the ratio's whole interval is below ``1 - margin``, ``faster`` above ``1 + margin``,
    ``within`` inside ``1 +- margin``, else (or without an interval) ``unresolved``."""
    if low is None or high is None:
        return UNRESOLVED
    if high < 1 - margin:
        return SLOWER
    if low > 1 + margin:
        return FASTER
    if low >= 1 - margin and high <= 1 + margin:
        return WITHIN
    return UNRESOLVED
