"""The noise floor: how noisy a loadgen's host is right now, measured in the seconds before the cells.

Five 1-second runs of the plan's closed-loop tool (wrk with one thread, else ab; 8 connections) back to back
against the plan's probe stack (the first static stack, else the first stack: :func:`probe_stack`), between
two CPU snapshots
(:mod:`benchstack.measure.interference`). The spread of those five req/s (CV) and the foreign CPU and steal
over the whole probe say how much any single cell can be trusted before a round is measured; run.json keeps it
(``noise_floor``, per loadgen) and the report shows it at the top. A plan of httperf alone has no probe.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from benchstack.kinds.loadtools import by_name, find
from benchstack.kinds.loadtools.loadcmd import http_url
from benchstack.measure import interference

Executor = Callable[[str], tuple[int, str, str]]
RUNS = 5
SECONDS = 1
CONNECTIONS = 8
MARK = "BENCH-STACK-PROBE"


def probe_stack(stacks: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The stack the probe loads: the first whose app is a static file, else the first; None without any."""
    if not stacks:
        return None
    static = [s for s in stacks if (s.get("app") or {}).get("kind") == "static"]
    return (static or stacks)[0]


def probe_command(tool: str, url: str) -> str:
    """One probe run of SECONDS at CONNECTIONS with ``tool`` (its adapter's ``probe_command``)."""
    command = by_name(tool).probe_command(url, SECONDS, CONNECTIONS)
    if command is None:
        raise ValueError(f"{tool} cannot run the noise probe")
    return command


def probe_tool(tools: list[str]) -> str | None:
    """The tool the probe runs: of the plan's tools, the one whose adapter ranks first (wrk, then ab);
    None when none can probe (httperf alone)."""
    able = [t for t in map(find, tools) if t is not None and t.probe_rank is not None]
    return min(able, key=lambda t: t.probe_rank or 0).name if able else None


def probe_script(url: str, tool: str = "wrk") -> str:
    """Shell that prints a snapshot, five marked probe runs' output and a snapshot; bounded by ``timeout``."""
    run = f"timeout {SECONDS + 10} {probe_command(tool, url)}"
    return (
        f"{interference.SNAPSHOT_FUNCTION}; {interference.print_snapshot('before')}; "
        f"for i in {' '.join(str(i) for i in range(1, RUNS + 1))}; do echo {MARK}; {run} 2>&1; done; "
        f"{interference.print_snapshot('after')}"
    )


def noise_floor(
    execute: Executor, host: str, stack: dict[str, Any], path: str, tool: str = "wrk"
) -> dict[str, Any]:
    """The probe with ``tool`` on the loadgen ``execute`` reaches, against ``stack`` on ``host`` at
    ``path``."""
    url = http_url(host, int(stack["port"]), stack.get("path") or path)
    rc, out, err = execute(probe_script(url, tool))
    adapter = by_name(tool)
    assert adapter.probe_rps is not None and adapter.probe_done is not None  # probe_command refused others
    runs = [adapter.probe_rps.search(part) for part in out.split(MARK + "\n")[1:]]
    rps = [float(m.group(1)) for m in runs if m]
    done = sum(int(m.group(1)) for m in adapter.probe_done.finditer(out))
    usage, problem = interference.usage_from_text(out)
    summary = interference.summarize({"probe": usage}) if usage else None
    result: dict[str, Any] = {
        "stack": stack["name"],
        "url": url,
        "command": f"{probe_command(tool, url).rsplit(' ', 1)[0]}, {RUNS} times",
        "rps": rps,
        # What the probe sent the stack, so nothing that counts the stack's requests mistakes it for a cell's.
        "requests": done,
        "cv": round(statistics.stdev(rps) / statistics.fmean(rps), 4) if len(rps) >= 2 and any(rps) else None,
        "foreign": summary.foreign if summary else None,
        "steal": summary.steal if summary else None,
        "problem": None,
    }
    if len(rps) < RUNS:
        result["problem"] = (
            f"{len(rps)} of {RUNS} {tool} runs printed req/s (exit code {rc}): {(err or out)[-200:]}"
        )
    elif problem:
        result["problem"] = problem
    return result


def floor_text(floors: dict[str, Any] | None) -> list[str]:
    """One line per loadgen for the top of the report: CV of the probe's req/s, foreign CPU and steal."""
    lines = []
    for loadgen, f in sorted((floors or {}).items()):
        if not isinstance(f, dict):
            continue
        if f.get("problem") and not f.get("rps"):
            lines.append(f"{loadgen}: the probe did not run ({f['problem']})")
            continue
        parts = [f"req/s CV {100 * f['cv']:.1f} %" if f.get("cv") is not None else "req/s CV unknown"]
        if f.get("foreign") is not None:
            parts.append(f"foreign CPU {100 * f['foreign']:.1f} %")
        if f.get("steal"):
            parts.append(f"steal {100 * f['steal']:.1f} %")
        lines.append(f"{loadgen}: {f.get('command')} on {f.get('stack')}: {', '.join(parts)}")
    return lines


def busy_warning(loadgen: str, floor: dict[str, Any] | None, limit: float) -> str | None:
    """A warning when the probe saw more foreign CPU + steal than a cell may have (``load.max_interference``):
    while that lasts every cell is disturbed and measured again, so a user should know before the cells."""
    share = interference.share_of((floor or {}).get("foreign"), (floor or {}).get("steal"))
    if share is None or share <= limit:
        return None
    return (
        f"{loadgen} is busy now: {100 * share:.1f} % of its CPU went to other work or to the "
        f"hypervisor during the noise probe, above load.max_interference {100 * limit:g} %. Cells "
        "measured beside such work are disturbed and measured again, so while it lasts few cells count "
        "and load points may end imprecise when load.max_seconds runs out. Stop the other work, or run "
        "when the host is quiet."
    )
