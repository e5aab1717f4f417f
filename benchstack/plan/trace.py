"""Counts of expensive steps, for scripts/measure-converge.py: with ``BENCH_STACK_RESOLVE_LOG`` set, each
read of an experiment file and each resolution of its stacks appends one word to that file."""

from __future__ import annotations

import os


def note(event: str) -> None:
    path = os.environ.get("BENCH_STACK_RESOLVE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(event + "\n")
