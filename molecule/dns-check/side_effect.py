"""dns-check's side effect: the host tuning profiles applied by the project's provisioning on the same host,
tuned then stock, with a kernel setting the container platform did not set. Records evidence
(tests/sideeffect.py); the tests in tests/ say what must hold. In order:

1. converged: the record the converge left (/proc/sys read-only, as Docker mounts it);
2. tuned-writable: /proc/sys made writable for the container (its own network namespace), tuned again;
3. stock: the stock profile on the same host;
4. tuned-again: /proc/sys read-only again, tuned again: the host as the converge left it.

Only ``host``'s tuning tasks run (``--tags bench_host_tuning``), the scenario's inputs otherwise.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

PROJECT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(PROJECT), str(PROJECT / "tests")]

from sideeffect import fresh_evidence, playbook, proc_sys_writable, save, sh  # noqa: E402

HOST = "bench-mol-dns-bookworm"
SCENARIO = Path(__file__).resolve().parent
TUNED = yaml.safe_load((SCENARIO / "molecule.yml").read_text(encoding="utf-8"))["provisioner"]["inventory"][
    "group_vars"
]["all"]["host_tuned_sysctls"]
FILES = [
    "/etc/sysctl.d/60-bench-stack.conf",
    "/etc/security/limits.d/60-bench-stack.conf",
    "/var/lib/bench-stack/tuning/original.json",
]


def host_state() -> dict[str, Any]:
    values = sh(HOST, "sysctl " + " ".join(TUNED) + " 2>/dev/null; true")
    record = sh(HOST, "cat /var/lib/bench-stack/tuning/tuning.json")
    present = sh(HOST, "ls -1 " + " ".join(FILES) + " 2>/dev/null; true").split()
    return {
        "sysctls": dict(line.split(" = ", 1) for line in values.splitlines() if " = " in line),
        "record": json.loads(record),
        "files": {f: f in present for f in FILES},
    }


def apply(profile: str) -> dict[str, Any]:
    run = playbook("provision.yml", extra={"host_profile": profile}, tags="bench_host_tuning")
    return {"playbook": run.to_dict(), **host_state()}


def main() -> None:
    fresh_evidence()
    # A writable /proc/sys exposes the machine's own settings beside the container's net.* ones.
    outside = [k for k in TUNED if not k.startswith("net.")]
    if outside:
        raise SystemExit(f"only net.* settings are the container's own; the scenario tunes {outside}")
    save("tuning-converged", host_state())
    proc_sys_writable(HOST, True)
    try:
        save("tuning-tuned-writable", apply("tuned"))
        save("tuning-stock", apply("stock"))
    finally:
        proc_sys_writable(HOST, False)
    save("tuning-tuned-again", apply("tuned"))


if __name__ == "__main__":
    main()
