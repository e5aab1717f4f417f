import dataclasses
import json
import os
from pathlib import Path

import pytest
from conftest import read_data

from benchstack.kinds.loadtools import ab, httperf, wrk
from benchstack.results.cell import (
    SCHEMA,
    Cell,
    CellExistsError,
    cell_id,
    cell_id_of,
    cell_to_dict,
    group_key,
    load_cells,
    load_level,
    make_cell,
    read_cell,
    validate_cell,
    write_cell,
)

META = {
    "experiment": "sinatra-thin-nginx",
    "stack": "sinatra-thin-x1",
    "target": "target1",
    "loadgen": "loadgen1",
    "mode": "network",
    "command": ["ab", "-n", "2000", "-c", "50", "http://127.0.0.1:18080/hello/bar"],
    "requests": 2000,
    "repetition": 1,
    "started_at": "2025-01-02T03:04:05Z",
    "threshold_ms": 300,
    "raw_output": "raw/sinatra-thin-x1__ab__c50__r1.txt",
}


def ab_cell(**overrides: object) -> dict:
    meta = {**META, **overrides}
    return cell_to_dict(make_cell(ab.parse(read_data("ab", "normal.txt")), **meta))


def test_make_cell_combines_parsed_output_and_metadata() -> None:
    d = ab_cell()
    assert d["schema"] == SCHEMA == "bench-stack/cell/v2"
    assert d["stack"] == "sinatra-thin-x1"
    assert d["tool"] == "ab" and d["tool_version"] == "2.3"
    assert d["concurrency"] == 50
    assert d["url"] == "http://127.0.0.1:18080/hello/bar"  # from ab's output when not given
    assert d["elapsed_s"] == 0.105  # the tool's measured time when not given
    assert d["rps"] == 18967.23
    assert d["status"] == "ok"
    assert validate_cell(d, require_meta=True) == []


def test_a_cells_dict_has_every_field_in_order_and_shares_nothing_with_the_cell() -> None:
    parsed = ab.parse(read_data("ab", "normal.txt"))
    vmstat = {"samples": 2, "cpu_user": 1.5}
    cell = make_cell(parsed, **META, system={"loadgen": vmstat, "target": None})
    cell.latency_dist = {"source": "ab-g", "counts": [[100, 2], [200, 1]]}
    d = cell_to_dict(cell)
    assert list(d) == [f.name for f in dataclasses.fields(cell) if f.name != "json_keys"]
    assert (
        d["system"] == {"loadgen": vmstat, "target": None} and d["latency_ms"]["p50"] == cell.latency_ms.p50
    )
    d["latency_dist"]["counts"][0][1] = 99
    d["system"]["loadgen"]["samples"] = 3
    d["command"].append("x")
    d["errors"]["connect"] = 7
    assert cell.latency_dist["counts"][0] == [100, 2] and cell.system and cell.system.loadgen
    assert cell.system.loadgen.samples == 2
    assert cell.command[-1] != "x" and cell.errors["connect"] != 7


def test_make_cell_rejects_concurrency_that_disagrees_with_the_output() -> None:
    with pytest.raises(ValueError, match="concurrency given as 100 but the ab output says 50"):
        ab_cell(concurrency=100)


def test_make_cell_rejects_unknown_metadata() -> None:
    with pytest.raises(TypeError, match="unknown metadata: colour"):
        ab_cell(colour="red")


def test_cell_without_metadata_is_valid_but_not_as_a_stored_cell() -> None:
    d = cell_to_dict(make_cell(wrk.parse(read_data("wrk", "latency.txt"))))
    assert d["stack"] is None
    assert validate_cell(d) == []
    problems = validate_cell(d, require_meta=True)
    assert "stack must be set in a stored cell" in problems
    assert "a stored cell needs requests or duration_s (the configured load)" in problems


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"schema": "bench-stack/cell/v0"}, "schema must be 'bench-stack/cell/v2' or 'bench-stack/cell/v1'"),
        ({"rps": -1.0}, "rps must be a non-negative number"),
        ({"requests_completed": 1.5}, "requests_completed must be an integer >= 0"),
        ({"concurrency": True}, "concurrency must be an integer >= 1"),
        ({"mode": "lan"}, "mode must be one of loopback, network"),
        ({"tool": "vegeta"}, "tool must be one of ab, wrk"),
        ({"error_rate": 1.5}, "error_rate must be a number from 0 to 1"),
        (
            {"started_at": "2025-01-02T03:04:05+02:00"},
            "started_at must be an ISO 8601 time in UTC, ending in Z or +00:00 (or null), "
            "not '2025-01-02T03:04:05+02:00'",
        ),
        ({"started_at": "yesterday"}, "started_at must be an ISO 8601 time in UTC"),
        ({"started_at": "2025-02-30T03:04:05Z"}, "started_at is not a real date and time: '2025-02-30"),
        ({"raw_output": "/abs/raw.txt"}, "raw_output must be a relative path"),
        ({"raw_output": "../raw.txt"}, "raw_output must be a relative path"),
        ({"status": "great"}, "status must be one of ok"),
        ({"colour": "red"}, "unexpected keys: colour"),
    ],
)
def test_validate_cell_reports_problems(change: dict, problem: str) -> None:
    d = {**ab_cell(), **change}
    assert any(problem in p for p in validate_cell(d)), validate_cell(d)


