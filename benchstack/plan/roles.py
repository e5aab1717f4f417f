"""Which roles a host runs and what the plan says of them: each host's roles in provisioning order
(:func:`host_roles`) and in two stages around the sweep (:func:`stages`), the units each role keeps running
(:func:`role_units`) and what it makes (:func:`role_made`, with what a role declares at its end:
:func:`with_declared`), the units that serve each stack (:func:`stack_units`), what the stacks own under the
roots (:func:`owned`), and the roles whose OS packages provision.yml installs in one transaction
(:func:`package_roles`). The plan computes the roles, the units and what the roles make and own
(:mod:`benchstack.plan.resolved`); the provisioning markers (:mod:`benchstack.provision.markers`) read
them, and the runner checks the stacks' units before each cell (:mod:`benchstack.measure.stackunits`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from benchstack.common.inputs import PROJECT_YAML_LOADER
from benchstack.kinds.fronts.apache import ApacheFront
from benchstack.kinds.stackfields import Roots
from benchstack.plan.readers import Needs
from benchstack.plan.rolecontract import served
from benchstack.plan.stacks import Stack

# Roles with a `packages` entry point, whose OS packages provision.yml installs in one transaction
# (:func:`package_roles`).
PACKAGED = ("host", "ruby", "python", "perl", "php", "nginx", "apache", "loadgen")
# Roles that name, at their end, what they made beyond the plan's role_made (``<role>_made``: files,
# binaries; the files of a bundled app, a Ruby's or Python's executable, wrk built from source), recorded
# with it (bench_provision_record).
DECLARES_MADE = ("webapp", "ruby", "python", "loadgen")


def owned(
    stacks: Sequence[Stack],
    app_kinds: Sequence[str],
    user_apps: Sequence[Mapping[str, Any]],
    roots: Roots,
) -> dict[str, Any]:
    """What the plan's stacks own under ``roots`` (the plan's ``owned``), by the role that writes it:
    ``app_server``, every instance's env file and server config; ``app``, the bundled kinds it deploys
    (``app_kinds``, the plan's needs), the users' apps and every stack's app folder (which no sweep touches,
    nor a folder holding one)."""
    files = []
    for s in stacks:
        if s.server:
            files.append(s.server.units.env_file)
            files += [ep.config_file for ep in s.endpoints if ep.config_file]
    return {
        "roots": {"apps": roots.apps, "units": roots.units},
        "app_server": files,
        "app": {
            "kinds": sorted(app_kinds),
            "user_apps": [app["name"] for app in user_apps],
            "dirs": sorted({s.app.dir for s in stacks if s.app.dir}),
        },
    }


# The roles of a host, in provisioning order: the host, the runtimes (Perl runs Starman, and Server::Starter's
# start_server for Starman and the Ruby Starlet), the apps, what starts and fronts them, the load tools.
RUNTIMES = ("ruby", "python", "perl", "php")
# The OS families whose unit names and files the roles know (their vars/Debian.yml, vars/RedHat.yml).
FAMILIES = ("Debian", "RedHat")
# What the host and nginx roles write whatever the stacks (role_made).
BENCH_HOST_FILES = ("/etc/sysctl.d/60-bench-stack.conf", "/etc/security/limits.d/60-bench-stack.conf")
NGINX_MADE = (
    "/etc/nginx/nginx.conf",
    "/etc/nginx/conf.d/bench-stack.conf",
    "/etc/systemd/system/nginx.service.d/bench-stack-cpus.conf",
)


# Provisioning runs the roles in two stages around the sweep of what no stack of the plan owns
# (provision.yml): the host, the runtimes and the apps first (their downloads and builds fail most often,
# and such a failure leaves the host as it was), then what starts and fronts the stacks, and the load tools.
SECOND_STAGE = ("app_server", "nginx", "apache", "log_shipper", "loadgen")
# The log_shipper role's unit and what it writes there (roles/log_shipper: its service.yml).
LOG_SHIPPER_UNIT = "bench-fluentd.service"
LOG_SHIPPER_MADE = (f"/etc/systemd/system/{LOG_SHIPPER_UNIT}",)


def stages(run: Iterable[str]) -> list[list[str]]:
    """The roles that run (``run``, in provisioning order), before and after the sweep."""
    roles = list(run)
    return [[r for r in roles if r not in SECOND_STAGE], [r for r in roles if r in SECOND_STAGE]]


def target_roles(needs: Needs) -> list[str]:
    """The roles a target runs for the plan's ``needs`` (:func:`benchstack.plan.readers.needs`), in order."""
    runtimes = set(needs.runtimes) | ({"perl"} if needs.perl_modules else set())
    return [
        *(r for r in RUNTIMES if r in runtimes),
        "webapp",
        *(["app_server"] if needs.servers else []),
        *(f for f in ("nginx", "apache") if f in needs.fronts),
        # After the fronts, whose access logs it tails (an experiment's logs: benchstack.plan.logship).
        *(["log_shipper"] if needs.log_shipping else []),
    ]


