"""A fact read from another host (``hostvars[h].NAME`` in a playbook or role) must be one some task sets:
``hostvars[target].bench_host_fingerprint`` outlived the fact's rename to ``host_fingerprint``, and a
missing hostvar reads as its ``default(none)``, so the target's limits were silently never checked."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
READ = re.compile(r"hostvars\[[^\]]+\]\.(\w+)")
# Ansible's own: gathered by the setup module.
GATHERED = {"ansible_facts"}


def set_somewhere(name: str, texts: list[str]) -> bool:
    """Whether a task sets ``name``: a set_fact key, a register, or a module's returned facts."""
    key = re.compile(rf"(^\s*{name}:|register:\s*{name}\b|[\"']{name}[\"'])", re.M)
    return any(key.search(t) for t in texts)


def test_every_fact_read_from_another_host_is_set_by_some_task() -> None:
    files = [*ROOT.glob("playbooks/**/*.yml"), *ROOT.glob("roles/**/*.yml")]
    texts = [p.read_text(encoding="utf-8") for p in files]
    sources = texts + [p.read_text(encoding="utf-8") for p in ROOT.glob("plugins/**/*.py")]
    read = {m.group(1) for t in texts for m in READ.finditer(t)} - GATHERED
    assert read, "no hostvars read found: the pattern no longer matches the playbooks"
    assert sorted(n for n in read if not set_somewhere(n, sources)) == []
