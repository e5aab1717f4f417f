"""The places a bench-stack.yml run crosses from YAML/Jinja into the project's Python, by reading (issue 26).

Lists each call of a project filter in the playbooks' templates and each task that runs a project action
plugin or module (``plugins/action``, ``plugins/modules``), in ``playbooks/`` at a git revision (roles are
not counted; ``doctor.yml`` is not part of the run). ``crossings.py`` beside it counts the calls of a real
run.

    python scripts/crossings/sites.py [REVISION]    # default: HEAD
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import yaml


def files(rev: str, folder: str) -> list[str]:
    out = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, folder], capture_output=True, text=True)
    return out.stdout.split()


def show(rev: str, path: str) -> str:
    return subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True).stdout


def sites(rev: str) -> list[tuple[str, str, str]]:
    """(``filter`` or ``task``, name, file) for every crossing site of the playbooks at ``rev``."""
    tasks = {p.rsplit("/", 1)[1][:-3] for p in files(rev, "plugins/action") + files(rev, "plugins/modules")}
    filters = {
        name for p in files(rev, "plugins/filter") for name in re.findall(r'"(bench_\w+)":', show(rev, p))
    }
    found: list[tuple[str, str, str]] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in tasks and isinstance(value, dict | None):
                    found.append(("task", key, path))
                walk(value, path)
        elif isinstance(node, list):
            for item in node:
                walk(item, path)
        elif isinstance(node, str):
            found.extend(("filter", m, path) for m in re.findall(r"\|\s*(bench_\w+)", node) if m in filters)

    for path in files(rev, "playbooks"):
        if path.endswith(".yml") and not path.endswith("doctor.yml"):
            walk(yaml.safe_load(show(rev, path)), path)
    return found


if __name__ == "__main__":
    rev = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    found = sites(rev)
    for kind, name, path in found:
        print(f"  {kind:6} {name:26} {path}")
    kinds = [kind for kind, _, _ in found]
    print(f"{rev}: {len(found)} sites ({kinds.count('filter')} filter calls, {kinds.count('task')} tasks)")
