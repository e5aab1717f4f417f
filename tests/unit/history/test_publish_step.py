"""The report step publishes the finished run when -e bench_publish names a store (bench_report's option
``publish``), best effort: a store that cannot be reached is a warning without credentials, and the run
folder stands; the plan checks bench_publish and bench_publish_endpoint. The store is moto's, in this process
(s3_cases.in_process): test_publish proves publishing over HTTP. Each test reports a run of two cells a load
point (history_cases.run_copy's ``repetitions``): the step does the same with 54."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from history_cases import run_copy
from s3_cases import ACCESS_KEY, SECRET_KEY, S3Server, aws_environment, in_process, retry_pauses
from test_report_step import report

from benchstack.plan.settings import project_problems
from benchstack.results.location import MANIFEST


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[S3Server]:
    yield from in_process(monkeypatch)


@pytest.fixture(autouse=True)
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    return retry_pauses(monkeypatch)


def test_the_report_step_publishes_the_finished_run(
    tmp_path: Path, server: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    aws_environment(monkeypatch, server)
    server.client().create_bucket(Bucket="step")
    run_dir = run_copy(tmp_path / "results", "01-new-quiet", repetitions=2)
    args = {"run_dir": str(run_dir), "results_dir": str(tmp_path / "results"), "publish": "s3://step/runs"}
    done = report(args)
    assert "warnings" not in done
    assert done["published"] == {
        "outcome": "published",
        "url": "s3://step/runs/01-new-quiet/",
        "uploaded": len([p for p in run_dir.rglob("*") if p.is_file()]),
        "warning": None,
    }
    keys = [o["Key"] for o in server.client().list_objects_v2(Bucket="step")["Contents"]]
    assert f"runs/01-new-quiet/{MANIFEST}" in keys and "runs/01-new-quiet/report.md" in keys
    assert report(args)["published"]["outcome"] == "unchanged"


def test_a_store_away_is_a_warning_without_credentials_and_the_run_stands(
    tmp_path: Path, server: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    aws_environment(monkeypatch, server)
    run_dir = run_copy(tmp_path / "results", "01-new-quiet", repetitions=2)
    done = report(
        {
            "run_dir": str(run_dir),
            "results_dir": str(tmp_path / "results"),
            "publish": "s3://step/runs",
            "publish_endpoint": "http://127.0.0.1:1",
        }
    )
    assert done["changed"] is True and (run_dir / "report.md").is_file()
    assert done["history"]["outcome"] == "added" and done["published"]["outcome"] == "failed"
    (warning,) = done["warnings"]
    assert warning == (
        "bench_report: the run was not published to s3://step/runs/01-new-quiet/ (reading "
        f"s3://step/runs/01-new-quiet/{MANIFEST}: cannot reach the object store at http://127.0.0.1:1 "
        f"(EndpointConnectionError)); its results are complete; publish it later with: bench-stack publish "
        f"{run_dir} --to s3://step/runs"
    )
    text = json.dumps(done, default=str)
    assert SECRET_KEY not in text and ACCESS_KEY not in text
    assert SECRET_KEY not in (run_dir / "run.json").read_text(encoding="utf-8")


def test_without_bench_publish_nothing_is_published(tmp_path: Path) -> None:
    run_dir = run_copy(tmp_path / "results", "01-new-quiet", repetitions=2)
    done = report({"run_dir": str(run_dir), "results_dir": str(tmp_path / "results")})
    assert done["published"]["outcome"] == "off"


def test_bench_publish_is_checked_with_the_plan() -> None:
    assert project_problems({"bench_publish": "s3://team-bench/runs", "bench_publish_endpoint": ""}) == []
    assert project_problems({"bench_publish": ""}) == []
    assert project_problems({"bench_publish": "/tmp/runs"}) == [
        "bench_publish: must be an s3://bucket/prefix URL, not '/tmp/runs'"
    ]
    assert project_problems({"bench_publish": "s3://Team_Bench/runs"}) == [
        "bench_publish: 'Team_Bench' is no bucket name (3 to 63 lowercase letters, digits, dots or hyphens)"
    ]
    (problem,) = project_problems({"bench_publish": f"s3://{ACCESS_KEY}:{SECRET_KEY}@bench/runs"})
    assert problem.startswith("bench_publish: must be s3://bucket/prefix without credentials")
    assert SECRET_KEY not in problem
    assert project_problems({"bench_publish_endpoint": f"http://k:{SECRET_KEY}@127.0.0.1:9000"}) == [
        "bench_publish_endpoint: must be an http(s)://host[:port] URL without credentials or query"
    ]
    assert project_problems({"bench_publish_endpoint": "ftp://store"}) == [
        "bench_publish_endpoint: must be an http:// or https:// URL, not 'ftp://store'"
    ]
