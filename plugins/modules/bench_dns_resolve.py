#!/usr/bin/python
"""Module (runs on the host): resolve names as the host's programs do (getaddrinfo) and time each lookup.

It returns raw data only: the answers, the time and error of each lookup, and the resolver files' text.
The bench_dns_resolve action plugin parses and judges it on the controller (benchstack.provision.dns).
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: bench_dns_resolve
short_description: Check that names resolve on a host; record answers, lookup times and the resolver
description:
  - This module resolves the names on the host with getaddrinfo, timed, and returns the raw answers and the
    resolver files.
  - The action plugin of the same name (plugins/action/bench_dns_resolve.py), which a task runs, turns them
    into the fingerprint's C(dns) record and fails the task naming each name that did not resolve. These
    options are also its argument spec (benchstack.actionargs).
options:
  names: {description: Names to resolve (addresses are fine too)., type: list, elements: str, required: true}
  timeout_s: {description: Seconds one lookup may take before it counts as failed., type: float, default: 5}
"""

EXAMPLES = r"""
- name: Check that the names a run depends on resolve
  bench_dns_resolve:
    names: [deb.debian.org, web1]
    timeout_s: 2
  register: resolved
"""

RETURN = r"""
record: {description: The fingerprint's dns record (benchstack.provision.dns)., type: dict, returned: success}
"""


def resolve(name: str, timeout_s: float) -> dict[str, Any]:
    """getaddrinfo(name) in a thread, so a resolver that never answers cannot hang the play."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
            box["addresses"] = sorted({info[4][0] for info in infos})
        except OSError as exc:
            box["error"] = str(exc)

    start = time.perf_counter()
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(timeout_s)
    elapsed_ms = round((time.perf_counter() - start) * 1000, 3)
    if thread.is_alive():
        box["error"] = f"no answer within {timeout_s:g} s"
    return {
        "name": name,
        "addresses": box.get("addresses", []),
        "error": box.get("error"),
        "lookup_ms": elapsed_ms,
    }


def read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "names": {"type": "list", "elements": "str", "required": True},
            "timeout_s": {"type": "float", "default": 5.0},
        },
        supports_check_mode=True,
    )
    names = list(dict.fromkeys(module.params["names"]))
    module.exit_json(
        changed=False,
        results=[resolve(n, module.params["timeout_s"]) for n in names],
        resolv_conf=read("/etc/resolv.conf"),
        nsswitch_conf=read("/etc/nsswitch.conf"),
    )


if __name__ == "__main__":
    main()
