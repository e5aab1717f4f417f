"""Filters of the app role over the plan's user apps (benchstack.userapp): which apps to deploy, their
releases, the records the target keeps of them, and what changed for the app_server role."""

from __future__ import annotations

import base64
import json
from typing import Any

from benchstack.userapp import app_record, app_state, apps_to_deploy, bundler_failure, releases_to_install


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
            "bench_bundler_failure": bench_bundler_failure,
        }
