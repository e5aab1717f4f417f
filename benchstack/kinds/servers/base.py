"""What the rest of bench-stack asks an app server kind's adapter (:mod:`benchstack.kinds.servers`).

One adapter per kind holds everything that differs between app servers: the runtime and the app interface it
serves (every app kind of that interface, :mod:`benchstack.kinds.apps`), the binds it listens on and how it is
told where (command-line arguments or a config file), the protocol it speaks to a front, its typed
``server.*`` options and their cross-checks, the gems, Python packages and Perl modules the runtime roles
install for it, the processes it keeps running, and its full start command.

The start command is computed here, once per run, into the plan (``server.exec``); the app_server role's unit
template prints it. What only a target knows - where its Ruby, Perl, venv or php-fpm live, whether a user's
app came with a Gemfile, the role's own tuning variables - is named in the command by a placeholder
(``{ruby_bin}``, :data:`HOST_VALUES`), which the role fills from its variables (the filter
``bench_server_command``, :func:`host_command`). One plan serves every target of a run, and targets of one
run may differ (a Debian and a RedHat target, a system and an rbenv Ruby): so those values stay the host's.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from benchstack.kinds.servers.section import Server, Start
from benchstack.kinds.stackfields import TypedOption

WORKERS: TypedOption = (int, 1, 64, 2)
MAX_REQUESTS: TypedOption = (int, 0, 10_000_000, 0)
BINDS = ("unix", "tcp")
# What an instance started from a unit with listen arguments appends: its line of the stack's env file.
LISTEN = "$BENCH_LISTEN_%i"

# The placeholders a start command may hold, and what the app_server role puts there (its
# ``__app_server_host_values``, from its variables and the runtime roles' facts; tests hold the two equal).
HOST_VALUES: dict[str, str] = {
    "ruby_bin": "folder of the stack's Ruby (its rbenv version, else the default Ruby)",
    "ruby_run": "{ruby_bin}/, or {ruby_bin}/bundle exec  for a user's app with a Gemfile",
    "perl_bin": "folder of perl, starman and start_server (app_server_perl_bin_dir)",
    "perl_lib": "folder of bench-stack's Perl modules (app_server_perl_lib_dir)",
    "ruby_lib": "folder of bench-stack's Ruby files (app_server_ruby_lib_dir)",
    "python_bin": "folder of the venv's executables (app_server_python_bin_dir)",
    "php_fpm": "the php-fpm executable (app_server_php_fpm_bin)",
    "keepalive_timeout": "idle keep-alive seconds (app_server_keepalive_timeout)",
    "max_persistent_conns": "thin's keep-alive connections per process (app_server_max_persistent_conns)",
    "starlet_kill_old_delay": "start_server's --kill-old-delay (app_server_starlet_kill_old_delay)",
    "starlet_handler": "the Starlet Rack handler the stack's Ruby has (found on the host)",
}
PLACEHOLDER_RE = re.compile(r"\{([a-z_]+)\}")


def host_command(command: str, values: Mapping[str, object]) -> str:
    """``command`` (a plan's ``server.exec``) with each ``{placeholder}`` replaced by the host's value;
    ValueError naming the placeholders ``values`` lacks."""
    missing = sorted({name for name in PLACEHOLDER_RE.findall(command) if name not in values})
    if missing:
        raise ValueError(f"no host value for {', '.join(missing)} in the start command {command!r}")
    return PLACEHOLDER_RE.sub(lambda m: str(values[m.group(1)]), command)


class ServerKind(ABC):
    """An app server kind. Subclasses set the class attributes and implement :meth:`command`; the registry
    holds one instance of each."""

    name: ClassVar[str]
    # Where messages, the schemas' enums and the docs list it: the registry sorts its kinds by it, each
    # kind its own number.
    order: ClassVar[int]
    # The runtime it runs on (ruby, python, perl, php) and the interface of the apps it serves (rack, psgi,
    # wsgi, asgi, php): it serves every app kind of that interface (AppKind.interface).
    runtime: ClassVar[str]
    interface: ClassVar[str]
    # Where it can listen; the first is the default behind a front.
    binds: ClassVar[tuple[str, ...]] = BINDS
    # What it speaks to a front: http, or fastcgi (it then needs a front, and only nginx speaks it).
    protocol: ClassVar[str] = "http"
    # Whether a front should keep idle connections to it: only servers that keep connections open longer
    # than the front's pool timeout qualify (docs/upstream-notes.md).
    upstream_keepalive: ClassVar[bool] = False
    # Its typed server.* options, beside kind, instances, bind and port_base.
    options: ClassVar[dict[str, TypedOption]] = {}
    # How an instance is told where to listen: command-line arguments per bind (the env file's
    # $BENCH_LISTEN_i), formatted with the endpoint ({socket}, {host}, {port}) ...
    listen: ClassVar[dict[str, str]] = {}
    # ... or a config file per instance: its name's ending, which is also its template's
    # (roles/app_server/templates/<config>.j2), and the listen value the template prints.
    config: ClassVar[str | None] = None
    config_listen: ClassVar[dict[str, str]] = {}
    # The signal `systemctl reload` sends the main process for a hot restart (None: no ExecReload).
    reload_signal: ClassVar[str | None] = None
    # Short notes on options, shown beside their default in the docs' server table (docs/experiment.md).
    option_notes: ClassVar[dict[str, str]] = {}
    # What the runtime roles install for it: gems (ruby role), Python packages (python role's venv), Perl
    # modules as CPAN distributions (perl role).
    gems: ClassVar[tuple[str, ...]] = ()
    pip: ClassVar[tuple[str, ...]] = ()
    perl: ClassVar[tuple[str, ...]] = ()
    # Where each comes from, per OS family: gem or Perl distribution -> the distribution's package for the
    # system runtime (roles/<runtime>/vars/<family>.yml); one not listed is built (`gem install`, CPAN).
    packages: ClassVar[dict[str, dict[str, str]]] = {}
    # Its gems (and their dependencies) that compile C on `gem install`: the ruby role installs a compiler.
    native_gems: ClassVar[tuple[str, ...]] = ()
    # pip constraints: the version of each of ``pip`` and of every package pip installs with them (the python
    # role's default python_constraints).
    pins: ClassVar[tuple[str, ...]] = ()
    # OS packages whose version run.json records besides ``packages``' (the host role's fingerprint).
    fingerprint: ClassVar[tuple[str, ...]] = ()
    # Files of the app_server role (roles/app_server/files/) its instances load -> where the role installs
    # them, under a folder of HOST_VALUES ({perl_lib}, {ruby_lib}); a change restarts the instances.
    helper_files: ClassVar[dict[str, str]] = {}

    @property
    def bundle_gems(self) -> tuple[str, ...]:
        """The gems a user's app's bundle must have, as its server runs through ``bundle exec``."""
        return self.gems

    @property
    def config_template(self) -> str | None:
        """The app_server role's template of an instance's config file."""
        return f"{self.config}.j2" if self.config else None

    def option_problems(self, options: Mapping[str, Any]) -> list[tuple[str, str]]:
        """(field, message) for what is wrong between the server's typed options, which each are valid
        alone (filled in with their defaults)."""
        return []

    def processes(self, server: Mapping[str, Any]) -> int:
        """The processes one instance keeps running: one, or a master and its workers."""
        workers = server.get("workers") or 0
        return 1 if workers == 0 else 1 + workers

    @abstractmethod
    def command(self, start: Start) -> str:
        """The full start command of a stack's instances (the unit's ``ExecStart``) from its server section,
        units and app (``start``), one line, with ``%i`` for the instance and :data:`HOST_VALUES`
        placeholders for what the host decides."""

    def resolve(
        self, start: Start, environment: Mapping[str, str], env_file_lines: tuple[str, ...]
    ) -> Server:
        """The resolved server section: ``start``'s section and units, what the kind says (protocol, kept
        upstream connections, start command, reload signal, config template, the helper files the app_server
        role writes) and the stack's env file."""
        return Server(
            spec=start.server,
            protocol=self.protocol,
            upstream_keepalive=self.upstream_keepalive,
            units=start.units,
            command=self.command(start),
            reload_signal=self.reload_signal,
            config_template=self.config_template,
            helper_files=tuple(self.helper_files.items()),
            environment=environment,
            env_file_lines=env_file_lines,
        )
