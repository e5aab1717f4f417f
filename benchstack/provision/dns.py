"""Name resolution: which names a run depends on, the host's resolver, and the runtime DNS-caching probe.

The probe makes N HTTP requests per runtime to a name of a test zone served by a local dnsmasq that logs
every query (``log-queries=extra``). Each runtime and resolver phase gets its own name
(``ruby.direct.bench-dns.test``), so one log holds every run and the count for a name is that run's count.
A lookup is one ``A`` query: every getaddrinfo for IPv4 or any family asks for A (glibc adds a parallel
AAAA for AF_UNSPEC; Perl's HTTP::Tiny asks A only), so A queries compare runtimes fairly. All query types
are counted too.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

# A dnsmasq query line; with log-queries=extra it carries the query serial and the client's address/port:
#   Nov 30 04:43:14 dnsmasq[4877]: 12 127.0.0.1/49183 query[A] rb.nocache.bench-dns.test from 127.0.0.1
#   Nov 30 04:43:14 dnsmasq[4877]: query[A] example.test from 127.0.0.1       (plain log-queries)
QUERY_RE = re.compile(
    r"dnsmasq\[\d+\]: (?:(?P<serial>\d+) (?P<client>\S+)/(?P<port>\d+) )?"
    r"query\[(?P<qtype>[A-Za-z0-9]+)\] (?P<name>\S+) from (?P<source>\S+)\s*$"
)
LABEL_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


@dataclass(frozen=True)
class Query:
    """One query dnsmasq received."""

    name: str
    qtype: str
    source: str
    port: int | None


def parse_queries(log: str) -> list[Query]:
    """Every query line of a dnsmasq log, in order; other lines (answers, start-up) are ignored."""
    out = []
    for line in log.splitlines():
        m = QUERY_RE.search(line)
        if m:
            port = m.group("port")
            out.append(
                Query(
                    name=m.group("name").lower().rstrip("."),
                    qtype=m.group("qtype").upper(),
                    source=m.group("source"),
                    port=int(port) if port else None,
                )
            )
    return out


def query_counts(queries: list[Query], name: str) -> dict[str, int]:
    """Queries for ``name`` by type, plus ``total``."""
    name = name.lower().rstrip(".")
    counts = Counter(q.qtype for q in queries if q.name == name)
    return {**dict(sorted(counts.items())), "total": sum(counts.values())}


def probe_name(runtime: str, phase: str, zone: str) -> str:
    """The test name one runtime asks for in one phase (``direct`` or a caching resolver)."""
    for label in (runtime, phase):
        if not LABEL_RE.fullmatch(label):
            raise ValueError(f"{label!r} is not a DNS label (lowercase letters, digits, '-')")
    return f"{runtime}.{phase}.{zone.lower().rstrip('.')}"


def probe_rows(runs: list[dict[str, Any]], log: str) -> list[dict[str, Any]]:
    """One row per probe run: requests, lookups (A queries) and all queries per request, from the log.

    Each run is ``{runtime, client, phase, name, requests, answered}``.
    """
    queries = parse_queries(log)
    rows = []
    for run in runs:
        counts = query_counts(queries, run["name"])
        requests = int(run["requests"])
        rows.append(
            {
                **run,
                "lookups": counts.get("A", 0),
                "queries": counts["total"],
                "queries_by_type": {k: v for k, v in counts.items() if k != "total"},
                "lookups_per_request": round(counts.get("A", 0) / requests, 3) if requests else None,
                "queries_per_request": round(counts["total"] / requests, 3) if requests else None,
            }
        )
    return rows


def verdict(row: dict[str, Any]) -> str:
    """``caches`` when the runtime asked less than once per request, else ``no cache``."""
    if not row["requests"]:
        return "n/a"
    return "no cache" if row["lookups"] >= row["requests"] else "caches"


PROBE_COLUMNS = (
    "runtime", "client", "resolver", "requests", "lookups (A)", "queries (all)", "lookups/request", "result",
)  # fmt: skip


def probe_table_rows(rows: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """A probe's rows as the table shows them (:data:`PROBE_COLUMNS`)."""
    return [
        (
            str(r["runtime"]),
            str(r["client"]),
            "host resolver (no cache)" if r["phase"] == "direct" else f"via {r['phase']}",
            str(r["requests"]),
            str(r["lookups"]),
            str(r["queries"]),
            f"{r['lookups_per_request']:.2f}",
            verdict(r),
        )
        for r in rows
    ]


def probe_table(rows: list[dict[str, Any]]) -> str:
    """The per-runtime table (Markdown) of a probe's rows."""
    lines = ["| " + " | ".join(PROBE_COLUMNS) + " |", "|" + "|".join("---" for _ in PROBE_COLUMNS) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in probe_table_rows(rows)]
    return "\n".join(lines)


def parse_resolv_conf(text: str) -> dict[str, list[str]]:
    """nameservers, search domains and options of a resolv.conf (comments and unknown keys ignored)."""
    out: dict[str, list[str]] = {"nameservers": [], "search": [], "options": []}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split(";", 1)[0].strip()
        if not line:
            continue
        key, *values = line.split()
        if key == "nameserver" and values:
            out["nameservers"].append(values[0])
        elif key in ("search", "domain"):
            out["search"] = values  # the last search/domain line wins, as in glibc
        elif key == "options":
            out["options"].extend(values)
    return out


def parse_nsswitch_hosts(text: str) -> list[str]:
    """The ``hosts:`` sources of an nsswitch.conf in order, actions kept (``[NOTFOUND=return]``)."""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("hosts:"):
            return line[len("hosts:") :].split()
    return []


def resolution_record(module_result: dict[str, Any]) -> dict[str, Any]:
    """The fingerprint's ``dns`` entry from the bench_dns_resolve module's raw result."""
    return {
        "resolver": parse_resolv_conf(module_result.get("resolv_conf") or ""),
        "nsswitch_hosts": parse_nsswitch_hosts(module_result.get("nsswitch_conf") or ""),
        "names": {
            r["name"]: {
                "addresses": r["addresses"],
                "lookup_ms": r["lookup_ms"],
                "error": r["error"],
            }
            for r in module_result.get("results", [])
        },
    }


def resolution_failures(record: dict[str, Any], host: str) -> str | None:
    """A message naming every name that did not resolve on ``host`` and why, or None when all did."""
    bad = {n: r for n, r in record["names"].items() if not r["addresses"]}
    if not bad:
        return None
    servers = ", ".join(record["resolver"]["nameservers"]) or "none"
    order = " ".join(record["nsswitch_hosts"]) or "unknown"
    listed = "; ".join(f"{n}: {r['error'] or 'no address'}" for n, r in bad.items())
    return (
        f"{host}: {len(bad)} name(s) the run depends on did not resolve ({listed}). "
        f"Resolver: nameservers {servers}, nsswitch hosts: {order}. Nothing was measured: fix DNS, or pin "
        f"the names with dns_check_hosts_entries."
    )
