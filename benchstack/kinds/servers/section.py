"""A stack's ``server`` section, typed: as written and validated (:class:`ServerSpec`), and resolved
(:class:`Server`: its units, files, start command and environment), which prints itself for the plan
(:meth:`Server.as_dict`). The plan's ``server`` dict is made only there."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchstack.kinds.stackfields import ordered


@dataclass(frozen=True)
class ServerSpec:
    """The ``server`` section as written, checked, with its defaults: kind, instances, bind and the kind's
    typed options (``options``, in the kind's order; None for an optional one left unset)."""

    kind: str
    instances: int
    bind: str
    options: Mapping[str, Any]
    # The keys as written, in their order (the plan keeps it).
    written: tuple[str, ...]
    # As written, when written: checked only where it is used (TCP behind a front), so it is kept as is.
    port_base: object = None

    def fields(self) -> dict[str, Any]:
        """The section's own fields, in the order they were filled in."""
        return {
            "kind": self.kind,
            **({"port_base": self.port_base} if "port_base" in self.written else {}),
            "instances": self.instances,
            "bind": self.bind,
            **self.options,
        }


@dataclass(frozen=True)
class Units:
    """The systemd template unit of a stack's instances and the files it reads (``%i``: the instance)."""

    unit: str
    unit_runtime_directory: str
    env_file: str
    unit_config_file: str | None


@dataclass(frozen=True)
class Start:
    """What an instance's start command is made of (:meth:`~benchstack.kinds.servers.ServerKind.command`):
    the server section, its units and files, the app's folder and entry file, and whether the server listens
    on the stack's port itself (no front)."""

    server: ServerSpec
    units: Units
    app_dir: str
    app_entry: str | None
    direct: bool

    def option(self, name: str) -> Any:
        """The server option ``name`` (with its default)."""
        return self.server.options[name]


@dataclass(frozen=True)
class Server:
    """A resolved ``server`` section: the section as written with everything the app_server role prints."""

    spec: ServerSpec
    protocol: str
    upstream_keepalive: bool
    units: Units
    # The unit's ExecStart (with %i and the host's placeholders).
    command: str
    reload_signal: str | None
    config_template: str | None
    # (file of the app_server role, where it goes).
    helper_files: tuple[tuple[str, str], ...]
    # The stack's env file, as names and values and as its lines.
    environment: Mapping[str, str]
    env_file_lines: tuple[str, ...]

    @property
    def kind(self) -> str:
        return self.spec.kind

    def as_dict(self) -> dict[str, Any]:
        """The section as the plan holds it (``stacks[].server``): a dict of its own."""
        fields = {
            **self.spec.fields(),
            "protocol": self.protocol,
            "upstream_keepalive": self.upstream_keepalive,
            "unit": self.units.unit,
            "unit_runtime_directory": self.units.unit_runtime_directory,
            "env_file": self.units.env_file,
            "unit_config_file": self.units.unit_config_file,
            "exec": self.command,
            "reload_signal": self.reload_signal,
            "config_template": self.config_template,
            "helper_files": [{"src": src, "dest": dest} for src, dest in self.helper_files],
            "environment": dict(self.environment),
            "env_file_lines": list(self.env_file_lines),
        }
        return ordered(self.spec.written, fields)
