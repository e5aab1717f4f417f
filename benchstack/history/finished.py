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

from benchstack.history.defaults import ENV_VAR, recorded_url

if TYPE_CHECKING:
    from benchstack.analysis.summary import RunData


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
    url = recorded_url(results_dir)
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


@dataclass(frozen=True)
class Publication:
    outcome: str  # published | unchanged | off | failed
    url: str | None = None  # s3://bucket/prefix/RUN/
    uploaded: int = 0
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def publish_finished(
    run_dir: str | os.PathLike[str], to: str | None, endpoint_url: str | None = None
) -> Publication:
    """Publish the finished run ``run_dir`` to ``to`` (``s3://bucket/prefix``; off when empty), best effort:
    never raises, and the run folder is untouched whatever happens. boto3 is imported only here, inside the
    call; credentials are the AWS variables of the controller's environment, and no message shows them."""
    if not to:
        return Publication("off")
    name = Path(run_dir).resolve().name
    try:
        from benchstack.results.location import parse_store_url

        dest = parse_store_url(to)
        url = dest.url(name) + "/"
    except ValueError as exc:
        return Publication("failed", warning=f"the run was not published ({exc})")
    try:
        from benchstack.history.publish import open_store, publish_run

        store = open_store(endpoint_url or None)
        done = publish_run(store, run_dir, dest)
    except Exception as exc:  # noqa: BLE001 - whatever fails, the run's results stand
        from benchstack.results.location import shown

        why = shown(_first_line(exc), _credentials())
        return Publication(
            "failed",
            url,
            warning=f"the run was not published to {url} ({why}); its results are complete; publish it "
            f"later with: bench-stack publish {run_dir} --to {to}",
        )
    return Publication("published" if done.manifest_written else "unchanged", url, len(done.uploaded))


def _credentials() -> tuple[str, ...]:
    """The AWS credentials of the environment, to be masked in a message that did not come from the store
    (the store's own errors are masked with the credentials in use already)."""
    names = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
    return tuple(os.environ[n] for n in names if os.environ.get(n))
