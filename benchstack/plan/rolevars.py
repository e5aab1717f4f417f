"""What each role variable may hold, for the place it lands in on a host.

``meta/argument_specs.yml`` checks types and choices, and has no patterns: ``"0\\nExecStartPre=..."`` is a
string, and in a unit file it is a second directive; ``"auto; worker_priority -5"`` passed ``nginx -t``.
So every role variable that is not a bool or a choice gets one check here, for its context (a CPU list,
a user name, a path in a config, a URL, a version, a number's range...), and the plan (``bench_plan``)
applies it to every role variable the inventory or ``-e`` sets, before any host is touched. A unit test
walks every role's argument_specs: a new variable that is neither a bool nor a choice, without a check
here, fails it.

Role defaults are the project's own and are not checked; what the plan hands the roles (the stacks, the
apps, the env lines) was checked when the plan was compiled, so setting it outside the plan is refused.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable
from typing import Any

from benchstack.common.inputs import InputError, read_bounded, shown
from benchstack.common.paths import (
    control_character_problem,
    controller_folder_problem,
    foreign_tree,
    system_folder_problem,
)
from benchstack.kinds.stackfields import safe_path_problem

Check = Callable[[Any], str | None]

_NAME_RE = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")  # a user or group (useradd's portable names)
_VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+~-]{0,127}$")  # a version, tag, branch or commit
_CPUS_RE = re.compile(r"^(?:\d{1,4}(?:-\d{1,4})?)(?:,\d{1,4}(?:-\d{1,4})?)*$")
_URL_RE = re.compile(r"^(?:https?|file|git|ssh)://[A-Za-z0-9._~:/?#\[\]@!&()*+,=%-]+$")
_HOST_RE = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*\.?$"
)
_PACKAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+:-]{0,127}$")  # an apt/dnf package, a gem, a CPAN dist
_REQUIREMENT_RE = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(?:\[[A-Za-z0-9,._-]+\])?(?:[=<>!~]=?[A-Za-z0-9.*+!_-]+)?$"
)
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
# Options handed to configure or make through the environment: words, never a quote, '$', ';' or newline.
_WORDS_RE = re.compile(r"^[A-Za-z0-9_=+.,:/@%-]+(?: [A-Za-z0-9_=+.,:/@%-]+)*$")
_SYSCTL_RE = re.compile(r"^[a-z0-9_]+(?:[./][a-z0-9_-]+)+$")
_SYSCTL_VALUE_RE = re.compile(r"^[A-Za-z0-9_.-]+(?:[ \t][A-Za-z0-9_.-]+)*$")
_GOVERNOR_RE = re.compile(r"^[a-z]{1,32}$")
_HANDLER_RE = re.compile(r"^[A-Za-z0-9 _.,()'-]{1,200}$")
_BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")  # S3's bucket naming rules
_KEY_PREFIX_RE = re.compile(r"^[A-Za-z0-9!_.*'()/-]{0,512}$")  # S3's safe key characters
_REGION_RE = re.compile(r"^[a-z]{2}(?:-[a-z0-9]+){1,4}$")
_AWS_KEY_RE = re.compile(r"^[A-Za-z0-9/+=_.-]{1,256}$")  # a line of an environment file: no space or newline
NOFILE_MAX = 1_048_576  # Linux's default fs.nr_open: no process may have a higher open-files limit


def _pattern(regex: re.Pattern[str], what: str, empty: bool = False) -> Check:
    def check(value: Any) -> str | None:
        if empty and value == "":
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return f"must be {what}, not {shown(value)}"
        if not regex.fullmatch(str(value)):
            return f"must be {what}, not {shown(value)}"
        return None

    return check


def _path(value: Any) -> str | None:
    return safe_path_problem(value)


def own_folder_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a folder bench-stack owns and writes into on a host, or None: a safe path (as
    in a config file) and a folder of its own (:func:`benchstack.common.paths.system_folder_problem`)."""
    return safe_path_problem(value) or system_folder_problem(value)


def _optional(check: Check) -> Check:
    return lambda value: None if value in ("", None) else check(value)


def _each(check: Check) -> Check:
    def each(value: Any) -> str | None:
        if not isinstance(value, list):
            return f"must be a list, not {shown(value)}"
        for i, item in enumerate(value):
            problem = check(item)
            if problem:
                return f"[{i}] {problem}"
        return None

    return each


