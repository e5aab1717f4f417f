"""What differs between two runs' hosts and setup, beside the stacks themselves: every difference in run.json
that can explain a change in the numbers (read by ``bench-stack compare``, which ``--strict`` refuses on any).

Hosts are paired by role: the runs' targets in the order run.json lists them, then their loadgens (a loopback
host is compared once, as a target). From each pair's fingerprint (roles/host/tasks/fingerprint.yml):
CPU model and count, memory, architecture, virtualization, kernel, distribution, the open-files limit, the
recorded sysctls, package versions, config sha256, the tuning profile and CPU governor, and the CPU split
(``cpu_split``, loopback only). From the run: loopback vs network mode, the number of targets and loadgens,
bench-stack's version, the load settings (``experiment.load`` without the repetition and verdict settings,
which change how often a load point is measured, not what it measures) and the definitions of the stacks both
runs measured.

Two targets of one run (:func:`target_differences`, ``bench-stack compare RUN --targets A B`` and the report's
"Targets side by side") share the experiment, the version and the load: what can differ is the two targets'
fingerprints, their loadgens' (paired in the order they measured), how many loadgens each had and the mode.
"""

from __future__ import annotations

import json
from typing import Any

from benchstack.plan.targets import loadgens_of
from benchstack.results.cell import Cell

FINGERPRINT_FIELDS = (
    ("cpu_model", "CPU model"),
    ("cpu_count", "CPU count"),
    ("memory_mb", "memory MB"),
    ("architecture", "architecture"),
    ("virtualization", "virtualization"),
    ("kernel", "kernel"),
    ("distribution", "distribution"),
    ("nofile_limit", "open-files limit"),
)
FINGERPRINT_MAPS = (("sysctls", "sysctl"), ("packages", "package"), ("config_sha256", "config sha256 of"))
# Load settings that decide how many repetitions there are and how they are judged, not what one measures.
LOAD_KEYS_IGNORED = frozenset({
    "repetitions", "max_repetitions", "max_cv", "max_error_rate", "target_precision", "max_interference",
    "max_seconds", "seed", "baseline",
})  # fmt: skip
MISSING = "(none)"


def _text(value: object) -> str:
    if value is None or value == "":
        return MISSING
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _tuning(fp: dict[str, Any], key: str) -> object:
    tuning = fp.get("tuning")
    if not isinstance(tuning, dict):
        return None
    if key == "cpu_governor":
        governor = tuning.get("cpu_governor")
        return governor.get("value") if isinstance(governor, dict) else governor
    return tuning.get(key)


