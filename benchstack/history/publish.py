"""A run folder published to an S3-compatible store, and fetched back (docs/history.md#publishing), with
boto3. Only ``bench-stack publish``, ``bench-stack import s3://...`` and the report step's publish import this
module.

Publishing is idempotent and resumable by content: every file's sha256 is in the manifest
(:data:`~benchstack.results.location.MANIFEST`, written after every file it lists) and in its object's
metadata (``x-amz-meta-sha256``). A file is uploaded unless the store holds it already with the same size
and sha256 (the current manifest's, else the object's own metadata), so publishing again uploads nothing, a
publish that was cut short uploads only what it had not, and a resumed run with more cells uploads those
and a new manifest. While a changed folder is uploaded the old manifest is removed first: a manifest that
exists always describes the objects beside it.

Credentials, endpoint and region come from boto3's own chain (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_PROFILE`` and ``~/.aws``, ``AWS_ENDPOINT_URL_S3`` or
``AWS_ENDPOINT_URL``, ``AWS_DEFAULT_REGION``), or ``endpoint_url``; every message goes through
:func:`~benchstack.results.location.shown` with the credentials in use, so none is ever printed."""

from __future__ import annotations

import hashlib
import json
import mimetypes
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from benchstack import __version__
from benchstack.results.layout import LOCK_FILE
from benchstack.results.location import MANIFEST, MANIFEST_SCHEMA, StoreError, StoreUrl, shown

# A store that does not answer fails in seconds, not after botocore's minutes of retries.
CLIENT_CONFIG = Config(connect_timeout=5, read_timeout=60, retries={"max_attempts": 3, "mode": "standard"})


@dataclass
class Store:
    """A boto3 S3 client and what it was made with (the endpoint as shown, the secrets to mask)."""

    client: Any
    endpoint: str
    secrets: tuple[str, ...] = ()

    def error(self, exc: BaseException, doing: str) -> StoreError:
        return StoreError(shown(_why(exc, doing, self.endpoint), self.secrets))


@dataclass
class Published:
    url: str  # s3://bucket/prefix/RUN/
    uploaded: list[str] = field(default_factory=list)
    unchanged: int = 0
    manifest_written: bool = False

    def line(self) -> str:
        what = "manifest written" if self.manifest_written else "already published"
        return f"{self.url}: {len(self.uploaded)} file(s) uploaded, {self.unchanged} unchanged, {what}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "uploaded": len(self.uploaded),
            "unchanged": self.unchanged,
            "manifest_written": self.manifest_written,
        }


def open_store(endpoint_url: str | None = None) -> Store:
    """A client on ``endpoint_url``, else the endpoint, credentials and region of boto3's own chain. A custom
    endpoint (a local or team store) is addressed path-style, which every S3-compatible server answers."""
    session = boto3.session.Session()
    credentials = session.get_credentials()
    frozen = credentials.get_frozen_credentials() if credentials is not None else None
    secrets = tuple(s for s in (frozen or ()) if s)
    endpoint = (
        endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or None
    )
    config = CLIENT_CONFIG.merge(Config(s3={"addressing_style": "path"})) if endpoint else CLIENT_CONFIG
    region = session.region_name or "us-east-1"
    client = session.client("s3", endpoint_url=endpoint, region_name=region, config=config)
    return Store(client, shown(endpoint or f"AWS S3 ({region})", secrets), secrets)


def _why(exc: BaseException, doing: str, endpoint: str) -> str:
    if isinstance(exc, NoCredentialsError):
        return f"{doing}: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code") or exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode"))
        if code == "NoSuchBucket":
            return f"{doing}: no bucket {error.get('BucketName') or ''} at {endpoint}".replace("  ", " ")
        if code in ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "403"):
            return f"{doing}: the store at {endpoint} refused the credentials ({code})"
        return f"{doing}: the store at {endpoint} answered {code}: {error.get('Message') or ''}".rstrip(": ")
    if isinstance(exc, BotoCoreError):
        return f"{doing}: cannot reach the object store at {endpoint} ({type(exc).__name__})"
    return f"{doing}: {type(exc).__name__}: {exc}"


