"""Filter for the roles' own check of their variables, right before they write a unit, a config or a sysctl:
the plan's checks (benchstack.plan.settings.role_value_problems over benchstack.plan.rolevars), on the values
as the host templates them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible.errors import AnsibleFilterError

from benchstack.plan.settings import role_value_problems


def _plain(value: Any) -> Any:
    """``value`` as plain Python (the mappings and lists a template hands a filter may be Ansible's own)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def bench_rolevar_problems(values: Any) -> list[str]:
    """One line per role variable in ``values`` (name -> value) that does not fit where it lands; empty when
    all do. A role asserts it is empty before it writes what they reach."""
    if not isinstance(values, Mapping):
        kind = type(values).__name__
        raise AnsibleFilterError(f"bench_rolevar_problems: expects a mapping of name -> value, not a {kind}")
    return role_value_problems(_plain(values))


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"bench_rolevar_problems": bench_rolevar_problems}
