from pathlib import Path

import pytest

from benchstack.results.files import read_json, write_atomic, write_json


def test_read_json_gives_the_stored_value(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text('{"b": [1, 2.5, null]}', encoding="utf-8")
    assert read_json(path) == {"b": [1, 2.5, None]}


@pytest.mark.parametrize(
    ("content", "what", "message"),
    [
        (None, "", "cannot read the file: No such file or directory"),
        (b"\x89PNG\r\n", "", "not UTF-8 text (byte 0)"),
        (b"\x89PNG\r\n", "a cell", "not a cell: not UTF-8 text (byte 0)"),
        (b'{"rps": ', "a cell", "not valid JSON: Expecting value: line 1 column 9 (char 8)"),
    ],
)
def test_read_json_refuses_in_one_line_that_names_the_file(
    tmp_path: Path, content: bytes | None, what: str, message: str
) -> None:
    path = tmp_path / "x.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ValueError) as err:
        read_json(path, what)
    assert str(err.value) == f"{path}: {message}"
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_write_atomic_replaces_the_file_and_leaves_no_temporary_one(tmp_path: Path) -> None:
    path = tmp_path / "raw" / "c.txt"
    write_atomic(path, "first\n")
    write_atomic(path, "second\n")
    assert path.read_text(encoding="utf-8") == "second\n"
    assert [p.name for p in path.parent.iterdir()] == ["c.txt"]


def test_a_failed_write_keeps_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    write_atomic(path, "old\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(path, "half \udc80 written")
    assert path.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["c.txt"]


def test_write_json_writes_run_json_sorted_and_indented(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    write_json(path, {"schema": "bench-stack/run/v1", "verify": {"passed": True, "at": tmp_path}})
    assert path.read_text(encoding="utf-8") == (
        '{\n  "schema": "bench-stack/run/v1",\n'
        f'  "verify": {{\n    "at": "{tmp_path}",\n    "passed": true\n  }}\n}}\n'
    )


def test_write_json_refuses_a_record_off_the_run_schema_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    with pytest.raises(ValueError) as err:
        write_json(path, {"b": 1})
    problems = "missing keys: schema; unexpected keys: b"
    assert str(err.value) == f"{path}: not writing an invalid run record: {problems}"
    assert not path.exists()
