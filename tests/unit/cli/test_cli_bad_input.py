"""Bad files given to the real command line: exit 1, one line on stderr that names the file, no traceback."""

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import STORED_META, bench_stack, read_data

from benchstack.common.inputs import MAX_OUTPUT_BYTES
from benchstack.kinds.loadtools import ab
from benchstack.results.cell import cell_to_dict, json_cell_id, make_cell, write_cell

ROOT = Path(__file__).resolve().parents[3]
ELF_HEAD = b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x03\x00>\x00\x01\x00\x00\x00\xd0a"


def one_line_error(result: subprocess.CompletedProcess[str], path: Path) -> str:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"bench-stack: {path}: "), result.stderr
    return result.stderr.strip()


# ---------------------------------------------------------------- experiment files


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # The first 26 bytes of /bin/ls on Debian 12 amd64, as a user passing the wrong file would.
        (ELF_HEAD, "not UTF-8 text (byte 24 is 0xd0): a binary file?"),
        ("name: e\n".encode("utf-16"), "not UTF-8 text (a UTF-16 byte-order mark): save it as UTF-8"),
        ("name: e\n".encode("utf-16-le"), "not UTF-8 text (it holds NUL bytes): a binary or UTF-16 file?"),
    ],
    ids=["binary", "utf-16", "utf-16-without-bom"],
)
def test_experiment_that_is_not_utf8_text_is_one_line_naming_the_file(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "e.yml"
    path.write_bytes(content)
    assert one_line_error(bench_stack("experiment", path), path) == f"bench-stack: {path}: {message}"


def test_missing_experiment_file_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "nope.yml"
    error = one_line_error(bench_stack("experiment", path), path)
    assert error == f"bench-stack: {path}: cannot read the file: No such file or directory"


def test_experiment_with_a_utf8_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "e.yml"
    text = (
        "name: e\nstacks: [{name: s, port: 8001, app: {kind: static}, front: {kind: nginx}}]\n"
        "load: {plans: [{tool: ab, concurrency: 1, requests: 10}]}\n"
    )
    path.write_bytes(text.encode("utf-8-sig"))
    result = bench_stack("experiment", path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["name"] == "e"


# ---------------------------------------------------------------- cells of the wrong shape


def stored_cell(run: Path) -> Path:
    """A real cell (ab's normal capture) stored the way a run stores it; returns its file."""
    meta = {**STORED_META, "experiment": "demo", "stack": "s1", "repetition": 1, "requests": 2000}
    return write_cell(run, cell_to_dict(make_cell(ab.parse(read_data("ab", "normal.txt")), **meta)))


def with_rps(value: object) -> Callable[[dict], object]:
    return lambda cell: {**cell, "rps": value}


BAD_CELLS: dict[str, tuple[Callable[[dict], object], str]] = {
    "list": (lambda cell: [1, 2, 3], "not a valid cell: a cell must be a JSON object, not list"),
    "empty-object": (lambda cell: {}, "not a valid cell: missing keys: schema, experiment,"),
    "string-rps": (with_rps("fast"), "not a valid cell: rps must be a non-negative number"),
    "null": (lambda cell: None, "not a valid cell: a cell must be a JSON object, not NoneType"),
    "no-latency-map": (
        lambda cell: {**cell, "latency_ms": [1]},
        "not a valid cell: latency_ms must be an object with keys mean,",
    ),
}


def bad_run(tmp_path: Path, name: str, make: Callable[[dict], object]) -> tuple[Path, Path]:
    run = tmp_path / name
    path = stored_cell(run)
    path.write_text(json.dumps(make(json.loads(path.read_text()))))
    return run, path


@pytest.mark.parametrize("case", sorted(BAD_CELLS))
def test_report_of_a_cell_of_the_wrong_shape_is_one_line_naming_the_file(tmp_path: Path, case: str) -> None:
    make, message = BAD_CELLS[case]
    run, path = bad_run(tmp_path, "run", make)
    assert message in one_line_error(bench_stack("report", run), path)
    assert not (run / "report.md").exists()


@pytest.mark.parametrize("case", sorted(BAD_CELLS))
def test_compare_with_a_cell_of_the_wrong_shape_is_one_line_naming_it(tmp_path: Path, case: str) -> None:
    make, message = BAD_CELLS[case]
    good = tmp_path / "good"
    stored_cell(good)
    run, path = bad_run(tmp_path, "bad", make)
    assert message in one_line_error(bench_stack("compare", good, run), path)


def test_validate_names_the_same_problem(tmp_path: Path) -> None:
    run, path = bad_run(tmp_path, "run", with_rps("fast"))
    result = bench_stack("validate", run)
    assert result.returncode == 1
    assert f"{path}: rps must be a non-negative number" in result.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"\x89PNG\r\n\x1a\n\x00", "not a cell: not UTF-8 text (byte 0)"), (b'{"rps": ', "not valid JSON: ")],
    ids=["binary", "truncated"],
)
def test_report_of_a_cell_file_that_is_not_json_is_one_line(
    tmp_path: Path, content: bytes, message: str
) -> None:
    run = tmp_path / "run"
    path = stored_cell(run)
    path.write_bytes(content)
    assert message in one_line_error(bench_stack("report", run), path)


