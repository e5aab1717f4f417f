"""benchstack.provision.dns: dnsmasq query counting on a real probe log, resolver files, names from stacks."""

from __future__ import annotations

import pytest
from conftest import read_data

from benchstack.plan.readers import stack_names
from benchstack.plan.stacks import resolve_stacks
from benchstack.provision.dns import (
    parse_nsswitch_hosts,
    parse_queries,
    parse_resolv_conf,
    probe_name,
    probe_rows,
    probe_table,
    query_counts,
    resolution_failures,
    resolution_record,
)

# Real (tests/data/README.md): dnsmasq 2.90 (Debian 12), log-queries=extra, the four probe scripts making
# 5 requests each to rb|py|pl|php.<phase>.bench-dns.test: uncached (nocache), through nscd (nscd), through an
# unbound whose config kept .test local (unbound: nothing reached dnsmasq), through a working unbound
# (unbound2).
LOG = read_data("dnsmasq", "probe-nocache-nscd-unbound.log")
RUNTIMES = ("rb", "py", "pl", "php")


def run(rt: str, phase: str, requests: int = 5) -> dict[str, object]:
    return {
        "runtime": rt,
        "client": "c",
        "phase": phase,
        "name": f"{rt}.{phase}.bench-dns.test",
        "requests": requests,
        "answered": requests,
    }


def test_parser_reads_only_query_lines_with_type_and_client_port() -> None:
    queries = parse_queries(LOG)
    assert len(queries) == sum(1 for line in LOG.splitlines() if " query[" in line)
    first = queries[0]
    assert (first.name, first.qtype, first.port) == ("rb.nocache.bench-dns.test", "A", 49183)
    assert first.source == "127.0.0.1"


def test_parser_reads_plain_log_queries_lines_without_serial() -> None:
    line = "Nov 30 04:43:08 dnsmasq[4877]: query[AAAA] Example.TEST. from 127.0.0.1"
    (q,) = parse_queries(line)
    assert (q.name, q.qtype, q.port) == ("example.test", "AAAA", None)


def test_uncached_runtimes_ask_once_per_request() -> None:
    rows = probe_rows([run(rt, "nocache") for rt in RUNTIMES], LOG)
    assert [r["lookups"] for r in rows] == [5, 5, 5, 5]
    assert [r["lookups_per_request"] for r in rows] == [1.0, 1.0, 1.0, 1.0]


def test_perl_asks_for_ipv4_only_the_others_for_both_families() -> None:
    rows = {r["runtime"]: r for r in probe_rows([run(rt, "nocache") for rt in RUNTIMES], LOG)}
    assert rows["pl"]["queries_by_type"] == {"A": 5}
    assert rows["rb"]["queries_by_type"] == {"A": 5, "AAAA": 5}
    assert rows["php"]["queries"] == 10


def test_nscd_turns_n_lookups_into_one() -> None:
    rows = probe_rows([run(rt, "nscd") for rt in RUNTIMES], LOG)
    assert [r["lookups"] for r in rows] == [1, 1, 1, 1]
    assert all(r["lookups_per_request"] == 0.2 for r in rows)


def test_unbound_forwards_a_and_aaaa_once() -> None:
    counts = query_counts(parse_queries(LOG), "rb.unbound2.bench-dns.test")
    assert counts == {"A": 1, "AAAA": 1, "total": 2}


def test_a_name_never_asked_counts_zero() -> None:
    (row,) = probe_rows([run("rb", "unbound")], LOG)
    assert (row["lookups"], row["queries"]) == (0, 0)


def test_counts_do_not_leak_between_names_sharing_a_suffix() -> None:
    # "pl.nscd..." must not count "php.nscd..." and vice versa.
    queries = parse_queries(LOG)
    assert query_counts(queries, "pl.nscd.bench-dns.test")["total"] == 1
    assert query_counts(queries, "php.nscd.bench-dns.test") == {"A": 1, "AAAA": 1, "total": 2}