def _mapping(key: Check, item: Check) -> Check:
    def mapping(value: Any) -> str | None:
        if not isinstance(value, dict):
            return f"must be a mapping, not {shown(value)}"
        for k, v in value.items():
            problem = key(k)
            if problem:
                return f"key {problem}"
            problem = item(v)
            if problem:
                return f"[{shown(k)}] {problem}"
        return None

    return mapping


def _address(value: Any) -> str | None:
    try:
        ipaddress.ip_address(str(value))
    except ValueError:
        return f"must be an IP address, not {shown(value)}"
    return None


def _worker_processes(value: Any) -> str | None:
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 1024):
        return None
    # ASCII digits only: "²" is a digit to isdigit() and not to int(), "١" is one to both and not to nginx.
    if isinstance(value, str) and value.isascii() and value.isdigit() and 1 <= int(value) <= 1024:
        return None
    return f"must be auto or a number of processes from 1 to 1024, not {shown(value)}"


def _range(low: float, high: float, what: str, kind: type = int) -> Check:
    """A number from ``low`` to ``high``: typed variables reach a config as they are (``keepalive -1;``,
    ``LimitNOFILE=0``) and argument_specs have no ranges. ``kind`` float takes an int too."""
    kinds = (int, float) if kind is float else (int,)

    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
            return f"must be {what} from {low:_} to {high:_}, not {shown(value)}"
        return None

    return check


def _tarball(value: Any) -> str | None:
    if not isinstance(value, dict) or set(value) - {"url", "sha256"} or "url" not in value:
        return f"must be a mapping with url and sha256, not {shown(value)}"
    return URL(value["url"]) or _optional(SHA256)(value.get("sha256", ""))


def _hosts_entry(value: Any) -> str | None:
    if not isinstance(value, dict) or set(value) != {"name", "address"}:
        return f"must be a mapping of name and address, not {shown(value)}"
    return HOST(value["name"]) or _address(value["address"])


# The sysctls host_tuned_sysctls may set (the host role writes them to a drop-in and applies them at
# once), each with how many numbers it takes and their bounds. Any other is refused, and so is a value out
# of bounds: vm.nr_hugepages 999999 would pin 2 TB of memory; a port range down to 1 takes the ports of
# the host's services; a somaxconn of 0 drops every connection. Network queues and buffers: what a web
# benchmark tunes (docs/hosts.md, What bench-stack changes on a host).
SYSCTL_BOUNDS: dict[str, tuple[int, int, int]] = {
    "net.core.somaxconn": (1, 128, 65_535),
    "net.core.netdev_max_backlog": (1, 128, 262_144),
    "net.core.rmem_default": (1, 4_096, 67_108_864),
    "net.core.rmem_max": (1, 4_096, 67_108_864),
    "net.core.wmem_default": (1, 4_096, 67_108_864),
    "net.core.wmem_max": (1, 4_096, 67_108_864),
    "net.ipv4.tcp_max_syn_backlog": (1, 128, 262_144),
    "net.ipv4.tcp_fin_timeout": (1, 1, 120),
    "net.ipv4.tcp_tw_reuse": (1, 0, 2),
    "net.ipv4.tcp_slow_start_after_idle": (1, 0, 1),
    "net.ipv4.tcp_max_tw_buckets": (1, 1_024, 2_000_000),
    "net.ipv4.tcp_rmem": (3, 4_096, 67_108_864),
    "net.ipv4.tcp_wmem": (3, 4_096, 67_108_864),
    # From the first port above the system's to the last: the low end never below 1024.
    "net.ipv4.ip_local_port_range": (2, 1_024, 65_535),
    "fs.file-max": (1, 65_536, 100_000_000),
    "vm.swappiness": (1, 0, 100),
}


def _tuned_sysctl(name: str, value: Any) -> str | None:
    """Why ``value`` cannot be set for the sysctl ``name`` by the host role, or None (:data:`SYSCTL_BOUNDS`:
    numbers within bounds, a range's or buffer triple's in order)."""
    if name not in SYSCTL_BOUNDS:
        return (
            f"is not a sysctl bench-stack sets (it sets only {', '.join(sorted(SYSCTL_BOUNDS))}, within "
            "bounds: docs/hosts.md)"
        )
    count, low, high = SYSCTL_BOUNDS[name]
    words = str(value).split() if isinstance(value, str | int) and not isinstance(value, bool) else []
    if len(words) != count or not all(w.isascii() and w.isdigit() and len(w) < 12 for w in words):
        what = "a number" if count == 1 else f"{count} numbers separated by spaces"
        return f"must be {what} from {low:_} to {high:_}, not {shown(value)}"
    numbers = [int(w) for w in words]
    if not all(low <= n <= high for n in numbers) or numbers != sorted(numbers):
        what = "a number" if count == 1 else f"{count} numbers in increasing order"
        return f"must be {what} from {low:_} to {high:_}, not {shown(value)}"
    if count == 2 and numbers[0] == numbers[1]:
        return f"must be a range of more than one port, not {shown(value)}"
    return None


