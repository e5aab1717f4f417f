"""Filters of the webapp role: the bundled apps' files for bench_files, and over the plan's user apps
(benchstack.kinds.apps.userapp): which apps to deploy, their releases, the records the target keeps of them,
and what changed for the app_server role."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from ansible.errors import AnsibleFilterError

from benchstack.kinds.apps.userapp import (
    app_record,
    app_state,
    apps_to_deploy,
    bundler_failure,
    releases_to_install,
)


def bench_app_tree(
    tree: list[dict[str, Any]], dest: str, owner: str, group: str
) -> dict[str, list[dict[str, Any]]]:
    """A ``community.general.filetree`` answer (a bundled app's folder on the controller) as bench_files'
    folders and files under ``dest``: folders 0755, files 0644, with their contents."""
    attrs = {"owner": owner, "group": group}
    folders = [{"path": dest, "mode": "0755", **attrs}]
    files = []
    for entry in sorted(tree, key=lambda e: e["path"]):
        path = f"{dest.rstrip('/')}/{entry['path']}"
        if entry["state"] == "directory":
            folders.append({"path": path, "mode": "0755", **attrs})
        elif entry["state"] == "file":
            try:
                content = Path(entry["src"]).read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                raise AnsibleFilterError(f"{entry['src']}: a bundled app's files must be UTF-8 text") from exc
            files.append({"path": path, "content": content, "mode": "0644", **attrs})
        else:
            raise AnsibleFilterError(
                f"{entry['src']}: a bundled app holds only folders and files, not a {entry['state']}"
            )
    if not files:
        raise AnsibleFilterError(
            f"{dest}: the bundled app has no files here (roles/webapp/files/{dest.rsplit('/', 1)[-1]})"
        )
    return {"folders": folders, "files": files}


def _records(slurped: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Records by app name from a slurp loop over the apps (a missing or unreadable record is no record)."""
    out = {}
    for result in slurped:
        if result.get("content"):
            try:
                record = json.loads(base64.b64decode(result["content"]))
            except ValueError:
                continue
            out[result["item"]["name"]] = record
    return out


def bench_apps_to_deploy(
    user_apps: list[dict[str, Any]], slurped: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    return apps_to_deploy(user_apps, _records(slurped))


def bench_app_releases(todo: list[dict[str, Any]], git_results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_name = {r["item"]["name"]: r for r in git_results if "commit" in r}
    return releases_to_install(todo, by_name)


def bench_app_record(item: dict[str, Any], lock_stats: list[dict[str, Any]]) -> dict[str, Any]:
    """``lock_stats``: a stat loop over (release item, lock file name) pairs, with sha256 checksums."""
    locks = {
        r["item"][1]: r["stat"]["checksum"]
        for r in lock_stats
        if r["item"][0]["name"] == item["name"] and r.get("stat", {}).get("exists")
    }
    return app_record(item, locks)


def bench_app_state(
    user_apps: list[dict[str, Any]], slurped: list[dict[str, Any]], deployed: list[dict[str, Any]]
) -> dict[str, list[str]]:
    return app_state(user_apps, _records(slurped), deployed)


def bench_bundler_failure(stderr: str, source: str) -> str:
    return bundler_failure(stderr or "", source)


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "bench_apps_to_deploy": bench_apps_to_deploy,
            "bench_app_releases": bench_app_releases,
            "bench_app_record": bench_app_record,
            "bench_app_state": bench_app_state,
            "bench_app_tree": bench_app_tree,
            "bench_bundler_failure": bench_bundler_failure,
        }
