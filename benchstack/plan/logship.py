"""Shipping the fronts' access logs of a run to an S3-compatible store (an experiment's ``logs``; the
log_shipper role, docs/experiment.md#shipping-access-logs), as one of the original setups did it with fluentd.

Opt-in per experiment: ``logs: {ship: s3, bucket: NAME, endpoint: URL, region: R, prefix: P/}``. The schema
checks the fields (benchstack/schemas/experiment.schema.json, ``$defs.logs``); :func:`problems` checks what it
cannot say (a front to ship from). The plan (:mod:`benchstack.plan.resolved`) then adds the log_shipper role
to the targets, after their fronts, and hands it the plan's ``log_shipping`` (:func:`plan_fact`,
playbooks/vars/roles.yml); the fronts whose access logs are shipped (:func:`shipped_fronts`) write them,
whatever their profile (``nginx_access_log``, ``apache_access_log``), so their cells are measured with
shipping on: nginx's or Apache's write of each line and fluentd's tail and upload cost CPU on the target. Each
run ships under its own prefix, ``<prefix><run folder's name>/`` (:func:`run_prefix`), so a resumed run keeps
its first attempt's.

Credentials are never part of an experiment: the role reads them from the inventory
(``log_shipper_aws_access_key_id``, ``log_shipper_aws_secret_access_key``), the report step lists the run's
objects with boto3's own chain (:mod:`benchstack.report.shipping`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from benchstack.plan.stacks import Stack

# The fronts whose access logs the log_shipper role can tail (its log_shipper_fronts choices).
FRONTS = ("nginx", "apache")
DEFAULT_PREFIX = "bench-stack/access-logs/"
DEFAULT_REGION = "us-east-1"
# Where run_prefix stands for the run folder's name before the plan play names it (bench-stack experiment).
RUN_PLACEHOLDER = "<run>"


@dataclass(frozen=True)
class Shipping:
    """An experiment's ``logs`` section, accepted by the schema, with its defaults."""

    bucket: str
    ship: str = "s3"
    endpoint: str | None = None
    region: str = DEFAULT_REGION
    prefix: str = DEFAULT_PREFIX

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Shipping:
        return cls(
            bucket=str(data["bucket"]),
            ship=str(data.get("ship", "s3")),
            endpoint=data.get("endpoint"),
            region=str(data.get("region", DEFAULT_REGION)),
            prefix=str(data.get("prefix", DEFAULT_PREFIX)),
        )

    def as_dict(self) -> dict[str, Any]:
        """The section with its defaults, as the experiment as run (run.json) records it."""
        return {
            "ship": self.ship,
            "bucket": self.bucket,
            "endpoint": self.endpoint,
            "region": self.region,
            "prefix": self.prefix,
        }


def run_prefix(shipping: Shipping, run_dir: str | None) -> str:
    """The key prefix of one run's access logs: the experiment's prefix, then the run folder's name."""
    return f"{shipping.prefix}{PurePath(run_dir).name if run_dir else RUN_PLACEHOLDER}/"


def shipped_fronts(stacks: Sequence[Stack]) -> tuple[str, ...]:
    """The fronts of the stacks whose access logs a shipping run writes and ships, in :data:`FRONTS` order."""
    kinds = {s.front.kind for s in stacks}
    return tuple(f for f in FRONTS if f in kinds)


def shipped_stacks(stacks: Sequence[Stack]) -> tuple[str, ...]:
    """The stacks whose cells a shipping run measures with shipping on: those behind a front."""
    return tuple(s.name for s in stacks if s.front.kind in FRONTS)


def problems(data: Mapping[str, Any], stacks: object) -> list[str]:
    """What the schema cannot say about an accepted ``logs`` section: a stack with a front to ship from."""
    if not isinstance(stacks, list):
        return []
    fronts = {
        (s.get("front") or {}).get("kind")
        for s in stacks
        if isinstance(s, dict) and isinstance(s.get("front") or {}, dict)
    }
    if not fronts & set(FRONTS):
        return [
            f"logs: ships the fronts' access logs, but no stack has a front ({' or '.join(FRONTS)}): "
            "put a stack behind nginx or Apache, or remove logs"
        ]
    return []


def plan_fact(shipping: Shipping, stacks: Sequence[Stack], run_dir: str | None) -> dict[str, Any]:
    """The plan's ``log_shipping``: the section, the run's prefix, the fronts shipped from and the stacks
    measured with shipping on (run.json keeps it, benchstack.plan.resolved.run_record)."""
    return {
        **shipping.as_dict(),
        "run_prefix": run_prefix(shipping, run_dir),
        "fronts": list(shipped_fronts(stacks)),
        "stacks": list(shipped_stacks(stacks)),
    }