def _tuned_sysctls(value: Any) -> str | None:
    problem = _mapping(
        _pattern(_SYSCTL_RE, "a sysctl name such as net.core.somaxconn"),
        _pattern(_SYSCTL_VALUE_RE, "a sysctl value (numbers or words separated by spaces)"),
    )(value)
    if problem:
        return problem
    for name, item in value.items():
        problem = _tuned_sysctl(name, item)
        if problem:
            return f"[{shown(name)}] {problem}"
    return None


# Files that hold the controller's secrets, refused by path before a byte is read (a folder: anything in
# it). The python role copies python_pip_ca_bundle_src to every target: /etc/shadow was copied (issue 44).
SECRET_FILES = (
    *("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d"),
    *("/etc/ssh", "/etc/ssl/private", "/etc/pki/tls/private", "/root", "/proc", "/sys", "/dev"),
)
MAX_CA_BUNDLE_BYTES = 1024 * 1024  # a system's whole trust store is about 220 kB
_PEM_CERTIFICATE = b"-----BEGIN CERTIFICATE-----"


def _ca_bundle(value: Any) -> str | None:
    """Why ``value`` cannot be the CA bundle the python role copies from the controller to the targets, or
    None: a readable regular file (links followed) of PEM certificates, at most 1 MiB, that is not one of
    the controller's secret files (:data:`SECRET_FILES`, a folder of keys) and holds no private key. Its
    content is never quoted."""
    problem = control_character_problem(value)
    if problem:
        return problem
    real = os.path.realpath(os.path.expanduser(value))
    secret = next(
        (f for f in SECRET_FILES if real == f or real.startswith(f + "/")),
        foreign_tree(real, ()),
    )
    if secret:
        return f"must be a CA bundle, not a file of the controller's secrets ({secret}): {shown(value)}"
    try:
        data = read_bounded(real, MAX_CA_BUNDLE_BYTES)
    except InputError as exc:
        return f"must be a readable CA bundle file on the controller: {shown(value)}: {exc}"
    if _PEM_CERTIFICATE not in data or b"PRIVATE KEY" in data:
        return (
            f"must be a CA bundle: PEM certificates ({_PEM_CERTIFICATE.decode()}) and no private key, "
            f"which {shown(value)} is not"
        )
    return None


def _plan_set(_value: Any) -> str | None:
    return (
        "is set by the run's plan from the experiment, which is checked there (playbooks/vars/roles.yml): "
        "change the experiment instead"
    )


NAME = _pattern(_NAME_RE, "a user or group name (a-z, 0-9, '_', '-'; at most 32)")

# Groups whose members hold power a benchmark's processes must not have, by name on the distributions
# bench-stack provisions (Debian, Ubuntu, RHEL, Amazon Linux): administration (root, sudo, wheel, admin,
# staff, sys, bin, daemon, operator, lpadmin), secrets and logs (shadow, adm, systemd-journal, utmp,
# ssl-cert), devices and the machine (disk, kmem, mem, tty, dialout, input, video, render, kvm, audio, lp,
# cdrom, floppy, tape), containers and VMs (docker, podman, lxd, libvirt, incus-admin). On the host, every
# existing group with a gid below 1000 that bench-stack did not create is refused too
# (benchstack.provision.accounts).
PRIVILEGED_GROUPS = frozenset(
    "root sudo wheel admin staff sys bin daemon operator lpadmin shadow adm systemd-journal utmp ssl-cert "
    "disk kmem mem tty dialout input video render kvm audio lp cdrom floppy tape docker podman lxd libvirt "
    "incus-admin".split()
)
# Accounts the benchmark's processes must never run as, nor the host role rewrite.
PRIVILEGED_USERS = frozenset({"root"})


def _unprivileged(check: Check, names: frozenset[str], what: str) -> Check:
    def unprivileged(value: Any) -> str | None:
        problem = check(value)
        if problem is None and str(value) in names:
            return f"must not be a privileged {what} such as {shown(value)}: choose another name"
        return problem

    return unprivileged


