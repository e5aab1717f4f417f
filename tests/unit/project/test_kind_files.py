"""scripts/kind_files.py: the files derived from the kinds' registries are up to date, a stale generated part
is found and put back, and the hand-written rest of each file is left as it is."""

import functools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import read_yaml

from benchstack.kinds.apps import BUNDLED_KINDS
from benchstack.kinds.fronts.apache import HANDLER_MODULES
from benchstack.kinds.servers import REGISTRY
from scripts import kind_files
from scripts.kindfiles import textedit
from scripts.kindfiles.blocks import BlockError, replace_block
from scripts.kindfiles.servers import agreed

ROOT = Path(__file__).resolve().parents[3]


@functools.cache
def generated() -> list[str]:
    """The generated files' paths, listed once (each listing makes every file's wanted text, ~15 ms)."""
    return sorted({path for path, _ in kind_files.wanted(ROOT)})


def copy_generated(tmp_path: Path) -> list[str]:
    """A project root in ``tmp_path`` holding only the generated files, as they are now."""
    paths = generated()
    for path in paths:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / path, tmp_path / path)
    return paths


def test_no_generated_file_is_stale() -> None:
    # Red when a kind's module changed without `python scripts/kind_files.py`, or a generated part was edited.
    assert kind_files.stale(ROOT) == []


def test_every_file_a_section_writes_names_the_generator_or_is_the_schema() -> None:
    for path, text in kind_files.wanted(ROOT):
        assert path.endswith(".json") or "written by scripts/kind_files.py" in text, path


