"""Markdown shared by the report and the history's commands."""

from __future__ import annotations


def markdown_table(columns: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> str:
    """The rows as Markdown table lines (a ``|`` in a value escaped), without a final newline."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(value.replace("|", "\\|") for value in row) + " |" for row in rows]
    return "\n".join(lines)
