"""The log_shipper role as an experiment's logs adds it, verified from outside: the unit and its user inside
the container, fluentd's own dry run of the config, the tuned server block logging, and the bucket on moto's
server read with boto3 from the controller (objects gunzipped here), after requests through nginx with a
restart of fluentd in the middle of them, then through Apache; then the experiment measured (benchmark.yml,
report.yml): run.json names the objects and counts their lines against the cells' requests, and the report
says so; the run published to the same server twice and imported back into a history."""

from __future__ import annotations

import collections
import gzip
import json
import os
import re
import shlex
import subprocess
import time
import uuid
from pathlib import Path

import boto3
import pytest
from botocore.client import BaseClient
from testinfra.host import Host

UNIT = "bench-fluentd.service"
CONF = "/etc/fluentd/fluentd.conf"
FLUENTD = "/usr/local/bin/fluentd"
BUCKET = "bench-access-logs"
# The experiment's prefix, then the run folder's name (the scenario's bench_run_dir).
RUN = "20261205T000000Z-mol-log-shipper"
PREFIX = f"molecule/log-shipper/{RUN}/"
ACCESS_LOG = "/var/log/nginx/access.log"
APACHE_LOG = "/var/log/apache2/access.log"
REQUESTS = 400
# The stack of experiment.yml: nginx's static file, tuned profile.
URL = "http://127.0.0.1:8011/index.html"
# The Apache stack of experiment.yml (event MPM, the same static file).
APACHE_URL = "http://127.0.0.1:8012/index.html"
PROJECT = Path(__file__).resolve().parents[3]
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "bench-test-key", "AWS_SECRET_ACCESS_KEY": "bench-test-secret"}


@pytest.fixture(scope="module")
def bucket() -> BaseClient:
    endpoint = (Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "s3-endpoint").read_text().strip()
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )


def shipped_paths(s3: BaseClient, marker: str) -> collections.Counter[str]:
    """Request paths holding ``marker`` in every object under the prefix, counted over all objects."""
    counts: collections.Counter[str] = collections.Counter()
    objects = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=PREFIX):
        for obj in page.get("Contents", []):
            assert obj["Key"].endswith(".gz"), obj["Key"]
            objects += 1
            body = s3.get_object(Bucket=BUCKET, Key=obj["Key"])["Body"].read()
            for line in gzip.decompress(body).decode().splitlines():
                record = json.loads(line)
                if marker in record.get("path", ""):
                    counts[record["path"]] += 1
    print(f"{objects} objects, {sum(counts.values())} lines of this test")
    return counts


def test_fluentd_runs_as_the_unprivileged_user(host: Host) -> None:
    assert host.service("bench-fluentd").is_running
    assert host.service("bench-fluentd").is_enabled
    pid = host.check_output(f"systemctl show -p MainPID --value {UNIT}")
    assert pid != "0"
    assert host.check_output(f"ps -o user= -p {pid}").strip() == "fluentd"
    assert host.user("fluentd").shell == "/usr/sbin/nologin"
    assert "adm" in host.user("fluentd").groups


def test_config_passes_fluentds_dry_run_as_its_user(host: Host) -> None:
    result = host.run(f"runuser -u fluentd -- {FLUENTD} --dry-run -q -c {CONF}")
    assert result.rc == 0, result.stdout + result.stderr


def test_config_tails_with_a_position_file_into_a_file_buffer(host: Host) -> None:
    conf = host.file(CONF).content_string
    for line in (
        f"path {ACCESS_LOG}",
        "pos_file /var/lib/fluentd/nginx-access.pos",
        f"path {APACHE_LOG}",
        "pos_file /var/lib/fluentd/apache-access.pos",
        "@type file",
        "flush_at_shutdown true",
        "store_as gzip",
        f"s3_bucket {BUCKET}",
        f"path {PREFIX}",
        "force_path_style true",
    ):
        assert line in conf
    assert "bench-test-secret" not in conf


def test_the_tuned_server_block_keeps_its_access_log_on_because_the_run_ships_it(host: Host) -> None:
    blocks = host.file("/etc/nginx/conf.d/bench-stack.conf").content_string
    assert "# stack nginx-static (profile tuned)" in blocks
    assert "etag off;" in blocks and "access_log off;" not in blocks


def test_credentials_are_roots_alone(host: Host) -> None:
    env = host.file("/etc/fluentd/s3.env")
    assert (env.user, env.group, env.mode) == ("root", "root", 0o600)


def test_every_request_reaches_the_bucket_once_across_a_restart(host: Host, bucket: BaseClient) -> None:
    marker = f"ship-{uuid.uuid4().hex[:12]}"
    # The requests run in the background (about 6 s) while fluentd restarts after the first second.
    loop = (
        "import time, urllib.request\n"
        f"for i in range({REQUESTS}):\n"
        f"    urllib.request.urlopen('{URL}?{marker}-%d' % i).read()\n"
        "    time.sleep(0.015)\n"
        f"open('/tmp/{marker}.done', 'w').close()\n"
    )
    host.run_expect([0], f"nohup python3 -c {shlex.quote(loop)} >/tmp/{marker}.log 2>&1 &")
    time.sleep(1.5)
    host.run_expect([0], f"systemctl restart {UNIT}")
    deadline = time.monotonic() + 60
    while not host.file(f"/tmp/{marker}.done").exists:
        assert time.monotonic() < deadline, host.file(f"/tmp/{marker}.log").content_string
        time.sleep(1)
    logged = int(host.check_output(f"grep -c -- '{marker}-' {ACCESS_LOG}"))
    assert logged == REQUESTS

    expected = {f"/index.html?{marker}-{i}" for i in range(REQUESTS)}
    deadline = time.monotonic() + 120
    counts = shipped_paths(bucket, marker)
    while set(counts) != expected and time.monotonic() < deadline:
        time.sleep(3)
        counts = shipped_paths(bucket, marker)
    # A few slices more: a line shipped twice would show up by then.
    time.sleep(8)
    counts = shipped_paths(bucket, marker)
    print(f"requests {REQUESTS}, access-log lines {logged}, lines in the bucket {sum(counts.values())}")
    assert set(counts) == expected, f"missing {len(expected - set(counts))}"
    assert [path for path, n in counts.items() if n > 1] == []


