#!/usr/bin/env python3
"""What shipping the access logs costs the target (issue 42, item 3): one stack, wrk cells with shipping off
and on, alternating (off on, on off, ...: slow drift falls on both), and the CPU time the target's nginx and
fluentd used in each, per 1,000 requests.

The container is molecule/log-shipper's: nginx's static file behind the tuned profile (port 8011), its
access log on and fluentd shipping it to moto's S3 server on the controller, as an experiment's ``logs`` sets
them up.
"Off" is the tuned profile as a run without ``logs`` has it: ``access_log off;`` in the server block and no
fluentd; "on" is the block as provisioned and fluentd running. wrk runs in the same container on 127.0.0.1
(loopback, as the default inventory measures), bounded by ``--seconds`` per cell and ``--rounds``. CPU time is
read from /proc (utime + stime of every nginx process, and of fluentd after ``--settle`` seconds, so its
upload of the cell's time slice is counted); wrk's own is left out: it is the loadgen's.

From the project folder, with ./run's tools (``./run setup`` first):

    export PATH=$PWD/.venv/bin:$PATH PYTHONPATH=$PWD ANSIBLE_CONFIG=$PWD/ansible.cfg
    molecule converge -s log-shipper          # the container, shipping on
    python scripts/measure-log-shipping.py [--rounds 6] [--seconds 5] [--connections 8]
    molecule destroy -s log-shipper           # also stops moto (cleanup)

It leaves the container as it found it (shipping on).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import time

CONF = "/etc/nginx/conf.d/bench-stack.conf"
SAVED = "/root/bench-stack.conf.measure-log-shipping"
URL = "http://127.0.0.1:8011/index.html"
UNIT = "bench-fluentd.service"
# utime + stime of every process named, in clock ticks (fields 14 and 15 of /proc/PID/stat; the name, field
# 2, has no spaces for nginx and ruby).
TICKS = (
    't=0; for p in $(pgrep -f "$1"); do set -- $(cat /proc/$p/stat 2>/dev/null) '
    "&& t=$((t + ${14} + ${15})); done; echo $t"
)
_REQUESTS = re.compile(r"^\s*(\d+) requests in", re.MULTILINE)


def sh(container: str, script: str, *args: str, timeout: float = 120) -> str:
    done = subprocess.run(
        ["docker", "exec", container, "sh", "-c", script, "sh", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return done.stdout


def ticks(container: str, pattern: str) -> int:
    """CPU ticks of the processes whose command line matches ``pattern`` (``[b]in/fluentd``: the brackets keep
    the shell running this, whose own command line holds the pattern, out of it)."""
    return int(sh(container, TICKS.replace("$1", pattern)).strip() or 0)


def shipping(container: str, on: bool) -> None:
    """Shipping on: the server block as provisioned, fluentd running; off: the tuned block's access_log off,
    fluentd stopped."""
    if on:
        sh(container, f"cp {SAVED} {CONF} && nginx -t -q && systemctl reload nginx && systemctl start {UNIT}")
    else:
        sh(
            container,
            f"systemctl stop {UNIT} && sed 's/^    listen 8011;$/&\\n    access_log off;/' {SAVED} >{CONF} "
            "&& nginx -t -q && systemctl reload nginx",
        )
    time.sleep(2)  # the reload's old workers gone, fluentd started


def cell(container: str, on: bool, seconds: int, connections: int, settle: float) -> dict[str, float]:
    shipping(container, on)
    nginx0, fluentd0 = ticks(container, "^nginx"), ticks(container, "[b]in/fluentd")
    out = sh(
        container,
        f"timeout {seconds + 30} wrk -t1 -c{connections} -d{seconds}s {URL}",
        timeout=seconds + 60,
    )
    nginx1 = ticks(container, "^nginx")
    time.sleep(settle if on else 0)
    fluentd1 = ticks(container, "[b]in/fluentd")
    match = _REQUESTS.search(out)
    if match is None:
        raise SystemExit(f"no request count in wrk's output:\n{out}")
    requests = int(match.group(1))
    hz = int(sh(container, "getconf CLK_TCK").strip())
    per_1k = 1000 * 1000 / hz / max(requests, 1)  # ms of CPU per 1,000 requests, per tick
    return {
        "rps": requests / seconds,
        "nginx": (nginx1 - nginx0) * per_1k,
        "fluentd": (fluentd1 - fluentd0) * per_1k,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--container", default="bench-mol-logship-bookworm")
    parser.add_argument("--rounds", type=int, default=6, choices=range(1, 21), metavar="1-20")
    parser.add_argument("--seconds", type=int, default=5, choices=range(1, 31), metavar="1-30")
    parser.add_argument("--connections", type=int, default=8, choices=range(1, 257), metavar="1-256")
    parser.add_argument("--settle", type=float, default=8.0, help="seconds for fluentd's upload after a cell")
    args = parser.parse_args()
    sh(args.container, f"test -f {SAVED} || cp {CONF} {SAVED}")
    results: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    try:
        for r in range(args.rounds):
            for on in (False, True) if r % 2 == 0 else (True, False):
                one = cell(args.container, on, args.seconds, args.connections, args.settle)
                results[on].append(one)
                print(
                    f"round {r + 1} shipping {'on ' if on else 'off'}: {one['rps']:9.0f} req/s, "
                    f"CPU per 1,000 requests: nginx {one['nginx']:6.1f} ms, fluentd {one['fluentd']:6.1f} ms",
                    flush=True,
                )
    finally:
        shipping(args.container, True)
    print()
    for on in (False, True):
        rows = results[on]
        rps = statistics.median(r["rps"] for r in rows)
        nginx = statistics.median(r["nginx"] for r in rows)
        fluentd = statistics.median(r["fluentd"] for r in rows)
        print(
            f"shipping {'on ' if on else 'off'} (median of {len(rows)}): {rps:9.0f} req/s; CPU per 1,000 "
            f"requests: nginx {nginx:.1f} ms, fluentd {fluentd:.1f} ms, together {nginx + fluentd:.1f} ms"
        )
    off_rps = statistics.median(r["rps"] for r in results[False])
    on_rps = statistics.median(r["rps"] for r in results[True])
    off_cpu = statistics.median(r["nginx"] + r["fluentd"] for r in results[False])
    on_cpu = statistics.median(r["nginx"] + r["fluentd"] for r in results[True])
    print(
        f"on / off: req/s x{on_rps / off_rps:.3f}; the target's CPU per request (nginx + fluentd) "
        f"x{on_cpu / off_cpu:.3f}"
    )


if __name__ == "__main__":
    main()
