"""Folders bench-stack must never take as its own: a root, a results folder or a folder a role writes
into, given as ``/etc`` by a slip, would put bench-stack's files among the system's (and a role may hand
its folders to the benchmark user)."""

from __future__ import annotations

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
# Kernel file systems: nothing of a benchmark lives there.
NEVER_UNDER = ("/proc/", "/sys/", "/dev/", "/boot/")


def system_folder_problem(value: Any, least_depth: int = 2) -> str | None:
    """Why the absolute path ``value`` cannot be a folder of bench-stack's own, or None: not a system
    folder (:data:`SYSTEM_FOLDERS`), not under a kernel file system, at least ``least_depth`` levels deep
    (a host's roots: 2, so ``/tmp`` or ``/srv`` alone are refused)."""
    path = PurePosixPath(str(value))
    norm = str(path)
    if norm in SYSTEM_FOLDERS or (norm + "/").startswith(NEVER_UNDER) or len(path.parts) <= least_depth:
        deep = f"at least {least_depth} levels deep and " if least_depth > 1 else ""
        return (
            f"must be a folder of its own, {deep}not a system folder (/etc, /usr/bin, /var/lib, /etc/nginx, "
            f"...), not {shown(value)}"
        )
    return None


def control_character_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a path on the controller, or None: no control characters (a newline)."""
    if not isinstance(value, str) or not value or any(ord(c) < 32 or ord(c) == 127 for c in value):
        return f"must be a path without control characters (a newline), not {shown(value)}"
    return None
