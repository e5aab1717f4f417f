"""scripts/kind_files.py: the files whose per-kind parts come from the kinds' registries are up to date, and a
stale one is named, not silently accepted."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import project_script

ROOT = Path(__file__).resolve().parents[3]
kind_files = project_script("kind_files", "kind_files.py")
textedit = project_script("textedit", "kindfiles/textedit.py")


def test_every_generated_file_is_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "kind_files.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The files the sections read, copied to a root of their own."""
    for path in kind_files.wanted(ROOT):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, tmp_path / path)
    return tmp_path


def test_a_stale_file_is_named_and_written_again(copy: Path) -> None:
    specs = copy / "roles" / "loadgen" / "meta" / "argument_specs.yml"
    specs.write_text(specs.read_text(encoding="utf-8").replace("choices: [ab, wrk,", "choices: [ab,"))
    schema = copy / "benchstack" / "schemas" / "run.schema.json"
    schema.write_text(schema.read_text(encoding="utf-8").replace('"httperf", "siege"]', '"httperf"]', 1))
    script = [sys.executable, str(ROOT / "scripts" / "kind_files.py"), "--root", str(copy)]
    done = subprocess.run([*script, "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "stale: benchstack/schemas/run.schema.json (run python scripts/kind_files.py)",
        "stale: roles/loadgen/meta/argument_specs.yml (run python scripts/kind_files.py)",
    ]
    subprocess.run(script, check=True, capture_output=True)
    assert kind_files.stale(copy) == {}
    assert specs.read_bytes() == (ROOT / "roles" / "loadgen" / "meta" / "argument_specs.yml").read_bytes()


def test_a_json_value_is_replaced_where_it_is_and_nothing_else_moves() -> None:
    text = '{\n  "a": {"enum": ["x", "y"], "keep":  [1,2]},\n  "b": "text"\n}\n'
    out = textedit.replace_json(text, {"/a/enum": ["x", "y", "z"], "/b": "text"})
    assert out == '{\n  "a": {"enum": ["x", "y", "z"], "keep":  [1,2]},\n  "b": "text"\n}\n'
    with pytest.raises(textedit.EditError, match="no value at /c"):
        textedit.replace_json(text, {"/c": 1})
    long = textedit.replace_json(text, {"/a/keep": [{"name": "n" * 60, "value": "v" * 60}]})
    assert json.loads(long)["a"]["keep"] == [{"name": "n" * 60, "value": "v" * 60}]
    assert '\n    {\n      "name": ' in long  # too long for one line: a member per line


def test_a_marked_block_is_replaced_at_its_indentation_and_a_missing_one_is_an_error() -> None:
    text = "a:\n  # BEGIN k: why\n  - old\n  # END k\nb: 1\n"
    assert textedit.replace_blocks(text, "k", lambda indent: [f"{indent}- new"]) == (
        "a:\n  # BEGIN k: why\n  - new\n  # END k\nb: 1\n"
    )
    with pytest.raises(textedit.EditError, match="no BEGIN other block"):
        textedit.replace_blocks(text, "other", lambda indent: [])
