"""The exit codes are one scheme, written down where a user looks: docs/verdict.md's table holds every code of
benchstack.common.exitcodes and no other, the CLI's docstring names each, and every option of the gates
(validate, compare) is in the docs."""

import argparse
import re
from pathlib import Path

from benchstack import cli
from benchstack.common import exitcodes

ROOT = Path(__file__).resolve().parents[3]
CODES = {name: value for name, value in vars(exitcodes).items() if name.isupper() and isinstance(value, int)}


def verdict_doc() -> str:
    return (ROOT / "docs" / "verdict.md").read_text(encoding="utf-8")


def test_docs_verdict_lists_every_exit_code_once_and_no_other() -> None:
    section = verdict_doc().split("## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    table = section.split("\n\n")[1]
    rows = [line.split("|")[1].strip() for line in table.splitlines()[2:]]
    assert rows == [str(code) for code in sorted(CODES.values())]
    assert sorted(CODES.values()) == list(range(8))


def test_the_cli_docstring_and_the_modules_table_name_every_code() -> None:
    for code in CODES.values():
        assert f"{code} " in (cli.__doc__ or "")
        assert re.search(rf"^{code}\s", exitcodes.__doc__ or "", re.MULTILINE)


def test_bench_fail_on_values_are_documented_in_the_table() -> None:
    section = verdict_doc().split("## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    assert [v for v in exitcodes.FAIL_ON if f"| `{v}`" in section] == list(exitcodes.FAIL_ON)


def test_every_option_of_the_gates_is_in_the_docs() -> None:
    parser = cli._build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    docs = verdict_doc() + (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    for command in ("validate", "compare"):
        for action in sub.choices[command]._actions:
            for option in action.option_strings:
                if option.startswith("--") and option != "--help":
                    assert option in docs, (command, option)
