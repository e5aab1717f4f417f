"""The package's layout (a folder per step of a run, docs/index.md) and scripts/relayout.py, which made it:
every module is where the script's table puts it, no file names a module by its old path, and the script
refuses a module it has no place for."""

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import project_script

ROOT = Path(__file__).resolve().parents[3]
relayout = project_script("relayout", "relayout.py")


def test_every_module_is_where_the_table_puts_it() -> None:
    relayout.check_tables(ROOT)
    assert relayout.moves_pending(ROOT) == []
    assert relayout.area_inits(ROOT) == []
    top = {p.stem for p in (ROOT / "benchstack").glob("*.py")}
    assert top == {"__init__", "__main__", "cli", "actionargs"}


def test_no_file_names_a_module_by_its_old_path() -> None:
    # What the script would still rewrite: an old dotted name, path, import or flat test path. A package
    # named alone reads as the old module (benchstack.plan is plan.resolved): write benchstack/plan/.
    stale = [str(p.relative_to(ROOT)) for p in relayout.rewrite_all(ROOT, write=False)]
    assert stale == []


def test_a_module_in_no_table_is_refused_and_nothing_moves(tmp_path: Path) -> None:
    (tmp_path / "benchstack" / "plan").mkdir(parents=True)
    (tmp_path / "benchstack" / "newstep.py").write_text("")
    (tmp_path / "benchstack" / "stats.py").write_text("")
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "unit" / "test_newstep.py").write_text("")
    with pytest.raises(relayout.LayoutError) as refused:
        relayout.check_tables(tmp_path)
    assert str(refused.value).splitlines() == [
        "benchstack/newstep.py is in no table: add it to MOVES in scripts/relayout.py (its area)",
        "tests/unit/test_newstep.py is in no table: add it to TESTS in scripts/relayout.py (its area)",
    ]


def test_the_command_refuses_before_moving_anything(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "relayout.py").write_bytes((ROOT / "scripts" / "relayout.py").read_bytes())
    (tmp_path / "benchstack").mkdir()
    (tmp_path / "benchstack" / "stats.py").write_text("")
    (tmp_path / "benchstack" / "newstep.py").write_text("")
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "scripts/relayout.py"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert "benchstack/newstep.py is in no table" in done.stderr
    assert (tmp_path / "benchstack" / "stats.py").exists()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("from benchstack import stats", "from benchstack.analysis import stats"),
        ("from benchstack import plan", "from benchstack.plan import resolved as plan"),
        (
            "from benchstack import cli, provision, hoststate  # noqa: E402",
            "from benchstack import cli  # noqa: E402\n"
            "from benchstack.provision import roles as provision, hoststate  # noqa: E402",
        ),
        ("from benchstack.plan import compile_plan", "from benchstack.plan.resolved import compile_plan"),
        ("from benchstack.apps.base import AppKind", "from benchstack.kinds.apps.base import AppKind"),
        ("(benchstack.provision.stale; run.json)", "(benchstack.provision.roles.stale; run.json)"),
        (":mod:`benchstack.report`.", ":mod:`benchstack.report.build`."),
        (
            "`benchstack/plan.py`, `benchstack/servers/`",
            "`benchstack/plan/resolved.py`, `benchstack/kinds/servers/`",
        ),
        ("(`probe.py`)", "(`benchstack/measure/probe.py`)"),
        ('tmp_path / "hoststate.py"', 'tmp_path / "hoststate.py"'),
        ("tests/unit/test_stats.py::test_x", "tests/unit/analysis/test_stats.py::test_x"),
        ("benchstack/schemas/cell.schema.json", "benchstack/schemas/cell.schema.json"),
        (
            "from benchstack import provision  # relayout: keep",
            "from benchstack import provision  # relayout: keep",
        ),
    ],
)
def test_a_reference_is_rewritten_once(old: str, new: str) -> None:
    assert relayout.rewritten(old) == new
    assert relayout.rewritten(new) == new


def test_a_moved_file_climbs_as_far_as_it_went_down() -> None:
    text = 'A = Path(__file__).resolve().parent.parent / "roles"\nB = Path(__file__).parents[1] / "data"\n'
    assert relayout.deeper(text, 1) == (
        'A = Path(__file__).resolve().parents[2] / "roles"\nB = Path(__file__).parents[2] / "data"\n'
    )


def test_a_docstring_line_a_longer_name_pushed_past_the_limit_flows_into_its_paragraph() -> None:
    old = '"""Summary.\n\nsee benchstack.cell and the rest of this line of\nprose that goes on.\n"""\n'
    new = relayout.rewritten(old)
    assert relayout.reflowed(new, set(new.split("\n")) - set(old.split("\n")), limit=48) == (
        '"""Summary.\n\nsee benchstack.results.cell and the rest of this\nline of prose that goes on.\n"""\n'
    )
