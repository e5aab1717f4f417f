"""apache's dropped-stacks side effect (run last by side_effect.yml): the scenario's experiment without an
Apache proxy stack (sinatra-thin-x2-apache: its thin instances, env file and the Sinatra app's folder) and
the mod_php stack (php-apache-prefork: the PHP app's folder), provisioned as a user's rerun, then once
more, then the scenario's own experiment again. Records evidence (tests/sideeffect.py); tests/test_dropped.py
says what must hold.

Before and after each run: each Apache instance's main pid, what Debian's setup-instance made for each
instance, each stack's answer through its front, the dropped stacks' units and files, each kept instance's
apachectl configtest.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import yaml

PROJECT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(PROJECT), str(PROJECT / "tests")]

from sideeffect import ephemeral, main_pids, playbook, save, sh, snapshot  # noqa: E402
from stackcheck import endpoints, front_checks  # noqa: E402
from stackcheck import resolved as plan_stacks  # noqa: E402

HOST = "bench-mol-apache-bookworm"
EXPERIMENT = Path(__file__).resolve().parent / "experiment.yml"
BASE = yaml.safe_load(EXPERIMENT.read_text(encoding="utf-8"))
DROPPED = ["sinatra-thin-x2-apache", "php-apache-prefork"]
# Rerun only what changed, as a user's second run does (the scenario's inventory says false for idempotence).
SKIP = {"bench_provision_skip_unchanged": True}


def resolved(experiment: dict[str, Any]) -> list[dict[str, Any]]:
    return plan_stacks(copy.deepcopy(experiment["stacks"]))


def instance_unit(stack: dict[str, Any]) -> str:
    return f"apache2@{stack['front']['instance']}.service"


def instance_files(stack: dict[str, Any]) -> str:
    """Shell globs of what Debian's setup-instance made for the stack's instance."""
    name = stack["front"]["instance"]
    return (
        f"/etc/apache2-{name} /etc/logrotate.d/apache2-{name} /etc/default/apache-htcacheclean-{name} "
        f"/usr/local/sbin/*-{name} /var/log/apache2-{name}"
    )


def look(stacks: list[dict[str, Any]]) -> dict[str, Any]:
    """Per stack: its instance's and app server units' `is-active is-enabled`, which of its instance's,
    env and app files exist; each instance's main pid and each stack's answer."""
    out: dict[str, Any] = {}
    for s in stacks:
        units = [instance_unit(s), *(ep["unit"] for ep in s["endpoints"])]
        paths = [s["app"]["dir"], *([s["server"]["env_file"]] if s["server"] else [])]
        script = "; ".join(
            [
                *(
                    f"echo {u} $(systemctl is-active {u}) "
                    f"$(systemctl is-enabled {u} 2>/dev/null || echo none)"
                    for u in units
                ),
                f"for p in {instance_files(s)} {' '.join(paths)}; do "
                '[ -e "$p" ] && echo "$p present"; done; true',
            ]
        )
        lines = [line.split(" ", 1) for line in sh(HOST, script).splitlines()]
        out[s["name"]] = {
            "units": {u: state for u, state in lines if u in units},
            "files": sorted(p for p, state in lines if state == "present"),
            "port": s["port"],
        }
    base = resolved(BASE)
    urls = [c["url"] for c in front_checks(BASE["stacks"])]
    snap = snapshot(HOST, [instance_unit(s) for s in base], urls, [])
    return {"stacks": out, "pids": snap["pids"], "answers": snap["answers"]}


def configtests(stacks: list[dict[str, Any]]) -> dict[str, str]:
    """Each instance's `apachectl configtest`: its last line of output and its exit code."""
    out = {}
    for s in stacks:
        text = sh(
            HOST,
            f"APACHE_CONFDIR=/etc/apache2-{s['front']['instance']} apachectl configtest 2>&1; echo rc=$?",
            check=False,
        )
        *said, rc = text.strip().splitlines() or [""]
        out[s["name"]] = f"{said[-1] if said else ''} {rc}"
    return out


def dropped() -> None:
    data = copy.deepcopy(BASE)
    data["stacks"] = [s for s in data["stacks"] if s["name"] not in DROPPED]
    path = ephemeral() / "apache-dropped.yml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    base, kept = resolved(BASE), resolved(data)
    before = look(base)
    run = playbook("provision.yml", extra={**SKIP, "experiment": str(path)})
    after = look(base)
    checked = configtests(kept)
    again = playbook("provision.yml", extra={**SKIP, "experiment": str(path)})
    restore = playbook("provision.yml", extra=SKIP)
    save(
        "dropped",
        {
            "dropped": DROPPED,
            "kept": [s["name"] for s in kept],
            "kept_units": [instance_unit(s) for s in kept],
            "app_server_units": [ep["unit"] for ep in endpoints(copy.deepcopy(BASE["stacks"]))],
            "expected": {c["url"]: f"200 {c['body']}" for c in front_checks(BASE["stacks"])},
            "before": before,
            "run": run.to_dict(),
            "after": after,
            "configtest": checked,
            "again": again.to_dict(),
            "restore": restore.to_dict(),
            "restored": look(base),
            "pids_after_restore": main_pids(HOST, [instance_unit(s) for s in base]),
        },
    )


if __name__ == "__main__":
    dropped()