def test_validate_cell_requires_complete_error_and_latency_keys() -> None:
    d = ab_cell()
    del d["errors"]["over_threshold"]
    d["latency_ms"]["p999"] = 1.0
    d["errors"]["status"] = -3
    problems = validate_cell(d)
    assert "errors lacks over_threshold" in problems
    assert "latency_ms has unexpected keys p999" in problems
    assert "errors.status must be a non-negative integer or null, not -3" in problems


def test_validate_cell_reports_missing_keys() -> None:
    d = ab_cell()
    del d["rps"], d["url"]
    assert "missing keys: url, rps" in validate_cell(d)


def test_cell_id_is_filename_safe() -> None:
    assert cell_id("sinatra-thin-x4-nginx", "wrk", 32, 2) == "sinatra-thin-x4-nginx__wrk__c32__r2"
    assert cell_id("my stack/../x", "ab", 100, 1, keepalive=True) == "my-stack-..-x__ab-k__c100__r1"
    assert cell_id("...", "wrk", 1, 1, keepalive=True) == "unknown__wrk__c1__r1"


def test_a_closed_loop_cell_is_keyed_by_its_concurrency() -> None:
    cell = Cell.from_dict(ab_cell())
    assert load_level(cell) == 50
    assert cell_id_of(cell) == "sinatra-thin-x1__ab__c50__r1"
    assert group_key(cell) == ("sinatra-thin-x1", "ab", False, 50)


def test_an_open_loop_cell_is_keyed_by_its_offered_rate_not_its_observed_concurrency() -> None:
    parsed = httperf.parse(read_data("httperf", "ok.txt"))
    cell = make_cell(parsed, **{**META, "rate": 200})
    assert cell.concurrency != 200
    assert load_level(cell) == 200
    assert cell_id_of(cell) == "sinatra-thin-x1__httperf__rate200__r1"
    assert group_key(cell) == ("sinatra-thin-x1", "httperf", False, 200)


def test_write_cell_stores_json_under_cells(tmp_path: Path) -> None:
    path = write_cell(tmp_path, make_cell(ab.parse(read_data("ab", "normal.txt")), **META))
    assert path == tmp_path / "cells" / "sinatra-thin-x1__ab__c50__r1.json"
    assert json.loads(path.read_text())["rps"] == 18967.23
    assert os.listdir(tmp_path / "cells") == [path.name]  # no temporary file left behind
    assert [c.to_dict() for c in load_cells(tmp_path)] == [ab_cell()]


def test_write_cell_syncs_the_whole_file_before_it_takes_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[tuple[Path, int, list[str]]] = []

    def fsync(fd: int) -> None:
        where = Path(os.readlink(f"/proc/self/fd/{fd}"))
        synced.append((where, os.fstat(fd).st_size, os.listdir(where.parent)))

    monkeypatch.setattr(os, "fsync", fsync)
    path = write_cell(tmp_path, ab_cell())
    [(where, size, listed)] = synced
    assert where.parent == path.parent and where.name.startswith(f".{path.stem}.")
    assert size == path.stat().st_size and path.name not in listed


def test_write_cell_never_overwrites(tmp_path: Path) -> None:
    path = write_cell(tmp_path, ab_cell())
    before = path.read_text()
    with pytest.raises(CellExistsError, match="not overwriting"):
        write_cell(tmp_path, {**ab_cell(), "rps": 1.0})
    assert path.read_text() == before
    assert os.listdir(tmp_path / "cells") == [path.name]


def test_write_cell_refuses_invalid_cells(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="rps must be a non-negative number"):
        write_cell(tmp_path, {**ab_cell(), "rps": -5})
    with pytest.raises(ValueError, match="stack must be set to store a cell"):
        write_cell(tmp_path, {**ab_cell(), "stack": None})
    assert not list((tmp_path / "cells").glob("*"))


def test_load_cells_skips_temporary_files_and_names_bad_json(tmp_path: Path) -> None:
    write_cell(tmp_path, ab_cell())
    (tmp_path / "cells" / ".x__ab__c1__r1.abc.tmp").write_text("{")
    assert len(load_cells(tmp_path)) == 1
    (tmp_path / "cells" / "broken.json").write_text("{")
    with pytest.raises(ValueError, match="broken.json: not valid JSON"):
        load_cells(tmp_path)


