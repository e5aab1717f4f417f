"""Provisioning markers: skip a role whose inputs did not change since it last ran to the end on a host.

A re-run with nothing changed should cost what a plain playbook costs (docs/how-it-works.md, "Provisioning
markers"). Each role's inputs are hashed on the controller: the role's own files (and the internal roles it
includes), the project's plugins, every variable with the role's prefix as the play sees it (the plan's part
for the role included, since provision hands it over as role variables), and the host facts that choose per-OS
paths. The host keeps, in one JSON file, the hash each role last ran with to the end and the facts the role
exports (``ruby_bin_dir``, ...). On the next run a role runs when:

* its hash differs, or the host has no record of it;
* a role it depends on runs (app_server needs the runtimes' facts and the app's changes);
* a service it manages is not active now (its ActiveState, in the same command that reads the file);
* what it made drifted: at the end of provisioning each role that ran records its manifest (the files it
  manages, units included; its OS packages and the binaries they install; its units; the sysctls it set) and
  their state (:mod:`benchstack.provision.hoststate`); the same command computes that state again, and a role
  whose state differs runs (the packages of a binary now missing are reinstalled first: ``reinstall``);
* the run is limited by tags, or ``bench_provision_skip_unchanged`` is false: then every role runs.

The host facts the decision needs (those hashed, and the vCPUs that playbooks/vars/bench.yml's CPU split
reads) are kept in the record too, with the host's identity
(:func:`benchstack.provision.hoststate.identity`: its release files, architecture and CPU count): while the
same command finds the same identity, the decision takes them from there
(:func:`benchstack.provision.hostrecord.host_facts`) and provision.yml gathers facts only on hosts where a
role runs.

A skipped role's exported facts are restored from the record, so later roles see them. Before a role runs
with other inputs, its record is removed from the host, so a run that stops half way never leaves a record of
a state the host is not in; after provisioning the new hashes are written (nothing is written when they are
the same). The record lives at ``/var/lib/bench-stack/provisioned.json``
(:data:`benchstack.provision.hostrecord.MARKER`) and says when each role last ran.

The rest of provisioning's Python, around this decision: which roles each host runs and what each makes
(:mod:`benchstack.plan.roles`), the record on the host (:mod:`benchstack.provision.hostrecord`), the
one command that reads the host and its answer (:mod:`benchstack.provision.hostcommand`), and what no stack
of the plan owns (:mod:`benchstack.provision.sweep`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchstack.plan.roles import DECLARES_MADE, PACKAGED

# Facts that choose per-OS paths, packages and units in the roles.
HASHED_FACTS = ("distribution", "distribution_major_version", "os_family", "architecture")
# The facts the decision reads (those hashed, and the vCPUs of playbooks/vars/bench.yml's CPU split, which
# the roles' variables read), kept in the record with the host's identity
# (:func:`benchstack.provision.hostrecord.host_facts`).
DECISION_FACTS = (*HASHED_FACTS, "processor_vcpus")
# What each role exports as facts that describe the host (restored when the role is skipped), and the roles
# whose run makes it run. The webapp role's webapp_changed_dirs says what changed in this run: not a state,
# so a skipped webapp role leaves it unset (nothing changed).
EXPORTS: dict[str, tuple[str, ...]] = {
    "ruby": ("ruby_bin_dir", "ruby_bin_dirs"),
    "python": ("python_bin_dir",),
    "perl": ("perl_bin_dir",),
    "php": ("php_fpm_bin",),
    # Users' apps with a Gemfile, whose servers run through `bundle exec` (a state of the deployed folders).
    "webapp": ("webapp_bundled_dirs",),
}
# Facts a role sets that are not its inputs (kept out of its hash): the webapp role's changes in this run, the
# OS packages each `packages` entry point names, and what a role says it made.
RUN_FACTS: dict[str, tuple[str, ...]] = {
    role: (
        *(("webapp_changed_dirs",) if role == "webapp" else ()),
        *((f"{role}_os_packages",) if role in PACKAGED else ()),
        *((f"{role}_made",) if role in DECLARES_MADE else ()),
    )
    for role in dict.fromkeys((*PACKAGED, *DECLARES_MADE))
}
DEPENDS: dict[str, tuple[str, ...]] = {
    "app_server": ("ruby", "python", "perl", "php", "webapp"),
    "apache": ("php",),
}
# Internal roles a role includes (their files count as the role's).
INCLUDES: dict[str, tuple[str, ...]] = {"ruby": ("build_archive",), "python": ("build_archive",)}


def tree_hash(paths: Iterable[Path]) -> str:
    """sha256 over every file under ``paths`` (relative names and contents, in a stable order)."""
    digest = hashlib.sha256()
    for root in paths:
        files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        for path in files:
            digest.update(str(path.relative_to(root.parent)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def role_variables(role: str, variables: Mapping[str, Any]) -> dict[str, Any]:
    """The variables of ``role`` (its prefix) as the play sees them, without the facts it exports itself.
    No role's prefix starts another's, nor the project's ``bench_`` (test_provision.py holds them to it)."""
    prefix = f"{role}_"
    own = EXPORTS.get(role, ()) + RUN_FACTS.get(role, ())
    return {name: value for name, value in variables.items() if name.startswith(prefix) and name not in own}


