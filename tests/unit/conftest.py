import functools
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

DATA = Path(__file__).resolve().parent.parent / "data"
# The published schema files, read from the worktree on their own (not through benchstack.formats).
SCHEMAS = Path(__file__).resolve().parents[2] / "benchstack" / "schemas"


@functools.cache
def schema_file_validator(name: str) -> Draft202012Validator:
    """Plain jsonschema on a published schema file: what anyone else validating our results would run."""
    schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


_FITTING: set[tuple[str, str]] = set()


def schema_file_errors(name: str, document: Any) -> list[str]:
    """Where ``document`` does not fit the schema file ``name``, one line per error (empty when it fits).
    A document found fitting is remembered: many tests write the same cells, each ~50 ms to check."""
    key = (name, hashlib.sha256(json.dumps(document, sort_keys=True).encode("utf-8")).hexdigest())
    if key in _FITTING:
        return []
    errors = schema_file_validator(name).iter_errors(document)
    found = [f"{'/'.join(map(str, e.absolute_path)) or '(document)'}: {e.message}"[:300] for e in errors]
    if not found:
        _FITTING.add(key)
    return found


@pytest.fixture(autouse=True)
def stored_cells_fit_the_schema_file(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every cell a test stores through the cell writer (benchstack.cell.write_cell) fits
    benchstack/schemas/cell.schema.json as plain jsonschema reads it, or the test fails there: a second
    opinion on benchstack.formats, which write_cell asks first."""
    import benchstack.cell

    dumps = benchstack.cell.dumps_cell

    def dumps_checked(d: dict[str, Any]) -> str:
        text = dumps(d)
        errors = schema_file_errors("cell.schema.json", json.loads(text))
        assert not errors, f"a cell written does not fit benchstack/schemas/cell.schema.json: {errors}"
        return text

    monkeypatch.setattr(benchstack.cell, "dumps_cell", dumps_checked)
    yield


def read_data(tool: str, name: str) -> str:
    return (DATA / tool / name).read_text(encoding="utf-8")


@pytest.fixture
def data_dir() -> Path:
    return DATA


VMSTAT_PID_FILE = "4242 /tmp/bench-stack-vmstat.AbC123"
AB_G_FILE = "/tmp/bench-stack-ab-g.XyZ789"
WRK_SCRIPT_PATH = "/var/lib/bench-stack/bench-stack-wrk-report-0123456789abcdef.lua"


class Helpers:
    """Answers the runner's helper commands (vmstat, ab -g file, wrk script) like a loadgen would.

    ``vmstat``: what vmstat printed during the cell; ``tsv``: the ab -g file's content. ``fail``: helper
    kinds that fail (exit 1), e.g. {"vmstat"}.
    """

    def __init__(self, vmstat: str | None = None, tsv: str = "", fail: frozenset[str] = frozenset()) -> None:
        self.vmstat = read_data("vmstat", "vmstat-during-wrk.txt") if vmstat is None else vmstat
        self.tsv = tsv
        self.fail = fail
        self.commands: list[str] = []

    def reply(self, command: str) -> tuple[int, str, str] | None:
        """(rc, stdout, stderr) for a helper command, None for anything else."""
        kind = None
        if "bench-stack-vmstat" in command and command.startswith("f=$(mktemp"):
            kind, out = "vmstat", VMSTAT_PID_FILE + "\n"
        elif command.startswith("kill "):
            kind, out = "vmstat", self.vmstat
        elif command.startswith("mktemp /tmp/bench-stack-ab-g"):
            kind, out = "ab-g", AB_G_FILE + "\n"
        elif command.startswith(f"cat {AB_G_FILE}"):
            kind, out = "ab-g", self.tsv
        elif "bench-stack-wrk-report" in command and "base64 -d" in command:
            kind, out = "wrk-script", WRK_SCRIPT_PATH + "\n"
        if kind is None:
            return None
        self.commands.append(command)
        if kind in self.fail:
            return 1, "", f"{kind}: failed\n"
        return 0, out, ""


def unwrap(command: str) -> str:
    """The load command inside ``runner.windowed(...)`` (the measured run), or the command as it is."""
    m = re.fullmatch(r"s=\$\(date \+%s\.%N\); (.*); rc=\$\?; echo .*", command)
    return m.group(1) if m else command


def is_helper(command: str) -> bool:
    """Whether the runner sent this command for vmstat, ab's -g file or the wrk script, not a load run."""
    return Helpers().reply(command) is not None