def sha256_of(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def local_files(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Every regular file of the run folder (path in it -> sha256 and size), the run's lock left out."""
    found = {}
    for path in sorted(run_dir.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.name.startswith(LOCK_FILE):
            continue
        rel = path.relative_to(run_dir).as_posix()
        if rel == MANIFEST:
            raise StoreError(f"{path}: a file of the run folder has the manifest's name")
        found[rel] = {"sha256": sha256_of(path), "size": path.stat().st_size}
    return found


def _listed(store: Store, dest: StoreUrl, name: str) -> dict[str, int]:
    """The objects under the run's prefix: path in the run -> size."""
    found, base = {}, dest.key(name) + "/"
    try:
        for page in store.client.get_paginator("list_objects_v2").paginate(Bucket=dest.bucket, Prefix=base):
            for item in page.get("Contents", []):
                found[item["Key"][len(base) :]] = int(item["Size"])
    except (BotoCoreError, ClientError) as exc:
        raise store.error(exc, f"listing s3://{dest.bucket}/{base} (bucket {dest.bucket})") from None
    return found


def _get(store: Store, bucket: str, key: str) -> bytes | None:
    try:
        body: bytes = store.client.get_object(Bucket=bucket, Key=key)["Body"].read()
        return body
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
            return None
        raise store.error(exc, f"reading s3://{bucket}/{key}") from None
    except BotoCoreError as exc:
        raise store.error(exc, f"reading s3://{bucket}/{key}") from None


def read_manifest(store: Store, dest: StoreUrl, name: str) -> dict[str, Any] | None:
    """The run's manifest in the store, or None (never published, or a publish cut short)."""
    data = _get(store, dest.bucket, dest.key(name, MANIFEST))
    if data is None:
        return None
    try:
        manifest = json.loads(data)
    except ValueError:
        return None
    ok = isinstance(manifest, dict) and manifest.get("schema") == MANIFEST_SCHEMA
    return manifest if ok and isinstance(manifest.get("files"), dict) else None


def _stored_sha256(store: Store, bucket: str, key: str) -> str | None:
    try:
        sha: str | None = store.client.head_object(Bucket=bucket, Key=key).get("Metadata", {}).get("sha256")
        return sha
    except (BotoCoreError, ClientError) as exc:
        raise store.error(exc, f"reading s3://{bucket}/{key}") from None


def publish_run(
    store: Store,
    run_dir: str | os.PathLike[str],
    dest: StoreUrl,
    on_upload: Callable[[str], None] | None = None,
) -> Published:
    """Upload the run folder ``run_dir`` to ``dest`` (``prefix/RUN/...``): the files the store does not
    hold with the same content, then the manifest; nothing at all when the store is up to date."""
    directory = Path(run_dir).resolve()
    if not (directory / "run.json").is_file() and not (directory / "cells").is_dir():
        raise ValueError(f"{directory}: not a run folder (no run.json, no cells/)")
    name = directory.name
    files = local_files(directory)
    done = Published(dest.url(name) + "/")
    manifest = read_manifest(store, dest, name)
    listed = _listed(store, dest, name)
    before = (manifest or {}).get("files", {})
    todo = []
    for rel, meta in files.items():
        if listed.get(rel) == meta["size"] and (
            before.get(rel, {}).get("sha256") == meta["sha256"]
            or _stored_sha256(store, dest.bucket, dest.key(name, rel)) == meta["sha256"]
        ):
            done.unchanged += 1
        else:
            todo.append(rel)
    if manifest is not None and not todo and before == files:
        return done
    manifest_key = dest.key(name, MANIFEST)
    try:
        if manifest is not None:
            # From here until the new one is written, the run is not published: no manifest lies.
            store.client.delete_object(Bucket=dest.bucket, Key=manifest_key)
        for rel in todo:
            _upload(store, dest.bucket, dest.key(name, rel), directory / rel, files[rel]["sha256"])
            done.uploaded.append(rel)
            if on_upload is not None:
                on_upload(rel)
        _write_manifest(store, dest.bucket, manifest_key, name, files)
    except (BotoCoreError, ClientError) as exc:
        where = f"publishing {done.url} ({len(done.uploaded)} of {len(todo)} file(s) uploaded)"
        raise store.error(exc, where) from None
    done.manifest_written = True
    return done


def _upload(store: Store, bucket: str, key: str, path: Path, sha256: str) -> None:
    """One file of the run, its content's sha256 in its metadata (what a later publish compares)."""
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    with path.open("rb") as body:
        store.client.put_object(
            Bucket=bucket, Key=key, Body=body, ContentType=kind, Metadata={"sha256": sha256}
        )


def _write_manifest(store: Store, bucket: str, key: str, name: str, files: dict[str, Any]) -> None:
    """The manifest of the run ``name``: every file's size and sha256, written last."""
    written = {
        "schema": MANIFEST_SCHEMA,
        "run": name,
        "published_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "bench_stack_version": __version__,
        "files": files,
    }
    store.client.put_object(
        Bucket=bucket,
        Key=key,
        Body=(json.dumps(written, indent=2, sort_keys=True) + "\n").encode("utf-8"),
        ContentType="application/json",
    )


def _safe_rel(rel: object) -> str:
    """A manifest's path, refused when it would leave the folder it is fetched into."""
    path = PurePosixPath(str(rel))
    odd = any(p in ("", ".", "..") for p in path.parts)
    if not str(rel) or path.is_absolute() or "\\" in str(rel) or odd:
        raise StoreError(f"the manifest lists {str(rel)!r}, which is no path inside a run folder")
    return path.as_posix()


def fetch_run(store: Store, dest: StoreUrl, name: str, into: Path) -> Path:
    """Download the published run ``name`` into ``into/name``, each file checked against the manifest's
    sha256; the folder, ready for the history's import."""
    manifest = read_manifest(store, dest, name)
    url = dest.url(name) + "/"
    if manifest is None:
        _listed(store, dest, name)  # a missing bucket or an unreachable store says so first
        raise StoreError(
            f"{url}: no {MANIFEST}: not published, or its publish did not finish (publish again)"
        )
    run_dir = into / name
    for rel, meta in sorted(manifest["files"].items()):
        target = run_dir / _safe_rel(rel)
        data = _get(store, dest.bucket, dest.key(name, rel))
        if data is None:
            raise StoreError(f"{url}{rel}: listed in the manifest, missing from the store")
        if hashlib.sha256(data).hexdigest() != (meta or {}).get("sha256"):
            raise StoreError(f"{url}{rel}: its content is not what the manifest says (sha256 differs)")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return run_dir
