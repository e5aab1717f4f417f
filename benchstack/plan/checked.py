"""The plan of a run with every check before it: one orchestration for the plan play (the bench_plan action)
and ``bench-stack experiment``, so both accept and refuse the same inputs with the same words.

The order is the user's: the experiment and the settings first (every problem of both at once), then the
results folder, then the run folder (a resume's, when one is given; else the new one, under the results
folder). Nothing is created.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchstack.kinds.stackfields import DEFAULT_ROOTS, Roots
from benchstack.plan.experiment import ExperimentError
from benchstack.plan.resolved import ResolvedPlan, compile_plan, experiment_path, run_dir_for
from benchstack.results.runfolder import RunDirError, results_root_problem


class PlanRefused(ValueError):
    """The inputs of a run are refused; the message says every reason, as the user sees it."""


@dataclass(frozen=True)
class PlanRequest:
    """What a run asks of the plan (:func:`benchstack.plan.resolved.compile_plan` says what each means)."""

    # An experiment's name (``experiments/NAME.yml`` of ``project_dir``) or its file.
    experiment: str
    project_dir: Path
    results_dir: str
    roots: Roots = DEFAULT_ROOTS
    # A run folder to use (a resume's); None: a new one under ``results_dir``.
    run_dir: str | None = None
    allow_outside: bool = False
    # The experiment is the one ``run_dir``'s run.json names.
    from_folder: bool = False
    targets: tuple[str, ...] = ()
    parallel: bool = False
    allow_large: bool = False
    python_constraints: Sequence[str] | None = None
    python_versions: Sequence[str] | None = None
    make_key: bool = True


def checked_plan(request: PlanRequest, problems: Sequence[str] = ()) -> tuple[ResolvedPlan, str]:
    """The plan of ``request`` and its run folder; PlanRefused naming the experiment's problems with
    ``problems`` (those of the settings, found by the caller), or the results or run folder's problem."""
    try:
        plan = compile_plan(
            experiment_path(request.experiment, request.project_dir),
            request.roots,
            list(request.targets),
            parallel=request.parallel,
            allow_large=request.allow_large,
            python_constraints=request.python_constraints,
            python_versions=request.python_versions,
            make_key=request.make_key,
        )
    except ExperimentError as exc:
        raise PlanRefused("\n".join([str(exc), *problems])) from None
    if problems:
        raise PlanRefused("invalid variables:\n  - " + "\n  - ".join(problems))
    problem = results_root_problem(request.results_dir)
    if problem:
        raise PlanRefused(f"bench_results_dir: {problem}")
    try:
        run_dir = run_dir_for(
            plan, request.results_dir, request.run_dir, request.allow_outside, from_folder=request.from_folder
        )
    except RunDirError as exc:
        raise PlanRefused(f"bench_run_dir: {exc}") from None
    return plan, run_dir