def edit(root: Path, path: str, old: str, new: str) -> None:
    file = root / path
    text = file.read_text(encoding="utf-8")
    assert old in text, (path, old)
    file.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("roles/app_server/meta/argument_specs.yml", "                  - passenger\n", ""),
        ("roles/python/defaults/main.yml", "gunicorn==23.0.0", "gunicorn==22.0.0"),
        ("roles/host/defaults/main.yml", "  - starman\n", ""),
        ("docs/experiment.md", "| `thin` |", "| `thin2` |"),
        ("benchstack/schemas/experiment.schema.json", '"unknown option of puma"', '"unknown option"'),
        ("roles/webapp/meta/argument_specs.yml", "          - mruby-file\n", ""),
        ("tests/unit/stack_cases.py", " lua-file mruby-inline", " mruby-inline"),
        ("docs/experiment.md", "| `psgi` (perl) | `app.psgi` |", "| `psgi` (perl) | `main.psgi` |"),
        ("roles/apache/meta/argument_specs.yml", "                  - mod_php\n", ""),
        ("tests/unit/stack_cases.py", '"none nginx apache"', '"none nginx"'),
        ("docs/experiment.md", "`profile` tuned (stock, tuned)", "`profile` stock (stock, tuned)"),
        ("benchstack/schemas/experiment.schema.json", '"maximum": 20000,', '"maximum": 2000,'),
        ("benchstack/schemas/experiment.schema.json", '"unknown key of an nginx front"', '"unknown key"'),
    ],
)
def test_an_edited_generated_part_is_stale_and_writing_puts_it_back(
    tmp_path: Path, path: str, old: str, new: str, capsys: pytest.CaptureFixture[str]
) -> None:
    copy_generated(tmp_path)
    edit(tmp_path, path, old, new)
    # The check names each stale file (kind_files.stale): this one alone.
    assert kind_files.main(["--check", "--root", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"{path} is out of date: run python scripts/kind_files.py\n"
    assert kind_files.write(tmp_path) == [path]
    assert (tmp_path / path).read_text(encoding="utf-8") == (ROOT / path).read_text(encoding="utf-8")


def test_the_hand_written_rest_of_a_file_is_kept(tmp_path: Path) -> None:
    copy_generated(tmp_path)
    edit(tmp_path, "roles/ruby/vars/Debian.yml", "  sinatra: ruby-sinatra\n", "  sinatra: ruby-sinatra2\n")
    assert kind_files.stale(tmp_path) == []


def test_the_generated_role_files_stay_plain_yaml_with_the_registrys_values() -> None:
    def load(path: str) -> Any:
        return read_yaml(ROOT / path)

    spec = load("roles/app_server/meta/argument_specs.yml")
    server = spec["argument_specs"]["main"]["options"]["app_server_stacks"]["options"]["server"]
    assert server["options"]["kind"]["choices"] == list(REGISTRY)
    webapp = load("roles/webapp/meta/argument_specs.yml")["argument_specs"]["main"]["options"]
    assert webapp["webapp_kinds"]["choices"] == list(BUNDLED_KINDS)
    apache = load("roles/apache/meta/argument_specs.yml")["argument_specs"]["main"]["options"]
    front = apache["apache_stacks"]["options"]["front"]["options"]
    assert front["handler"]["choices"] == list(HANDLER_MODULES)
    gems = load("roles/ruby/vars/Debian.yml")["__ruby_gem_packages"]
    assert gems["passenger"] == "passenger" and gems["sinatra"] == "ruby-sinatra"
    schema = json.loads((ROOT / "benchstack/schemas/experiment.schema.json").read_text(encoding="utf-8"))
    kind = schema["$defs"]["stack"]["properties"]["server"]["properties"]["kind"]
    assert kind["enum"] == list(REGISTRY)


def test_a_file_without_its_markers_is_named() -> None:
    with pytest.raises(BlockError, match="x.yml: no BEGIN server-kinds ... END server-kinds marker lines"):
        replace_block("a: 1\n", "x.yml", "server-kinds", ["b: 2"], "here")


def test_a_block_takes_its_begin_markers_indentation_and_markdown_comments() -> None:
    text = "a:\n  # BEGIN k\n  - old\n  # END k\nb: 2\n"
    assert replace_block(text, "f.yml", "k", ["- x", "- y"], "src") == (
        "a:\n  # BEGIN k: written by scripts/kind_files.py from src\n  - x\n  - y\n  # END k\nb: 2\n"
    )
    md = "t\n<!-- BEGIN k -->\nold\n<!-- END k -->\n"
    assert replace_block(md, "d.md", "k", ["| x |"], "src") == (
        "t\n<!-- BEGIN k: written by scripts/kind_files.py from src -->\n| x |\n<!-- END k -->\n"
    )


def test_two_kinds_that_disagree_on_a_package_or_a_pin_are_refused() -> None:
    assert agreed([("starlet", "Server-Starter", "a"), ("starman", "Server-Starter", "a")], "x") == {
        "Server-Starter": "a"
    }
    with pytest.raises(ValueError, match="pin of packaging: gunicorn says 26.4, waitress says 25.0"):
        agreed([("gunicorn", "packaging", "26.4"), ("waitress", "packaging", "25.0")], "pin of")


def test_a_stale_load_tool_part_is_named_and_written_again(tmp_path: Path) -> None:
    copy_generated(tmp_path)
    edit(tmp_path, "roles/loadgen/meta/argument_specs.yml", "choices: [ab, wrk,", "choices: [ab,")
    edit(tmp_path, "benchstack/schemas/run.schema.json", '"httperf", "siege"]', '"httperf"]')
    assert kind_files.stale(tmp_path) == [
        "benchstack/schemas/run.schema.json",
        "roles/loadgen/meta/argument_specs.yml",
    ]
    assert sorted(kind_files.write(tmp_path)) == [
        "benchstack/schemas/run.schema.json",
        "roles/loadgen/meta/argument_specs.yml",
    ]
    for path in ("benchstack/schemas/run.schema.json", "roles/loadgen/meta/argument_specs.yml"):
        assert (tmp_path / path).read_bytes() == (ROOT / path).read_bytes()


def test_a_json_value_is_replaced_where_it_is_and_nothing_else_moves() -> None:
    text = '{\n  "a": {"enum": ["x", "y"], "keep":  [1,2]},\n  "b": "text"\n}\n'
    out = textedit.replace_json(text, {"/a/enum": ["x", "y", "z"], "/b": "text"})
    assert out == '{\n  "a": {"enum": ["x", "y", "z"], "keep":  [1,2]},\n  "b": "text"\n}\n'
    with pytest.raises(textedit.EditError, match="no value at /c"):
        textedit.replace_json(text, {"/c": 1})
    long = textedit.replace_json(text, {"/a/keep": [{"name": "n" * 60, "value": "v" * 60}]})
    assert json.loads(long)["a"]["keep"] == [{"name": "n" * 60, "value": "v" * 60}]
    assert '\n    {\n      "name": ' in long  # too long for one line: a member per line


def test_every_block_of_a_name_is_replaced_at_its_own_indentation() -> None:
    text = "a:\n  # BEGIN k: why\n  - old\n  # END k\nb:\n    # BEGIN k\n    - old\n    # END k\n"
    assert replace_block(text, "f.yml", "k", ["- new"], "src") == (
        "a:\n  # BEGIN k: written by scripts/kind_files.py from src\n  - new\n  # END k\n"
        "b:\n    # BEGIN k: written by scripts/kind_files.py from src\n    - new\n    # END k\n"
    )