def test_report_of_a_run_json_that_is_not_text_is_one_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    stored_cell(run)
    (run / "run.json").write_bytes(b"\xff\xfe{\x00}\x00")
    error = one_line_error(bench_stack("report", run), run / "run.json")
    assert error.endswith("not UTF-8 text (byte 0)")


# ---------------------------------------------------------------- run.json of the wrong shape

BAD_RUN_JSON: dict[str, tuple[object, str]] = {
    "list": ([], "not a valid run record: run.json must be a JSON object, not list"),
    "no-schema": ({"experiment": {"name": "e"}}, "not a valid run record: missing keys: schema"),
    "bad-mode": (
        {"schema": "bench-stack/run/v1", "mode": "lan"},
        "not a valid run record: mode must be one of loopback, network, not 'lan'",
    ),
    "bad-max-cv": (
        {"schema": "bench-stack/run/v1", "experiment": {"name": "e", "load": {"max_cv": "5%"}}},
        "not a valid run record: experiment.load.max_cv must be a non-negative number, not '5%'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_RUN_JSON))
def test_report_and_compare_of_a_run_json_of_the_wrong_shape_is_one_line_naming_the_field(
    tmp_path: Path, case: str
) -> None:
    content, message = BAD_RUN_JSON[case]
    good, run = tmp_path / "good", tmp_path / "run"
    stored_cell(good)
    stored_cell(run)
    (run / "run.json").write_text(json.dumps(content), encoding="utf-8")
    assert one_line_error(bench_stack("report", run), run / "run.json").endswith(message)
    assert not (run / "report.md").exists()
    assert one_line_error(bench_stack("compare", good, run), run / "run.json").endswith(message)


def test_validate_lists_every_problem_of_run_json(tmp_path: Path) -> None:
    run = tmp_path / "run"
    stored_cell(run)
    bad = {"schema": "bench-stack/run/v1", "mode": "lan", "targets": "web1"}
    (run / "run.json").write_text(json.dumps(bad), encoding="utf-8")
    result = bench_stack("validate", run)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith(f"{run / 'run.json'}: ")] == [
        f"{run / 'run.json'}: targets must be a list of names, not 'web1'",
        f"{run / 'run.json'}: mode must be one of loopback, network, not 'lan'",
    ]
    assert lines[-1] == "run.json: not valid"


# ---------------------------------------------------------------- one check of a stored cell (issue 29)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "latin-1", "deep"])
def test_every_command_names_a_cell_file_it_cannot_read_without_hanging(tmp_path: Path, kind: str) -> None:
    run = tmp_path / "run"
    stored_cell(run)
    path = run / "cells" / "odd.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", path)
    elif kind == "latin-1":
        path.write_bytes('{"stack": "caf\xe9"}'.encode("latin-1"))
    else:
        path.write_text("[" * 100_000 + "]" * 100_000)
    reason = {
        "fifo": "not a regular file (a FIFO): not read",
        "dev-zero": "not a regular file (a character device): not read",
        "latin-1": "not a cell: not UTF-8 text (byte 14)",
        "deep": "not valid JSON: nested too deeply",
    }[kind]
    validate = bench_stack("validate", run)
    assert validate.returncode == 1 and "Traceback" not in validate.stderr
    assert f"{path}: {reason}" in validate.stdout.splitlines()
    assert one_line_error(bench_stack("report", run), path) == f"bench-stack: {path}: {reason}"
    good = tmp_path / "good"
    stored_cell(good)
    assert one_line_error(bench_stack("compare", good, run), path) == f"bench-stack: {path}: {reason}"