GROUP = _unprivileged(NAME, PRIVILEGED_GROUPS, "group")
USER = _unprivileged(NAME, PRIVILEGED_USERS, "account")
VERSION = _pattern(_VERSION_RE, "a version, tag or commit (letters, digits, '.', '_', '+', '~', '-')")
CPUS = _pattern(_CPUS_RE, "a CPU list such as 1 or 2-3 or 0,2 (empty: any CPU)", empty=True)
URL = _pattern(_URL_RE, "an http(s), file, git or ssh URL without spaces, quotes, ';', '$' or braces")
HOST = _pattern(_HOST_RE, "a host name (letters, digits, '-' and '.')")
PACKAGE = _pattern(_PACKAGE_RE, "a package name (letters, digits, '.', '_', '+', ':', '-')")
REQUIREMENT = _pattern(_REQUIREMENT_RE, "a requirement such as name==1.2 (no spaces, quotes or ';')")
SHA256 = _pattern(_SHA256_RE, "64 lower-case hex digits")
WORDS = _pattern(
    _WORDS_RE, "options separated by single spaces, without quotes, '$', ';' or newlines", empty=True
)
PATH = _path
FOLDER = own_folder_problem
CONTROLLER_FOLDER = controller_folder_problem
PATHS = _each(_path)

