"""The history database: where it is, and its migrations, which make exactly the models' tables from an
empty database and leave an upgraded one as it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from conftest import bench_stack
from history_cases import CAPTURED, run_copy
from sqlalchemy import inspect

from benchstack.history.database import alembic_config, engine_for, open_database, shown_url, upgrade
from benchstack.history.defaults import database_url
from benchstack.history.queries import runs
from benchstack.history.record import import_run
from benchstack.history.schema import Base

TABLES = {"alembic_version", "runs", "hosts", "load_points", "comparisons", "reasons"}
ROOT = Path(__file__).resolve().parents[3]
# No server: port 1 on loopback refuses at once (Molecule history-postgresql has a real one).
NO_SERVER = "postgresql+psycopg://bench:s3cret-pw@127.0.0.1:1/bench"


def test_an_empty_database_is_migrated_to_the_models_tables(tmp_path: Path) -> None:
    engine = open_database(f"sqlite:///{tmp_path / 'new' / 'history.sqlite'}")
    assert set(inspect(engine).get_table_names()) == TABLES
    with engine.connect() as connection:
        context = MigrationContext.configure(connection)
        head = ScriptDirectory.from_config(alembic_config(engine)).get_current_head()
        assert context.get_current_revision() == head == "0001"
        # What the migrations made is what the models declare: no column, index or constraint apart.
        assert compare_metadata(context, Base.metadata) == []


def test_migrating_down_and_up_again_gives_the_same_tables(tmp_path: Path) -> None:
    engine = open_database(f"sqlite:///{tmp_path / 'h.sqlite'}")
    upgrade_down = alembic_config(engine)
    from alembic import command

    with engine.begin() as connection:
        upgrade_down.attributes["connection"] = connection
        command.downgrade(upgrade_down, "base")
    assert set(inspect(engine).get_table_names()) == {"alembic_version"}
    upgrade(engine)
    assert set(inspect(engine).get_table_names()) == TABLES


def test_opening_a_database_again_keeps_its_runs(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'h.sqlite'}"
    import_run(open_database(url), run_copy(tmp_path, "01-new-quiet"))
    assert [r.name for r in runs(open_database(url))] == ["01-new-quiet"]


def test_deleting_a_run_deletes_its_rows_as_on_postgresql(tmp_path: Path) -> None:
    engine = engine_for(f"sqlite:///{tmp_path / 'h.sqlite'}")
    with engine.connect() as c:
        assert c.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_the_database_is_the_option_else_the_environment_else_beside_the_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = tmp_path / "results"
    assert database_url(None, results) == f"sqlite:///{results.resolve() / 'history.sqlite'}"
    monkeypatch.setenv("BENCH_STACK_DB", "postgresql+psycopg://bench@db.example/bench")
    assert database_url(None, results) == "postgresql+psycopg://bench@db.example/bench"
    assert database_url(str(tmp_path / "mine.sqlite"), results) == f"sqlite:///{tmp_path / 'mine.sqlite'}"


def test_a_urls_password_is_never_shown() -> None:
    shown = shown_url("postgresql+psycopg://bench:s3cret@db.example:5432/bench")
    assert "s3cret" not in shown and shown.startswith("postgresql+psycopg://bench:***@db.example")


def test_the_migrations_write_postgresql_ddl_too(tmp_path: Path) -> None:
    # The migrations rendered for PostgreSQL's dialect, offline, as a DBA would apply them; the types are ones
    # PostgreSQL has (Molecule history-postgresql runs them on a server).
    import io

    from alembic import command
    from alembic.config import Config

    from benchstack.history.database import MIGRATIONS

    out = io.StringIO()
    config = Config(output_buffer=out)
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["url"] = "postgresql://bench@db.example/bench"
    command.upgrade(config, "head", sql=True)
    sql = out.getvalue()
    assert sql.count("CREATE TABLE") == 6  # alembic_version and the five tables
    assert "started_at TIMESTAMP WITH TIME ZONE" in sql
    assert "keepalive BOOLEAN NOT NULL" in sql and "fingerprint JSON" in sql
    assert "seed BIGINT" in sql and "FOREIGN KEY(run_id) REFERENCES runs (id) ON DELETE CASCADE" in sql


def sqlite_run(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """A new interpreter records the captured run in an SQLite history: which drivers did it load?"""
    code = (
        "import sys; from benchstack.history.database import open_database; "
        "from benchstack.history.record import import_run; "
        "print(import_run(open_database(sys.argv[1]), sys.argv[2]).outcome); "
        "print('psycopg' in sys.modules, 'psycopg2' in sys.modules)"
    )
    url = f"sqlite:///{folder / 'h.sqlite'}"
    return {"sqlite": ([sys.executable, "-c", code, url, str(CAPTURED)], dict(os.environ), ROOT)}


@pytest.mark.early.with_args(sqlite_run)
def test_an_sqlite_history_never_loads_the_postgresql_driver(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    done = early_results["sqlite"]
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["added", "False", "False"]


def test_a_postgresql_url_is_opened_with_psycopg_3() -> None:
    # requirements.txt installs it; SQLAlchemy imports it when the engine is made, before any connection.
    dbapi = engine_for(NO_SERVER).dialect.dbapi
    assert dbapi is not None and dbapi.__name__ == "psycopg" and dbapi.__version__.startswith("3.")


def test_a_server_away_is_one_line_that_names_it_without_the_password() -> None:
    done = bench_stack("history", "--db", NO_SERVER)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith(
        "bench-stack: cannot open the history database postgresql+psycopg://bench:***@127.0.0.1:1/bench: "
    )
    assert "Connection refused" in done.stderr and len(done.stderr.splitlines()) == 1
    assert "s3cret-pw" not in done.stderr