def host_roles(needs: Needs, target: bool, loadgen: bool) -> list[str]:
    """The roles a host runs, in provisioning order: the host's, a target's, a loadgen's."""
    return ["host", *(target_roles(needs) if target else []), *(["loadgen"] if loadgen else [])]


def _apache_instances(stacks: Sequence[Stack]) -> list[str]:
    """The Apache instances of the stacks the apache role serves."""
    return [s.front.instance for s in served("apache", stacks) if isinstance(s.front, ApacheFront)]


def role_units(stacks: Sequence[Stack], family: str, ships: bool = False) -> dict[str, list[str]]:
    """Role -> the units it keeps running on a host of OS ``family`` for the resolved ``stacks`` (those each
    role serves, :func:`benchstack.plan.rolecontract.served`): a skipped role's units must be active, or it
    runs again. Apache instances are ``apache2@`` units on Debian and ``httpd@`` ones elsewhere (the apache
    role's vars/Debian.yml, vars/RedHat.yml). ``ships``: the run ships its fronts' access logs, with
    fluentd's unit (the log_shipper role)."""
    apache = "apache2@" if family == "Debian" else "httpd@"
    return {
        "app_server": [ep.unit for s in served("app_server", stacks) for ep in s.endpoints],
        "nginx": ["nginx.service"],
        "apache": [f"{apache}{instance}.service" for instance in _apache_instances(stacks)],
        **({"log_shipper": [LOG_SHIPPER_UNIT]} if ships else {}),
    }


def stack_units(stacks: Sequence[Stack], family: str) -> dict[str, list[dict[str, str | None]]]:
    """Stack name -> the units that serve it on a host of OS ``family`` (the plan's ``stack_units``), each
    with where it listens (``unix:<socket>``, ``tcp:<port>``, None when unknown): its app server instances,
    its front (nginx, or its Apache instance) on the stack's port. A cell measures the whole stack only
    while every one of them is active (:mod:`benchstack.measure.stackunits`)."""
    apache = "apache2@" if family == "Debian" else "httpd@"
    out: dict[str, list[dict[str, str | None]]] = {}
    for s in stacks:
        units: list[dict[str, str | None]] = []
        if served("app_server", [s]):
            for ep in s.endpoints:
                listen = f"unix:{ep.socket}" if ep.socket else f"tcp:{ep.port}" if ep.port else None
                units.append({"unit": ep.unit, "listen": listen})
        if served("nginx", [s]):
            units.append({"unit": "nginx.service", "listen": f"tcp:{s.port}"})
        if served("apache", [s]) and isinstance(s.front, ApacheFront):
            units.append({"unit": f"{apache}{s.front.instance}.service", "listen": f"tcp:{s.port}"})
        out[s.name] = units
    return out


