"""The log_shipper role, verified from outside: the unit and its user inside the container, fluentd's own
dry run of the config, and the bucket on moto's server read with boto3 from the controller (objects gunzipped
here), after requests through nginx with a restart of fluentd in the middle of them."""

from __future__ import annotations

import collections
import gzip
import json
import os
import shlex
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
PREFIX = "molecule/log-shipper/"
ACCESS_LOG = "/var/log/nginx/access.log"
REQUESTS = 400


@pytest.fixture(scope="module")
def bucket() -> BaseClient:
    endpoint = (Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "s3-endpoint").read_text().strip()
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="bench-test-key",
        aws_secret_access_key="bench-test-secret",
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
        "@type file",
        "flush_at_shutdown true",
        "store_as gzip",
        f"s3_bucket {BUCKET}",
        "force_path_style true",
    ):
        assert line in conf
    assert "bench-test-secret" not in conf


def test_credentials_are_roots_alone(host: Host) -> None:
    env = host.file("/etc/fluentd/s3.env")
    assert (env.user, env.group, env.mode) == ("root", "root", 0o600)


def test_every_request_reaches_the_bucket_once_across_a_restart(host: Host, bucket: BaseClient) -> None:
    marker = f"ship-{uuid.uuid4().hex[:12]}"
    # The requests run in the background (about 6 s) while fluentd restarts after the first second.
    loop = (
        "import time, urllib.request\n"
        f"for i in range({REQUESTS}):\n"
        f"    urllib.request.urlopen('http://127.0.0.1/?{marker}-%d' % i).read()\n"
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

    expected = {f"/?{marker}-{i}" for i in range(REQUESTS)}
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
