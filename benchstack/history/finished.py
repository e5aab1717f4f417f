"""Every finished run recorded in the history database, best effort: the report step
(``plugins/action/bench_report.py``) calls :func:`record_finished` once the report is written. A database
that cannot be opened or written (no SQLAlchemy, a read-only file, a PostgreSQL server away) never fails
the run nor touches its results: the run's folder is complete without it, the problem is one warning, and
``bench-stack import RUN_DIR`` records the run later. SQLAlchemy is imported only here, inside the call.

Which database: ``$BENCH_STACK_DB`` (a team's PostgreSQL), else ``<results_dir>/history.sqlite``; with
neither (a run folder outside any results folder), nothing is recorded."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchstack.history.defaults import DEFAULT_FILE, ENV_VAR

if TYPE_CHECKING:
    from benchstack.report.build import RunData


@dataclass(frozen=True)
class Recorded:
    outcome: str  # added | updated | unchanged | off | skipped | failed
    database: str | None = None  # without its password
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def record_finished(
    run_dir: str | os.PathLike[str], results_dir: str | os.PathLike[str] | None, run: RunData | None = None
) -> Recorded:
    """Import the finished run ``run_dir`` (``run``: as the report read it, so nothing is computed twice);
    never raises."""
    url = os.environ.get(ENV_VAR) or (
        f"sqlite:///{Path(results_dir).resolve() / DEFAULT_FILE}" if results_dir else None
    )
    if not url:
        return Recorded("skipped", warning=None)
    shown = url.split("://", 1)[0] + "://..."
    try:
        from benchstack.history.database import open_database, shown_url
        from benchstack.history.record import import_run

        shown = shown_url(url)
        engine = open_database(url)
        try:
            done = import_run(engine, run_dir, run)
        finally:
            engine.dispose()
    except Exception as exc:  # noqa: BLE001 - whatever fails, the run's results stand
        return Recorded(
            "failed",
            shown,
            f"the run was not recorded in the history database {shown} ({type(exc).__name__}: "
            f"{_first_line(exc)}); its results are complete; record it later with: bench-stack import "
            f"{run_dir}" + (f" --db URL (or {ENV_VAR})" if os.environ.get(ENV_VAR) else ""),
        )
    return Recorded(done.outcome, shown)
