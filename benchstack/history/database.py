"""Where the history database is and how it is opened: a URL from ``--db``, else the environment variable
``BENCH_STACK_DB``, else an SQLite file beside the runs (``<results>/history.sqlite``). Opening upgrades the
database to the newest migration (Alembic, ``migrations/``), so a new bench-stack reads an older file and
a team's PostgreSQL is created on first use. Only this area imports SQLAlchemy and Alembic, and only the
commands that read or write the database import this area's modules that need them.

A URL's password is never printed: :func:`shown_url` masks it."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


class HistoryError(ValueError):
    """What a history command reports in one line: a folder that is no run, a run the database lacks, a
    database that cannot be opened."""


def shown_url(url: str) -> str:
    """The URL as a message may show it: without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - a URL SQLAlchemy cannot read is shown by its scheme only
        return url.split("://", 1)[0] + "://..."


def _sqlite_foreign_keys(dbapi_connection: object, _record: object) -> None:
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def engine_for(url: str) -> Engine:
    """An engine on ``url``; SQLite's parent folder is made, and its foreign keys are on (as PostgreSQL's
    always are), so that deleting a run deletes its rows on both."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url)
    if parsed.get_backend_name() == "sqlite":
        event.listen(engine, "connect", _sqlite_foreign_keys)
    return engine


def alembic_config(engine: Engine) -> Config:
    """Alembic's configuration, built here (no alembic.ini): our migrations, on ``engine``'s connection."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["engine"] = engine
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Migrate the database to ``revision`` (the newest by default); nothing when it is there already."""
    with engine.begin() as connection:
        config = alembic_config(engine)
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def open_database(url: str) -> Engine:
    """The database at ``url``, upgraded to the newest schema."""
    engine = engine_for(url)
    upgrade(engine)
    return engine
