"""The history's defaults, without SQLAlchemy (the command line's parser and the report step read them):
where the database is, and the regression check's margin and rule: when a load point's ratio to the previous
runs is slower, faster, within the margin or unresolved (:mod:`benchstack.history.queries` has the whole
rule)."""

from __future__ import annotations

import os
from pathlib import Path

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


def default_url(results_dir: str | os.PathLike[str]) -> str:
    """The SQLite file beside the runs of ``results_dir``."""
    return f"sqlite:///{Path(results_dir).resolve() / DEFAULT_FILE}"


def database_url(given: str | None, results_dir: str | os.PathLike[str]) -> str:
    """``given`` (``--db``), else ``$BENCH_STACK_DB``, else :func:`default_url`. A bare path is an SQLite
    file."""
    url = given or os.environ.get(ENV_VAR) or default_url(results_dir)
    return url if "://" in url else f"sqlite:///{Path(url).resolve()}"


def recorded_url(results_dir: str | os.PathLike[str] | None, *, existing: bool = False) -> str | None:
    """The database the report step records a finished run into and the report's trend reads:
    ``$BENCH_STACK_DB``, else :func:`default_url` of ``results_dir`` (with ``existing``, only when that file
    is there: a report never makes one); None without either."""
    if url := os.environ.get(ENV_VAR):
        return url
    if results_dir is None or (existing and not (Path(results_dir) / DEFAULT_FILE).is_file()):
        return None
    return default_url(results_dir)