# Variable -> its check. ``None``: free text on purpose (the reason beside it).
CHECKS: dict[str, Check | None] = {
    # apache: the virtual hosts' ServerName, a drop-in's CPUAffinity=, a build from git.
    "apache_stacks": _plan_set,
    "apache_server_name": HOST,
    # Extra lines for the main config: configuration on purpose, checked by apachectl configtest before any
    # reload (the role's handler), like the rest of the config.
    "apache_extra_config": None,
    "apache_mod_mruby_repo": URL,
    "apache_mod_mruby_version": VERSION,
    "apache_mod_mruby_build_dir": FOLDER,
    "apache_cpu_affinity": CPUS,
    # app
    "webapp_kinds": _plan_set,
    "webapp_root": FOLDER,
    "webapp_group": GROUP,
    "webapp_user_apps": _plan_set,
    "webapp_user_git_repos": _plan_set,
    "webapp_ruby_bin_dir": PATH,
    "webapp_ruby_bin_dirs": _mapping(VERSION, PATH),
    "webapp_gem_source": URL,
    "webapp_python_venv": FOLDER,
    "webapp_pip_index_url": _optional(URL),
    "webapp_pip_ca_bundle": _optional(PATH),
    # app_server: unit files (User=, CPUAffinity=, ExecStart= paths), env files, server configs.
    "app_server_stacks": _plan_set,
    "app_server_env_lines": _plan_set,
    "app_server_user": USER,
    "app_server_group": GROUP,
    "app_server_changed_apps": PATHS,
    "app_server_bundled_apps": PATHS,
    "app_server_cpu_affinity": CPUS,
    "app_server_ruby_bin_dir": PATH,
    "app_server_ruby_bin_dirs": _mapping(VERSION, PATH),
    "app_server_python_bin_dir": PATH,
    "app_server_perl_bin_dir": PATH,
    "app_server_starlet_gem_version": _optional(VERSION),
    "app_server_perl_lib_dir": FOLDER,
    "app_server_ruby_lib_dir": FOLDER,
    "app_server_php_fpm_bin": PATH,
    # Numbers: LimitNOFILE=, puma.rb, the start commands' options (thin, Starman, start_server).
    "app_server_nofile": _range(1024, NOFILE_MAX, "a number of open files"),
    "app_server_max_persistent_conns": _range(1, 100_000, "a number of connections"),
    "app_server_keepalive_timeout": _range(1, 3600, "a number of seconds"),
    "app_server_starlet_kill_old_delay": _range(0, 3600, "a number of seconds"),
    # host: the benchmark user, its folders, sysctls, the CPU governor, the fingerprint.
    "host_extra_packages": _each(PACKAGE),
    "host_fingerprint_sysctls": _each(_pattern(_SYSCTL_RE, "a sysctl name such as net.core.somaxconn")),
    "host_fingerprint_packages": _each(PACKAGE),
    "host_fingerprint_config_files": PATHS,
    "host_tuning_dir": FOLDER,
    "host_fingerprint_app_records": PATHS,
    "host_fingerprint_runtime_dirs": PATHS,
    "host_cpu_split": _plan_set,
    # The benchmark account: never a privileged one (on the host, never an existing account bench-stack did
    # not create, unless host_adopt_user: benchstack.provision.accounts).
    "host_user": USER,
    "host_group": GROUP,
    "host_home": FOLDER,
    "host_dirs": _each(FOLDER),
    "host_tuned_sysctls": _tuned_sysctls,
    "host_cpu_governor": _pattern(_GOVERNOR_RE, "a cpufreq governor such as performance", empty=True),
    "host_nofile": _range(1024, NOFILE_MAX, "a number of open files"),
    "host_cache_valid_time": _range(0, 30 * 86_400, "a number of seconds"),
    # build_archive: an internal role the runtimes include with their own values.
    "build_archive_version": VERSION,
    "build_archive_root": FOLDER,
    "build_archive_probe": _pattern(re.compile(r"^[A-Za-z0-9._/-]{1,200}$"), "a path below the prefix"),
    "build_archive_configure_opts": WORDS,
    "build_archive_owner": NAME,
    "build_archive_group": GROUP,
    "build_archive_marker_dir": FOLDER,
    # The archive folders are the controller's (fetched into, read from): the rule of the results folder.
    "build_archive_dir": _optional(CONTROLLER_FOLDER),
    "build_archive_notify": _each(_pattern(_HANDLER_RE, "a handler's name")),
    # dns_check: /etc/hosts lines, an unbound and a dnsmasq-like probe's configs, probe scripts.
    "dns_check_names": _each(HOST),
    "dns_check_stack_names": _each(HOST),
    "dns_check_hosts_entries": _each(_hosts_entry),
    "dns_check_probe_zone": HOST,
    "dns_check_probe_dns_address": _address,
    "dns_check_probe_unbound_address": _address,
    "dns_check_probe_user": USER,
    "dns_check_probe_ruby": PATH,
    "dns_check_probe_python": PATH,
    "dns_check_probe_perl": PATH,
    "dns_check_probe_php": PATH,
    "dns_check_probe_http_port": _range(1024, 65535, "a port (the probe runs unprivileged)"),
    "dns_check_probe_requests": _range(1, 1000, "a number of requests"),
    "dns_check_timeout_s": _range(0.1, 600, "a number of seconds", float),
    "dns_check_probe_dir": FOLDER,
    "dns_check_probe_config_dir": FOLDER,
    "dns_check_probe_log_dir": FOLDER,
    "dns_check_probe_state_dir": FOLDER,
    # loadgen
    "loadgen_wrk_version": VERSION,
    "loadgen_wrk_source_url": URL,
    "loadgen_wrk_source_sha256": SHA256,
    "loadgen_build_dir": FOLDER,
    # log_shipper: gem install, the unit's User=, fluentd.conf's paths and S3 settings, its environment file.
    "log_shipper_fluentd_version": VERSION,
    "log_shipper_s3_plugin_version": VERSION,
    "log_shipper_gem_source": _optional(URL),
    "log_shipper_user": USER,
    "log_shipper_group": GROUP,
    "log_shipper_access_logs": _mapping(_pattern(re.compile(r"^(?:nginx|apache)$"), "nginx or apache"), PATH),
    "log_shipper_conf_dir": FOLDER,
    "log_shipper_state_dir": FOLDER,
    # Empty by default: the role refuses to run without one (its tasks/validate.yml).
    "log_shipper_s3_bucket": _pattern(
        _BUCKET_RE, "an S3 bucket name (a-z, 0-9, '.', '-'; 3 to 63)", empty=True
    ),
    "log_shipper_s3_prefix": _pattern(_KEY_PREFIX_RE, "an S3 key prefix (letters, digits, '/', '!_.*()'-')"),
    "log_shipper_s3_endpoint": _optional(URL),
    "log_shipper_s3_region": _pattern(_REGION_RE, "an AWS region such as us-east-1"),
    "log_shipper_aws_access_key_id": _pattern(_AWS_KEY_RE, "an access key (no spaces or quotes)", empty=True),
    "log_shipper_aws_secret_access_key": _pattern(
        _AWS_KEY_RE, "a secret key (no spaces or quotes)", empty=True
    ),
    "log_shipper_timekey": _range(1, 86_400, "a number of seconds"),
    "log_shipper_timekey_wait": _range(0, 3600, "a number of seconds"),
    # nginx: nginx.conf's main context, the CPU drop-in.
    "nginx_stacks": _plan_set,
    "nginx_worker_processes": _worker_processes,
    "nginx_cpu_affinity": CPUS,
    "nginx_worker_connections": _range(1, NOFILE_MAX, "a number of connections"),
    "nginx_worker_rlimit_nofile": _range(1024, NOFILE_MAX, "a number of open files"),
    "nginx_upstream_keepalive": _range(1, 100_000, "a number of connections"),
    "nginx_upstream_keepalive_timeout": _range(1, 3600, "a number of seconds"),
    # perl, python, ruby: package lists, versions, sources, build options, folders.
    "perl_modules": _each(PACKAGE),
    "python_venv": FOLDER,
    "python_packages": _each(PACKAGE),
    "python_constraints": _each(REQUIREMENT),
    "python_pip_index_url": _optional(URL),
    "python_pip_ca_bundle_src": _optional(_ca_bundle),
    "python_pyenv_git_url": URL,
    "python_pyenv_git_ref": VERSION,
    "python_pyenv_versions": _each(VERSION),
    "python_pyenv_global": _optional(VERSION),
    "python_pyenv_root": FOLDER,
    "python_pyenv_owner": NAME,
    "python_pyenv_group": GROUP,
    "python_pyenv_users": _each(USER),
    "python_pyenv_configure_opts": WORDS,
    "python_pyenv_make_opts": WORDS,
    "python_pyenv_mirror_url": _optional(URL),
    "python_pyenv_definitions_dir": _optional(PATH),
    "python_pyenv_archive_dir": _optional(CONTROLLER_FOLDER),
    "python_pyenv_tarballs": _mapping(VERSION, _tarball),
    "ruby_gems": _each(PACKAGE),
    "ruby_gem_versions": _mapping(PACKAGE, VERSION),
    "ruby_gem_source": URL,
    "ruby_rbenv_git_url": URL,
    "ruby_rbenv_git_ref": VERSION,
    "ruby_rbenv_ruby_build_git_url": URL,
    "ruby_rbenv_ruby_build_git_ref": VERSION,
    "ruby_rbenv_versions": _each(VERSION),
    "ruby_rbenv_global": _optional(VERSION),
    "ruby_stack_versions": _plan_set,
    "ruby_rbenv_root": FOLDER,
    "ruby_rbenv_owner": NAME,
    "ruby_rbenv_group": GROUP,
    "ruby_rbenv_users": _each(USER),
    "ruby_rbenv_configure_opts": WORDS,
    "ruby_rbenv_make_opts": WORDS,
    "ruby_rbenv_tarballs": _mapping(VERSION, _tarball),
    "ruby_rbenv_definitions_dir": _optional(PATH),
    "ruby_rbenv_archive_dir": _optional(CONTROLLER_FOLDER),
}


