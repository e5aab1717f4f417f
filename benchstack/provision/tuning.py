"""Host tuning: which kernel settings to write, and the record of what was set or skipped.

In a container /proc/sys is read-only and some settings do not exist in the network namespace, so the
host role writes what it can and records the rest with the reason instead of failing. The record
describes state, not actions (the value now, the wanted one, the original one), so applying the same
profile twice gives the same record.
"""

from __future__ import annotations

from typing import Any


def normalize_value(value: object) -> str:
    """A sysctl value as ``sysctl -n`` prints it, whitespace collapsed (tab-separated ranges too)."""
    return " ".join(str(value).split())


def read_values(names: list[str], stdout: str) -> dict[str, str | None]:
    """Values from one ``sysctl NAME...`` run, which prints ``name = value`` for each key it can read and
    only an error for the others; None where a key cannot be read."""
    found: dict[str, str] = {}
    for line in stdout.splitlines():
        name, sep, value = line.partition(" = ")
        if sep:
            found[name.strip()] = normalize_value(value)
    return {name: found.get(name) for name in names}


def to_write(wanted: dict[str, Any], current: dict[str, str | None]) -> list[dict[str, str]]:
    """Settings that exist here and differ from the wanted value, as ``{name, value}``."""
    return [
        {"name": name, "value": normalize_value(value)}
        for name, value in wanted.items()
        if current.get(name) is not None and current[name] != normalize_value(value)
    ]


def _reason(name: str, current: str | None, write: dict[str, Any] | None) -> str:
    if current is None:
        return "not present here (a setting outside this network namespace, or an older kernel)"
    if write is not None and write.get("rc") not in (0, None):
        err = (write.get("stderr") or write.get("msg") or "").strip().splitlines()
        detail = err[-1] if err else f"rc {write.get('rc')}"
        return f"could not be written ({detail}); in a container, pass it with docker run --sysctl"
    return "differs from the wanted value"


def sysctl_record(
    wanted: dict[str, Any],
    original: dict[str, str | None],
    after: dict[str, str | None],
    writes: list[dict[str, Any]],
) -> dict[str, dict[str, Any]]:
    """Per setting: wanted, original (before bench-stack first tuned it), value now, ``set`` or ``skipped``.

    ``writes``: results of a loop of ``sysctl -w`` over :func:`to_write`'s items (item = {name, value}).
    """
    by_name = {str(w["item"]["name"]): w for w in writes if isinstance(w.get("item"), dict)}
    out: dict[str, dict[str, Any]] = {}
    for name, value in wanted.items():
        want = None if value is None else normalize_value(value)
        now = after.get(name)
        entry: dict[str, Any] = {"wanted": want, "original": original.get(name), "value": now}
        if now is not None and now == want:
            entry["status"] = "set"
        else:
            entry["status"] = "skipped"
            entry["reason"] = _reason(name, now, by_name.get(name))
        out[name] = entry
    return out


def restore_list(original: dict[str, str | None], current: dict[str, str | None]) -> list[dict[str, str]]:
    """Settings to put back to their original value (stock profile): present, known, and changed."""
    return [
        {"name": name, "value": value}
        for name, value in original.items()
        if value is not None and current.get(name) is not None and current[name] != value
    ]


def nofile_record(user: str, wanted: int, session: dict[str, Any]) -> dict[str, Any]:
    """The benchmark user's open-files limit: wanted, and what a session (``ulimit -n; ulimit -Hn`` run
    through runuser, so pam_limits applies) really gets. A container's hard limit caps it: root there lacks
    CAP_SYS_RESOURCE, so pam_limits cannot raise it."""
    out: dict[str, Any] = {"user": user, "wanted": wanted, "soft": None, "hard": None}
    lines = (session.get("stdout") or "").split()
    if session.get("rc") == 0 and len(lines) == 2 and all(v.isdigit() or v == "unlimited" for v in lines):
        out["soft"], out["hard"] = lines
    if out["soft"] == str(wanted):
        out["status"] = "set"
    else:
        out["status"] = "skipped"
        out["reason"] = (
            f"a session of {user} gets {out['soft']} (hard {out['hard']}): the hard limit this host allows "
            "is lower (in a container, raise it with docker run --ulimit nofile=N:N)"
            if out["soft"] is not None
            else f"could not read a session's limit: {(session.get('stderr') or '').strip()[-200:]}"
        )
    return out
