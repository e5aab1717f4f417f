"""Shared testinfra helpers: what each stack of an experiment must answer, derived by the same code the
roles use (benchstack.plan.stacks), so tests and roles cannot disagree about sockets and ports."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchstack.plan.experiment import load_experiment
from benchstack.plan.readers import front_checks as _front_checks
from benchstack.plan.readers import instance_checks as _instance_checks
from benchstack.plan.stacks import Stack, resolve_stacks

PROJECT = Path(__file__).resolve().parents[1]


def experiment_stacks(name: str) -> list[dict[str, Any]]:
    return load_experiment(PROJECT / "experiments" / f"{name}.yml").stacks


def typed(stacks: Sequence[dict[str, Any] | Stack]) -> tuple[Stack, ...]:
    """Stacks as written resolved as the plan resolves them (resolved ones kept)."""
    if all(isinstance(s, Stack) for s in stacks):
        return tuple(s for s in stacks if isinstance(s, Stack))
    return resolve_stacks(list(stacks))


def resolved(stacks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stacks as the plan's fact holds them (what the roles read): stacks as written are resolved, resolved
    ones kept."""
    if all("endpoints" in s for s in stacks):
        return list(stacks)
    return [s.to_dict() for s in typed(stacks)]


def front_checks(stacks: Sequence[dict[str, Any] | Stack], host: str = "127.0.0.1") -> list[dict[str, Any]]:
    """The front checks of stacks as written (or resolved), as the plan's fact holds them, with their path."""
    return [
        {**c, "path": c["url"].split(str(c["url"].split("/")[2]), 1)[1]}
        for c in (check.to_dict() for check in _front_checks(typed(stacks), host))
    ]


def instance_checks(stacks: Sequence[dict[str, Any] | Stack]) -> list[dict[str, Any]]:
    """The instance checks of stacks as written (or resolved), as the plan's fact holds them, with their
    path."""
    return [
        {**c, "path": "/" + c["url"].split("/", 3)[3]}
        for c in (check.to_dict() for check in _instance_checks(typed(stacks)))
    ]


def endpoints(stacks: Sequence[dict[str, Any] | Stack]) -> list[dict[str, Any]]:
    """Every instance of stacks as written (or resolved), as the plan's fact holds it."""
    return [ep.to_dict() for s in typed(stacks) for ep in s.endpoints]


def ask(host: Any, check: dict[str, Any]) -> str:
    """The body a check's server gives on the target, over HTTP (TCP or unix socket) or FastCGI."""
    if check.get("protocol") == "fastcgi":
        fcgi = check["fastcgi"]
        out = host.check_output(
            "REQUEST_METHOD=GET SCRIPT_FILENAME=%s SCRIPT_NAME=/%s REQUEST_URI=%s QUERY_STRING= "
            "cgi-fcgi -bind -connect %s",
            fcgi["script"],
            fcgi["script"].rsplit("/", 1)[1],
            fcgi["uri"],
            fcgi["connect"],
        )
        headers, _, body = out.replace("\r\n", "\n").partition("\n\n")
        assert not headers.startswith("Status:"), headers
        return body
    if check["unix_socket"]:
        return host.check_output(
            "curl -sSf --max-time 10 --unix-socket %s %s", check["unix_socket"], check["url"]
        )
    return host.check_output("curl -sSf --max-time 10 %s", check["url"])


def main_pid(host: Any, unit: str) -> str:
    return host.check_output("systemctl show -p MainPID --value %s", unit)


def users_of(host: Any, pid: str) -> set[str]:
    """Users of a process and all its descendants."""
    out = host.check_output("ps -e -o pid=,ppid=,user=")
    rows = [line.split() for line in out.splitlines()]
    pids, users = {pid}, set()
    changed = True
    while changed:
        changed = False
        for p, pp, _user in rows:
            if pp in pids and p not in pids:
                pids.add(p)
                changed = True
    for p, _, user in rows:
        if p in pids:
            users.add(user)
    return users


def children(host: Any, pid: str) -> list[str]:
    return host.check_output("ps -o pid= --ppid %s", pid).split()


def kill_main_and_wait(host: Any, unit: str, tries: int = 75) -> tuple[str, str]:
    """kill -9 the unit's main process; the new main PID once systemd restarted it (or 'none').

    Waits ``tries`` x 0.2 s for the restart (Restart=on-failure)."""
    before = main_pid(host, unit)
    host.run("kill -9 %s", before)
    after = host.check_output(
        f"for i in $(seq {int(tries)}); do p=$(systemctl show -p MainPID --value %s);"
        ' [ "$p" != 0 ] && [ "$p" != %s ] && systemctl is-active -q %s && echo $p && exit 0;'
        " sleep 0.2; done; echo none",
        unit,
        before,
        unit,
    )
    return before, after


# Files planted in a PHP app's folder: another script and a config with a "secret". A front that serves the
# folder as it is answers with one of the marks; a front controller runs the entry, which answers 404.
PLANTED = {
    "other.php": "<?php echo 'RAN-OTHER'; // SOURCE-OTHER\n",
    "config.ini": "password = SOURCE-CONFIG\n",
    ".env": "SECRET=SOURCE-DOTENV\n",
}
PLANTED_MARKS = ("RAN-OTHER", "SOURCE-")


def planted_answers(host: Any, port: int, app_dir: str) -> dict[str, str]:
    """``status body`` of each planted file's URL on ``port`` (the files are removed again), and of ``/``.
    (testinfra quotes each argument, strings only.)"""
    paths = [f"{app_dir}/{name}" for name in PLANTED]
    try:
        for path, content in zip(paths, PLANTED.values(), strict=True):
            host.run_expect([0], "printf '%%s' %s > %s && chmod 0644 %s", content, path, path)
        answers = {}
        for url_path in ["/", *(f"/{name}" for name in PLANTED)]:
            out = host.check_output(
                "curl -sS --max-time 10 -w '\\n%%{http_code}' %s", f"http://127.0.0.1:{port}{url_path}"
            )
            body, _, status = out.rpartition("\n")
            answers[url_path] = f"{status} {body}"
        return answers
    finally:
        for path in paths:
            host.run("rm -f %s", path)
