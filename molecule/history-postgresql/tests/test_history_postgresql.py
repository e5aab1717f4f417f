"""The history of runs in PostgreSQL, exercised from the controller: bench-stack's own commands against the
container's server (``BENCH_STACK_DB=postgresql+psycopg://bench:PASSWORD@ADDRESS/bench``) and against an
SQLite file, with the same run folders (copies of the captured default run, tests/data/history), in the same
order: each command must print the same on both. Then the migration's record and tables on the server, the
tables' owner, the server's one rule for the controller, and the password in no output, also when wrong."""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, func, select, text
from sqlalchemy.orm import Session
from testinfra.host import Host

ROOT = Path(__file__).resolve().parents[3]
# The history's unit tests make their run folders there (history_cases.run_copy).
sys.path.insert(0, str(ROOT / "tests" / "unit" / "history"))

from history_cases import run_copy  # noqa: E402

from benchstack.cli import main  # noqa: E402
from benchstack.history.database import alembic_config  # noqa: E402
from benchstack.history.schema import Base, RunRow  # noqa: E402

CONTAINER = "bench-mol-pg-bookworm"
USER = DATABASE = "bench"
EXPERIMENT = "sinatra-thin-nginx"


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str


@contextlib.contextmanager
def history_db(url: str) -> Iterator[None]:
    """``BENCH_STACK_DB`` set to ``url`` while bench-stack runs, as a user sets it."""
    before = os.environ.get("BENCH_STACK_DB")
    os.environ["BENCH_STACK_DB"] = url
    try:
        yield
    finally:
        if before is None:
            del os.environ["BENCH_STACK_DB"]
        else:
            os.environ["BENCH_STACK_DB"] = before


