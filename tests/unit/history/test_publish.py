"""bench-stack publish and import s3://...: a run folder copied to an S3-compatible store by content hash,
idempotent and resumable, its manifest last, and imported back into the history with the same records;
credentials never in any output (docs/history.md#publishing). The store is moto's, in this process
(s3_cases.in_process); the tests where HTTP is the point (credentials in no output, an unreachable store's
retries) use moto's real server on loopback, and so publish and import over HTTP too. The run folder is the
captured run with two cells a load point (history_cases.run_copy's ``repetitions``): 11 files, each handled as
each of its 55 would be."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import bench_stack
from history_cases import db_url, run_copy
from s3_cases import (
    ACCESS_KEY,
    SECRET_KEY,
    Recording,
    S3Server,
    aws_environment,
    in_process,
    retry_pauses,
)
from sqlalchemy import select
from sqlalchemy.orm import Session

from benchstack.history.database import open_database
from benchstack.history.publish import Store, open_store, publish_run
from benchstack.history.schema import RunRow
from benchstack.results.location import MANIFEST, StoreError, parse_store_url, shown

_buckets = itertools.count()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[S3Server]:
    yield from in_process(monkeypatch)


@pytest.fixture(autouse=True)
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    return retry_pauses(monkeypatch)


def new_bucket(server: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new bucket on ``server``, and the AWS variables pointing at it."""
    aws_environment(monkeypatch, server)
    name = f"bench-{next(_buckets)}"
    server.client().create_bucket(Bucket=name)
    return name


