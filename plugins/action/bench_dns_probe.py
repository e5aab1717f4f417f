"""Action: does each runtime cache DNS lookups? N HTTP requests per runtime to a name only a local,
query-logging dnsmasq answers, then the same through each caching resolver asked for; counted from the log.

The host's resolv.conf is pointed at the probe's dnsmasq for the probe only. Docker's default seccomp
profile forbids a private mount namespace, so it is saved first, written in place (it is a bind mount in
a container) and restored in a ``finally``; a backup left by an interrupted probe is restored before
anything else. The task fails when the file's sha256 afterwards differs from before.
"""

from __future__ import annotations

import base64
from typing import Any

from benchstack.actionargs import BenchAction, action_args
from benchstack.kinds.loadtools.loadcmd import http_url
from benchstack.provision.dns import probe_name, probe_rows, probe_table

MAX_REQUESTS = 1000
CACHES = ("nscd", "unbound")

# What a task may pass: the options documented in plugins/modules/bench_dns_probe.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    ARGS = ARGS
    CHECK_MODE = "check mode: the probe changes resolv.conf, not run"

    def _cmd(self, argv: list[str], check: bool = True) -> dict[str, Any]:
        res = self._execute_module(
            module_name="ansible.builtin.command", module_args={"argv": argv}, task_vars=self._vars
        )
        if check and (res.get("failed") or res.get("rc") != 0):
            detail = (res.get("stderr") or res.get("msg") or "").strip()[-500:]
            raise self.failure(f"{' '.join(argv)} failed (rc {res.get('rc')}): {detail}")
        return res

    def _sha256(self, path: str) -> str:
        return str(self._cmd(["sha256sum", path])["stdout"].split()[0])

    def _point_resolver_at(self, address: str) -> None:
        # In place (cat >), not a rename: in a container /etc/resolv.conf is a bind-mounted file.
        self._cmd(
            ["sh", "-c", 'printf "nameserver %s\\n" "$1" > "$2"', "sh", address, self._args["resolv_conf"]]
        )

    def _restore(self) -> None:
        a = self._args
        self._cmd(["sh", "-c", 'cat "$1" > "$2" && rm -f "$1"', "sh", a["backup"], a["resolv_conf"]])

    def check_args(self, args: dict[str, Any]) -> None:
        args["caches"] = args["caches"] or []
        # What the spec cannot say: the range of requests, and unbound's own address.
        if not args["runtimes"]:
            raise self.failure("runtimes names no runtime")
        if not 1 <= args["requests"] <= MAX_REQUESTS:
            raise self.failure(f"requests must be 1-{MAX_REQUESTS}")
        if "unbound" in args["caches"] and not args["unbound_address"]:
            raise self.failure("unbound needs unbound_address")

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        self._vars = task_vars
        self._args = a = args
        units = a["units"]
        # A backup left by an interrupted probe is the host's real resolv.conf: put it back first.
        if self._cmd(["test", "-e", a["backup"]], check=False)["rc"] == 0:
            self._restore()
        if self._cmd(["systemctl", "is-active", "--quiet", units["nscd"]], check=False)["rc"] == 0:
            raise self.failure(f"{units['nscd']} is running, so the uncached phase would be cached; stop it")
        before = self._sha256(a["resolv_conf"])
        self._cmd(["cp", a["resolv_conf"], a["backup"]])
        runs: list[dict[str, Any]] = []
        started = [units["dnsmasq"], units["http"]]
        try:
            self._cmd(["truncate", "-s", "0", a["log"]])
            self._cmd(["systemctl", "start", *started])
            self._wait(a["dns_address"], 53)
            self._wait("127.0.0.1", int(a["http_port"]))
            for phase in ["direct", *a["caches"]]:
                resolver = a["dns_address"]
                if phase == "nscd":
                    started.append(units["nscd"])
                    self._cmd(["systemctl", "start", units["nscd"]])
                elif phase == "unbound":
                    started.append(units["unbound"])
                    self._cmd(["systemctl", "start", units["unbound"]])
                    self._wait(a["unbound_address"], 53)
                    resolver = a["unbound_address"]
                self._point_resolver_at(resolver)
                runs += [self._probe(rt, phase) for rt in a["runtimes"]]
                if phase in CACHES:
                    self._cmd(["systemctl", "stop", units[phase]])
        finally:
            self._restore()
            self._cmd(["systemctl", "stop", *reversed(started)], check=False)
        after = self._sha256(a["resolv_conf"])
        if after != before:
            raise self.failure(f"{a['resolv_conf']} changed (sha256 {before} before, {after} after)")
        log = self._slurp(a["log"])
        rows = probe_rows(runs, log)
        table = probe_table(rows)
        result.update(
            changed=False,
            rows=rows,
            table=table,
            table_lines=table.splitlines(),
            requests=int(a["requests"]),
            zone=a["zone"],
            log=a["log"],
            resolv_conf_sha256=after,
        )
        return result

    def _wait(self, host: str, port: int) -> None:
        res = self._execute_module(
            module_name="ansible.builtin.wait_for",
            module_args={"host": host, "port": port, "timeout": 15},
            task_vars=self._vars,
        )
        if res.get("failed"):
            raise self.failure(f"nothing listens on {host}:{port}: {res.get('msg')}")

    def _slurp(self, path: str) -> str:
        res = self._execute_module(
            module_name="ansible.builtin.slurp", module_args={"src": path}, task_vars=self._vars
        )
        if res.get("failed"):
            raise self.failure(f"cannot read {path}: {res.get('msg')}")
        return base64.b64decode(res["content"]).decode("utf-8", "replace")

    def _probe(self, rt: dict[str, Any], phase: str) -> dict[str, Any]:
        a = self._args
        name = probe_name(rt["runtime"], phase, a["zone"])
        url = http_url(name, int(a["http_port"]), "/")
        n = int(a["requests"])
        res = self._cmd(["runuser", "-u", a["user"], "--", *rt["argv"], url, str(n)], check=False)
        out = (res.get("stdout") or "").strip().splitlines()
        answered = int(out[-1]) if out and out[-1].isdigit() else 0
        if res.get("rc") != 0 or answered != n:
            raise self.failure(
                f"{rt['runtime']} ({phase}) answered {answered} of {n} requests to {url}: "
                f"{(res.get('stderr') or res.get('msg') or '').strip()[-500:]}"
            )
        return {
            "runtime": rt["runtime"],
            "client": rt["client"],
            "phase": phase,
            "name": name,
            "requests": n,
            "answered": answered,
        }
