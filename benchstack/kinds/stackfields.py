"""What the stack resolver (:mod:`benchstack.plan.stacks`) and the kinds' adapters
(:mod:`benchstack.kinds.apps`, :mod:`benchstack.kinds.fronts`) check and derive a stack's fields with: the
project-wide roots every derived path hangs from (:class:`Roots`), the error that lists every problem, each
naming its stack and field, and the checks of names, folder paths, URL paths and typed keys.

Checks read a section as written and never change it: they return what they found (the typed options with
their defaults), and the sections' dataclasses print themselves for the plan (:func:`ordered`).

Every value that reaches a config file is validated for its context: names, paths and URL paths are refused
when they could break out of a config line (newlines, ``;``, braces, quotes, spaces).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, TypeGuard

from benchstack.common.inputs import shown, shown_key
from benchstack.common.numbers import is_int
from benchstack.common.paths import own_root_problem, system_folder_problem

# A typed option of a stack section: (type, minimum, maximum, default). An int is bounded (minimum and maximum
# included); a bool is true or false (no bounds); a default of None makes an optional option left unset.
TypedOption = tuple[type, Any, Any, Any]
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,47}$")
# A folder path that is safe in every config line it reaches (nginx root, Apache DocumentRoot and
# <Directory>, systemd WorkingDirectory=, unit and env files): absolute, each part letters, digits, '.',
# '_', '+' or '-', no '..'. Newlines, ';', braces, quotes and spaces could end a directive and start another.
SAFE_PATH_RE = re.compile(r"^(/[A-Za-z0-9._+-]+)+/?$")
# A URL path as a request line and a load tool take it: '/' then printable ASCII, no space.
URL_PATH_RE = re.compile(r"^/[!-~]*$")
# ab builds its whole request, headers and host name included, in 2,048 bytes (support/ab.c of ab 2.3) and
# exits with "Request too long" past it; 1,500 characters leave room for those headers and any host name
# (apache-vs-nginx asks for a path of 1,033). A 10 kB path passed every check.
MAX_URL_PATH = 1500
# Ports below this are the system's: an app server runs as the benchmark user, who cannot listen on them
# on a host that keeps Linux's default (net.ipv4.ip_unprivileged_port_start); containers allow it, so a
# stack would pass on the local Docker hosts and fail on real ones.
FIRST_USER_PORT = 1024


@dataclass(frozen=True)
class Roots:
    """The project-wide roots every derived path hangs from (bench_run_root, bench_app_root,
    bench_unit_config_dir): one value each, for every role, verify and the report."""

    # Parent of every instance's RuntimeDirectory (its socket lives there); systemd makes it under /run.
    run: str = "/run/bench-stack"
    # Folder of the bundled apps (one folder per app kind) and the default of app.dir.
    apps: str = "/opt/bench-stack/apps"
    # Per-instance env files and server configs (unicorn, puma, php-fpm).
    units: str = "/etc/bench-stack/units"

    def problems(self) -> list[str]:
        names = {"run": "bench_run_root", "apps": "bench_app_root", "units": "bench_unit_config_dir"}
        out = []
        for key, value in asdict(self).items():
            # Env files, server configs and app folders are written there: /etc itself is no root. The units'
            # config folder and the run root are read by the units alone: bench-stack's own by name.
            problem = safe_path_problem(value) or system_folder_problem(value)
            if problem:
                out.append(f"{names[key]}: {problem}")
        if not out and not self.run.rstrip("/").startswith("/run/"):
            out.append(
                "bench_run_root: must be a folder under /run (systemd's RuntimeDirectory=), "
                f"not {shown(self.run)}"
            )
        if not out:
            # Read by the units alone: folders bench-stack names as its own (apps may live elsewhere).
            owned = {"units": self.units, "run": self.run}
            out += [f"{names[k]}: {p}" for k, v in owned.items() if (p := own_root_problem(v))]
        return out

    @property
    def run_relative(self) -> str:
        """The run root as systemd's RuntimeDirectory= takes it: relative to /run."""
        return self.run.rstrip("/").removeprefix("/run/")


