"""The record a host keeps of its provisioning (:data:`MARKER`, schema :data:`SCHEMA`): each role's input
hash, exported facts, what it made with its state, when it last ran to the end, and the host's identity with
the facts the decision needs (:func:`host_facts`). :mod:`benchstack.provision.markers` says what is recorded
and why; this module builds the record after a run (:func:`record_after`), before the roles that will run
(:func:`without`), compares two (:func:`same_state`) and writes it (:func:`write_command`).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from benchstack.common.renamed import ROLES as RENAMED_ROLES
from benchstack.provision.markers import DECISION_FACTS, EXPORTS, Decision

MARKER = "/var/lib/bench-stack/provisioned.json"
SCHEMA = "bench-stack/provisioned/v1"


def host_facts(record: Mapping[str, Any], identity: str | None) -> dict[str, Any] | None:
    """The facts the decision needs as the record keeps them, when the host's identity is still the one
    they were taken with (None: gather them)."""
    host = record.get("host")
    if not identity or not isinstance(host, dict) or host.get("identity") != identity:
        return None
    facts = host.get("facts")
    if not isinstance(facts, dict) or any(name not in facts for name in DECISION_FACTS):
        return None
    return {name: facts[name] for name in DECISION_FACTS}


def host_entry(identity: str | None, facts: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the record keeps of the host (:func:`host_facts`); None when ``facts`` lack one of them."""
    if not identity or any(name not in facts for name in DECISION_FACTS):
        return None
    return {"identity": identity, "facts": {name: facts[name] for name in DECISION_FACTS}}


def with_host(record: Mapping[str, Any], host: Mapping[str, Any] | None) -> dict[str, Any]:
    """``record`` keeping ``host`` (:func:`host_entry`), or without one."""
    kept = {k: v for k, v in record.items() if k != "host"}
    return {**kept, "host": dict(host)} if host else kept


def current(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record's role entries without those under a renamed role's old name
    (:data:`benchstack.common.renamed.ROLES`): written by an older bench-stack, they describe nothing a role
    of this one is. The renamed role, which has no entry under its new name, runs once and records itself."""
    return {k: v for k, v in (record.get("roles") or {}).items() if k not in RENAMED_ROLES}


def record_after(
    record: Mapping[str, Any],
    decision: Decision,
    variables: Mapping[str, Any],
    finished_at: str,
    made: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The record once the roles that ran have finished: their new hashes, exported facts and what they made
    (``made``: role -> ``{"made": manifest, "state": state}``, :mod:`benchstack.provision.hoststate`), the
    skipped roles' entries as they were; a renamed role's entries under its old name dropped."""
    entries = current(record)
    for role in decision.run:
        entries[role] = {
            "hash": decision.hashes[role],
            "facts": {name: variables[name] for name in EXPORTS.get(role, ()) if name in variables},
            "at": finished_at,
            **((made or {}).get(role) or {}),
        }
    return with_host({"schema": SCHEMA, "roles": entries}, record.get("host"))


def same_state(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two records say the same (hashes, facts and the host's; when each role last ran does not
    count)."""

    def state(record: Mapping[str, Any]) -> dict[str, Any]:
        entries = record.get("roles") or {}
        roles = {role: {k: v for k, v in e.items() if k != "at"} for role, e in entries.items()}
        return {"roles": roles, "host": record.get("host")}

    return state(a) == state(b)


def without(record: Mapping[str, Any], roles: Iterable[str]) -> dict[str, Any]:
    """The record with ``roles`` left out (written before they run), and the entries of renamed roles."""
    gone = set(roles)
    entries = {k: v for k, v in current(record).items() if k not in gone}
    return with_host({"schema": SCHEMA, "roles": entries}, record.get("host"))


def write_command(record: Mapping[str, Any]) -> str:
    """One shell command that replaces the record atomically."""
    text = json.dumps(record, sort_keys=True, indent=1)
    return (
        f"mkdir -p {shlex.quote(str(Path(MARKER).parent))} && printf '%s\\n' {shlex.quote(text)} "
        f"> {MARKER}.tmp && mv {MARKER}.tmp {MARKER}"
    )