def role_hash(files_hash: str, role_vars: Mapping[str, Any], facts: Mapping[str, Any]) -> str:
    """One role's input hash: its files, its variables and the facts that choose per-OS paths."""
    content = {
        "files": files_hash,
        "vars": role_vars,
        "facts": {name: facts.get(name) for name in HASHED_FACTS},
    }
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Decision:
    """What provisioning does on one host: the roles to run (with why) and the ones skipped."""

    hashes: dict[str, str]
    run: dict[str, str] = field(default_factory=dict)
    skip: list[str] = field(default_factory=list)
    # Facts exported by skipped roles, from their record.
    facts: dict[str, Any] = field(default_factory=dict)
    # Role -> what it made that is not as recorded (one line each).
    drift: dict[str, list[str]] = field(default_factory=dict)
    # OS packages whose binaries are gone: installed again before the roles run.
    reinstall: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "hashes": self.hashes,
            "run": self.run,
            "skip": self.skip,
            "drift": self.drift,
            "reinstall": self.reinstall,
        }


def drift(recorded: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """What differs between a role's recorded state and its state now, one line per item, in order."""
    lines = []
    for item in sorted({*recorded, *now}):
        before, after = recorded.get(item), now.get(item)
        if before == after:
            continue
        if after is None:
            lines.append(f"{item}: gone")
        elif before is None:
            lines.append(f"{item}: new")
        elif item.startswith("file ") and after == "missing":
            lines.append(f"{item}: deleted")
        elif item.startswith("file ") and before != "missing":
            lines.append(f"{item}: changed")
        else:
            lines.append(f"{item}: {before} -> {after}")
    return lines


def missing_packages(entry: Mapping[str, Any], lines: Sequence[str]) -> list[str]:
    """The packages whose binaries ``lines`` (:func:`drift`) say are missing."""
    binaries = (entry.get("made") or {}).get("binaries") or {}
    gone = [line.split(":", 1)[0].removeprefix("binary ") for line in lines if line.startswith("binary ")]
    return sorted({binaries[path] for path in gone if binaries.get(path)})


def decide(
    roles: Sequence[str],
    hashes: Mapping[str, str],
    record: Mapping[str, Any],
    units: Mapping[str, Sequence[str]],
    active: Mapping[str, bool],
    skip_unchanged: bool = True,
    now: Mapping[str, Mapping[str, str]] | None = None,
) -> Decision:
    """Which of ``roles`` (in provisioning order) run, and why; the rest are skipped. ``now``: each role's
    state now (:func:`benchstack.provision.hostcommand.parse_now`), compared with the state its record
    holds."""
    decision = Decision(hashes=dict(hashes))
    entries = record.get("roles") or {}
    for role in roles:
        entry = entries.get(role)
        down = [u for u in units.get(role, ()) if not active.get(u, False)]
        deps = [d for d in DEPENDS.get(role, ()) if d in decision.run]
        changed: list[str] = []
        if isinstance(entry, dict) and isinstance(entry.get("state"), dict):
            changed = drift(entry["state"], (now or {}).get(role) or {})
        if changed:
            decision.drift[role] = changed
            # A package removed altogether is installed by the one transaction (dnf cannot reinstall it).
            role_now = (now or {}).get(role) or {}
            gone = [
                p for p in missing_packages(entry or {}, changed) if role_now.get(f"package {p}") != "absent"
            ]
            decision.reinstall.extend(p for p in gone if p not in decision.reinstall)
        if not skip_unchanged:
            decision.run[role] = "every role runs (bench_provision_skip_unchanged false, or --tags)"
        elif not isinstance(entry, dict):
            decision.run[role] = "no record of it on this host"
        elif entry.get("hash") != hashes[role]:
            decision.run[role] = "its inputs changed"
        elif changed:
            decision.run[role] = "drifted: " + "; ".join(changed)
        elif deps:
            decision.run[role] = f"{', '.join(deps)} runs"
        elif down:
            decision.run[role] = f"not active: {', '.join(down)}"
        else:
            decision.skip.append(role)
            decision.facts.update(entry.get("facts") or {})
    return decision