@pytest.fixture
def bucket(server: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    return new_bucket(server, monkeypatch)


@pytest.fixture
def http_bucket(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new bucket on moto's real server, reached over HTTP."""
    return new_bucket(s3_server, monkeypatch)


def recording(fail_after: int | None = None) -> tuple[Store, Recording]:
    store = open_store()
    wrapped = Recording(store.client, fail_after)
    store.client = wrapped
    return store, wrapped


def keys(server: S3Server, bucket: str) -> list[str]:
    return [o["Key"] for o in server.client().list_objects_v2(Bucket=bucket).get("Contents", [])]


def objects(server: S3Server, bucket: str) -> dict[str, bytes]:
    client = server.client()
    return {k: client.get_object(Bucket=bucket, Key=k)["Body"].read() for k in keys(server, bucket)}


def small_run(tmp_path: Path) -> Path:
    return run_copy(tmp_path, "day0", repetitions=2)


def files_of(run_dir: Path) -> list[str]:
    return sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file())


def test_a_first_publish_uploads_every_file_then_the_manifest(
    tmp_path: Path, server: S3Server, bucket: str
) -> None:
    run_dir = small_run(tmp_path)
    store, client = recording()
    done = publish_run(store, run_dir, parse_store_url(f"s3://{bucket}/team/runs"))
    files = files_of(run_dir)
    assert sorted(done.uploaded) == files and done.manifest_written
    # The manifest last: a run is published (complete) once its manifest exists.
    assert client.puts == [f"team/runs/day0/{rel}" for rel in files] + [f"team/runs/day0/{MANIFEST}"]
    stored = objects(server, bucket)
    manifest = json.loads(stored.pop(f"team/runs/day0/{MANIFEST}"))
    assert manifest["run"] == "day0" and set(manifest["files"]) == set(files)
    for rel in files:
        assert stored[f"team/runs/day0/{rel}"] == (run_dir / rel).read_bytes()
    import hashlib

    assert (
        manifest["files"]["run.json"]["sha256"]
        == hashlib.sha256((run_dir / "run.json").read_bytes()).hexdigest()
    )


def test_a_second_publish_uploads_nothing(tmp_path: Path, bucket: str) -> None:
    run_dir = small_run(tmp_path)
    first = bench_stack("publish", run_dir, "--to", f"s3://{bucket}/runs")
    assert first.returncode == 0, first.stderr
    assert first.stdout == f"s3://{bucket}/runs/day0/: 11 file(s) uploaded, 0 unchanged, manifest written\n"
    store, client = recording()
    again = publish_run(store, run_dir, parse_store_url(f"s3://{bucket}/runs"))
    assert again.line() == f"s3://{bucket}/runs/day0/: 0 file(s) uploaded, 11 unchanged, already published"
    assert client.puts == [] and client.deletes == []


def test_an_interrupted_publish_resumes_with_only_the_missing_files(
    tmp_path: Path, server: S3Server, bucket: str
) -> None:
    run_dir = small_run(tmp_path)
    dest = parse_store_url(f"s3://{bucket}/runs")
    store, _ = recording(fail_after=4)
    with pytest.raises(StoreError, match=r"\(4 of 11 file\(s\) uploaded\): cannot reach the object store"):
        publish_run(store, run_dir, dest)
    assert f"runs/day0/{MANIFEST}" not in keys(server, bucket)
    # Not published yet: an import says so, and the history is not touched.
    cut = bench_stack("import", f"s3://{bucket}/runs/day0", "--db", db_url(tmp_path))
    assert cut.returncode == 5
    assert cut.stderr == (
        f"bench-stack: s3://{bucket}/runs/day0/: no {MANIFEST}: not published, or its publish did not "
        "finish (publish again)\n"
    )
    store, client = recording()
    done = publish_run(store, run_dir, dest)
    assert len(done.uploaded) == 7 and done.unchanged == 4
    assert client.puts[-1] == f"runs/day0/{MANIFEST}" and len(client.puts) == 8
    assert f"runs/day0/{MANIFEST}" in keys(server, bucket)


def test_a_resumed_run_with_more_cells_uploads_only_those_and_a_new_manifest(
    tmp_path: Path, server: S3Server, bucket: str
) -> None:
    run_dir = small_run(tmp_path)
    dest = parse_store_url(f"s3://{bucket}/runs")
    publish_run(open_store(), run_dir, dest)
    # Resumed: one more cell, and run.json rewritten.
    cells = run_dir / "cells"
    shutil.copy(cells / "nginx-static__wrk__c32__r2.json", cells / "nginx-static__wrk__c32__r3.json")
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    info["seed_note"] = "resumed"
    (run_dir / "run.json").write_text(json.dumps(info), encoding="utf-8")
    store, client = recording()
    done = publish_run(store, run_dir, dest)
    assert sorted(done.uploaded) == ["cells/nginx-static__wrk__c32__r3.json", "run.json"]
    assert client.deletes == [f"runs/day0/{MANIFEST}"]  # gone while the folder is not all there
    assert client.puts[-1] == f"runs/day0/{MANIFEST}" and len(client.puts) == 3
    manifest = json.loads(
        server.client().get_object(Bucket=bucket, Key=f"runs/day0/{MANIFEST}")["Body"].read()
    )
    assert "cells/nginx-static__wrk__c32__r3.json" in manifest["files"] and len(manifest["files"]) == 12


def _records(url: str) -> list[dict[str, Any]]:
    """Every row of every run, without the row ids, the import's time and the run's path."""
    skip = {"id", "run_id", "imported_at", "path"}

    def plain(row: object) -> dict[str, Any]:
        return {c.name: getattr(row, c.name) for c in row.__table__.columns if c.name not in skip}  # type: ignore[attr-defined]

    engine = open_database(url)
    with Session(engine) as session:
        found = []
        for run in session.scalars(select(RunRow).order_by(RunRow.uid)):
            found.append(
                {
                    "run": plain(run),
                    **{
                        part: sorted((plain(r) for r in getattr(run, part)), key=repr)
                        for part in ("hosts", "load_points", "comparisons", "reasons")
                    },
                }
            )
    engine.dispose()
    return found


def test_a_published_run_imported_back_is_the_same_history_record(tmp_path: Path, bucket: str) -> None:
    run_dir = run_copy(tmp_path, "day1", 1, slower={"sinatra-thin-x2-nginx": 0.8}, repetitions=2)
    assert bench_stack("publish", run_dir, "--to", f"s3://{bucket}/runs").returncode == 0
    local, published = f"sqlite:///{tmp_path / 'local.sqlite'}", f"sqlite:///{tmp_path / 'published.sqlite'}"
    assert bench_stack("import", run_dir, "--db", local).returncode == 0
    done = bench_stack("import", f"s3://{bucket}/runs/day1", "--db", published)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"added: s3://{bucket}/runs/day1 (")
    records = _records(published)
    assert records == _records(local) and len(records[0]["load_points"]) == 5
    # Into the database that has the local folder: the same run, unchanged.
    again = bench_stack("import", f"s3://{bucket}/runs/day1", "--db", local)
    assert again.stdout.startswith(f"unchanged: s3://{bucket}/runs/day1 (")


def test_a_file_changed_in_the_store_is_refused_on_import(
    tmp_path: Path, server: S3Server, bucket: str
) -> None:
    run_dir = small_run(tmp_path)
    assert bench_stack("publish", run_dir, "--to", f"s3://{bucket}/runs").returncode == 0
    server.client().put_object(Bucket=bucket, Key="runs/day0/run.json", Body=b"{}")
    done = bench_stack("import", f"s3://{bucket}/runs/day0", "--db", db_url(tmp_path))
    assert done.returncode == 5
    assert done.stderr == (
        f"bench-stack: s3://{bucket}/runs/day0/run.json: its content is not what the manifest says "
        "(sha256 differs)\n"
    )
    assert not (tmp_path / "results" / "history.sqlite").exists() or _records(db_url(tmp_path)) == []