def with_declared(manifest: Mapping[str, Any], declared: Mapping[str, Any] | None) -> dict[str, Any]:
    """``manifest`` (the plan's role_made for a role) with what the role said it made at its end
    (``<role>_made``, :data:`DECLARES_MADE`) added: its ``files`` and ``binaries``, each path once."""
    out = dict(manifest)
    for key in ("files", "binaries"):
        given = list((declared or {}).get(key) or [])
        if given:
            out[key] = list(dict.fromkeys([*(manifest.get(key) or []), *given]))
    return out


def role_made(stacks: Sequence[Stack], family: str, ships: bool = False) -> dict[str, dict[str, list[str]]]:
    """Role -> what it makes on a host of OS ``family`` (files, units; the plan's ``role_made``), recorded
    with its state at the end of provisioning (:mod:`benchstack.provision.hoststate`): a role whose files
    (sha256), units (enabled, active), sysctls, OS packages or their binaries differ from the record runs
    again. The host role's sysctls depend on the host's profile (:func:`host_sysctls`), each
    role's OS packages on what its ``packages`` entry point named: both are added when recorded
    (bench_provision_record). ``ships``: as :func:`role_units`."""
    units = role_units(stacks, family, ships)
    apache_files = (
        [
            f"/etc/apache2-{instance}/sites-available/bench-stack.conf"
            for instance in _apache_instances(stacks)
        ]
        if family == "Debian"
        else []
    )
    servers = [s.server for s in served("app_server", stacks) if s.server]
    return {
        "host": {"files": list(BENCH_HOST_FILES)},
        "app_server": {
            "files": [f"/etc/systemd/system/{server.units.unit}" for server in servers]
            + [server.units.env_file for server in servers],
            "units": units["app_server"],
        },
        "nginx": {"files": list(NGINX_MADE), "units": units["nginx"]},
        "apache": {"files": apache_files, "units": units["apache"]},
        **(
            {"log_shipper": {"files": list(LOG_SHIPPER_MADE), "units": units["log_shipper"]}} if ships else {}
        ),
    }


ROLES_DIR = Path(__file__).resolve().parents[2] / "roles"


def role_default(role: str, name: str, roles_dir: Path = ROLES_DIR) -> Any:
    """One of ``role``'s defaults (defaults/main.yml; None when it has no such variable)."""
    text = (roles_dir / role / "defaults" / "main.yml").read_text(encoding="utf-8")
    return (yaml.load(text, Loader=PROJECT_YAML_LOADER) or {}).get(name)


def host_sysctls(profile: str, tuned: Mapping[str, Any] | None) -> list[str]:
    """The sysctls the host role sets: those of ``host_tuned_sysctls`` with the profile
    ``tuned``, none with ``stock``."""
    return list(tuned or {}) if profile == "tuned" else []


# A skipped tag names a role: bench_<role> or bench_<role>_install (the host role's tag: bench_host).
_ROLE_TAG = re.compile(r"^bench_(.*?)(?:_install)?$")


def skipped_roles(skip_tags: Iterable[str]) -> list[str]:
    """The roles with a ``packages`` entry point whose ``bench_<role>`` or ``bench_<role>_install`` tag is
    skipped (--skip-tags), in :data:`PACKAGED` order."""
    named = set()
    for tag in skip_tags:
        match = _ROLE_TAG.match(tag)
        named.add(match.group(1) if match else tag)
    return [role for role in PACKAGED if role in named]


def package_roles(run: Iterable[str], run_tags: Sequence[str], skip_tags: Iterable[str]) -> list[str]:
    """The roles that run (``run``, in order) whose OS packages provision.yml installs in one transaction:
    those with a ``packages`` entry point, in a run not limited by --tags (then each role installs its own),
    less those whose install --skip-tags skips."""
    if list(run_tags) != ["all"]:
        return []
    skipped = set(skipped_roles(skip_tags))
    return [role for role in run if role in PACKAGED and role not in skipped]