DEFAULT_ROOTS = Roots()


class StackError(ValueError):
    """Stack definitions are invalid; ``problems`` lists every problem found, each naming its stack and
    field."""

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


def err(who: str, field: str, msg: str) -> StackError:
    """The error of one field of the stack ``who`` (``stack 'NAME'``)."""
    return StackError(f"{who}: {field}: {msg}")


def mapping(s: Mapping[str, Any], key: str, default: dict[str, Any], who: str) -> Mapping[str, Any]:
    """``s[key]`` (``default`` when absent); a StackError naming the field when it is not a mapping."""
    value = s.get(key, default)
    if not isinstance(value, dict):
        raise err(who, key, f"must be a mapping, not {type(value).__name__}")
    return value


def one_of(value: object, known: dict[str, Any]) -> TypeGuard[str]:
    """Whether ``value`` is a key of ``known`` (a list or mapping is not: ``[] in {}`` raises TypeError)."""
    return isinstance(value, str) and value in known


def safe_path_problem(value: object) -> str | None:
    """Why ``value`` cannot be a folder path in a config file, or None when it can."""
    if not isinstance(value, str) or not SAFE_PATH_RE.fullmatch(value):
        return (
            "must be an absolute path of letters, digits, '.', '_', '+', '-' and '/' "
            f"(no spaces, quotes, ';', braces or newlines), not {shown(value)}"
        )
    if ".." in value.split("/"):
        return f"must not contain '..', not {shown(value)}"
    return None


def url_path_problem(value: object) -> str | None:
    """Why ``value`` cannot be a URL path (load path, check path), or None when it can."""
    if not isinstance(value, str) or not URL_PATH_RE.fullmatch(value):
        return (
            f"must be a URL path starting with '/' without spaces or control characters, not {shown(value)}"
        )
    if len(value) > MAX_URL_PATH:
        return f"must be a URL path of at most {MAX_URL_PATH:_} characters, not {len(value):_}"
    return None


def ordered(written: Iterable[object], fields: Mapping[str, Any]) -> dict[str, Any]:
    """A section as the plan holds it: the keys as written first, in their order, then the others in
    ``fields``' order (the order they were derived in), so the plan reads like the experiment."""
    keys = [key for key in written if isinstance(key, str) and key in fields]
    keys += [key for key in fields if key not in keys]
    return {key: fields[key] for key in keys}


def typed_keys(
    who: str,
    section: str,
    mapping: Mapping[str, Any],
    what: str,
    *,
    keys: set[str],
    options: dict[str, TypedOption],
) -> dict[str, Any]:
    """Check the keys of a stack's ``section`` (``server``, ``front``, ``runtime``); the typed options with
    their defaults filled in, in ``options``' order (``mapping`` is not changed).

    A key that is none of ``keys`` and the typed ``options`` is an error naming ``section.key``, what it is
    not (``what``: "option of unicorn") and the allowed keys.
    Each typed option gets its default when absent and must be of its type (and within its range).
    """
    allowed = keys | set(options)
    unknown = sorted(set(mapping) - allowed, key=str)
    if unknown:
        raise err(
            who,
            f"{section}.{shown_key(unknown[0])}",
            f"unknown {what} (allowed: {', '.join(sorted(allowed))})",
        )
    found: dict[str, Any] = {}
    for key, (typ, lo, hi, default) in options.items():
        value = found[key] = mapping.get(key, default)
        if value is None and default is None:
            continue  # an optional option left unset
        if typ is bool:
            if not isinstance(value, bool):
                raise err(who, f"{section}.{key}", f"must be true or false, not {shown(value)}")
        elif not is_int(value) or not lo <= value <= hi:
            raise err(who, f"{section}.{key}", f"must be an integer from {lo} to {hi}, not {shown(value)}")
    return found
