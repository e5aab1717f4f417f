"""The one command the controller runs on a host to read it, and its answer:
:mod:`benchstack.provision.hoststate` sent as ``python3 -c`` with a request (the record, each unit's
ActiveState, the state now of what each recorded role made, what bench-stack made for any stack, the host's
identity and lock), and the sections of its output parsed back (:func:`parse_read`, :func:`parse_now`,
:func:`parse_found`, :func:`parse_identity`, :func:`parse_lock`) for the decision of
:mod:`benchstack.provision.markers`.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchstack.provision import hostrecord, hoststate, made
from benchstack.provision.sweep import stack_paths

# Separate the record, the services' states, the state of what the roles made, what any stack left and the
# host's lock in the output of the one command that reads them all (benchstack.provision.hoststate).
SEPARATOR = hoststate.SEPARATOR
STATE_SEPARATOR = hoststate.STATE_SEPARATOR
FOUND_SEPARATOR = hoststate.FOUND_SEPARATOR
HOST_SEPARATOR = hoststate.HOST_SEPARATOR
LOCK_SEPARATOR = hoststate.LOCK_SEPARATOR
# Runs on the host (standard library only), sent as ``python3 -c``.
HOSTSTATE = Path(hoststate.__file__)


def host_python(variables: Mapping[str, Any]) -> str:
    """The host's Python as Ansible runs it (what the roles' modules run on)."""
    facts = variables.get("ansible_facts") or {}
    found = variables.get("ansible_python_interpreter") or facts.get("discovered_interpreter_python")
    return str(found) if found and "{{" not in str(found) else "python3"


def hoststate_command(python: str, request: Mapping[str, Any]) -> str:
    """The shell command that runs :mod:`benchstack.provision.hoststate` on the host with ``request``."""
    source = HOSTSTATE.read_text(encoding="utf-8")
    return f"{shlex.quote(python)} -c {shlex.quote(source)} {shlex.quote(json.dumps(request))}"


def read_command(
    units: Sequence[str],
    python: str = "python3",
    roots: Mapping[str, str] | None = None,
    lock: Mapping[str, Any] | None = None,
    accounts: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """One command, one Python on the host: with ``lock`` (a request of
    :func:`benchstack.measure.runlock.take_host`) the host's lock first, then the record (or nothing), each
    unit's ActiveState, the state now of what each recorded role made, then what bench-stack made for any
    stack (:func:`parse_found`), its files under ``roots`` included
    (:func:`benchstack.provision.sweep.stack_paths`), the record of what bench-stack made
    (:mod:`benchstack.provision.made`), the ids of ``accounts`` (users, groups), and the lock's answer
    (:func:`parse_lock`)."""
    return hoststate_command(python, read_request(units, roots, lock, accounts))


def read_request(
    units: Sequence[str],
    roots: Mapping[str, str] | None = None,
    lock: Mapping[str, Any] | None = None,
    accounts: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """What :func:`read_command` asks :mod:`benchstack.provision.hoststate` for."""
    request: dict[str, Any] = {
        "marker": hostrecord.MARKER,
        "active": list(units),
        "found": True,
        "identity": True,
        "made": made.PATH,
    }
    request.update(stack_paths(roots) if roots else {})
    if accounts is not None:
        request["accounts"] = {k: list(v) for k, v in accounts.items()}
    if lock is not None:
        request["lock"] = dict(lock)
    return request


def lock_command(python: str, lock: Mapping[str, Any]) -> str:
    """The command that only reads, takes or gives up the host's lock (:func:`parse_lock`)."""
    return hoststate_command(python, {"lock": dict(lock)})


def parse_lock(stdout: str) -> dict[str, Any] | None:
    """The host lock's answer (``held``, ``was``) from :func:`read_command` or :func:`lock_command`'s output;
    None when there is none (the command failed)."""
    _, sep, text = stdout.partition(LOCK_SEPARATOR)
    try:
        answer = json.loads(text) if sep else None
    except ValueError:
        return None
    return answer if isinstance(answer, dict) and "held" in answer else None


def _json_section(stdout: str, start: str, *ends: str) -> dict[str, Any]:
    """The JSON object of :func:`read_command`'s output after ``start`` and before the first of ``ends``;
    empty when the section is missing, empty or not an object."""
    text = stdout.partition(start)[2]
    for end in ends:
        text = text.partition(end)[0]
    try:
        found = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def parse_found(stdout: str) -> dict[str, Any]:
    """What bench-stack made for any stack (``units``: unit -> ``<UnitFileState> <ActiveState>``, ``files``,
    ``paths``), the record of what it made (``made``) and the ``accounts`` asked for, from
    :func:`read_command`'s output (empty when unreadable)."""
    return _json_section(stdout, FOUND_SEPARATOR, HOST_SEPARATOR, LOCK_SEPARATOR)


def parse_identity(stdout: str) -> str | None:
    """The host's identity (:func:`benchstack.provision.hoststate.identity`) from :func:`read_command`'s
    output."""
    _, sep, text = stdout.partition(HOST_SEPARATOR)
    found = text.partition(LOCK_SEPARATOR)[0].strip()
    return found if sep and re.fullmatch(r"[0-9a-f]{64}", found) else None


def parse_now(stdout: str) -> dict[str, dict[str, str]]:
    """Role -> the state now of what it made, from :func:`read_command`'s output (empty when unreadable)."""
    return _json_section(stdout, STATE_SEPARATOR, FOUND_SEPARATOR, LOCK_SEPARATOR)


def parse_read(stdout: str, units: Sequence[str]) -> tuple[dict[str, Any], dict[str, bool]]:
    """The record (empty when missing or unreadable) and whether each unit is active, from
    :func:`read_command`'s output."""
    record_text, _, answers = stdout.partition(SEPARATOR)
    answers = answers.partition(STATE_SEPARATOR)[0]
    try:
        record = json.loads(record_text) if record_text.strip() else {}
    except ValueError:
        record = {}
    if not isinstance(record, dict) or record.get("schema") != hostrecord.SCHEMA:
        record = {}
    states = answers.split()
    active = {unit: i < len(states) and states[i] == "active" for i, unit in enumerate(units)}
    return record, active
