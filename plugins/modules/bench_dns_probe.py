#!/usr/bin/python
"""Documentation of the action plugins/action/bench_dns_probe.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_dns_probe
short_description: Count the DNS lookups each runtime makes for N HTTP requests, without and with a cache
description:
  - >-
    Does each runtime cache DNS lookups? N HTTP requests per runtime to a name only a local, query-logging
    dnsmasq answers, then the same through each caching resolver asked for; counted from the log.
  - The work is done by the action plugin of the same name (plugins/action/bench_dns_probe.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  runtimes: {description: "Each {runtime, client, argv}; argv + [url, N] makes N requests and prints the
             number answered 200.", type: list, elements: dict, required: true}
  requests: {description: Requests per runtime and phase (1-1000)., type: int, required: true}
  zone: {description: The test zone dnsmasq answers., type: str, required: true}
  caches:
    description: Caching resolvers to probe through.
    type: list
    elements: str
    choices: [nscd, unbound]
    default: []
  dns_address: {description: Loopback address dnsmasq listens on (port 53)., type: str, required: true}
  unbound_address: {description: Loopback address the probe's unbound listens on., type: str}
  http_port: {description: Port of the probe's HTTP server on 127.0.0.1., type: int, required: true}
  units: {description: "systemd units {dnsmasq, http, unbound, nscd}.", type: dict, required: true}
  log: {description: dnsmasq's query log on the host., type: path, required: true}
  backup: {description: Where resolv.conf is saved during the probe., type: path, required: true}
  user: {description: Account the runtimes run as., type: str, required: true}
  resolv_conf: {description: The resolver file., type: path, default: /etc/resolv.conf}
"""

EXAMPLES = r"""
- name: Count each runtime's DNS lookups, without and with nscd
  bench_dns_probe:
    runtimes:
      - {runtime: ruby, client: Net::HTTP, argv: [ruby, /opt/probe/probe.rb]}
    requests: 20
    zone: probe.test
    caches: [nscd]
    dns_address: 127.53.0.1
    http_port: 8053
    units: {dnsmasq: bench-dnsmasq.service, http: bench-probe-http.service, unbound: unbound.service,
            nscd: nscd.service}
    log: /var/log/bench-dnsmasq.log
    backup: /var/lib/bench-stack/resolv.conf.probe
    user: bench
"""

RETURN = r"""
rows:
  description: >-
    Per runtime and phase (direct or through a cache), the requests answered and DNS lookups counted.
  type: list
  elements: dict
  returned: success
table: {description: The rows as a text table., type: str, returned: success}
"""
