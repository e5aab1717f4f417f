"""Docs that cannot drift from the code (issue 41, item 6): the result formats' schema versions the docs name
as current, and the roles the architecture's table names. The CLI's table and the experiment's fields have
their own tests (tests/unit/cli/test_cli_docs.py, tests/unit/plan/test_experiment_schema.py)."""

import re
from pathlib import Path

from benchstack.results.cell import SCHEMA as CELL_SCHEMA
from benchstack.results.formats import RUN_SCHEMA

ROOT = Path(__file__).resolve().parents[3]
VERSIONED = re.compile(r"bench-stack/(cell|run)/v\d+")


def current_versions(doc: str) -> list[tuple[str, str]]:
    """(row, the first schema version it names) for every table row of ``doc`` that describes a cell file or
    run.json: the first version a row names is the one written now (older ones follow as "read")."""
    out = []
    for line in (ROOT / "docs" / doc).read_text(encoding="utf-8").splitlines():
        if not line.startswith("| ") or not (found := VERSIONED.search(line)):
            continue
        out.append((line[:60], found.group(0)))
    return out


def test_the_result_docs_name_the_schema_versions_the_code_writes() -> None:
    want = {"cell": CELL_SCHEMA, "run": RUN_SCHEMA}
    rows = current_versions("results-format.md") + current_versions("results.md")
    assert {v.split("/")[1] for _, v in rows} == {"cell", "run"}, rows
    wrong = [(row, v) for row, v in rows if v != want[v.split("/")[1]]]
    assert not wrong, f"docs name an older schema as current: {wrong}"


def documented_roles() -> set[str]:
    """The roles named in the last column of docs/index.md's table of steps."""
    text = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    table = text.split("| step | playbook | plugin | package modules | roles |", 1)[1].split("\n\n", 1)[0]
    names: set[str] = set()
    for line in table.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            last = line.strip().strip("|").split("|")[-1]
            names |= set(re.findall(r"`([a-z_]+)`", last))
    return names


def test_the_architecture_table_names_every_role_and_no_other() -> None:
    roles = {p.name for p in (ROOT / "roles").iterdir() if (p / "tasks" / "main.yml").is_file()}
    assert len(roles) >= 10
    assert documented_roles() == roles
