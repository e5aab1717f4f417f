"""The bench_dns_resolve and bench_dns_probe action plugins against a simulated host."""

from __future__ import annotations

import base64
import hashlib
import shlex
from typing import Any

import pytest
from ansible.errors import AnsibleActionFail
from test_plugins import load_plugin, make_action

resolve_plugin = load_plugin("action", "bench_dns_resolve")
probe_plugin = load_plugin("action", "bench_dns_probe")

RESOLV = "/etc/resolv.conf"
BACKUP = "/var/lib/bench-stack/dns-probe/resolv.conf.saved"
LOG = "/var/log/bench-stack/dns-probe/dnsmasq.log"
ORIGINAL = "# Docker's\nnameserver 10.255.255.53\n"
# The layout of a real dnsmasq 2.90 query line (tests/data/dnsmasq).
LINE = "Nov 30 04:43:14 dnsmasq[4877]: {n} 127.0.0.1/{port} query[{t}] {name} from 127.0.0.1\n"


class Host:
    """Files, units and runtimes of a host, answering the modules the probe runs."""

    def __init__(self, files: dict[str, str], caching: frozenset[str] = frozenset(), fail: str = "") -> None:
        self.files = dict(files)
        self.active: set[str] = set()
        self.caching = caching  # runtimes that cache on their own
        self.fail = fail  # a runtime that errors
        self.commands: list[list[str]] = []
        self.serial = 0

    def __call__(
        self, module_name: str, module_args: dict[str, Any], task_vars: Any = None
    ) -> dict[str, Any]:
        if module_name == "ansible.builtin.wait_for":
            return {"changed": False}
        if module_name == "ansible.builtin.slurp":
            return {"content": base64.b64encode(self.files[module_args["src"]].encode()).decode()}
        if module_name == "bench_dns_resolve":
            return self.resolve(module_args["names"])
        assert module_name == "ansible.builtin.command"
        argv = module_args["argv"]
        self.commands.append(argv)
        return self.command(argv)

    def resolve(self, names: list[str]) -> dict[str, Any]:
        results = [
            {
                "name": n,
                "addresses": [] if n.endswith(".invalid") else ["127.0.0.1"],
                "lookup_ms": 1.5,
                "error": "[Errno -2] Name or service not known" if n.endswith(".invalid") else None,
            }
            for n in names
        ]
        return {"results": results, "resolv_conf": self.files[RESOLV], "nsswitch_conf": "hosts: files dns\n"}

    def log_query(self, name: str, qtype: str) -> None:
        self.serial += 1
        self.files[LOG] += LINE.format(n=self.serial, port=40000 + self.serial, t=qtype, name=name)

    def command(self, argv: list[str]) -> dict[str, Any]:
        ok = {"rc": 0, "stdout": "", "stderr": ""}
        match argv:
            case ["test", "-e", path]:
                return {**ok, "rc": 0 if path in self.files else 1}
            case ["systemctl", "is-active", "--quiet", unit]:
                return {**ok, "rc": 0 if unit in self.active else 3}
            case ["systemctl", "start", *units]:
                self.active.update(units)
                return ok
            case ["systemctl", "stop", *units]:
                self.active.difference_update(units)
                return ok
            case ["sha256sum", path]:
                return {**ok, "stdout": hashlib.sha256(self.files[path].encode()).hexdigest() + "  " + path}
            case ["cp", src, dst]:
                self.files[dst] = self.files[src]
                return ok
            case ["truncate", "-s", "0", path]:
                self.files[path] = ""
                return ok
            case ["sh", "-c", script, "sh", address, path] if "nameserver" in script:
                self.files[path] = f"nameserver {address}\n"
                return ok
            case ["sh", "-c", script, "sh", src, dst] if script.startswith("cat"):
                self.files[dst] = self.files.pop(src)
                return ok
            case ["runuser", "-u", _, "--", _, script, url, n]:
                return self.runtime(script.rsplit(".", 1)[1], url, int(n))
        raise AssertionError(f"unexpected command {shlex.join(argv)}")

    def runtime(self, script: str, url: str, n: int) -> dict[str, Any]:
        name = url.split("//")[1].split(":")[0]
        if script == self.fail:
            return {"rc": 1, "stdout": "", "stderr": "getaddrinfo: Name or service not known"}
        cached = "nscd.service" in self.active or script in self.caching
        for _ in range(1 if cached else n):
            self.log_query(name, "A")
            if script != "pl":
                self.log_query(name, "AAAA")
        return {"rc": 0, "stdout": f"{n}\n", "stderr": ""}


RUNTIMES = [
    {"runtime": rt, "client": c, "argv": [f"/usr/bin/{rt}", f"/opt/bench-stack/dns-probe/probe.{ext}"]}
    for rt, c, ext in (("ruby", "Net::HTTP", "rb"), ("perl", "HTTP::Tiny", "pl"))
]


def probe_args(**over: Any) -> dict[str, Any]:
    args = {
        "runtimes": RUNTIMES,
        "requests": 4,
        "zone": "bench-dns.test",
        "caches": ["nscd"],
        "dns_address": "127.53.0.1",
        "unbound_address": "127.53.0.2",
        "http_port": 18053,
        "units": {
            "dnsmasq": "d.service",
            "http": "h.service",
            "unbound": "u.service",
            "nscd": "nscd.service",
        },
        "log": LOG,
        "backup": BACKUP,
        "user": "bench",
    }
    return {**args, **over}


def run_probe(host: Host, **over: Any) -> dict[str, Any]:
    action = make_action(probe_plugin, probe_args(**over))
    action._execute_module = host
    return action.run(task_vars={})