def test_table_says_which_runtime_caches() -> None:
    table = probe_table(probe_rows([run("rb", "nocache"), run("rb", "nscd")], LOG))
    lines = table.splitlines()
    assert lines[0].startswith("| runtime | client | resolver |")
    assert lines[2].endswith("| 5 | 5 | 10 | 1.00 | no cache |")
    assert "via nscd" in lines[3] and lines[3].endswith("| 5 | 1 | 2 | 0.20 | caches |")


def test_probe_name_refuses_labels_that_are_not_dns_labels() -> None:
    assert probe_name("ruby", "direct", "Bench-DNS.test.") == "ruby.direct.bench-dns.test"
    with pytest.raises(ValueError, match="not a DNS label"):
        probe_name("ruby_1", "direct", "bench-dns.test")


def test_resolv_conf_nameservers_search_and_options() -> None:
    text = (
        "# generated\nnameserver 10.255.255.53\nnameserver ::1 # 2nd\nsearch a.test b.test\noptions ndots:2\n"
    )
    assert parse_resolv_conf(text) == {
        "nameservers": ["10.255.255.53", "::1"],
        "search": ["a.test", "b.test"],
        "options": ["ndots:2"],
    }


def test_nsswitch_hosts_order_keeps_actions() -> None:
    text = "passwd: files\n# hosts: dns\nhosts:          files mdns4_minimal [NOTFOUND=return] dns\n"
    assert parse_nsswitch_hosts(text) == ["files", "mdns4_minimal", "[NOTFOUND=return]", "dns"]
    assert parse_nsswitch_hosts("passwd: files\n") == []


STATIC = {"name": "s", "app": {"kind": "static"}, "front": {"kind": "nginx"}, "port": 8010}
THIN_TCP = {
    "name": "t",
    "app": {"kind": "sinatra"},
    "server": {"kind": "thin", "instances": 2, "bind": "tcp"},
    "front": {"kind": "nginx"},
    "port": 8004,
}


def test_stack_names_leave_addresses_out() -> None:
    stacks = resolve_stacks([STATIC, THIN_TCP])
    assert stack_names(stacks, "127.0.0.1") == []
    assert stack_names(stacks, "::1") == []
    assert stack_names(stacks[:1], None) == []


def test_stack_names_hold_the_target_as_the_loadgen_reaches_it_once() -> None:
    assert stack_names(resolve_stacks([STATIC, THIN_TCP]), "target-1.lab.test") == ["target-1.lab.test"]


RAW = {
    "resolv_conf": "nameserver 10.255.255.53\n",
    "nsswitch_conf": "hosts: files dns\n",
    "results": [
        {"name": "localhost", "addresses": ["127.0.0.1", "::1"], "lookup_ms": 0.2, "error": None},
        {
            "name": "gone.invalid",
            "addresses": [],
            "lookup_ms": 3.1,
            "error": "[Errno -2] Name or service not known",
        },
    ],
}


def test_resolution_record_keeps_answers_times_and_resolver() -> None:
    record = resolution_record(RAW)
    assert record["resolver"]["nameservers"] == ["10.255.255.53"]
    assert record["nsswitch_hosts"] == ["files", "dns"]
    assert record["names"]["localhost"] == {
        "addresses": ["127.0.0.1", "::1"],
        "lookup_ms": 0.2,
        "error": None,
    }


def test_unresolved_name_message_names_it_the_error_and_the_resolver() -> None:
    msg = resolution_failures(resolution_record(RAW), "bench-local")
    assert msg is not None
    assert msg.startswith("bench-local: 1 name(s) the run depends on did not resolve")
    assert "gone.invalid: [Errno -2] Name or service not known" in msg
    assert "nameservers 10.255.255.53" in msg and "nsswitch hosts: files dns" in msg
    assert "localhost" not in msg.split("(", 1)[1].split(")")[0]


def test_all_resolved_gives_no_message() -> None:
    raw = {**RAW, "results": RAW["results"][:1]}
    assert resolution_failures(resolution_record(raw), "h") is None