def fingerprint_differences(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[str]:
    """``what: A -> B`` for every fingerprint field that differs (a missing fingerprint is one difference)."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        if a is None and b is None:
            return []
        return [f"fingerprint: {'recorded' if a else MISSING} -> {'recorded' if b else MISSING}"]
    out = []
    for key, label in FINGERPRINT_FIELDS:
        if _text(a.get(key)) != _text(b.get(key)):
            out.append(f"{label}: {_text(a.get(key))} -> {_text(b.get(key))}")
    for key, label in FINGERPRINT_MAPS:
        ma = v if isinstance(v := a.get(key), dict) else {}
        mb = v if isinstance(v := b.get(key), dict) else {}
        for name in sorted(set(ma) | set(mb)):
            if _text(ma.get(name)) != _text(mb.get(name)):
                out.append(f"{label} {name}: {_text(ma.get(name))} -> {_text(mb.get(name))}")
    for key, label in (("profile", "tuning profile"), ("cpu_governor", "CPU governor")):
        if _text(_tuning(a, key)) != _text(_tuning(b, key)):
            out.append(f"{label}: {_text(_tuning(a, key))} -> {_text(_tuning(b, key))}")
    if _text(a.get("cpu_split")) != _text(b.get("cpu_split")):
        out.append(f"CPU split: {_text(a.get('cpu_split'))} -> {_text(b.get('cpu_split'))}")
    return out


def _names(info: dict[str, Any], key: str) -> list[str]:
    names = info.get(key)
    return [str(n) for n in names] if isinstance(names, list) else []


def _host_pairs(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str | None, str | None]]:
    """(role, host in A, host in B): targets, then loadgens that are not also targets, paired by position."""
    pairs = []
    for role, key in (("target", "targets"), ("loadgen", "loadgens")):
        in_a = [n for n in _names(a, key) if role == "target" or n not in _names(a, "targets")]
        in_b = [n for n in _names(b, key) if role == "target" or n not in _names(b, "targets")]
        for i in range(max(len(in_a), len(in_b))):
            pairs.append((role, in_a[i] if i < len(in_a) else None, in_b[i] if i < len(in_b) else None))
    return pairs


def _stacks(info: dict[str, Any]) -> dict[str, Any]:
    exp = info.get("experiment")
    stacks = exp.get("stacks") if isinstance(exp, dict) else None
    if not isinstance(stacks, list):
        return {}
    return {str(s["name"]): s for s in stacks if isinstance(s, dict) and s.get("name")}


def _load(info: dict[str, Any]) -> dict[str, Any] | None:
    exp = info.get("experiment")
    load = exp.get("load") if isinstance(exp, dict) else None
    if not isinstance(load, dict):
        return None
    return {k: v for k, v in load.items() if k not in LOAD_KEYS_IGNORED}


def run_differences(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[str]:
    """Every difference between two runs' run.json that can explain a change (see the module doc); a run
    without run.json is a difference of its own: nothing about its hosts can be checked."""
    if a is None or b is None:
        missing = " and ".join(name for name, info in (("A", a), ("B", b)) if info is None)
        return [f"run.json missing in {missing}: the hosts and setup cannot be compared"]
    out = []
    if _text(a.get("mode")) != _text(b.get("mode")):
        out.append(f"mode: {_text(a.get('mode'))} -> {_text(b.get('mode'))}")
    for key in ("targets", "loadgens"):
        if len(_names(a, key)) != len(_names(b, key)):
            out.append(f"number of {key}: {len(_names(a, key))} -> {len(_names(b, key))}")
    hosts_a = v if isinstance(v := a.get("hosts"), dict) else {}
    hosts_b = v if isinstance(v := b.get("hosts"), dict) else {}
    for role, name_a, name_b in _host_pairs(a, b):
        if name_a is None or name_b is None:
            continue
        label = f"{role} {name_a}" if name_a == name_b else f"{role} {name_a} -> {name_b}"
        out += [f"{label}: {d}" for d in fingerprint_differences(hosts_a.get(name_a), hosts_b.get(name_b))]
    if _text(a.get("bench_stack_version")) != _text(b.get("bench_stack_version")):
        out.append(
            f"bench-stack version: {_text(a.get('bench_stack_version'))} -> "
            f"{_text(b.get('bench_stack_version'))}"
        )
    load_a, load_b = _load(a), _load(b)
    for key in sorted(set(load_a or {}) | set(load_b or {})):
        va, vb = (load_a or {}).get(key), (load_b or {}).get(key)
        if _text(va) != _text(vb):
            out.append(f"load.{key}: {_text(va)} -> {_text(vb)}")
    stacks_a, stacks_b = _stacks(a), _stacks(b)
    for name in sorted(set(stacks_a) & set(stacks_b)):
        flat_a, flat_b = _flat(stacks_a[name]), _flat(stacks_b[name])
        for key in sorted(set(flat_a) | set(flat_b)):
            if flat_a.get(key, MISSING) != flat_b.get(key, MISSING):
                out.append(f"stack {name} {key}: {flat_a.get(key, MISSING)} -> {flat_b.get(key, MISSING)}")
    return out


def _flat(value: object, prefix: str = "") -> dict[str, str]:
    """A nested mapping as ``{"server.instances": "4", ...}`` (lists as JSON)."""
    if not isinstance(value, dict):
        return {prefix: _text(value)}
    out: dict[str, str] = {}
    for key, item in value.items():
        out.update(_flat(item, f"{prefix}.{key}" if prefix else str(key)))
    return out


def target_differences(
    info: dict[str, Any] | None,
    target_a: str,
    target_b: str,
    cells_a: list[Cell],
    cells_b: list[Cell],
) -> list[str]:
    """Every difference between two targets of one run (and their loadgens) that can explain a change in
    their numbers; ``cells_a``/``cells_b``: each target's cells, which name its loadgens and mode."""
    if info is None:
        return ["run.json missing: the hosts cannot be compared"]
    hosts = v if isinstance(v := info.get("hosts"), dict) else {}
    label = f"target {target_a} -> {target_b}"
    out = [f"{label}: {d}" for d in fingerprint_differences(hosts.get(target_a), hosts.get(target_b))]
    modes_a = sorted({str(c.mode) for c in cells_a})
    modes_b = sorted({str(c.mode) for c in cells_b})
    if modes_a != modes_b:
        out.append(f"mode: {', '.join(modes_a)} -> {', '.join(modes_b)}")
    # A loopback target is its own loadgen: its fingerprint was compared above.
    lgs_a = [lg for lg in loadgens_of(cells_a) if lg != target_a]
    lgs_b = [lg for lg in loadgens_of(cells_b) if lg != target_b]
    if len(lgs_a) != len(lgs_b):
        out.append(f"number of loadgens: {len(lgs_a)} -> {len(lgs_b)}")
    for lg_a, lg_b in zip(lgs_a, lgs_b, strict=False):
        diffs = fingerprint_differences(hosts.get(lg_a), hosts.get(lg_b))
        out += [f"loadgen {lg_a} -> {lg_b}: {d}" for d in diffs]
    return out
