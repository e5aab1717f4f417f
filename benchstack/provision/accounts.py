"""The benchmark account on a host: bench-stack changes only the accounts and groups it made.

The host role creates ``host_user`` and ``host_group``, and sets that user's primary group, home, shell and
password: given an existing account (``-e host_user=backup``) it would rewrite it. The app servers run
with ``app_server_group`` and the apps' files belong to ``webapp_group``: an existing privileged group there
(``shadow``, ``docker``, ``sudo``) hands its rights to every app. So, before any role runs
(bench_provision_state), with the accounts as the host has them
(:func:`benchstack.provision.hoststate.accounts`) and the host's record of what bench-stack made
(:mod:`benchstack.provision.made`), :func:`check` says what is refused:

* a user or group that does not exist is bench-stack's to create (recorded before the host role makes it;
  users of ``ruby_rbenv_users`` and ``python_pyenv_users`` too: the ruby and python roles add them to their
  group, and create them when missing);
* one the record names is bench-stack's (it made it, or was told to adopt it);
* an existing system account (id below :data:`FIRST_REGULAR_ID`), or a group of
  :data:`benchstack.plan.rolevars.PRIVILEGED_GROUPS`, is refused whatever the settings say;
* any other existing account is refused unless ``host_adopt_user: true``: then it is adopted (and recorded,
  so later runs need no flag).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from benchstack.common.inputs import shown
from benchstack.plan.rolevars import PRIVILEGED_GROUPS, PRIVILEGED_USERS

# Ids below this are the system's (login.defs' UID_MIN and GID_MIN on Debian, Ubuntu, RHEL and Amazon Linux):
# daemons, and groups that grant access to devices, logs or administration.
FIRST_REGULAR_ID = 1000
# The variables whose group the benchmark's processes run with or whose files they read.
GROUP_VARIABLES = ("host_group", "app_server_group", "webapp_group")
# Users the runtime roles add to their version manager's group (creating those that do not exist), and what
# each role would change of an existing account.
USER_VARIABLES = {
    "host_user": "its group, home, shell and password",
    "ruby_rbenv_users": "its groups (it joins the rbenv group)",
    "python_pyenv_users": "its groups (it joins the pyenv group)",
}


@dataclass
class Verdict:
    """What :func:`check` found: one line per refusal, and the accounts to record as bench-stack's (created
    next by the host role, or adopted)."""

    problems: list[str] = field(default_factory=list)
    users: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)


ADOPT = "or set host_adopt_user: true to let bench-stack use and change it"


def _user(variable: str, name: str, info: Any, made: Mapping[str, Any], adopt: bool, out: Verdict) -> None:
    change = USER_VARIABLES[variable]
    if name in PRIVILEGED_USERS:
        out.problems.append(f"{variable}: {shown(name)} is a privileged account: choose another name")
    elif name in out.users or name in (made.get("users") or []):
        return
    elif not isinstance(info, dict):
        out.users.append(name)
    elif int(info.get("uid", 0)) < FIRST_REGULAR_ID:
        out.problems.append(
            f"{variable}: {shown(name)} is an existing system account (uid {info.get('uid')}) that "
            f"bench-stack did not create, and bench-stack would change {change}: choose another name "
            "(bench-stack creates it)"
        )
    elif adopt:
        out.users.append(name)
    else:
        out.problems.append(
            f"{variable}: {shown(name)} is an existing account (uid {info.get('uid')}) that bench-stack did "
            f"not create: choose another name (bench-stack creates it), {ADOPT}"
        )


def _group(variable: str, name: str, info: Any, made: Mapping[str, Any], adopt: bool, out: Verdict) -> None:
    if name in PRIVILEGED_GROUPS:
        out.problems.append(f"{variable}: {shown(name)} is a privileged group: choose another name")
    elif not isinstance(info, dict):
        if variable == "host_group":
            out.groups.append(name)
    elif name in (made.get("groups") or []) or name in out.groups:
        return
    elif int(info.get("gid", 0)) < FIRST_REGULAR_ID:
        out.problems.append(
            f"{variable}: {shown(name)} is an existing system group (gid {info.get('gid')}) that bench-stack "
            "did not create, whose rights would reach the benchmark's processes: choose another name"
        )
    elif adopt:
        out.groups.append(name)
    else:
        out.problems.append(
            f"{variable}: {shown(name)} is an existing group (gid {info.get('gid')}) that bench-stack did "
            f"not create: choose another name, {ADOPT}"
        )


# The benchmark user's home is under bench-stack's own folder (host_home: /var/lib/bench-stack/home).
OWN_HOME = "/var/lib/bench-stack/"


def proven(found: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """The accounts of ``found`` that only bench-stack makes, for a host provisioned before its record of
    what it made (:func:`benchstack.provision.made.migrated`): a user whose home is under bench-stack's own
    folder (:data:`OWN_HOME`, as earlier versions made ``host_user`` whatever its name), and that user's
    primary group (``host_group``)."""
    users = (found or {}).get("users") or {}
    groups = (found or {}).get("groups") or {}
    ours = {
        name: info
        for name, info in users.items()
        if isinstance(info, dict) and str(info.get("home", "")).startswith(OWN_HOME)
    }
    gids = {info.get("gid") for info in ours.values()}
    return {
        "users": sorted(ours),
        "groups": sorted(n for n, i in groups.items() if isinstance(i, dict) and i.get("gid") in gids),
    }


def _listed(value: Any) -> list[str]:
    """A variable's names: one (a string) or a list."""
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v]
    return [str(value)] if value else []


def check(
    wanted: Mapping[str, Any], found: Mapping[str, Any] | None, made: Mapping[str, Any], adopt: bool
) -> Verdict:
    """``wanted``: the :data:`USER_VARIABLES` and :data:`GROUP_VARIABLES` as this host's roles get them (a
    name, or a list of names); ``found``:
    :func:`benchstack.provision.hoststate.accounts` for them; ``made``: the host's record of what bench-stack
    made; ``adopt``: ``host_adopt_user`` (module docstring)."""
    out = Verdict()
    users = (found or {}).get("users") or {}
    groups = (found or {}).get("groups") or {}
    for variable in USER_VARIABLES:
        for name in _listed(wanted.get(variable)):
            _user(variable, name, users.get(name), made, adopt, out)
    for variable in GROUP_VARIABLES:
        for name in _listed(wanted.get(variable)):
            _group(variable, name, groups.get(name), made, adopt, out)
    out.problems = list(dict.fromkeys(out.problems))
    return out


def names(wanted: Mapping[str, Any]) -> dict[str, list[str]]:
    """What to look up on the host (:func:`benchstack.provision.hoststate.accounts`) for ``wanted``."""
    users = [name for v in USER_VARIABLES for name in _listed(wanted.get(v))]
    groups = [name for v in GROUP_VARIABLES for name in _listed(wanted.get(v))]
    return {"users": list(dict.fromkeys(users)), "groups": list(dict.fromkeys(groups))}
