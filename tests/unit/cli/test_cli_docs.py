"""docs/results.md's table of the CLI's commands names every subcommand argparse knows, and no other
(issue 41: the table lacked ``hist`` and ``drop``)."""

import argparse
import re
from pathlib import Path

from benchstack import cli

ROOT = Path(__file__).resolve().parents[3]


def subcommands() -> set[str]:
    parser = cli._build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(sub.choices)


def documented_commands() -> set[str]:
    """The commands of the table under "Working with stored results": each row's first cell starts with
    ``bench-stack NAME``."""
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    section = text.split("## Working with stored results", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `bench-stack ([a-z][a-z-]*)", section, re.MULTILINE))


def test_the_cli_table_in_docs_results_names_every_subcommand_and_no_other() -> None:
    assert {"parse", "report", "hist", "drop"} <= subcommands()
    assert documented_commands() == subcommands()
