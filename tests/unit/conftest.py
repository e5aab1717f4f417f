import re
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "data"


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
