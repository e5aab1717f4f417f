#!/usr/bin/python
"""Module (runs on the host): ask every stack's endpoints for their expected answers, in one task.

A loop of ``ansible.builtin.uri`` costs one task execution per endpoint on the controller (about a
second each on a loaded 2-core machine; the verify play asked 13 endpoints per host in 63 s). This asks
them all in one execution and retries the failing ones together until a shared deadline, because an
instance that was just (re)started may still be loading its app. HTTP over TCP or a unix socket;
FastCGI servers are asked as a front asks them, through ``cgi-fcgi``.
"""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import time
from typing import Any
from urllib.parse import urlsplit

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: bench_http_check
short_description: Check that every endpoint gives its expected answer, retrying until a deadline
description:
  - >-
    Ask every stack's endpoints for their expected answers in one execution on the host, and ask the failing
    ones again together, every second, until O(retry_for_s) has passed: an instance that was just (re)started
    may still be loading its app.
  - >-
    HTTP over TCP or a unix socket; FastCGI servers are asked as a front asks them, through C(cgi-fcgi).
    Requests name themselves C(bench-stack-verify) in the servers' access logs.
  - Fails naming each endpoint that did not answer as expected, with its unit's last journal lines.
options:
  checks:
    description:
      - Items of the plan's instance_checks or of a loadgen's front_checks in the plan's hosts (stack, via,
        url, unix_socket, body, protocol http or fastcgi, fastcgi connect/script/uri).
    type: list
    elements: dict
    required: true
  timeout_s: {description: Seconds one request may take., type: float, default: 10}
  retry_for_s:
    description: Seconds to keep asking the endpoints that have not answered as expected yet.
    type: float
    default: 15
  journal_lines:
    description: >-
      Lines of a failed check's systemd unit (its C(unit)) journal shown with the failure: a server that
      crash-loops says why only there.
    type: int
    default: 15
notes:
  - Only reads, so it asks the endpoints in check mode too.
"""

EXAMPLES = r"""
- name: Check every stack's instances answer as expected
  bench_http_check:
    checks: "{{ bench_plan.instance_checks }}"
"""

RETURN = r"""
results:
  description: >-
    Per check, in order: stack, via, ok, status (null when no answer), attempts, answer (its first 200
    characters) and error when the request failed.
  type: list
  elements: dict
  returned: always
msg: {description: How many endpoints answered as expected., type: str, returned: success}
failed_count: {description: How many did not., type: int, returned: failed}
journals:
  description: The journal lines of the failed checks' units.
  type: list
  elements: str
  returned: failed
