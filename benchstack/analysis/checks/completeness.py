"""Whether the run measured what it planned: the stacks verified before load (``verify_failed``,
``not_verified``), no stop on the way (``stopped``, ``hung_stack``), every planned cell stored
(``incomplete``). Each reads run.json's records of the run as a whole.
"""

from __future__ import annotations

from benchstack.analysis.checks.base import Reason, Run, cell_ids
from benchstack.results.runfolder import stops


def check_verified(run: Run) -> tuple[list[Reason], list[str]]:
    verify = run.info.get("verify")
    every = cell_ids(run.cells)
    if not isinstance(verify, dict):
        return [
            Reason(
                "not_verified",
                "noisy",
                "run.json records no verification before load (playbooks/verify.yml): nothing shows that the "
                "stacks answered correctly before they were measured",
                every,
            )
        ], []
    if verify.get("passed") is not True:
        detail = f": {verify['message']}" if verify.get("message") else ""
        return [Reason("verify_failed", "invalid", f"verification before load failed{detail}", every)], []
    stacks = verify.get("stacks")
    if not isinstance(stacks, list):
        return [], []
    unverified = [c for c in run.cells if c.stack not in stacks]
    if not unverified:
        return [], []
    names = sorted({str(c.stack) for c in unverified})
    return [
        Reason(
            "not_verified",
            "noisy",
            f"measured without being verified before load: {', '.join(names)}",
            cell_ids(unverified),
        )
    ], []


STOP_WHAT = {
    "hung": "the stack hung",
    "timeout": "the load tool did not finish within its time bound",
    "storage": "the run folder could not be written",
}


def check_stopped(run: Run) -> tuple[list[Reason], list[str]]:
    stored = set(cell_ids(run.cells))
    reasons = []
    for stop in stops(run.info):
        cell, why = str(stop["cell"]), stop.get("reason")
        code = "hung_stack" if why in ("hung", "timeout") else "stopped"
        what = STOP_WHAT.get(str(why), "the cell failed")
        at = f" at {stop['at']}" if stop.get("at") else ""
        detail = f" ({stop['message']})" if stop.get("message") else ""
        if cell in stored and why == "storage":
            # The controller's disk, not the stack: once a resume stored the cell, nothing is in doubt
            # (run.json keeps the stop).
            continue
        if cell in stored:
            message = f"{cell}: {what} once{at}{detail}; a resumed run measured the cell since"
            if code == "hung_stack":
                message += ", but the stack may hang again under this load"
            reasons.append(Reason(code, "noisy", message, [cell]))
        else:
            reasons.append(Reason(code, "invalid", f"the run stopped at {cell}{at}: {what}{detail}", [cell]))
    return reasons, []


def check_incomplete(run: Run) -> tuple[list[Reason], list[str]]:
    planned = run.planned()
    if planned is None:
        return [], ["completeness: run.json lists no planned cells (experiment.cells)"]
    stored = set(cell_ids(run.cells))
    missing = [str(p["cell_id"]) for p in planned if p["cell_id"] not in stored]
    if not missing:
        return [], []
    message = (
        f"{len(missing)} of {len(planned)} planned cells were not measured: the run was interrupted or "
        "stopped (resume it with -e bench_run_dir=<this run>)"
    )
    return [Reason("incomplete", "invalid", message, missing)], []
