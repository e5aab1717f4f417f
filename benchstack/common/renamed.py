"""Roles renamed, and their variables with them: what an inventory, group_vars or ``-e`` written for an
older bench-stack may still set, and what a host it provisioned still records (docs/upgrading.md).

On 2026-12-03 (issue 26, item 5) the role ``app`` became ``webapp`` and ``bench_host`` became ``host``, so
that no role's variable prefix is another's (``app_`` took in ``app_server_*``) or the project's own
(``bench_host_`` fell under ``bench_*``). An old name would now be ignored without a word, and the role's
default would stand in for what the user set (``bench_host_profile: tuned`` measuring a stock host): the
plan refuses it, naming the new one, before any host is touched. The old names are derived, not listed: an
old role's prefix whose new spelling is a variable of the renamed role.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

# Old role -> new role.
ROLES: dict[str, str] = {"app": "webapp", "bench_host": "host"}
# When the roles were renamed: the bench-stack a user's variables were written for is older.
SINCE = "2026-12-03"


def renamed_to(name: str, variables: Collection[str]) -> str | None:
    """The variable an old ``name`` is now (in ``variables``, every role's variables), or None."""
    for old, new in ROLES.items():
        if name.startswith(f"{old}_"):
            now = new + name[len(old) :]
            if now in variables:
                return now
    return None


def renamed_problems(given: Iterable[str], variables: Collection[str]) -> list[str]:
    """One line per name in ``given`` (set by the inventory, group_vars or ``-e``) that a renamed role's
    variable had before the rename."""
    problems = []
    for name in given:
        now = renamed_to(name, variables)
        if now is not None:
            old = next(old for old in ROLES if name.startswith(f"{old}_"))
            problems.append(
                f"{name} was renamed to {now} in bench-stack {SINCE} (the role {old} is now {ROLES[old]}): "
                "rename it in your inventory, group_vars or -e (docs/upgrading.md)"
            )
    return problems
