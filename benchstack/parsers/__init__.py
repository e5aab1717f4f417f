"""Parsers turn the text a load tool printed into a :class:`~benchstack.model.Parsed`.

Each parser module has ``parse(text: str) -> Parsed`` and raises :class:`~benchstack.model.ParseError` when
the text is not that tool's output or lacks the summary every finished run prints.
"""

from __future__ import annotations

from collections.abc import Callable

from benchstack.model import Parsed, ParseError
from benchstack.parsers import ab, httperf, wrk

PARSERS: dict[str, Callable[[str], Parsed]] = {"ab": ab.parse, "wrk": wrk.parse, "httperf": httperf.parse}

__all__ = ["PARSERS", "ParseError", "Parsed", "parse"]


def parse(tool: str, text: str) -> Parsed:
    """Parse ``text`` as output of ``tool`` ("ab", "wrk" or "httperf")."""
    try:
        parser = PARSERS[tool]
    except KeyError:
        raise ValueError(f"unknown tool {tool!r}; known: {', '.join(sorted(PARSERS))}") from None
    return parser(text)
