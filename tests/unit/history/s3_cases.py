"""S3-compatible stores for the publishing tests: moto's real server (``moto[server]``,
requirements-dev.txt) in a thread of the test process on 127.0.0.1, a random port, for the tests where HTTP
is the point; moto's store in this process (``in_process``) for the others. Credentials that the tests look
for in every output, and a client wrapper that records (and can cut short) the uploads."""

from __future__ import annotations

import functools
import logging
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from botocore.exceptions import EndpointConnectionError

ACCESS_KEY = "AKIABENCHSTACKTEST01"
SECRET_KEY = "s3cr3t/Bench+Stack/never-shown-0123456789"


@dataclass
class S3Server:
    endpoint: str

    def client(self) -> Any:
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )


@functools.cache
def _loader(search_path_string: str | None = None) -> Any:
    import botocore.loaders

    return botocore.loaders.create_loader(search_path_string)


def data_loaded_once(patch: pytest.MonkeyPatch) -> None:
    """botocore's data (the S3 model, endpoints, partitions) loaded once for every client made while ``patch``
    holds: each new boto3 session parsed its JSON again, ~0.1 s per client, of which every publish and import
    makes one."""
    import botocore.session

    patch.setattr(botocore.session, "create_loader", _loader)


def start_server() -> Iterator[S3Server]:
    from moto.server import ThreadedMotoServer

    # werkzeug logs every request on stderr.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield S3Server(f"http://{host}:{port}")
    finally:
        server.stop()


# A custom endpoint, as a team's store is, that moto answers inside botocore (MOTO_S3_CUSTOM_ENDPOINTS): the
# client is made, addressed path-style and signs as against the server; nothing listens on the port, so a
# request moto did not answer fails instead of leaving the machine.
IN_PROCESS_ENDPOINT = "http://127.0.0.1:9"


def in_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[S3Server]:
    """moto's store answering every request to IN_PROCESS_ENDPOINT in this process: the requests are built,
    signed and parsed by botocore as over HTTP, without the sockets and the server's thread (a publish ~0.22
    -> ~0.11 s of CPU, and no waits). Emptied at the end."""
    from moto import mock_aws

    data_loaded_once(monkeypatch)
    monkeypatch.setenv("MOTO_S3_CUSTOM_ENDPOINTS", IN_PROCESS_ENDPOINT)
    with mock_aws():
        yield S3Server(IN_PROCESS_ENDPOINT)


def aws_environment(monkeypatch: pytest.MonkeyPatch, server: S3Server) -> None:
    """The AWS variables a user sets, pointing at the test's server; nothing from the developer's ~/.aws."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", server.endpoint)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/bench-stack-test")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/bench-stack-test")


def retry_pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses botocore makes before it retries a request (benchstack.history.publish's CLIENT_CONFIG:
    3 retries, standard mode, each after a random pause that grows), recorded instead of slept: the retries
    are made and can be counted, the waits between them (~1.5 s per unreachable store) prove nothing here."""
    import botocore.endpoint

    slept: list[float] = []
    monkeypatch.setattr(botocore.endpoint, "time", types.SimpleNamespace(sleep=slept.append))
    return slept


@dataclass
class Recording:
    """A client whose put_object and delete_object calls are recorded; after ``fail_after`` uploads the next
    one fails as a dropped connection does."""

    client: Any
    fail_after: int | None = None
    puts: list[str] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def put_object(self, **kwargs: Any) -> Any:
        if self.fail_after is not None and len(self.puts) >= self.fail_after:
            raise EndpointConnectionError(endpoint_url="http://127.0.0.1/cut-short")
        self.puts.append(kwargs["Key"])
        return self.client.put_object(**kwargs)

    def delete_object(self, **kwargs: Any) -> Any:
        self.deletes.append(kwargs["Key"])
        return self.client.delete_object(**kwargs)
