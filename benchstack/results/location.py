"""Where published runs go, without boto3 (the command line's parser, the plan's checks and the report step
read it): an ``s3://bucket/prefix`` URL, the object keys of a run under it, the manifest's name, and the
masking that keeps credentials out of every message (docs/history.md#publishing).

A run folder ``RUN`` published to ``s3://bucket/prefix`` is the objects ``prefix/RUN/<path in the folder>``
and, written last, ``prefix/RUN/`` + :data:`MANIFEST`: a run is published, complete, when its manifest
exists."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

# Where a run's files and their sha256 are listed; written after every file it lists.
MANIFEST = "bench-stack-manifest.json"
MANIFEST_SCHEMA = "bench-stack/published-run/v1"
# The destination when --to is not given (the report step takes -e bench_publish).
ENV_VAR = "BENCH_STACK_PUBLISH"
# S3's bucket names: 3 to 63 lowercase letters, digits, dots and hyphens, a letter or digit at each end.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
_QUERY = re.compile(r"(?<=[?&])(X-Amz-[A-Za-z-]+|Signature|AWSAccessKeyId)=[^&\s\"']+")


class LocationError(ValueError):
    """A destination that is no ``s3://bucket[/prefix]`` URL, or an endpoint that is no http(s) URL."""


class StoreError(Exception):
    """What the store did (unreachable, refused, no such bucket, a published run not as its manifest says),
    in one line without credentials (:mod:`benchstack.history.publish` raises it)."""


@dataclass(frozen=True)
class StoreUrl:
    bucket: str
    prefix: str  # without slashes at either end; "" for the bucket's root

    def key(self, *parts: str) -> str:
        return "/".join(p for p in (self.prefix, *parts) if p)

    def url(self, *parts: str) -> str:
        return f"s3://{self.bucket}/{self.key(*parts)}"


def parse_store_url(text: str) -> StoreUrl:
    """``s3://bucket[/prefix]``; credentials, a query or a fragment in it are refused (they belong in the
    AWS variables, which nothing prints)."""
    parts = urlsplit(str(text).strip())
    if "@" in str(text) or parts.query or parts.fragment:
        raise LocationError(
            "must be s3://bucket/prefix without credentials, query or fragment: credentials go in "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        )
    if parts.scheme != "s3":
        raise LocationError(f"must be an s3://bucket/prefix URL, not {str(text)!r}")
    if not _BUCKET.match(parts.netloc):
        raise LocationError(
            f"{parts.netloc!r} is no bucket name (3 to 63 lowercase letters, digits, dots or hyphens)"
        )
    prefix = parts.path.strip("/")
    if any(p in ("", ".", "..") for p in prefix.split("/")) and prefix:
        raise LocationError(f"the prefix {prefix!r} has an empty, '.' or '..' part")
    return StoreUrl(parts.netloc, prefix)


def run_location(text: str) -> tuple[StoreUrl, str]:
    """``s3://bucket/prefix/RUN``: where the run was published to, and the run folder's name."""
    store = parse_store_url(text)
    if not store.prefix:
        raise LocationError(f"{text}: name the run: s3://{store.bucket}/[prefix/]RUN")
    head, _, name = store.prefix.rpartition("/")
    return StoreUrl(store.bucket, head), name


def endpoint_problem(value: str) -> str | None:
    """Why ``value`` is no endpoint URL (``http(s)://host[:port]``, no credentials in it), or None."""
    # Any "@" is refused: a password may hold a "/", which ends the host part as urlsplit reads it.
    if "@" in str(value) or "?" in str(value):
        return "must be an http(s)://host[:port] URL without credentials or query"
    parts = urlsplit(str(value))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"must be an http:// or https:// URL, not {str(value)!r}"
    return None


def publish_problems(given: dict[str, object]) -> list[str]:
    """The plan's check of ``-e bench_publish`` (off when empty) and ``-e bench_publish_endpoint``."""
    problems = []
    if given.get("bench_publish") not in (None, ""):
        try:
            parse_store_url(str(given["bench_publish"]))
        except LocationError as exc:
            problems.append(f"bench_publish: {exc}")
    if given.get("bench_publish_endpoint") not in (None, ""):
        problem = endpoint_problem(str(given["bench_publish_endpoint"]))
        if problem:
            problems.append(f"bench_publish_endpoint: {problem}")
    return problems


def shown(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` as a message may show it: each of ``secrets`` (the credentials in use) replaced by ``***``,
    and a URL's user and password, and a presigned URL's signature and key, masked too."""
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, "***")
    text = _USERINFO.sub("***@", text)
    return _QUERY.sub(lambda m: f"{m.group(1)}=***", text)
