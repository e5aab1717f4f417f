"""The DNS-caching probe in the run report, and the host-check filters."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import read_data
from test_plugins import load_plugin

from benchstack.analysis.summary import RunData
from benchstack.provision.dns import probe_rows
from benchstack.report import render
from benchstack.report.build import build_report, dns_section

host_filters = load_plugin("filter", "bench_host")

ROWS = probe_rows(
    [
        {
            "runtime": "ruby",
            "client": "Net::HTTP",
            "phase": p,
            "name": f"rb.{p}.bench-dns.test",
            "requests": 5,
            "answered": 5,
        }
        for p in ("nocache", "nscd")
    ],
    read_data("dnsmasq", "probe-nocache-nscd-unbound.log"),
)


def run_with(info: dict[str, object] | None) -> RunData:
    return RunData(Path("/results/20261130T000000Z-x"), [], info)


def test_report_shows_the_probe_table_per_host_when_the_run_has_one() -> None:
    section = dns_section(run_with({"dns_probe": {"bench-local": {"requests": 5, "rows": ROWS}}}))
    assert section is not None
    text = render.section_markdown(section)
    assert text.startswith("## DNS lookups per runtime\n\nbench-local, 5 requests per runtime and resolver:")
    assert "| ruby | Net::HTTP | via nscd | 5 | 1 | 2 | 0.20 | caches |" in text
    report = build_report(run_with({"dns_probe": {"h": {"rows": ROWS}}}))
    assert "## DNS lookups per runtime" in render.markdown(report)


@pytest.mark.parametrize("info", [None, {}, {"dns_probe": None}, {"dns_probe": {"h": {"rows": []}}}])
def test_report_has_no_probe_section_without_a_probe(info: dict[str, object] | None) -> None:
    assert dns_section(run_with(info)) is None
    assert "DNS lookups" not in render.html(build_report(run_with(info)))


def test_html_report_carries_the_probe_table() -> None:
    page = render.html(build_report(run_with({"dns_probe": {"h": {"requests": 5, "rows": ROWS}}})))
    assert page.index("<h2>DNS lookups per runtime</h2>") < page.index("<p>h, 5 requests per runtime and")
    assert "<td>Net::HTTP</td><td>via nscd</td><td>5</td><td>1</td><td>2</td><td>0.20</td>" in page


def test_sysctl_filters_chain_as_the_role_uses_them() -> None:
    now = host_filters.bench_sysctl_values("net.core.somaxconn = 128\n", ["net.core.somaxconn"])
    todo = host_filters.bench_sysctl_to_write({"net.core.somaxconn": 4096}, now)
    assert todo == [{"name": "net.core.somaxconn", "value": "4096"}]
    record = host_filters.bench_sysctl_record({"net.core.somaxconn": 4096}, now, now, None)
    assert record["net.core.somaxconn"]["status"] == "skipped"
    assert host_filters.bench_sysctl_restore(now, {"net.core.somaxconn": "4096"}) == [
        {"name": "net.core.somaxconn", "value": "128"}
    ]
