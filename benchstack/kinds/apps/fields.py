"""The fields of an ``app`` section that every kind has alike: ``app.env`` (its stack's env file) and
``app.checks`` (the answers every deployment must give)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from benchstack.common.inputs import shown, shown_key
from benchstack.kinds.stackfields import url_path_problem

# An environment variable as a systemd env file and every runtime take it.
ENV_NAME_RE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
MAX_ENV_VARS = 100
MAX_ENV_VALUE = 4096
# Names bench-stack itself sets in a stack's env file.
RESERVED_ENV_PREFIXES = ("BENCH_", "BUNDLE_")
CHECK_KEYS = {"path", "body"}
MAX_CHECKS = 20
MAX_CHECK_BODY = 65536


def env_file_line(name: str, value: str) -> str:
    """``NAME="VALUE"`` as systemd's EnvironmentFile= reads it back to VALUE exactly (quotes and
    backslashes escaped; no expansion happens in an env file)."""
    return f'{name}="{value.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'


def check_env(who: str, app: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """Check ``app.env`` (names and values for the stack's env file): the variables as strings, and the
    problems found."""
    env = app.get("env", {})
    where = f"{who}: app.env"
    if not isinstance(env, dict) or len(env) > MAX_ENV_VARS:
        return {}, [
            f"{where}: must be a mapping of at most {MAX_ENV_VARS} NAME: value pairs, not {shown(env)}"
        ]
    problems = []
    for key, value in env.items():
        if not isinstance(key, str) or not ENV_NAME_RE.fullmatch(key):
            problems.append(
                f"{where}: {shown(key)}: a name must be uppercase letters, digits and '_', not a digit first"
            )
            continue
        field = f"{where}.{shown_key(key)}"
        if key.startswith(RESERVED_ENV_PREFIXES):
            problems.append(
                f"{field}: names starting with {' or '.join(RESERVED_ENV_PREFIXES)} are set by bench-stack"
            )
        elif isinstance(value, bool) or not isinstance(value, str | int | float):
            problems.append(f"{field}: must be a string or a number (quote true/false), not {shown(value)}")
        elif any(c in str(value) for c in "\n\r\0") or len(str(value)) > MAX_ENV_VALUE:
            problems.append(
                f"{field}: must be one line of at most {MAX_ENV_VALUE} characters (no newline or NUL)"
            )
    return ({} if problems else {key: str(value) for key, value in env.items()}), problems


def check_problems(who: str, checks: object) -> list[str]:
    """Problems with ``app.checks``: a list of 1 to MAX_CHECKS {path, body} mappings."""
    where = f"{who}: app.checks"
    if not isinstance(checks, list) or not 1 <= len(checks) <= MAX_CHECKS:
        return [f"{where}: must be a list of 1 to {MAX_CHECKS} {{path, body}} mappings, not {shown(checks)}"]
    problems = []
    for i, check in enumerate(checks):
        if not isinstance(check, dict) or set(check) != CHECK_KEYS:
            problems.append(f"{where}[{i}]: must be a mapping with exactly path and body, not {shown(check)}")
            continue
        if problem := url_path_problem(check["path"]):
            problems.append(f"{where}[{i}].path: {problem}")
        body = check["body"]
        if not isinstance(body, str) or len(body) > MAX_CHECK_BODY:
            problems.append(
                f"{where}[{i}].body: must be the expected answer as a string of at most "
                f"{MAX_CHECK_BODY} characters"
            )
    return problems