# Role variables the run's plan sets from an experiment's ``logs`` (playbooks/vars/roles.yml,
# benchstack.plan.logship), which the roles also take from a user's own playbook: refused from outside in a
# bench-stack run (the play's value would silently win over the inventory's), checked on the host as any
# other.
PLAN_SET_TOO = frozenset(
    {
        "nginx_access_log",
        "apache_access_log",
        "log_shipper_fronts",
        "log_shipper_s3_bucket",
        "log_shipper_s3_prefix",
        "log_shipper_s3_endpoint",
        "log_shipper_s3_region",
        "log_shipper_s3_force_path_style",
    }
)


def plan_sets(name: str) -> bool:
    """Whether the run's plan sets this variable (given from outside, it is refused whatever its value)."""
    return CHECKS.get(name) is _plan_set or name in PLAN_SET_TOO


def plan_only(name: str) -> bool:
    """Whether only the run's plan sets this variable (its value was checked when the plan was compiled, so
    a role's own check leaves it out), unlike :data:`PLAN_SET_TOO`."""
    return CHECKS.get(name) is _plan_set


def plan_set_problem(name: str) -> str:
    """The line that refuses a variable the plan sets, given from outside."""
    return f"{name}: {_plan_set(None)}"


def variable_problems(values: dict[str, Any]) -> list[str]:
    """One line per role variable in ``values`` whose value does not fit where it lands (:data:`CHECKS`).
    Values are quoted through :func:`benchstack.common.inputs.shown`: short and escaped."""
    problems = []
    for name, value in values.items():
        check = CHECKS.get(name)
        if check is None:
            continue
        problem = check(value)
        if problem:
            problems.append(f"{name}: {problem}")
    return problems