"""

ANSWER_CHARS = 200
# Named in the servers' access logs, so verification requests are told apart from a load tool's (wrk sends
# no User-Agent at all).
USER_AGENT = "bench-stack-verify"


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.unix_path)
        self.sock = sock


def ask_http(check: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    parts = urlsplit(check["url"])
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    conn: http.client.HTTPConnection
    if check.get("unix_socket"):
        conn = UnixHTTPConnection(check["unix_socket"], timeout_s)
    else:
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=timeout_s)
    try:
        conn.request(
            "GET",
            target,
            headers={"Host": parts.netloc or "localhost", "Connection": "close", "User-Agent": USER_AGENT},
        )
        resp = conn.getresponse()
        body = resp.read().decode("utf-8", errors="replace")
        return {"status": resp.status, "answer": body}
    except (OSError, http.client.HTTPException) as exc:
        return {"status": None, "answer": "", "error": f"{type(exc).__name__}: {exc}"}
    finally:
        conn.close()


def split_cgi(stdout: str) -> tuple[str, str]:
    """CGI output: headers, a blank line, the body."""
    head, sep, body = stdout.partition("\r\n\r\n")
    return (head, body) if sep else ("", stdout)


def ask_fastcgi(check: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    fcgi = check["fastcgi"]
    env = dict(os.environ)
    env.update(
        REQUEST_METHOD="GET",
        SCRIPT_FILENAME=fcgi["script"],
        SCRIPT_NAME="/" + os.path.basename(fcgi["script"]),
        REQUEST_URI=fcgi["uri"],
        QUERY_STRING="",
    )
    try:
        proc = subprocess.run(
            ["cgi-fcgi", "-bind", "-connect", fcgi["connect"]],
            env=env,
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"status": None, "answer": "", "error": f"{type(exc).__name__}: {exc}"}
    return judge_cgi(
        proc.returncode, proc.stdout.decode("utf-8", errors="replace"), proc.stderr.decode(errors="replace")
    )


def judge_cgi(returncode: int, stdout: str, stderr: str) -> dict[str, Any]:
    """cgi-fcgi exits 0 even when php-fpm cannot find the script: a Status: header marks that answer."""
    head, body = split_cgi(stdout)
    status_line = next((h for h in head.split("\r\n") if h.lower().startswith("status:")), "")
    if returncode == 0 and not status_line:
        return {"status": 200, "answer": body}
    return {
        "status": None,
        "answer": body,
        "error": f"{status_line or f'cgi-fcgi exit {returncode}'} {stderr}".strip(),
    }


def ask(check: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    if check.get("protocol") == "fastcgi":
        return ask_fastcgi(check, timeout_s)
    return ask_http(check, timeout_s)


def passed(check: dict[str, Any], result: dict[str, Any]) -> bool:
    return result.get("status") == 200 and result.get("answer") == check["body"]


def describe(check: dict[str, Any], result: dict[str, Any]) -> str:
    where = check["fastcgi"]["uri"] if check.get("protocol") == "fastcgi" else check["url"]
    got = result.get("error") or f"status {result.get('status')} {result.get('answer', '')[:ANSWER_CHARS]!r}"
    return (
        f"stack {check['stack']}: {check['via']} GET {where} answered {got}; expected 200 {check['body']!r}"
    )


def unit_journal(unit: str, lines: int, runner: Any = subprocess.run) -> str:
    """The unit's state and last journal lines, for a failure message (empty when systemd cannot say)."""
    try:
        state = runner(
            ["systemctl", "is-active", unit], capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()
        journal = runner(
            ["journalctl", "-u", unit, "-n", str(lines), "--no-pager", "-o", "cat"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout.rstrip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return f"{unit} is {state or 'unknown'}; its last journal lines:\n{journal or '(none)'}"


def run_checks(
    checks: list[dict[str, Any]],
    timeout_s: float,
    retry_for_s: float,
    asker: Any = ask,
    clock: Any = time.monotonic,
    sleep: Any = time.sleep,
) -> list[dict[str, Any]]:
    """Ask every check; ask the failing ones again, every second, until they pass or the deadline passes."""
    deadline = clock() + retry_for_s
    results: list[dict[str, Any]] = [{} for _ in checks]
    attempts = [0] * len(checks)
    pending = list(range(len(checks)))
    while True:
        for i in pending:
            attempts[i] += 1
            results[i] = asker(checks[i], timeout_s)
        pending = [i for i in pending if not passed(checks[i], results[i])]
        if not pending or clock() >= deadline:
            break
        sleep(1)
    return [
        {
            "stack": check["stack"],
            "via": check["via"],
            "ok": passed(check, result),
            "status": result.get("status"),
            "attempts": attempts[i],
            "answer": result.get("answer", "")[:ANSWER_CHARS],
            **({"error": result["error"]} if "error" in result else {}),
        }
        for i, (check, result) in enumerate(zip(checks, results, strict=True))
    ]


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "checks": {"type": "list", "elements": "dict", "required": True},
            "timeout_s": {"type": "float", "default": 10},
            "retry_for_s": {"type": "float", "default": 15},
            "journal_lines": {"type": "int", "default": 15},
        },
        supports_check_mode=True,  # read-only requests
    )
    checks = module.params["checks"]
    for check in checks:
        missing = [k for k in ("stack", "via", "body") if k not in check]
        if check.get("protocol") == "fastcgi":
            missing += [k for k in ("connect", "script", "uri") if k not in check.get("fastcgi", {})]
        elif "url" not in check:
            missing.append("url")
        if missing:
            module.fail_json(msg=f"check {check!r} lacks {', '.join(missing)}")
    results = run_checks(checks, module.params["timeout_s"], module.params["retry_for_s"])
    failures = [describe(c, r) for c, r in zip(checks, results, strict=True) if not r["ok"]]
    if failures:
        units = sorted(
            {c["unit"] for c, r in zip(checks, results, strict=True) if not r["ok"] and c.get("unit")}
        )
        journals = [j for u in units if (j := unit_journal(u, module.params["journal_lines"]))]
        module.fail_json(
            msg="; ".join(failures) + "".join(f"\n{j}" for j in journals),
            results=results,
            failed_count=len(failures),
            journals=journals,
        )
    module.exit_json(changed=False, results=results, msg=f"{len(results)} endpoints answered as expected")


if __name__ == "__main__":
    main()
