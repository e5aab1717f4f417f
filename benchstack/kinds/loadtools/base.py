"""What the rest of bench-stack asks a load tool adapter (:mod:`benchstack.kinds.loadtools`).

One adapter per tool holds everything that differs between tools: how a load plan for it is checked, its
exact command line and its warm-up, its time bound, how its output is parsed and its errors are counted,
how its per-request data is collected, its latency distribution's resolution, how to ask its version, which
verdict checks can use its data, and the OS packages that install it. Code outside the package asks the
adapter (``by_name(cell["tool"])``) instead of comparing tool names.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from benchstack.common.inputs import shown
from benchstack.common.numbers import is_int
from benchstack.records.cellplan import CellPlan, ConnectionLoad
from benchstack.records.distribution import Resolution
from benchstack.records.model import Counting, Parsed, attempts, failed_count

if TYPE_CHECKING:
    from benchstack.plan.loadplan import LoadPlan

# Runs a shell command on the loadgen: (rc, stdout, stderr); benchstack.measure.runner.measure_cell takes one.
Executor = Callable[[str], tuple[int, str, str]]
# The limits of a load plan (:mod:`benchstack.plan.experiment` refuses more).
MAX_REQUESTS = 1_000_000
MAX_DURATION_S = 600
# Head room on top of the tool's own bound before `timeout` kills it.
TIMEOUT_SLACK_S = 60
# The fields of a load plan besides ``tool``, in the order docs/experiment.md's plan table lists them.
PLAN_FIELDS = ("concurrency", "rate", "requests", "duration_s", "threads", "keepalive", "timeout_s")


def positive_int(name: str, value: object) -> int:
    if not is_int(value) or value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return value


def bounded_int(problems: list[str], where: str, v: object, maximum: int) -> bool:
    """Whether ``v`` is an integer from 1 to ``maximum``; a problem naming ``where`` when not."""
    if not is_int(v) or not 1 <= v <= maximum:
        problems.append(f"{where}: must be an integer from 1 to {maximum:_}, not {shown(v)}")
        return False
    return True


def check_url(tool: str, url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{tool} needs an http:// or https:// URL with a host, not {url!r}")
    if not parts.path:
        raise ValueError(f"{tool} needs a path in the URL, e.g. {url}/ (ab rejects {url!r} as invalid)")


@dataclass(frozen=True)
class ClosedRun:
    """One closed-loop run's arguments, from which :meth:`LoadTool.build` makes the tool's argv.

    ``keepalive`` None means the tool's own behaviour: off for ab, always on for wrk (False is an error).
    ``threads`` (wrk only) defaults to min(2, concurrency). ``per_request``: where the tool's per-request
    data goes (ab's ``-g FILE``, wrk's ``-s`` report script).
    """

    url: str
    concurrency: int
    requests: int | None = None
    duration_s: int | None = None
    threads: int | None = None
    keepalive: bool | None = None
    timeout_s: int | None = None
    per_request: str | None = None


class LoadTool(ABC):
    """A load tool. Subclasses set the class attributes and implement the abstract methods; the registry
    holds one instance of each."""

    name: ClassVar[str]
    # Where messages, the schemas' enums and the docs list it: the registry sorts its kinds by it, each
    # kind its own number.
    order: ClassVar[int]
    # An offered rate of new requests (open loop), not a number of concurrent clients.
    open_loop: ClassVar[bool] = False
    # What bounds a closed-loop run: "requests" or "duration_s"; a closed-loop warm-up runs with the tool
    # its own bound names (:func:`benchstack.kinds.loadtools.warmup_tool`). Open-loop tools: "duration_s".
    bound: ClassVar[str] = "duration_s"
    # Keep-alive is a choice (cells and labels of the keep-alive variant say ``-k``), rather than fixed.
    keepalive_choice: ClassVar[bool] = False
    # Keep-alive cannot be turned off.
    always_keepalive: ClassVar[bool] = False
    # Polls its sockets without sleeping: its own CPU use says nothing about being the bottleneck.
    spinning: ClassVar[bool] = False
    # Descriptors the tool can hold at most whatever the open-files limit (None: that limit only).
    fd_limit: ClassVar[int | None] = None
    # Shell that prints the version when the tool's own output does not (None: the output says it).
    version_probe: ClassVar[str | None] = None
    # OS packages per distribution family, as roles/loadgen/vars/<family>.yml ``__loadgen_packages`` lists
    # them (None: not installable there; empty: the role builds it); each is also in the host fingerprint's
    # ``host_fingerprint_packages`` (tests/unit/kinds/test_loadtools.py holds the role to these).
    packages: ClassVar[dict[str, tuple[str, ...] | None]]
    # How its error counters become failed requests and attempts (:mod:`benchstack.records.model`).
    counting: ClassVar[Counting]
    # Its latency distribution's source, unit, bits and flags (:mod:`benchstack.records.distribution`).
    resolution: ClassVar[Resolution]
    # What it is in one phrase, and what each plan field (:data:`PLAN_FIELDS`) means for it: the experiment
    # schema's ``tool`` description and docs/experiment.md's plan table (scripts/kindfiles/loadtools.py).
    summary: ClassVar[str]
    plan_docs: ClassVar[dict[str, str]]

    # ------------------------------------------------------------ the load plan

    @abstractmethod
    def check_plan(self, where: str, written: dict[str, Any], problems: list[str]) -> bool:
        """Add to ``problems`` what is wrong with the load plan ``written`` (the experiment's mapping, found
        at ``where``) for this tool: the fields it needs and those it refuses (types and ranges are the
        published experiment schema's, checked before); whether the plan is fine (only then is a command
        built from it)."""

    def keepalive(self, load: LoadPlan) -> bool:
        """Whether cells of the load plan ``load`` keep connections alive."""
        return True if self.always_keepalive else bool(load.keepalive)

    def threads(self, load: LoadPlan, level: int) -> int | None:
        """The thread count of a cell at ``level``; None for a single-threaded tool."""
        return None

    # ------------------------------------------------------------ labels

    def cell_part(self, keepalive: bool) -> str:
        """The tool's part of a cell id (:func:`benchstack.results.cell.cell_id`), already filename-safe."""
        return f"{self.name}-k" if keepalive and self.keepalive_choice else self.name

    def short_label(self, keepalive: bool) -> str:
        """The tool as messages name it: ``ab -k`` for the keep-alive variant, else its name."""
        return f"{self.name} -k" if keepalive and self.keepalive_choice else self.name

    def label(self, keepalive: bool) -> str:
        """The tool as tables name a load point's tool: ``ab -k``, ``httperf (open loop)``."""
        return f"{self.name} (open loop)" if self.open_loop else self.short_label(keepalive)

    def level_label(self, level: int) -> str:
        """``c100`` for 100 concurrent clients, ``500/s`` for an offered rate of 500 requests per second."""
        return f"{level}/s" if self.open_loop else f"c{level}"

    # ------------------------------------------------------------ commands

    def build(self, run: ClosedRun) -> list[str]:
        """A closed-loop run's argv from its arguments; ValueError on a bad combination."""
        positive_int("concurrency", run.concurrency)
        check_url(self.name, run.url)
        if run.timeout_s is not None:
            positive_int("timeout_s", run.timeout_s)
        if run.duration_s is not None:
            positive_int("duration_s", run.duration_s)
        return self.argv(run)

    def argv(self, run: ClosedRun) -> list[str]:
        """The tool's argv for arguments :meth:`build` checked (closed-loop tools)."""
        raise ValueError(f"{self.name} is open loop: build it from a cell plan with its rate (command)")

    def closed_command(
        self, cell: CellPlan, url: str, timeout_s: int | None, per_request: str | None
    ) -> list[str]:
        """:meth:`build` from a closed-loop cell plan."""
        return self.build(
            ClosedRun(
                url,
                required_int(cell, "concurrency"),
                requests=cell.requests,
                duration_s=cell.duration_s,
                threads=cell.threads,
                keepalive=cell.keepalive,
                timeout_s=timeout_s,
                per_request=per_request,
            )
        )

    @abstractmethod
    def command(self, cell: CellPlan, url: str, per_request: str | None = None) -> list[str]:
        """The measured command of the cell plan ``cell`` against ``url``; ``per_request`` is what
        :meth:`per_request_setup` returned."""

    @abstractmethod
    def warmup_command(self, cell: CellPlan, url: str) -> list[str]:
        """The unrecorded warm-up before ``cell`` (whose ``warmup`` is set) run with this tool."""

    @abstractmethod
    def bound_s(self, cell: CellPlan) -> int:
        """Seconds after which `timeout` stops the measured command of ``cell``."""

    def warmup_bound_s(self, cell: CellPlan) -> int:
        """Seconds after which `timeout` stops this tool's warm-up for ``cell``."""
        return self.bound_s(replace(cell, tool=self.name, duration_s=self.warmup_s(cell)))

    def warmup_s(self, cell: CellPlan) -> int | None:
        """How long a warm-up with this tool runs for ``cell``, when it runs for a time."""
        return warmup_of(cell).get("duration_s")

    def duration_bound(self, cell: CellPlan) -> bool:
        """Whether ``cell`` runs for its ``duration_s``, so taking much longer is an overrun."""
        return bool(cell.duration_s)

    def open_connections(self, load: ConnectionLoad) -> int:
        """The most connections an open-loop cell can hold open (closed loop: its concurrency)."""
        return int(load.concurrency or 0)

    def fd_warning(self, load: ConnectionLoad, connections: int, room: int) -> str:
        """Why ``connections`` connections of ``load`` do not fit the ``room`` the tool has."""
        return f"{self.name} may hold {connections} connections; it can hold about {room}"

    # ------------------------------------------------------------ the noise probe (benchstack.measure.probe)

    # Which tool the probe prefers among a plan's tools (lowest first); None: cannot probe. The probe's
    # output: group 1 of ``probe_rps`` is one run's req/s, of ``probe_done`` its completed requests.
    probe_rank: ClassVar[int | None] = None
    probe_rps: ClassVar[re.Pattern[str] | None] = None
    probe_done: ClassVar[re.Pattern[str] | None] = None

    def probe_command(self, url: str, seconds: int, connections: int) -> str | None:
        """A shell command loading ``url`` for ``seconds`` at ``connections`` whose output says its req/s."""
        return None

    # ------------------------------------------------------------ output

    @abstractmethod
    def parse(self, text: str) -> Parsed:
        """The tool's output as a :class:`Parsed`; :class:`benchstack.records.model.ParseError` when it is not
        this tool's output or is cut short."""

    def failed_count(self, errors: dict[str, int | None]) -> int:
        """Distinct failed requests, slow ones left out unless they also failed
        (:mod:`benchstack.records.model`)."""
        return failed_count(self.counting, errors)

    def attempts(self, requests_completed: int, errors: dict[str, int | None]) -> int:
        """Requests tried: completed ones plus attempts the tool counted as failed without completing."""
        return attempts(self.counting, requests_completed, errors)

    # ------------------------------------------------------------ per-request data

    def per_request_setup(self, execute: Executor) -> tuple[str | None, list[str]]:
        """Prepare the loadgen for collecting per-request data: (what :meth:`command` takes as
        ``per_request``, notes for the cell). The runner sends :meth:`setup_command` with the cell's other
        commands in one round trip and hands its reply to :meth:`setup_result`; this is both at once."""
        command = self.setup_command()
        return self.setup_result(*(execute(command) if command else (0, "", "")))

    def setup_command(self) -> str | None:
        """The shell that prepares the loadgen for per-request data, or None when nothing needs it."""
        return None

    def setup_result(self, rc: int, out: str, err: str) -> tuple[str | None, list[str]]:
        """(what :meth:`command` takes as ``per_request``, notes for the cell) from the reply to
        :meth:`setup_command` (rc 0 and no output when there was none)."""
        return None, []

    def incomplete(self, raw: str, per_request: str | None) -> str | None:
        """Why output that parsed is still cut short, given the per-request setup; None when complete."""
        return None

    def per_request(
        self,
        parsed: Parsed,
        threshold_ms: float | None,
        raw: str,
        tsv: str | None,
        per_request: str | None,
    ) -> list[str]:
        """Fill ``parsed``'s distribution and slow-request count from the per-request data; notes."""
        return []

    def cell_notes(self, cell: CellPlan) -> list[str]:
        """What ``cell`` says about how this tool measured it."""
        return []

    # ------------------------------------------------------------ the verdict

    def cores(self, command: list[Any]) -> int:
        """How many CPUs the tool can keep busy, from its command line: one unless it is threaded."""
        return 1

    def unmeasured_slow_note(self, cells: int) -> str:
        """The verdict's note for ``cells`` cells with a threshold whose slow responses were not counted."""
        return unmeasured_slow_note(self.name, cells)

    def no_steady_data_note(self, cells: int) -> str:
        """The verdict's note for ``cells`` cells without per-second data (the steady-state check)."""
        return no_steady_data_note(self.name, cells)


def required_int(cell: CellPlan, name: str) -> int:
    """The field ``name`` of ``cell`` that the tool needs (a closed-loop cell's ``concurrency``, an open-loop
    cell's ``rate``, a timed run's ``duration_s``); ValueError naming it when the cell has none."""
    value = getattr(cell, name)
    if value is None:
        raise ValueError(f"{cell.cell_id}: the cell plan has no {name}, which {cell.tool} needs")
    return int(value)


def warmup_of(cell: CellPlan) -> dict[str, int]:
    """A cell's warm-up (requests or duration_s); ValueError for a cell without one."""
    if cell.warmup is None:
        raise ValueError(f"{cell.cell_id}: the cell plan has no warm-up")
    return cell.warmup


def unmeasured_slow_note(tool: str, cells: int) -> str:
    """The verdict's note for slow responses not counted, for any tool (its adapter may say more)."""
    return (
        f"slow responses: {cells} {tool} cells with a threshold kept no per-request data "
        "(over_threshold not measured)"
    )


def no_steady_data_note(tool: str, cells: int) -> str:
    """The verdict's note for cells without per-second data, for any tool (its adapter may say more)."""
    return f"steady state: {cells} {tool} cells: {tool} keeps no per-second data"
