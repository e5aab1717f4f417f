"""A run's report as data: what report.md and report.html say, in their order, built once from the run
(:func:`benchstack.report.build.build_report`) and rendered by :mod:`benchstack.report.render`.

A :class:`Report` is a title and ordered :class:`Section` s. A section holds blocks: a :class:`Paragraph`,
a list of :class:`Bullets`, a :class:`Subheading`, a :class:`Table` of strings or a :class:`Figure` (a plot's
PNG file, which report.html embeds and report.md links). Text is a tuple of :class:`Span` s, so that a
reason's status and code can be set apart in either format. Nothing here knows Markdown or HTML.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

PLAIN, STRONG, CODE = "", "strong", "code"


@dataclass(frozen=True)
class Span:
    text: str
    style: str = PLAIN  # PLAIN, STRONG or CODE


Text = tuple[Span, ...]


def text(*parts: str | Span) -> Text:
    """Spans from plain strings and spans: ``text(Span("noisy", STRONG), ": why")``."""
    return tuple(p if isinstance(p, Span) else Span(p) for p in parts)


# Each block names its kind, which the HTML template dispatches on (Jinja has no isinstance).
@dataclass(frozen=True)
class Paragraph:
    kind: ClassVar[str] = "paragraph"
    text: Text


@dataclass(frozen=True)
class Bullets:
    kind: ClassVar[str] = "bullets"
    items: tuple[Text, ...]


@dataclass(frozen=True)
class Subheading:
    kind: ClassVar[str] = "subheading"
    text: str


@dataclass(frozen=True)
class Table:
    kind: ClassVar[str] = "table"
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]  # each as long as columns
    # Per row: its precision is marked noisy, which report.html highlights; empty: no row is.
    marked: tuple[bool, ...] = ()


@dataclass(frozen=True)
class Figure:
    kind: ClassVar[str] = "figure"
    path: Path  # a PNG file in the run folder's plots/
    caption: str = ""  # what the plot shows, under it (and its alt text)
    plot: str = ""  # its kind (benchstack.report.plots.KINDS): report.html names it, a browser test finds it


Block = Paragraph | Bullets | Subheading | Table | Figure


@dataclass(frozen=True)
class Section:
    heading: str | None  # None: the run's summary, right under the title
    blocks: tuple[Block, ...]
    status: str | None = None  # the verdict's status, which report.html colours the heading by
    # False: report.html only (why there are no plots).
    in_markdown: bool = True


@dataclass(frozen=True)
class Report:
    title: str
    sections: tuple[Section, ...]