def test_probe_counts_each_runtime_and_phase_from_the_log() -> None:
    host = Host({RESOLV: ORIGINAL, LOG: ""})
    result = run_probe(host)
    rows = {(r["runtime"], r["phase"]): r for r in result["rows"]}
    assert rows["ruby", "direct"]["lookups"] == 4 and rows["ruby", "direct"]["queries"] == 8
    assert rows["perl", "direct"]["queries_by_type"] == {"A": 4}
    assert rows["ruby", "nscd"]["lookups"] == 1 and rows["perl", "nscd"]["lookups_per_request"] == 0.25
    assert result["changed"] is False
    assert "| ruby | Net::HTTP | via nscd | 4 | 1 | 2 | 0.25 | caches |" in result["table_lines"]


def test_each_runtime_asks_for_its_own_name_on_the_probe_port() -> None:
    host = Host({RESOLV: ORIGINAL, LOG: ""})
    run_probe(host)
    urls = [c[-2] for c in host.commands if c[0] == "runuser"]
    assert urls[:2] == [
        "http://ruby.direct.bench-dns.test:18053/",
        "http://perl.direct.bench-dns.test:18053/",
    ]
    assert "http://ruby.nscd.bench-dns.test:18053/" in urls


def test_probe_leaves_resolv_conf_and_units_as_they_were() -> None:
    host = Host({RESOLV: ORIGINAL, LOG: ""})
    result = run_probe(host)
    assert host.files[RESOLV] == ORIGINAL and BACKUP not in host.files
    assert result["resolv_conf_sha256"] == hashlib.sha256(ORIGINAL.encode()).hexdigest()
    assert host.active == set()


def test_probe_points_runtimes_at_its_dnsmasq_only_while_they_run() -> None:
    host = Host({RESOLV: ORIGINAL, LOG: ""})
    run_probe(host)
    first_runtime = next(i for i, c in enumerate(host.commands) if c[0] == "runuser")
    writes = [c for c in host.commands[:first_runtime] if c[:2] == ["sh", "-c"]]
    assert writes[-1][4] == "127.53.0.1"


def test_failing_runtime_fails_the_task_and_still_restores_resolv_conf() -> None:
    host = Host({RESOLV: ORIGINAL, LOG: ""}, fail="pl")
    with pytest.raises(
        AnsibleActionFail, match=r"perl \(direct\) answered 0 of 4 .*Name or service not known"
    ):
        run_probe(host)
    assert host.files[RESOLV] == ORIGINAL and BACKUP not in host.files
    assert host.active == set()


def test_backup_left_by_an_interrupted_probe_is_restored_first() -> None:
    host = Host({RESOLV: "nameserver 127.53.0.1\n", BACKUP: ORIGINAL, LOG: ""})
    run_probe(host)
    assert host.files[RESOLV] == ORIGINAL and BACKUP not in host.files


def test_running_nscd_refuses_the_uncached_phase() -> None:
    host = Host({RESOLV: ORIGINAL, LOG: ""})
    host.active.add("nscd.service")
    with pytest.raises(AnsibleActionFail, match="nscd.service is running"):
        run_probe(host)
    assert host.files[RESOLV] == ORIGINAL


def test_runtime_that_caches_by_itself_shows_as_caching_without_a_cache() -> None:
    host = Host({RESOLV: ORIGINAL, LOG: ""}, caching=frozenset({"rb"}))
    rows = {(r["runtime"], r["phase"]): r for r in run_probe(host, caches=[])["rows"]}
    assert set(rows) == {("ruby", "direct"), ("perl", "direct")}
    assert rows["ruby", "direct"]["lookups"] == 1 and rows["perl", "direct"]["lookups"] == 4


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"requests": 0}, "requests must be 1-1000"),
        ({"caches": ["dnscrypt"]}, "caches must be one or more of: nscd, unbound. Got no match for: dnscr"),
        ({"caches": ["unbound"], "unbound_address": None}, "unbound needs unbound_address"),
    ],
)
def test_probe_refuses_bad_arguments(over: dict[str, Any], message: str) -> None:
    with pytest.raises(AnsibleActionFail, match=message):
        run_probe(Host({RESOLV: ORIGINAL, LOG: ""}), **over)


def test_probe_does_nothing_in_check_mode() -> None:
    host = Host({RESOLV: ORIGINAL, LOG: ""})
    action = make_action(probe_plugin, probe_args(), check_mode=True)
    action._execute_module = host
    assert action.run(task_vars={})["skipped"] is True
    assert host.commands == []


def run_resolve(names: list[str]) -> dict[str, Any]:
    action = make_action(resolve_plugin, {"names": names, "timeout_s": 2})
    action._execute_module = Host({RESOLV: ORIGINAL})
    return action.run(task_vars={"inventory_hostname": "bench-local"})


def test_resolve_records_answers_and_resolver() -> None:
    result = run_resolve(["localhost"])
    assert not result.get("failed")
    assert result["record"]["resolver"]["nameservers"] == ["10.255.255.53"]
    assert result["record"]["names"]["localhost"]["addresses"] == ["127.0.0.1"]


def test_resolve_fails_naming_the_name_that_did_not_resolve() -> None:
    result = run_resolve(["localhost", "gone.invalid"])
    assert result["failed"] is True
    assert "bench-local: 1 name(s)" in result["msg"] and "gone.invalid: [Errno -2]" in result["msg"]
    assert result["record"]["names"]["gone.invalid"]["addresses"] == []