def test_apaches_access_log_reaches_the_bucket_once_per_request(host: Host, bucket: BaseClient) -> None:
    marker = f"apache-{uuid.uuid4().hex[:12]}"
    count = 100
    loop = (
        "import urllib.request\n"
        f"for i in range({count}):\n"
        f"    urllib.request.urlopen('{APACHE_URL}?{marker}-%d' % i).read()\n"
    )
    host.run_expect([0], f"python3 -c {shlex.quote(loop)}")
    assert int(host.check_output(f"grep -c -- '{marker}-' {APACHE_LOG}")) == count
    expected = {f"/index.html?{marker}-{i}" for i in range(count)}
    deadline = time.monotonic() + 120
    counts = shipped_paths(bucket, marker)
    while set(counts) != expected and time.monotonic() < deadline:
        time.sleep(3)
        counts = shipped_paths(bucket, marker)
    assert set(counts) == expected, f"missing {len(expected - set(counts))}"
    assert [path for path, n in counts.items() if n > 1] == []


def test_a_measured_run_records_its_objects_and_the_report_counts_their_lines(bucket: BaseClient) -> None:
    run_dir = Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "results" / RUN
    done = subprocess.run(
        ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"],
         "playbooks/benchmark.yml", "playbooks/report.yml", "-e", "bench_fail_on=never"],
        cwd=PROJECT, env={**os.environ, **CREDENTIALS, "AWS_DEFAULT_REGION": "us-east-1"},
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    shipped = run["log_shipping"]
    assert (shipped["run_prefix"], shipped["stacks"], shipped["fronts"]) == (
        PREFIX,
        ["nginx-static", "apache-static"],
        ["nginx", "apache"],
    )
    assert shipped["problem"] is None, shipped["problem"]
    cells = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((run_dir / "cells").glob("*.json"))]
    made = sum(c["requests_completed"] for c in cells)
    assert len(cells) == 4 and made > 0, [c["cell_id"] for c in cells]
    # Every request of the cells reached the store: nginx logged it (and any left in flight at the end),
    # fluentd shipped it (the buffer flushed when measuring ended).
    in_cells, lines = shipped["lines_in_cells"], shipped["lines"]
    print(f"cells' requests {made}, lines in their windows {in_cells}, lines {lines}")
    assert shipped["lines_in_cells"] >= made
    assert shipped["lines"] >= shipped["lines_in_cells"] + REQUESTS
    keys = {o["key"] for o in shipped["objects"]}
    listed = {
        obj["Key"]
        for page in bucket.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=PREFIX)
        for obj in page.get("Contents", [])
    }
    assert keys and keys <= listed
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "## Access-log shipping" in report
    assert "**Measured with shipping on:** nginx-static, apache-static (4 cells)" in report
    assert f"the cells completed {made:,} requests" in report


def test_the_measured_run_is_published_once_and_imported_back_into_a_history(
    bucket: BaseClient, tmp_path: Path
) -> None:
    """Issue 42, item 4: the run the scenario measured goes to the same S3 server with `bench-stack
    publish`; a second publish uploads nothing; `bench-stack import s3://...` records it in a new history
    database."""
    run_dir = Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "results" / RUN
    assert (run_dir / "run.json").is_file(), "the measured run's test runs first"
    endpoint = (Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "s3-endpoint").read_text().strip()
    runs_bucket = f"bench-runs-{uuid.uuid4().hex[:8]}"
    bucket.create_bucket(Bucket=runs_bucket)
    env = {
        **os.environ,
        **CREDENTIALS,
        "AWS_DEFAULT_REGION": "us-east-1",
        "BENCH_STACK_DB": f"sqlite:///{tmp_path / 'history.sqlite'}",
    }
    cli = [str(PROJECT / ".venv" / "bin" / "bench-stack")]
    if not Path(cli[0]).exists():
        cli = ["bench-stack"]

    def bench_stack(*args: str) -> str:
        done = subprocess.run(
            [*cli, *args], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert CREDENTIALS["AWS_SECRET_ACCESS_KEY"] not in done.stdout + done.stderr
        return done.stdout

    to = f"s3://{runs_bucket}/runs"
    first = bench_stack("publish", str(run_dir), "--to", to, "--endpoint-url", endpoint)
    uploaded = re.search(r"(\d+) file\(s\) uploaded, 0 unchanged, manifest written", first)
    assert uploaded and int(uploaded.group(1)) > 10, first
    second = bench_stack("publish", str(run_dir), "--to", to, "--endpoint-url", endpoint)
    assert f"0 file(s) uploaded, {uploaded.group(1)} unchanged, already published" in second, second
    imported = bench_stack("import", f"{to}/{RUN}", "--endpoint-url", endpoint)
    assert imported.startswith(f"added: {to}/{RUN}"), imported
    history = bench_stack("history")
    assert RUN in history, history
