"""The report model (:mod:`benchstack.report.model`) as report.md and, through the Jinja2 template
``templates/report.html.j2`` (autoescaped), as report.html; and the verdict as the end of a run prints it.

Markdown: a section is its ``## heading`` and its blocks, one blank line apart; sections are one blank line
apart. A ``|`` in a table's value is escaped; other text is written as it is. A figure is a link to its PNG
file in plots/ beside report.md, which a Markdown viewer shows in place.
"""

from __future__ import annotations

import base64
import functools
from pathlib import Path
from typing import TYPE_CHECKING

from benchstack.analysis.verdict import STATUSES, Verdict
from benchstack.common.markdown import markdown_table
from benchstack.report.model import (
    CODE,
    STRONG,
    Block,
    Bullets,
    Figure,
    Paragraph,
    Report,
    Section,
    Subheading,
    Table,
    Text,
)

if TYPE_CHECKING:
    import jinja2

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
# Load points named per reason in the report, the others counted (run.json keeps every cell id).
SHOWN_POINTS = 3
SLOW_TITLE = "Slow responses (over load.threshold_ms: a result, not a reason to doubt the numbers)"


# ---------------------------------------------------------------- Markdown


def markdown(report: Report) -> str:
    """report.md."""
    parts = [f"# {report.title}\n"] + [section_markdown(s) for s in report.sections if s.in_markdown]
    return "\n".join(parts)


def section_markdown(section: Section) -> str:
    heading = [f"## {section.heading}"] if section.heading else []
    return "\n\n".join(heading + [block_markdown(b) for b in section.blocks]) + "\n"


def block_markdown(block: Block) -> str:
    match block:
        case Paragraph():
            return inline_markdown(block.text)
        case Bullets():
            return "\n".join(f"- {inline_markdown(item)}" for item in block.items)
        case Subheading():
            return f"### {block.text}"
        case Table():
            return markdown_table(block.columns, block.rows)
        case Figure():
            return f"![{block.caption or block.path.stem}]({block.path.parent.name}/{block.path.name})"


def inline_markdown(text: Text) -> str:
    marks = {STRONG: "**", CODE: "`"}
    return "".join(f"{marks.get(s.style, '')}{s.text}{marks.get(s.style, '')}" for s in text)


# ---------------------------------------------------------------- HTML


def png_data(path: Path) -> str:
    """A PNG file as the base64 of a data: URI, so that report.html is one file."""
    return base64.b64encode(path.read_bytes()).decode("ascii")


@functools.cache
def _environment() -> jinja2.Environment:
    import jinja2  # imported when report.html is written, not by every command that reads this module

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["png_data"] = png_data
    return env


def html(report: Report) -> str:
    """report.html: the sections of report.md in its order, with the plots, one self-contained file."""
    return _environment().get_template("report.html.j2").render(report=report, STRONG=STRONG, CODE=CODE)


# ---------------------------------------------------------------- the verdict in words


def cells_text(cells: list[str], shown: int = SHOWN_POINTS) -> str:
    """A reason's cells in a few words: the id of a lone cell, else how many of each load point (the id
    without its ``__r<repetition>``), the ``shown`` largest named: ``12 cells: 10 of nginx-static wrk c32,
    2 of x1 wrk c32``."""
    if len(cells) == 1:
        return f"cell {cells[0]}"
    points: dict[str, int] = {}
    for cell in cells:
        point = " ".join(cell.rsplit("__r", 1)[0].split("__"))
        points[point] = points.get(point, 0) + 1
    if len(points) == 1:
        return f"{len(cells)} cells of {next(iter(points))}"
    ranked = sorted(points.items(), key=lambda item: -item[1])
    named = ", ".join(f"{n} of {point}" for point, n in ranked[:shown])
    rest = len(ranked) - shown
    more = f" and {rest} more load point{'' if rest == 1 else 's'}" if rest > 0 else ""
    return f"{len(cells)} cells: {named}{more}"


def counts_text(v: Verdict) -> str:
    """How many load points have each status: ``3 valid, 1 noisy``."""
    counts = {s: sum(1 for p in v.load_points if p.status == s) for s in STATUSES}
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "none"


def verdict_text(v: Verdict) -> str:
    """The verdict as the end of a run prints it: status, one line per reason with its cell count."""
    lines = [f"Verdict: {v.status.upper()} (load points: {counts_text(v)})"]
    for r in v.reasons:
        n = len(r.cells)
        lines.append(f"- {r.status} {r.code}: {r.message} ({n} cell{'' if n == 1 else 's'})")
    lines += [f"- slow: {s.message}" for s in v.slow]
    lines += [f"- not checked: {note}" for note in v.not_checked]
    return "\n".join(lines) + "\n"
