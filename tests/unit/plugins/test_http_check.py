"""bench_http_check against real servers on TCP and on a unix socket; cgi-fcgi output split as printed."""

from __future__ import annotations

import http.server
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA
from test_plugins import load_plugin

check_mod = load_plugin("modules", "bench_http_check")


class Hello(http.server.BaseHTTPRequestHandler):
    """/hello/NAME answers like the bundled apps, to a client that names itself as bench-stack's verify."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.headers.get("User-Agent") != "bench-stack-verify":
            body, status = b"who is asking?", 400
        elif self.path.startswith("/hello/"):
            body, status = f"Hello {self.path.rsplit('/', 1)[1]}!".encode(), 200
        else:
            body, status = b"not found", 404
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


class UnixHTTPServer(socketserver.UnixStreamServer):
    def get_request(self) -> Any:
        conn, _ = super().get_request()
        return conn, ("local", 0)


# How often a test server looks for its shutdown: serve_forever's default (0.5 s) was half a second a test.
POLL_S = 0.02


@pytest.fixture
def tcp_port() -> Iterator[int]:
    server = http.server.HTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, args=(POLL_S,), daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def unix_path(tmp_path: Path) -> Iterator[str]:
    path = str(tmp_path / "server.sock")
    server = UnixHTTPServer(path, Hello)
    threading.Thread(target=server.serve_forever, args=(POLL_S,), daemon=True).start()
    yield path
    server.shutdown()
    server.server_close()


def check(url: str, body: str, unix_socket: str | None = None) -> dict[str, Any]:
    return {
        "stack": "s",
        "via": "v",
        "url": url,
        "unix_socket": unix_socket,
        "body": body,
        "protocol": "http",
    }


def no_sleep(_: float) -> None:
    pass


def test_tcp_and_unix_endpoints_that_answer_as_expected_pass_at_the_first_attempt(
    tcp_port: int, unix_path: str
) -> None:
    results = check_mod.run_checks(
        [
            check(f"http://127.0.0.1:{tcp_port}/hello/bar", "Hello bar!"),
            check("http://localhost/hello/x", "Hello x!", unix_path),
        ],
        timeout_s=5,
        retry_for_s=5,
    )
    assert [(r["ok"], r["status"], r["attempts"]) for r in results] == [(True, 200, 1), (True, 200, 1)]


def test_wrong_body_and_wrong_status_fail_with_what_was_answered(tcp_port: int) -> None:
    checks = [
        check(f"http://127.0.0.1:{tcp_port}/hello/bar", "Hello baz!"),
        check(f"http://127.0.0.1:{tcp_port}/x", "x"),
    ]
    ticks = iter(range(100))
    results = check_mod.run_checks(checks, 5, 3, clock=lambda: next(ticks), sleep=no_sleep)
    assert [r["ok"] for r in results] == [False, False]
    assert [r["attempts"] for r in results] == [3, 3]  # asked again until the clock reads the deadline (3)
    assert "status 200 'Hello bar!'; expected 200 'Hello baz!'" in check_mod.describe(checks[0], results[0])
    assert "status 404 'not found'" in check_mod.describe(checks[1], results[1])


def test_refused_connection_is_reported_not_raised(tmp_path: Path) -> None:
    missing = str(tmp_path / "nobody.sock")
    results = check_mod.run_checks([check("http://localhost/", "x", missing)], 1, 0)
    assert results[0]["ok"] is False and results[0]["status"] is None
    assert "FileNotFoundError" in results[0]["error"]


def test_only_failing_endpoints_are_asked_again_until_they_pass() -> None:
    answers = {
        "a": iter([{"status": 502, "answer": ""}, {"status": 200, "answer": "A"}]),
        "b": iter([{"status": 200, "answer": "B"}]),
    }
    checks = [check("http://h/a", "A"), check("http://h/b", "B")]
    results = check_mod.run_checks(
        checks, 1, 30, asker=lambda c, _t: next(answers[c["url"][-1]]), sleep=no_sleep
    )
    assert [(r["ok"], r["attempts"]) for r in results] == [(True, 2), (True, 1)]


def cgi_output(name: str) -> str:
    # Bytes, not read_text: CGI headers end in CRLF, which text mode would turn into LF.
    return (DATA / "fastcgi" / name).read_bytes().decode()


def test_cgi_answer_of_php_fpm_passes_with_its_body() -> None:
    # Real cgi-fcgi output from php-fpm 8.2 (Debian 12) for a script that echoes "Hello bar!".
    result = check_mod.judge_cgi(0, cgi_output("ok.txt"), "")
    assert result == {"status": 200, "answer": "Hello bar!"}


def test_missing_script_fails_although_cgi_fcgi_exits_0() -> None:
    # Real output for a SCRIPT_FILENAME that does not exist (stderr: "Primary script unknown", exit 0).
    result = check_mod.judge_cgi(0, cgi_output("missing-script.txt"), "Primary script unknown")
    assert result["status"] is None
    assert result["error"] == "Status: 404 Not Found Primary script unknown"
    assert result["answer"] == "File not found.\n"


def test_a_failed_instance_shows_its_units_state_and_last_journal_lines() -> None:
    asked: list[list[str]] = []

    def runner(argv: list[str], **_: Any) -> Any:
        asked.append(argv)
        out = "activating\n" if argv[0] == "systemctl" else "puma is not currently included in the bundle\n"
        return type("Done", (), {"stdout": out})()

    text = check_mod.unit_journal("bench-own-puma@1.service", 5, runner)
    assert text == (
        "bench-own-puma@1.service is activating; its last journal lines:\n"
        "puma is not currently included in the bundle"
    )
    assert ["journalctl", "-u", "bench-own-puma@1.service", "-n", "5", "--no-pager", "-o", "cat"] in asked


def test_without_systemd_the_failure_says_only_what_the_request_got() -> None:
    def runner(argv: list[str], **_: Any) -> Any:
        raise FileNotFoundError(argv[0])

    assert check_mod.unit_journal("x.service", 5, runner) == ""