def test_a_bad_endpoint_fails_with_a_clear_message_and_exit_5(
    tmp_path: Path, http_bucket: str, pauses: list[float]
) -> None:
    bucket = http_bucket
    run_dir = small_run(tmp_path)
    done = bench_stack(
        "publish", run_dir, "--to", f"s3://{bucket}/runs", "--endpoint-url", "http://127.0.0.1:1"
    )
    assert done.returncode == 5 and done.stdout == ""
    assert len(pauses) == 3  # the manifest's read retried 3 times (CLIENT_CONFIG), each after a pause
    assert done.stderr == (
        f"bench-stack: reading s3://{bucket}/runs/day0/{MANIFEST}: cannot reach the object store at "
        "http://127.0.0.1:1 (EndpointConnectionError)\n"
    )


def test_a_missing_bucket_or_destination_is_named(tmp_path: Path, bucket: str) -> None:
    run_dir = small_run(tmp_path)
    done = bench_stack("publish", run_dir, "--to", "s3://no-such-bucket/runs")
    assert done.returncode == 5
    assert "no bucket no-such-bucket at http://127.0.0.1:" in done.stderr
    nowhere = bench_stack("publish", run_dir)
    assert nowhere.returncode == 1
    assert nowhere.stderr == (
        "bench-stack: publish: where to? give --to s3://bucket/prefix or set BENCH_STACK_PUBLISH\n"
    )
    bad = bench_stack("publish", run_dir, "--to", "https://bucket/runs")
    assert bad.returncode == 1 and "--to: must be an s3://bucket/prefix URL" in bad.stderr


@contextlib.contextmanager
def all_logs() -> Iterator[io.StringIO]:
    """Every log record of every logger (botocore's, urllib3's, moto's) at DEBUG, as text."""
    text = io.StringIO()
    handler = logging.StreamHandler(text)
    root = logging.getLogger()
    old = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield text
    finally:
        root.removeHandler(handler)
        root.setLevel(old)


def test_credentials_are_in_no_output_nor_error(tmp_path: Path, http_bucket: str) -> None:
    bucket = http_bucket
    run_dir = small_run(tmp_path)
    to = f"s3://{bucket}/runs"
    with all_logs() as logs:
        runs = [
            bench_stack("publish", run_dir, "--to", to),
            bench_stack("publish", run_dir, "--to", to),
            bench_stack("import", f"{to}/day0", "--db", db_url(tmp_path)),
            bench_stack("publish", run_dir, "--to", to, "--endpoint-url", "http://127.0.0.1:1"),
            bench_stack("publish", run_dir, "--to", "s3://no-such-bucket/x"),
            bench_stack(
                "publish", run_dir, "--to", to, "--endpoint-url", f"http://u:{SECRET_KEY}@127.0.0.1:1"
            ),
            bench_stack("publish", run_dir, "--to", f"s3://{ACCESS_KEY}:{SECRET_KEY}@{bucket}/runs"),
        ]
    assert [r.returncode for r in runs] == [0, 0, 0, 5, 5, 1, 1]
    printed = "".join(r.stdout + r.stderr for r in runs)
    assert SECRET_KEY not in printed and ACCESS_KEY not in printed
    # botocore's own DEBUG log names the access key in the signed headers (as every AWS client's does), never
    # the secret; bench-stack logs nothing of its own.
    assert SECRET_KEY not in logs.getvalue()
    assert "runs/day0" in logs.getvalue()  # the logs were captured


def test_shown_masks_the_credentials_in_use_and_urls_with_secrets() -> None:
    assert shown(f"failed with {ACCESS_KEY} and {SECRET_KEY}", (ACCESS_KEY, SECRET_KEY)) == (
        "failed with *** and ***"
    )
    assert shown("http://bench:pw@db.example:9000/x?X-Amz-Signature=abc&X-Amz-Credential=AKIA1&a=1") == (
        "http://***@db.example:9000/x?X-Amz-Signature=***&X-Amz-Credential=***&a=1"
    )


def test_an_object_gone_from_the_store_is_uploaded_again(
    tmp_path: Path, server: S3Server, bucket: str
) -> None:
    run_dir = small_run(tmp_path)
    dest = parse_store_url(f"s3://{bucket}/runs")
    publish_run(open_store(), run_dir, dest)
    server.client().delete_object(Bucket=bucket, Key="runs/day0/run.json")
    store, client = recording()
    done = publish_run(store, run_dir, dest)
    assert done.uploaded == ["run.json"] and done.unchanged == 10
    assert client.puts == ["runs/day0/run.json", f"runs/day0/{MANIFEST}"]


def test_no_credentials_is_named_with_the_variables_to_set(
    tmp_path: Path, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance metadata lookup off loopback
    done = bench_stack("publish", small_run(tmp_path), "--to", f"s3://{bucket}/runs")
    assert done.returncode == 5
    assert done.stderr.endswith(
        "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)\n"
    )
