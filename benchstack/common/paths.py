"""Folders bench-stack must never take as its own: a root, a results folder or a folder a role writes
into, given as ``/etc`` by a slip, would put bench-stack's files among the system's (and a role may hand
its folders to the benchmark user)."""

from __future__ import annotations

import os
from pathlib import PurePosixPath
from typing import Any

from benchstack.common.inputs import shown

# Folders of the system, and of programs that read every file of a folder: a root or a folder a role owns,
# writes files into or hands to the benchmark user must be one of its own below them, never one of them.
SYSTEM_FOLDERS = frozenset(
    {
        "/",
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/media",
        "/mnt",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/srv",
        "/sys",
        "/usr",
        "/var",
    }
    | {f"/usr/{d}" for d in ("bin", "sbin", "lib", "lib32", "lib64", "libexec", "include", "share", "src")}
    | {"/usr/local", "/usr/local/bin", "/usr/local/sbin", "/usr/local/lib", "/usr/local/share"}
    | {f"/var/{d}" for d in ("lib", "log", "cache", "spool", "tmp", "mail", "opt", "backups", "local", "run")}
    | {
        f"/etc/{d}"
        for d in ("systemd", "systemd/system", "ssh", "ssl", "security", "default", "apt", "pam.d")
    }
    | {f"/etc/{d}" for d in ("nginx", "apache2", "httpd", "php", "init.d", "sudoers.d", "network", "cron.d")}
    | {"/etc/nginx/conf.d", "/etc/httpd/conf.d", "/etc/apache2/conf-enabled", "/etc/apache2/sites-enabled"}
)
# Trees of the kernel and of other programs: nothing bench-stack writes, deletes or hands to the benchmark
# user lies anywhere under them, on the controller or a host (issue 44: bench_results_dir=/etc/ssh/x,
# bench_unit_config_dir=/etc/systemd/network and bench_run_root=/run/systemd were accepted). Each is read
# as a whole by its owner: sshd, systemd, sudo, PAM, cron, the package managers, the loader.
FOREIGN_TREES = (
    *("/proc", "/sys", "/dev", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"),
    *("/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec", "/usr/include"),
    *("/etc/ssh", "/etc/ssl", "/etc/pki", "/etc/systemd", "/etc/sudoers.d", "/etc/pam.d", "/etc/security"),
    *("/etc/cron.d", "/etc/cron.daily", "/etc/cron.hourly", "/etc/network", "/etc/NetworkManager"),
    *("/etc/netplan", "/etc/apt", "/etc/yum.repos.d", "/etc/dnf", "/etc/sysctl.d", "/etc/modprobe.d"),
    *("/etc/udev", "/etc/profile.d", "/etc/ld.so.conf.d", "/etc/init.d", "/etc/default", "/etc/polkit-1"),
    *("/run/systemd", "/run/udev", "/run/dbus", "/run/lock", "/run/sudo", "/run/user", "/run/sshd"),
    *("/var/lib/dpkg", "/var/lib/apt", "/var/lib/rpm", "/var/lib/dnf", "/var/lib/yum", "/var/lib/systemd"),
    *("/var/spool/cron", "/var/log/journal", "/var/cache/apt", "/var/cache/dnf"),
)
# Folders that hold someone's keys wherever they are (~/.ssh, ~/.gnupg ...).
SECRET_FOLDER_NAMES = frozenset({".ssh", ".gnupg", ".aws", ".kube", ".docker"})
# On the controller a run's results are data: besides the trees above, none in /etc or /usr at all.
CONTROLLER_FOREIGN_TREES = (*FOREIGN_TREES, "/etc", "/usr")


def foreign_tree(value: Any, trees: tuple[str, ...] = FOREIGN_TREES) -> str | None:
    """The tree of ``trees`` the absolute path ``value`` is (or lies in), or the folder of keys
    (:data:`SECRET_FOLDER_NAMES`) it lies in, or None."""
    path = PurePosixPath(str(value))
    # Strings, not PurePosixPath.is_relative_to: the same answer for the normalized path (a tree is itself or
    # a prefix ending at a "/"), without a path object per tree (the plan checks every folder field this way).
    text = str(path)
    tree = next((t for t in trees if text == t or text.startswith(t + "/")), None)
    return tree or next((f"a {p} folder" for p in path.parts if p in SECRET_FOLDER_NAMES), None)


def foreign_tree_problem(value: Any, trees: tuple[str, ...] = FOREIGN_TREES) -> str | None:
    """Why the absolute path ``value`` lies where another program (or the kernel) owns everything, or
    None: under one of ``trees``, or inside a folder of keys (:func:`foreign_tree`)."""
    tree = foreign_tree(value, trees)
    if tree is None:
        return None
    return (
        f"must not be in {tree}, which belongs to the system or holds keys (bench-stack writes only folders "
        f"of its own), not {shown(value)}"
    )


def system_folder_problem(value: Any, least_depth: int = 2) -> str | None:
    """Why the absolute path ``value`` cannot be a folder of bench-stack's own, or None: not a system
    folder (:data:`SYSTEM_FOLDERS`), not under a tree of the kernel or another program
    (:func:`foreign_tree_problem`), at least ``least_depth`` levels deep (a host's roots: 2, so ``/tmp`` or
    ``/srv`` alone are refused)."""
    path = PurePosixPath(str(value))
    if str(path) in SYSTEM_FOLDERS or len(path.parts) <= least_depth:
        deep = f"at least {least_depth} levels deep and " if least_depth > 1 else ""
        return (
            f"must be a folder of its own, {deep}not a system folder (/etc, /usr/bin, /var/lib, /etc/nginx, "
            f"...), not {shown(value)}"
        )
    return foreign_tree_problem(value)


def own_root_problem(value: Any) -> str | None:
    """Why ``value``, a folder :func:`system_folder_problem` accepts, cannot be one of the roots a host's
    units read (bench_unit_config_dir, bench_run_root), or None: a part of the path names bench-stack
    (``bench``), so the folder is one bench-stack makes and no other program reads (``/etc/myapp`` would
    pass every other check, as ``/etc/systemd/network`` did)."""
    if not any("bench" in part.lower() for part in PurePosixPath(str(value)).parts[1:]):
        return (
            "must be a folder of bench-stack's own, with 'bench' in its path (such as "
            f"/etc/bench-stack/units or /run/bench-stack), not {shown(value)}"
        )
    return None


def control_character_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a path on the controller, or None: no control characters (a newline)."""
    if not isinstance(value, str) or not value or any(ord(c) < 32 or ord(c) == 127 for c in value):
        return f"must be a path without control characters (a newline), not {shown(value)}"
    return None


def controller_folder_problem(value: Any, need: str = "bench-stack needs a folder of its own") -> str | None:
    """Why ``value`` cannot be a folder bench-stack writes into on the controller (the results folder, the
    runtimes' archive folders ``*_archive_dir``), or None: a path without control characters that, with
    ``~`` expanded and links followed, is not a system folder (:data:`SYSTEM_FOLDERS`, ``/``) nor in one of
    :data:`CONTROLLER_FOREIGN_TREES` (``/etc``, ``/usr``, ``/etc/ssh``, a ``.ssh`` folder ...). ``need`` ends
    the message."""
    problem = control_character_problem(value)
    if problem:
        return problem
    resolved = os.path.realpath(os.path.expanduser(value))
    if resolved in SYSTEM_FOLDERS or resolved == os.path.dirname(resolved):
        return f"{value} ({resolved}) is a system folder: {need}"
    tree = foreign_tree(resolved, CONTROLLER_FOREIGN_TREES)
    if tree:
        return f"{value} ({resolved}) is in {tree}, which bench-stack must not write into: {need}"
    return None