def bench_stack(*args: str | Path) -> Done:
    """``bench-stack ARGS`` in this process (the command line's own code, without an interpreter's start)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return Done(code, out.getvalue(), err.getvalue())


def counts(engine: Engine) -> dict[str, object]:
    """Every table's row count, and the runs' ids and import times: what a write would move."""
    with engine.connect() as c:
        found: dict[str, object] = {
            t.name: c.scalar(select(func.count()).select_from(t)) for t in Base.metadata.sorted_tables
        }
    with Session(engine) as s:
        found["runs"] = [(r.id, r.uid, r.imported_at) for r in s.scalars(select(RunRow).order_by(RunRow.id))]
    return found


def session(url: str, folders: Path) -> dict[str, object]:
    """The same commands, in the same order, on the database at ``url``: the outputs, and the tables' counts
    around the second import."""
    runs = [folders / name for name in ("day0", "day1", "day2")]
    resumed = folders / "day3"
    aside = folders / "day3-aside"
    aside.mkdir(exist_ok=True)
    for path in sorted((resumed / "cells").glob("nginx-static__*.json")):
        shutil.move(path, aside / path.name)  # a run stopped before nginx-static's cells
    engine = create_engine(url)
    found: dict[str, object] = {}
    with history_db(url):
        found["import"] = bench_stack("import", *runs)
        found["counts after import"] = counts(engine)
        found["import again"] = bench_stack("import", *runs)
        found["counts after import again"] = counts(engine)
        found["import stopped"] = bench_stack("import", resumed)
        # nginx-static of day3 without a figure (NULLs), then with one.
        found["trend while stopped"] = bench_stack("trend", EXPERIMENT, "--stack", "nginx-static")
        for path in aside.iterdir():
            shutil.move(path, resumed / "cells" / path.name)  # resumed: its cells are there
        found["import resumed"] = bench_stack("import", resumed)
        found["history"] = bench_stack("history")
        found["history of a stack"] = bench_stack("history", "--stack", "nginx-static", "--limit", "2")
        found["trend"] = bench_stack("trend", EXPERIMENT, "--stack", "sinatra-thin-x2-nginx")
        found["trend resumed"] = bench_stack("trend", EXPERIMENT, "--stack", "nginx-static")
        found["regress"] = bench_stack("regress", "day2")
        found["regress again"] = bench_stack("regress", runs[1])
    engine.dispose()
    return found


@pytest.fixture(scope="module")
def password() -> str:
    return (Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "pg-password").read_text().strip()


def inspected(field: str) -> str:
    """The container's ``field`` on its (one) network, as Docker tells it."""
    return subprocess.run(
        [
            "docker",
            "inspect",
            "-f",
            "{{range .NetworkSettings.Networks}}{{." + field + "}} {{end}}",
            CONTAINER,
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()[0]


@pytest.fixture(scope="module")
def address() -> str:
    return inspected("IPAddress")


@pytest.fixture(scope="module")
def pg_url(password: str, address: str) -> str:
    return f"postgresql+psycopg://{USER}:{password}@{address}:5432/{DATABASE}"


@pytest.fixture(scope="module")
def both(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    """The session on SQLite, then on the server, emptied first (so a second verify starts as the first)."""
    folders = tmp_path_factory.mktemp("runs")
    for days, name in ((0, "day0"), (1, "day1"), (3, "day3")):
        run_copy(folders, name, days)
    run_copy(folders, "day2", 2, slower={"sinatra-thin-x2-nginx": 0.67})
    server = create_engine(pg_url)
    with server.begin() as c:
        Base.metadata.drop_all(c)
        c.execute(text("DROP TABLE IF EXISTS alembic_version"))
    server.dispose()
    sqlite = f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'history.sqlite'}"
    return {"sqlite": session(sqlite, folders), "postgresql": session(pg_url, folders)}


def command_line() -> str:
    """The ``bench-stack`` script .venv's install made (run puts .venv/bin first in PATH)."""
    found = shutil.which("bench-stack")
    assert found, "no bench-stack in PATH"
    return found


def outputs(found: dict[str, object]) -> dict[str, Done]:
    return {k: v for k, v in found.items() if isinstance(v, Done)}


def test_every_command_prints_on_postgresql_what_it_prints_on_sqlite(
    both: dict[str, dict[str, object]],
) -> None:
    sqlite, server = outputs(both["sqlite"]), outputs(both["postgresql"])
    for step, done in sqlite.items():
        assert server[step] == done, step


def test_the_commands_did_what_the_docs_say(both: dict[str, dict[str, object]]) -> None:
    done = outputs(both["postgresql"])
    assert [line.split(":")[0] for line in done["import"].out.splitlines()] == ["added"] * 3
    assert [line.split(":")[0] for line in done["import again"].out.splitlines()] == ["unchanged"] * 3
    assert done["import stopped"].out.startswith("added: ")
    assert done["import resumed"].out.startswith("updated: ")
    history = done["history"].out
    for row in ("| day0 |", "| day1 |", "| day2 |", "| day3 |"):
        assert row in history
    assert "| day3 | sinatra-thin-nginx | valid |" in history  # its rows replaced: the resumed run's verdict
    assert done["history of a stack"].out.count("| day") == 2
    assert done["trend"].out.count("| day") == 4
    assert done["regress"].code == 4
    assert "against 2 previous comparable run(s): day0, day1" in done["regress"].out
    assert done["regress"].out.splitlines()[-1] == (
        "REGRESSION: 1 load point(s) slower than before by more than 10 %: sinatra-thin-x2-nginx"
    )
    assert done["regress again"].code == 0


def test_a_second_import_writes_nothing(both: dict[str, dict[str, object]]) -> None:
    found = both["postgresql"]
    counts = found["counts after import"]
    assert found["counts after import again"] == counts
    assert isinstance(counts, dict) and counts["load_points"] == 15  # three runs, five load points each


def test_the_migration_made_the_models_tables_on_the_server(
    pg_url: str, both: dict[str, dict[str, object]]
) -> None:
    engine = create_engine(pg_url)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection)
        head = ScriptDirectory.from_config(alembic_config(engine)).get_current_head()
        assert connection.scalar(text("SELECT version_num FROM alembic_version")) == head
        assert context.get_current_revision() == head
        # On PostgreSQL's own types: nothing apart from what the models declare.
        assert compare_metadata(context, Base.metadata) == []
    engine.dispose()


def test_the_tables_are_the_history_users(host: Host, both: dict[str, dict[str, object]]) -> None:
    owners = host.check_output(
        "runuser -u postgres -- psql -d bench -tAc "
        "\"SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'\""
    )
    assert owners.split() == [USER]


def test_the_server_lets_the_controller_in_to_its_database_with_a_password_only(host: Host) -> None:
    rules = host.check_output(
        'runuser -u postgres -- psql -tAc "SELECT type, database, user_name, address, netmask, auth_method '
        "FROM pg_hba_file_rules WHERE database = ARRAY['bench']\""
    )
    gateway = inspected("Gateway")
    assert rules.splitlines() == [f"host|{{bench}}|{{bench}}|{gateway}|255.255.255.255|scram-sha-256"]


def test_the_password_is_in_no_output(password: str, both: dict[str, dict[str, object]]) -> None:
    for step, done in outputs(both["postgresql"]).items():
        assert password not in done.out + done.err, step


def test_the_command_line_with_a_wrong_password_names_the_server_without_it(
    password: str, address: str
) -> None:
    wrong = "wrong-" + secrets.token_hex(8)  # nothing of the real one, which a failing assert would show
    env = dict(os.environ, BENCH_STACK_DB=f"postgresql+psycopg://{USER}:{wrong}@{address}:5432/{DATABASE}")
    done = subprocess.run(
        [command_line(), "history"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert f"cannot open the history database postgresql+psycopg://{USER}:***@{address}:5432/" in done.stderr
    assert "password authentication failed" in done.stderr
    assert wrong not in done.stdout + done.stderr and password not in done.stdout + done.stderr


def test_the_command_line_reads_the_server_from_bench_stack_db(
    pg_url: str, password: str, both: dict[str, dict[str, object]]
) -> None:
    done = subprocess.run(
        [command_line(), "history", "--experiment", EXPERIMENT],
        env=dict(os.environ, BENCH_STACK_DB=pg_url),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == outputs(both["postgresql"])["history"].out
    assert password not in done.stdout + done.stderr