@pytest.mark.parametrize("case", ["no-run-metadata", "another-cells-name"])
def test_report_compare_and_hist_refuse_the_cells_validate_refuses(tmp_path: Path, case: str) -> None:
    run = tmp_path / "run"
    path = stored_cell(run)
    cell = json.loads(path.read_text())
    if case == "no-run-metadata":
        path.write_text(json.dumps({**cell, "target": None, "raw_output": None}))
        problem = "target must be set in a stored cell"
    else:
        # A copy under another name: counted twice by the report before.
        path = path.with_name("copy.json")
        path.write_text(json.dumps(cell))
        problem = f"file name should be {json_cell_id(cell)}.json for this cell"
    validate = bench_stack("validate", run)
    assert validate.returncode == 1 and f"{path}: {problem}" in validate.stdout
    assert problem in one_line_error(bench_stack("report", run), path)
    good = tmp_path / "good"
    stored_cell(good)
    assert problem in one_line_error(bench_stack("compare", good, run), path)
    hist = bench_stack("hist", run, path.stem)
    assert hist.returncode == 1 and problem in hist.stderr


# ---------------------------------------------------------------- issue 44, finding 7: crashes, runaway reads


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "folder", "too-large"])
def test_parse_reads_only_a_bounded_regular_file(tmp_path: Path, kind: str) -> None:
    """`parse --tool wrk /dev/zero` grew to 2.6 GB; on a FIFO it waited forever."""
    path = tmp_path / "out.txt"
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_bytes(b"x" * (MAX_OUTPUT_BYTES + 1))
    reason = {
        "dev-zero": "not a regular file (a character device): not read",
        "fifo": "not a regular file (a FIFO): not read",
        "folder": "not a regular file (a folder): not read",
        "too-large": "larger than 16 MiB: not read",
    }[kind]
    result = bench_stack("parse", "--tool", "wrk", path, timeout=20)
    assert one_line_error(result, path) == f"bench-stack: {path}: {reason}"


def test_parse_reads_standard_input_within_the_same_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    endless = io.BytesIO(b"\0" * (MAX_OUTPUT_BYTES + 10))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(endless))
    result = bench_stack("parse", "--tool", "wrk", "-")
    assert one_line_error(result, Path("-")) == "bench-stack: -: larger than 16 MiB: not read"
    assert endless.tell() <= MAX_OUTPUT_BYTES + 1


def test_an_experiment_path_of_a_user_that_does_not_exist_is_one_line() -> None:
    result = bench_stack("experiment", "~nosuchuser/x.yml")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr == (
        "bench-stack: '~nosuchuser/x.yml': '~nosuchuser': no such user, so '~' cannot be expanded\n"
    )


def user_app_experiment(tmp_path: Path, app: str, kind: str = "sinatra", server: str = "thin") -> Path:
    path = tmp_path / "e.yml"
    path.write_text(
        "name: e\nstacks:\n"
        f"  - {{name: s, port: 8001, app: {{kind: {kind}, src: {app}}}, server: {{kind: {server}}}}}\n"
        "load: {plans: [{tool: ab, concurrency: 1, requests: 10}]}\n"
    )
    return path


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (
            lambda app: (app / os.fsdecode(b"caf\xe9.txt")).write_text("x"),
            "'caf\\udce9.txt' has a name that is not UTF-8: rename it",
        ),
        (
            lambda app: (app / "l").symlink_to(os.fsdecode(b"caf\xe9")),
            "'l' is a link to a name that is not UTF-8: rename it",
        ),
    ],
    ids=["file-name", "link-target"],
)
def test_a_name_in_app_src_that_is_not_utf8_is_one_problem(
    tmp_path: Path, make: Callable[[Path], object], problem: str
) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "config.ru").write_text("run ->(e) { [200, {}, ['ok']] }\n")
    make(app)
    result = bench_stack("experiment", user_app_experiment(tmp_path, "app"))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines()[1:] == [f"  - stack 's': app.src: {problem}"]


def test_a_requirements_include_that_is_a_dangling_link_is_one_problem(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "app.py").write_text("def application(e, s):\n    return [b'ok']\n")
    (app / "requirements.txt").write_text("-r extra.txt\n")
    (app / "extra.txt").symlink_to("nothere")
    result = bench_stack("experiment", user_app_experiment(tmp_path, "app", "wsgi", "gunicorn"))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines()[1:] == [
        f"  - stack 's': app.src: {app}/extra.txt (included from requirements.txt line 1): cannot read the "
        "file: No such file or directory"
    ]
