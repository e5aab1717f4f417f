"""The access logs a run shipped (issue 42, item 3): the report step lists the objects under the run's prefix,
counts their lines (gzip, one JSON record a line, as fluentd's out_s3 writes them) against the requests the
cells made, records them in run.json, and the report says so, with the stacks measured with shipping on."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest
from cell_records import records

from benchstack.analysis.summary import RunData
from benchstack.report import render, shipping
from benchstack.report.build import build_report
from benchstack.results.formats import validate_run_info

PREFIX = "bench-stack/access-logs/20261205T020000Z-ship/"
SHIPPING = {
    "ship": "s3", "bucket": "bench-access-logs", "endpoint": "http://172.17.0.1:9000", "region": "us-east-1",
    "prefix": "bench-stack/access-logs/", "run_prefix": PREFIX, "fronts": ["nginx"], "stacks": ["web"],
}  # fmt: skip


def cell(stack: str, start: str, end: str, requests: int) -> dict[str, Any]:
    return {
        "stack": stack,
        "started_at": start[:19] + "Z",
        "elapsed_s": 1.0,
        "window": {"start": start, "end": end},
        "requests_completed": requests,
    }


CELLS = [
    cell("web", "2026-12-05T02:00:10.250Z", "2026-12-05T02:00:12.500Z", 3),
    # A stack without a front ships nothing: its requests are not counted.
    cell("direct", "2026-12-05T02:00:20.000Z", "2026-12-05T02:00:21.000Z", 1000),
]


def gz(*times: str) -> bytes:
    lines = [json.dumps({"path": "/", "code": "200", "time": t, "tag": "access.nginx"}) for t in times]
    return gzip.compress(("\n".join(lines) + "\n").encode())


class FakeClient:
    """What the report step asks of boto3's S3 client: a paginated listing and each object's body."""

    def __init__(self, objects: dict[str, bytes]) -> None:
        self.objects = objects
        self.listed = 0

    def get_paginator(self, name: str) -> FakeClient:
        assert name == "list_objects_v2"
        return self

    def paginate(self, Bucket: str, Prefix: str) -> list[dict[str, Any]]:  # noqa: N803 - boto3's names
        assert Bucket == "bench-access-logs"
        self.listed += 1
        keys = sorted(k for k in self.objects if k.startswith(Prefix))
        return [{"Contents": [{"Key": k, "Size": len(self.objects[k])} for k in keys]}]

    def get_object(self, Bucket: str, Key: str) -> dict[str, Any]:  # noqa: N803
        return {"Body": io.BytesIO(self.objects[Key])}


class FakeStore:
    def __init__(self, client: FakeClient) -> None:
        self.client = client

    def error(self, exc: BaseException, doing: str) -> Exception:
        return RuntimeError(f"{doing}: {type(exc).__name__}")


def run_folder(tmp_path: Path) -> Path:
    info = {"schema": "bench-stack/run/v6", "experiment": {"name": "ship"}, "log_shipping": dict(SHIPPING)}
    (tmp_path / "run.json").write_text(json.dumps(info), encoding="utf-8")
    return tmp_path


def test_lines_are_counted_in_every_object_and_those_logged_during_a_cell_apart() -> None:
    windows = shipping.cell_windows(records(CELLS), ["web"])
    # To the second, as the front logs the time: 02:00:10 to 02:00:12.
    assert windows == [(1796436010.0, 1796436012.0)]
    body = gz("2026-12-05T02:00:09+0000", "2026-12-05T02:00:10+0000", "2026-12-05T02:00:12+0000")
    assert shipping.count_lines(body, windows) == (3, 2)
    assert shipping.requests_made(records(CELLS), ["web"]) == 3


def test_the_report_step_records_the_objects_and_their_lines_in_run_json(tmp_path: Path) -> None:
    objects = {
        PREFIX + "access.nginx/20261205020000_t_0.gz": gz("2026-12-05T02:00:09+0000"),
        PREFIX + "access.nginx/20261205020010_t_0.gz": gz(*["2026-12-05T02:00:11+0000"] * 3),
        "bench-stack/access-logs/another-run/access.nginx/x.gz": gz("2026-12-05T02:00:11+0000"),
    }
    client = FakeClient(objects)
    found = shipping.collect(run_folder(tmp_path), records(CELLS), opener=lambda endpoint: FakeStore(client))
    assert found is not None and found["problem"] is None
    info = json.loads((tmp_path / "run.json").read_text())
    assert validate_run_info(info) == []
    record = info["log_shipping"]
    assert [o["key"].rsplit("/", 1)[1] for o in record["objects"]] == [
        "20261205020000_t_0.gz",
        "20261205020010_t_0.gz",
    ]
    assert [o["lines"] for o in record["objects"]] == [1, 3]
    assert (record["lines"], record["lines_in_cells"]) == (4, 3)
    assert record["run_prefix"] == PREFIX and client.listed == 1


def test_the_report_step_waits_for_fluentds_last_upload_then_gives_up(tmp_path: Path) -> None:
    client = FakeClient({})
    found = shipping.collect(
        run_folder(tmp_path),
        records(CELLS),
        opener=lambda endpoint: FakeStore(client),
        wait_s=0.05,
        poll_s=0.01,
    )
    assert found is not None and found["lines"] == 0 and client.listed > 1


def test_a_store_that_cannot_be_read_is_a_problem_recorded_not_a_failed_report(tmp_path: Path) -> None:
    def unreachable(endpoint: str | None) -> Any:
        raise ConnectionError(f"cannot reach the object store at {endpoint}")

    found = shipping.collect(run_folder(tmp_path), records(CELLS), opener=unreachable, wait_s=0)
    assert found is not None
    assert found["problem"] == "cannot reach the object store at http://172.17.0.1:9000"
    info = json.loads((tmp_path / "run.json").read_text())
    assert validate_run_info(info) == [] and "objects" not in info["log_shipping"]
    section = shipping.section(info, records(CELLS))
    assert section is not None
    assert "The store could not be read: cannot reach the object store" in render.section_markdown(section)


def test_the_report_of_a_run_that_shipped_has_the_section_after_the_others() -> None:
    page = render.markdown(build_report(RunData(Path("/r/x"), [], {"log_shipping": SHIPPING})))
    assert page.rstrip().rpartition("\n## ")[2].startswith("Access-log shipping")
    assert "The store was not listed" in page
    assert "Access-log shipping" not in render.html(build_report(RunData(Path("/r/x"), [], {})))


def test_a_run_that_ships_nothing_lists_nothing(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"schema": "bench-stack/run/v6"}), encoding="utf-8")
    assert shipping.collect(tmp_path, records(CELLS), opener=lambda e: pytest.fail("listed")) is None
    assert shipping.section({"schema": "bench-stack/run/v6"}, records(CELLS)) is None


def test_the_report_says_which_cells_shipped_and_the_lines_against_the_requests() -> None:
    info = {**SHIPPING, "objects": [{"key": "k", "size": 10, "lines": 4}], "lines": 4, "lines_in_cells": 3}
    section = shipping.section({"log_shipping": info}, records(CELLS))
    assert section is not None
    page = render.section_markdown(section)
    assert page.startswith("## Access-log shipping")
    assert f"`s3://bench-access-logs/{PREFIX}`" in page
    assert "**Measured with shipping on:** web (1 cells)" in page
    assert "costs the target CPU" in page
    assert (
        "4 access-log lines in 1 objects; the cells completed 3 requests, and 3 lines fall in their windows"
        in page
    )
