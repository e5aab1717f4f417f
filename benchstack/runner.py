"""Measure one cell: warm up, run the load tool through a given executor, keep the raw output, store the cell.

The executor runs a command on the loadgen and returns (rc, stdout, stderr); the Ansible action plugin
passes one that goes through the host's connection, tests pass one that replays captured output. Every
command runs under ``timeout`` so a stuck tool cannot hold a run forever.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchstack.cell import CELLS_DIR, cell_to_dict, make_cell, validate_cell, write_cell
from benchstack.loadcmd import build_command
from benchstack.parsers import parse

Executor = Callable[[str], tuple[int, str, str]]
RAW_DIR = "raw"
# Head room on top of the tool's own bound before `timeout` kills it.
TIMEOUT_SLACK_S = 60
# ab's bound is a request count; give it this long at most.
AB_MAX_S = 600


class CellFailed(RuntimeError):
    """The load tool ran but its output could not be made into a cell."""


@dataclass(frozen=True)
class Target:
    """Where the loadgen sends its load."""

    host: str
    target: str
    loadgen: str

    @property
    def mode(self) -> str:
        return "loopback" if self.target == self.loadgen else "network"


def cell_path(run_dir: Path, cell_id: str) -> Path:
    return run_dir / CELLS_DIR / f"{cell_id}.json"


def plan_url(plan: dict[str, Any], host: str) -> str:
    host_part = f"[{host}]" if ":" in host else host
    return f"http://{host_part}:{plan['port']}{plan['path']}"


def _bound_s(plan: dict[str, Any]) -> int:
    if plan["tool"] == "wrk":
        return int(plan["duration_s"]) + TIMEOUT_SLACK_S
    return int(plan["duration_s"] or AB_MAX_S) + TIMEOUT_SLACK_S


def _bounded(cmd: list[str], seconds: int) -> str:
    return shlex.join(["timeout", "--kill-after=5", str(seconds), *cmd])


def warmup_command(plan: dict[str, Any], url: str) -> list[str] | None:
    """The unrecorded warm-up run before a cell, or None when the experiment has none."""
    warm = plan.get("warmup")
    if not warm:
        return None
    if "requests" in warm:
        requests = max(int(warm["requests"]), plan["concurrency"])
        return build_command("ab", url, plan["concurrency"], requests=requests, keepalive=plan["keepalive"])
    return build_command(
        "wrk", url, plan["concurrency"], duration_s=int(warm["duration_s"]), threads=plan.get("threads")
    )


def measure_cell(
    plan: dict[str, Any],
    where: Target,
    run_dir: Path,
    execute: Executor,
    experiment: str,
    tool_version: str | None = None,
) -> tuple[dict[str, Any], bool]:
    """Measure ``plan`` unless its cell is already stored; return (cell, measured_now)."""
    path = cell_path(run_dir, plan["cell_id"])
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8")), False
    url = plan_url(plan, where.host)
    warm = warmup_command(plan, url)
    if warm is not None:
        # A wrk warm-up runs for its own duration; an ab warm-up is bounded like any ab run.
        warm_s = plan["warmup"].get("duration_s") if warm[0] == "wrk" else None
        execute(_bounded(warm, _bound_s({**plan, "tool": warm[0], "duration_s": warm_s})))
    cmd = build_command(
        plan["tool"],
        url,
        plan["concurrency"],
        requests=plan.get("requests"),
        duration_s=plan.get("duration_s"),
        threads=plan.get("threads"),
        keepalive=plan["keepalive"],
        timeout_s=plan.get("timeout_s"),
    )
    started = datetime.now(UTC)
    t0 = time.monotonic()
    rc, out, err = execute(_bounded(cmd, _bound_s(plan)))
    elapsed = time.monotonic() - t0
    raw_rel = f"{RAW_DIR}/{plan['cell_id']}.txt"
    raw = out if not err else f"{out}{'' if out.endswith(chr(10)) or not out else chr(10)}{err}"
    _write_atomic(run_dir / raw_rel, raw)
    if rc == 124:
        raise CellFailed(
            f"{plan['cell_id']}: {cmd[0]} did not finish within {_bound_s(plan)} s; see {raw_rel}"
        )
    try:
        parsed = parse(plan["tool"], raw)
    except ValueError as exc:
        raise CellFailed(f"{plan['cell_id']}: {exc} (exit code {rc}; raw output in {raw_rel})") from exc
    if parsed.tool_version is None and tool_version:
        parsed.tool_version = tool_version
    cell = make_cell(
        parsed,
        experiment=experiment,
        stack=plan["stack"],
        target=where.target,
        loadgen=where.loadgen,
        mode=where.mode,
        command=cmd,
        url=url,
        requests=plan.get("requests"),
        duration_s=plan.get("duration_s"),
        repetition=plan["repetition"],
        started_at=started.isoformat(timespec="seconds").replace("+00:00", "Z"),
        elapsed_s=round(elapsed, 3),
        threshold_ms=plan.get("threshold_ms"),
        raw_output=raw_rel,
    )
    data = cell_to_dict(cell)
    problems = validate_cell(data, require_meta=True)
    if problems:
        raise CellFailed(f"{plan['cell_id']}: invalid cell: {'; '.join(problems)}")
    write_cell(run_dir, cell)
    return data, True


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_run_info(run_dir: Path, info: dict[str, Any]) -> Path:
    """Write run.json (the experiment as run, host fingerprints, versions); rewritten on a resumed run."""
    from benchstack import __version__

    data = {"schema": "bench-stack/run/v1", "bench_stack_version": __version__, **info}
    path = run_dir / "run.json"
    _write_atomic(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    return path