def test_a_cell_file_is_checked_again_when_its_bytes_or_its_name_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # read_cell remembers the files it found valid by name and bytes: the same file read again is not
    # checked again, and any other bytes or name are.
    import benchstack.results.cell as cell_module

    checked: list[str] = []
    check = cell_module.stored_cell_problems

    def counted(data: object, path: Path) -> list[str]:
        checked.append(path.name)
        return check(data, path)

    monkeypatch.setattr(cell_module, "stored_cell_problems", counted)
    path = write_cell(tmp_path, {**ab_cell(), "stack": "a-stack-read-twice"})
    valid = path.read_bytes()
    assert read_cell(path).rps == read_cell(path).rps
    assert checked == [path.name]
    path.write_text(path.read_text().replace('"rps": ', '"rps": -'))
    with pytest.raises(ValueError, match="not a valid cell: rps must be a non-negative number"):
        read_cell(path)
    path.write_text(json.dumps(json.loads(valid)))  # the same cell, other bytes
    read_cell(path)
    other = path.with_name("another-name.json")
    other.write_bytes(valid)
    with pytest.raises(ValueError, match="file name should be"):
        read_cell(other)
    assert checked == [path.name] * 3 + [other.name]


def test_load_cells_of_missing_folder_is_empty(tmp_path: Path) -> None:
    assert load_cells(tmp_path / "nothing") == []


# ---------------------------------------------------------------- latency distributions stay v1


def wrk_cell_with_distribution() -> dict:
    parsed = wrk.parse(read_data("latency", "wrk-fast.txt"))
    window = {"start": "2026-11-30T21:49:49.694Z", "end": "2026-11-30T21:49:52.401Z"}
    return cell_to_dict(make_cell(parsed, **{**META, "command": ["wrk"], "window": window}))


def test_a_v1_cell_from_before_distributions_is_still_valid() -> None:
    old = ab_cell()
    for key in ("latency_dist", "window", "interference", "disturbed"):
        del old[key]
    old["latency_ms"] = {k: v for k, v in old["latency_ms"].items() if k not in ("p99.9", "p99.99")}
    old["schema"] = "bench-stack/cell/v1"
    assert validate_cell(old, require_meta=True) == []


def test_a_v2_cell_needs_interference_and_disturbed() -> None:
    d = ab_cell()
    del d["interference"], d["disturbed"]
    assert validate_cell(d, require_meta=True) != []
    d["schema"] = "bench-stack/cell/v1"
    assert validate_cell(d, require_meta=True) == []


def test_a_cell_with_a_distribution_window_and_tail_percentiles_is_valid() -> None:
    d = wrk_cell_with_distribution()
    assert d["schema"] == "bench-stack/cell/v2"
    assert d["latency_dist"]["samples"] == 125206 and d["latency_ms"]["p99.99"] is not None
    assert validate_cell(d, require_meta=True) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"window": {"start": "2026-11-30T21:49:52Z", "end": "2026-11-30T21:49:50Z"}}, "window.end"),
        ({"window": {"start": "yesterday", "end": "2026-11-30T21:49:50Z"}}, "window.start must be an ISO"),
        ({"window": {"start": "2026-11-30T21:49:52Z"}}, "window lacks end"),
        ({"latency_dist": {"source": "wrk"}}, "latency_dist lacks unit_us, significant_bits, corrected,"),
        ({"latency_ms": {"p99.9": -1.0}}, "latency_ms.p99.9 must be a non-negative number"),
        ({"latency_ms": {"p99.999": 1.0}}, "latency_ms has unexpected keys p99.999"),
    ],
)
def test_validate_cell_checks_distribution_window_and_tail_percentiles(change: dict, problem: str) -> None:
    d = wrk_cell_with_distribution()
    if "latency_ms" in change:
        change = {"latency_ms": {**d["latency_ms"], **change["latency_ms"]}}
    problems = validate_cell({**d, **change})
    assert any(problem in p for p in problems), problems


def test_a_cell_the_package_lets_through_but_the_schema_file_refuses_fails_the_test_that_writes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The session's second opinion (conftest.stored_cells_fit_the_schema_file): plain jsonschema on the
    # schema file, for every cell written. A cell it found fitting before does not let another through.
    import benchstack.results.formats as formats

    write_cell(tmp_path, {**ab_cell(), "stack": "a-fitting-one"})
    monkeypatch.setattr(formats, "check", lambda name, document, what: [])
    with pytest.raises(AssertionError, match=r"does not fit benchstack/schemas/cell.schema.json: \['rps: "):
        write_cell(tmp_path, {**ab_cell(), "stack": "a-bad-one", "rps": -5})
