"""Shared testinfra helpers: what each stack of an experiment must answer, derived by the same code the
roles use (benchstack.stacks), so tests and roles cannot disagree about sockets and ports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchstack.experiment import load_experiment
from benchstack.stacks import front_checks as _front_checks
from benchstack.stacks import instance_checks as _instance_checks
from benchstack.stacks import normalize_stacks

PROJECT = Path(__file__).resolve().parents[1]


def experiment_stacks(name: str) -> list[dict[str, Any]]:
    return load_experiment(PROJECT / "experiments" / f"{name}.yml").stacks


def front_checks(stacks: list[dict[str, Any]], host: str = "127.0.0.1") -> list[dict[str, Any]]:
    return [
        {**c, "path": c["url"].split(str(c["url"].split("/")[2]), 1)[1]} for c in _front_checks(stacks, host)
    ]


def instance_checks(stacks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**c, "path": "/" + c["url"].split("/", 3)[3]} for c in _instance_checks(stacks)]


def endpoints(stacks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [ep for s in normalize_stacks(stacks) for ep in s["endpoints"]]
