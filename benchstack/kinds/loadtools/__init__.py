"""One adapter per load tool, and the registry of them.

Each module (``ab``, ``wrk``, ``httperf``, ``siege``) holds all that bench-stack knows of its tool: the parser
of its output (``parse(text) -> Parsed``, :class:`~benchstack.records.model.ParseError` on output that is not
the tool's or is cut short) and a :class:`~benchstack.kinds.loadtools.base.LoadTool` adapter, ``TOOL``: plan
checks, command, warm-up, time bound, error accounting, per-request data, distribution resolution, version
probe, what the verdict can check, its OS packages. The rest of the package asks :func:`by_name` instead of
comparing tool names. Adding a tool: a module here (the registry finds it), then
``scripts/kind_files.py`` writes the schemas', loadgen role's, fingerprint's and docs' parts; its captured
outputs and tests (docs/adding-a-kind.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchstack.kinds.loadtools.ab import AB_MAX_CONCURRENCY
from benchstack.kinds.loadtools.base import LoadTool
from benchstack.kinds.registry import Registry
from benchstack.records.model import Parsed

# The modules that hold no tool; every other module of the package is a tool's (its TOOL).
SUPPORT = ("base", "loadcmd", "perrequest")
# In the order messages list them (the schemas' ``tool`` enums are in this order too: each tool's ``order``).
REGISTRY: Registry[LoadTool] = Registry.of_package("tool", __name__, __path__, ("TOOL", LoadTool), SUPPORT)
TOOLS: tuple[str, ...] = tuple(REGISTRY)
# The most concurrent clients a closed-loop plan may ask for: ab's own limit (wrk has none of its own).
MAX_CONCURRENCY = AB_MAX_CONCURRENCY

__all__ = ["REGISTRY", "TOOLS", "LoadTool", "by_name", "find", "parse"]


find = REGISTRY.find
by_name = REGISTRY.by_name


def parse(tool: str, text: str) -> Parsed:
    """Parse ``text`` as output of ``tool``."""
    return by_name(tool).parse(text)


def warmup_tool(tool: str | None, warmup: Mapping[str, Any] | None) -> str | None:
    """The tool a warm-up before a cell of ``tool`` runs with: an open-loop tool itself (at its offered
    rate), else the closed-loop tool bounded the way the warm-up is (a request count: ab; a duration: wrk);
    None without a warm-up."""
    if not warmup:
        return None
    own = find(tool)
    if own is not None and own.open_loop:
        return own.name
    bound = "requests" if "requests" in warmup else "duration_s"
    return next(t.name for t in REGISTRY.values() if not t.open_loop and t.bound == bound)
