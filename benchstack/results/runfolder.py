"""Run folders: where a run may write, checked before anything is written.

A run writes run.json, cells/, raw/, loadgens/, plots/ and its reports into its folder, and points
``<results root>/latest`` at it. A folder the user names (``bench_run_dir``) is checked first
(:func:`check_run_dir`): it must be a folder or not exist yet, be new (missing or empty) or hold a run of
the same experiment (same :func:`experiment_hash`, so a resumed run never mixes two experiments' cells), and
lie under the results root unless the user insists. The ``latest`` link is only ever made in the results root
(:func:`point_latest`).

A run folder records its experiment (run.json: ``experiment``, with the file it was read from as ``source``,
and ``experiment_sha256``), so resuming needs only the folder: without an experiment named,
:func:`resumed_experiment` gives the file of the run it holds, and the plan compiled from it must have the
recorded content hash.

run.json is written only here, each write under a lock on the run folder (:func:`update_run_json`): the
run's start (benchstack.measure.runner), each loadgen's stop (:func:`record_stop`), what the analysis
decided (:func:`store_analysis`: the verdict, comparisons, drift and thresholds, in one write).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shlex
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchstack.common.inputs import shown_key
from benchstack.common.paths import (
    CONTROLLER_FOREIGN_TREES,
    control_character_problem,
    controller_folder_problem,
    foreign_tree,
)
from benchstack.results.files import read_json, storage_problem, write_json
from benchstack.results.formats import RUN_SCHEMA, validate_run_info
from benchstack.results.layout import RUN_INFO

if TYPE_CHECKING:  # verdict imports this module
    from benchstack.analysis.verdict import Verdict

LATEST = "latest"
# The keys of an experiment that decide what is measured; the description, the file's path and the expanded
# cells (derived from these) are left out, so fixing a description does not orphan a half-finished run.
HASHED_KEYS = ("name", "stacks", "load")
# Hashed only where given, so an experiment without them keeps the hash it always had: an experiment's logs
# (shipping its fronts' access logs changes what the cells measure, and where the run's logs go).
HASHED_IF_GIVEN = ("logs",)


class RunDirError(ValueError):
    """A run folder that a run must not write into; the message names it and says what to do."""


def experiment_hash(experiment: Mapping[str, Any]) -> str:
    """sha256 of an experiment's name, stacks and load plan (and its logs, when given) as canonical JSON (key
    order does not count).

    ``experiment``: the plan's ``experiment`` (benchstack.plan.resolved; run.json records it as
    ``experiment``).
    """
    content = {key: experiment.get(key) for key in HASHED_KEYS}
    content.update((key, experiment[key]) for key in HASHED_IF_GIVEN if experiment.get(key) is not None)
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RecordedRun:
    """What a run folder's run.json records of its experiment: the content hash a resume must match, the
    experiment's name, the file it was read from (None in a record without it) and whether it has
    ``app.env`` values (their fingerprints, and so the hash, depend on the controller's key)."""

    sha256: str
    name: str
    source: str | None
    has_env: bool


def recorded_run(run_dir: Path) -> RecordedRun:
    """The experiment of the run recorded in ``run_dir``'s run.json (read within bounds): its
    ``experiment_sha256``, or for a run.json written before that key existed, the hash of its
    ``experiment``; RunDirError if unreadable."""
    path = run_dir / RUN_INFO
    try:
        info = read_json(path)
    except ValueError as exc:
        reason = str(exc).removeprefix(f"{path}: ")
        raise RunDirError(f"{path}: cannot read this run's record ({reason}): choose a new folder") from None
    experiment = info.get("experiment") if isinstance(info, dict) else None
    if not isinstance(experiment, dict):
        raise RunDirError(f"{path}: records no experiment: not a bench-stack run; choose a new folder")
    recorded = info.get("experiment_sha256")
    source = experiment.get("source")
    stacks = experiment.get("stacks")
    has_env = isinstance(stacks, list) and any(
        isinstance(s, dict) and isinstance(s.get("app"), dict) and s["app"].get("env") for s in stacks
    )
    return RecordedRun(
        sha256=recorded if isinstance(recorded, str) else experiment_hash(experiment),
        name=str(experiment.get("name")),
        source=source if isinstance(source, str) and source else None,
        has_env=has_env,
    )


def recorded_hash(run_dir: Path) -> tuple[str, str]:
    """(hash, experiment name) of the run recorded in ``run_dir``'s run.json (:func:`recorded_run`)."""
    run = recorded_run(run_dir)
    return run.sha256, run.name


def _held_run(path: str | os.PathLike[str]) -> Path | None:
    """The run folder ``path`` names, resolved, when it holds a run.json; None for anything else (a new,
    empty or odd folder: :func:`check_run_dir` says what is wrong with it)."""
    if control_character_problem(str(path)):
        return None
    try:
        run = Path(path).expanduser().resolve()
        return run if (run / RUN_INFO).is_file() else None
    except (OSError, RuntimeError):  # a loop of links, ~ of no user: check_run_dir names it
        return None


def resumed_experiment(path: str | os.PathLike[str]) -> str | None:
    """The experiment file a resume of the run folder ``path`` runs when the user names none: the file its
    run.json records. None when the folder holds no run (a new run's folder: the default experiment).
    RunDirError when the run names no file that can be read (the message says what to give)."""
    run = _held_run(path)
    if run is None:
        return None
    recorded = recorded_run(run)
    give = (
        f"name it with -e experiment=NAME|PATH (the run's experiment is {shown_key(recorded.name)}, content "
        f"hash {recorded.sha256[:12]})"
    )
    if recorded.source is None:
        raise RunDirError(f"run folder {path}: its {RUN_INFO} records no experiment file: {give}")
    if not Path(recorded.source).is_file():
        raise RunDirError(
            f"run folder {path}: its experiment file {recorded.source} is no longer there: {give}"
        )
    return recorded.source


def _command(*extra: str) -> str:
    return " ".join(["ansible-playbook bench-stack.yml", *(f"-e {shlex.quote(e)}" for e in extra)])


def check_run_dir(
    path: str | os.PathLike[str],
    results_root: str | os.PathLike[str],
    experiment_sha256: str,
    allow_outside: bool = False,
    source: str | None = None,
    from_folder: bool = False,
) -> Path:
    """The resolved run folder ``path`` if a run of the experiment with ``experiment_sha256`` may write into
    it; RunDirError otherwise. Symbolic links are followed first, so a link cannot lead a run elsewhere.

    Refused: a file; the results root itself; a folder inside another run; a folder outside
    ``results_root`` (unless ``allow_outside``); a non-empty folder without run.json; a run of another
    experiment, with the commands that resume that run or start a new one of this experiment (``source``,
    its file; ``from_folder``: the experiment was read from the folder's own run.json, and its file has
    changed since). Nothing is created or changed.
    """
    problem = control_character_problem(str(path))
    if problem:
        raise RunDirError(f"the run folder {problem}")
    run = Path(path).expanduser().resolve()
    root = Path(results_root).expanduser().resolve()
    given = f"run folder {path}" + (f" ({run})" if str(run) != str(path) else "")
    if run.exists() and not run.is_dir():
        raise RunDirError(f"{given} is a file, not a folder: name a new folder or a run of this experiment")
    if run == root:
        raise RunDirError(f"{given} is the results folder itself: a run needs a folder of its own in it")
    tree = foreign_tree(str(run), CONTROLLER_FOREIGN_TREES)
    if tree:
        raise RunDirError(
            f"{given} is in {tree}, which bench-stack must not write into: a run needs a folder of its own"
        )
    if not run.is_relative_to(root) and not allow_outside:
        raise RunDirError(
            f"{given} is outside the results folder {root}: choose a folder in it, "
            "or insist (bench_run_dir_outside=true) to write the run there"
        )
    for parent in run.parents:
        if (parent / RUN_INFO).is_file():
            raise RunDirError(f"{given} is inside the run folder {parent}: a run needs a folder of its own")
    if not run.exists():
        return run
    try:
        empty = next(run.iterdir(), None) is None
    except OSError as exc:
        raise RunDirError(f"{given} cannot be read: {exc.strerror}") from None
    if empty:
        return run
    if not (run / RUN_INFO).is_file():
        raise RunDirError(
            f"{given} is not empty and holds no bench-stack run (no {RUN_INFO}): choose a new folder"
        )
    recorded = recorded_run(run)
    if recorded.sha256 != experiment_sha256:
        raise RunDirError(
            _another_experiment(given, str(path), recorded, experiment_sha256, source, from_folder)
        )
    return run


def _another_experiment(
    given: str, path: str, recorded: RecordedRun, sha256: str, source: str | None, from_folder: bool
) -> str:
    """Why a run folder is not this experiment's, and what to run instead."""
    new_run = _command(f"experiment={source or 'NAME|PATH'}")
    key = (
        " (or, with app.env, the controller's fingerprint key is another: resume on the controller that "
        "started the run)"
        if recorded.has_env
        else ""
    )
    if from_folder:
        return (
            f"{given} holds a run of {shown_key(recorded.name)} (content hash {recorded.sha256[:12]}), and "
            f"its experiment file {source} now has content hash {sha256[:12]}: the file changed since the "
            f"run began{key}. Put it back as it was to resume the run, or start a new run folder of it: "
            f"{new_run}"
        )
    if recorded.source and Path(recorded.source).is_file():
        resume = f"leave out -e experiment (the folder names it): {_command(f'bench_run_dir={path}')}"
    else:
        resume = (
            f"give the file of {shown_key(recorded.name)} it ran: "
            f"{_command(f'bench_run_dir={path}')} -e experiment=PATH"
        )
    return (
        f"{given} holds a run of another experiment ({shown_key(recorded.name)}, content hash "
        f"{recorded.sha256[:12]}; this one is {sha256[:12]}){key}. To resume that run, {resume}; to run this "
        f"experiment in a new run folder, leave out bench_run_dir: {new_run}"
    )


def results_root_problem(results_root: str | os.PathLike[str]) -> str | None:
    """Why ``results_root`` cannot hold runs (and their ``latest`` link), or None: a path without control
    characters that is not a system folder (``bench_results_dir=/etc`` was accepted), nor in one
    (:data:`benchstack.common.paths.CONTROLLER_FOREIGN_TREES`: ``/etc/ssh/x`` was accepted): the rule of
    every folder bench-stack writes into on the controller
    (:func:`benchstack.common.paths.controller_folder_problem`)."""
    return controller_folder_problem(str(results_root), need="runs need a folder of their own")


def point_latest(run_dir: str | os.PathLike[str], results_root: str | os.PathLike[str]) -> Path | None:
    """Point ``<results_root>/latest`` at ``run_dir`` (a relative link, replaced atomically) and return the
    link; None, and nothing made, when the run lies outside the results root. A ``latest`` that is not a link
    is never replaced (RunDirError)."""
    run = Path(run_dir).expanduser().resolve()
    root = Path(results_root).expanduser().resolve()
    if run == root or not run.is_relative_to(root):
        return None
    link = root / LATEST
    if link.exists() and not link.is_symlink():
        raise RunDirError(f"{link} exists and is not a link: not replacing it")
    tmp = root / f".{LATEST}.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(run.relative_to(root))
    os.replace(tmp, link)
    return link


def update_run_json(
    run_dir: Path, change: Callable[[dict[str, Any]], None], create: bool, unreadable_as_new: bool = False
) -> bool:
    """Read, change and rewrite run.json atomically under a lock on the run folder: every writer of run.json
    goes through here (the run's start, each loadgen's stop, the verdict and comparisons), so two of them at
    once cannot lose each other's change. False when run.json is missing and ``create`` is false. A run.json
    that is not JSON raises ValueError, or with ``unreadable_as_new`` is replaced."""
    path = run_dir / "run.json"
    if not create and not path.is_file():
        return False
    run_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(run_dir, os.O_RDONLY)  # the lock is on the run folder: no lock file left behind
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"schema": RUN_SCHEMA}
        except json.JSONDecodeError:
            if not unreadable_as_new:
                raise
            data = {"schema": RUN_SCHEMA}
        if not isinstance(data, dict):
            if not unreadable_as_new:
                raise ValueError(f"{path}: not a JSON object")
            data = {"schema": RUN_SCHEMA}
        change(data)
        write_json(path, data)
    finally:
        os.close(fd)
    return True


def stops(info: Mapping[str, Any]) -> list[dict[str, Any]]:
    """run.json's ``stopped`` entries that name a cell (one entry or a list, as older runs wrote it)."""
    stopped = info.get("stopped")
    found = [stopped] if isinstance(stopped, dict) else stopped if isinstance(stopped, list) else []
    return [s for s in found if isinstance(s, dict) and s.get("cell")]


def store_analysis(
    run_dir: str | os.PathLike[str],
    verdict: Verdict,
    comparisons: list[dict[str, Any]],
    drift: list[dict[str, Any]],
    thresholds: list[dict[str, Any]] | None = None,
) -> bool:
    """Put what the analysis decided into run.json in one write: the verdict (``verdict``), the comparisons
    against the baseline (:mod:`benchstack.analysis.comparison`, each as its ``to_dict``), the host's speed
    through the run (``drift``, :mod:`benchstack.analysis.drift`) and, when the experiment has thresholds,
    their checks (``thresholds``, :mod:`benchstack.analysis.thresholds`). False when the run has no
    run.json."""

    def put(d: dict[str, Any]) -> None:
        d["verdict"] = verdict.to_dict()
        d["comparisons"] = comparisons
        d["drift"] = drift
        if thresholds is not None:
            d["thresholds"] = thresholds

    return update_run_json(Path(run_dir), put, create=False)


def resume_command(run_dir: str | os.PathLike[str]) -> str:
    """The command that resumes the run in ``run_dir``."""
    return _command(f"bench_run_dir={run_dir}")


ASIDE_PREFIX = "bench-stack-stop-"
# What an aside stop holds beside run.json's entry: the run folder it belongs to.
ASIDE_RUN_DIR = "run_dir"


def stop_aside(run: str, tmp: Path | None = None) -> Path:
    """Where the playbook run ``run`` keeps its stop when run.json cannot be written (its storage failed):
    in the controller's temporary folder, read by :func:`stop_of_run` so its later cells, on every loadgen,
    are not measured either. It names its run folder, and is removed once run.json records the stop
    (:func:`settle_stops_aside`)."""
    return (Path(tempfile.gettempdir()) if tmp is None else tmp) / f"{ASIDE_PREFIX}{run}.json"


def settle_stops_aside(
    run_dir: str | os.PathLike[str], run: str | None = None, tmp: Path | None = None
) -> list[str]:
    """Record in run.json the stops kept aside for ``run_dir`` (:func:`stop_aside`; only the playbook run
    ``run``'s when given) and remove their files: the end of the playbook run that kept one
    (playbooks/benchmark.yml, when the run stops), or the start of a resume that wrote run.json
    (plugins/action/bench_run_info.py), records it; an aside stop is never left for ever. A stop run.json
    cannot take yet (its storage still fails) stays aside for the next of them; one whose run folder holds no
    run.json any more is removed. What was done, as messages."""
    folder = Path(tempfile.gettempdir()) if tmp is None else tmp
    here = os.path.abspath(run_dir)
    pattern = f"{ASIDE_PREFIX}{run}.json" if run is not None else f"{ASIDE_PREFIX}*.json"
    done = []
    for path in sorted(folder.glob(pattern)):
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(entry, dict) or entry.get(ASIDE_RUN_DIR) != here or not entry.get("cell"):
            continue
        stop = {k: v for k, v in entry.items() if k != ASIDE_RUN_DIR}

        def add(data: dict[str, Any], stop: dict[str, Any] = stop) -> None:
            known = stops(data)
            data["stopped"] = known + ([] if stop in known else [stop])

        try:
            recorded = update_run_json(Path(run_dir), add, create=False)
        except (OSError, ValueError) as exc:
            reason = storage_problem(exc) if isinstance(exc, OSError) else str(exc)
            done.append(
                f"the stop at cell {stop['cell']} stays in {path}: run.json cannot take it ({reason})"
            )
            continue
        path.unlink(missing_ok=True)
        where = Path(run_dir) / RUN_INFO
        done.append(
            f"the stop at cell {stop['cell']} kept in {path} is now in {where}"
            if recorded
            else f"removed the stop at cell {stop['cell']} kept in {path}: no {where} to record it in"
        )
    return done


def record_stop(
    run_dir: str | os.PathLike[str],
    cell: str,
    reason: str,
    message: str,
    at: str | None = None,
    run: str | None = None,
) -> str | None:
    """Add where and why a run stopped to run.json's ``stopped`` (``reason``: hung, timeout, failed or
    storage; ``run``: the playbook run that stopped there, so its later cells know, :func:`stop_of_run`).

    None once recorded. When run.json cannot be written (OSError: the run folder's storage failed) and
    ``run`` is given, the stop is kept aside for this playbook run (:func:`stop_aside`; a stop there halts
    its later cells whatever ``keep_going``) and the answer says, in one line, why run.json has none."""
    when = at or datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    entry = {"cell": cell, "reason": reason, "message": message, "at": when}
    if run is not None:
        entry["run"] = run

    def add(data: dict[str, Any]) -> None:
        data["stopped"] = stops(data) + [entry]

    try:
        update_run_json(Path(run_dir), add, create=True)
    except OSError as exc:
        if run is None:
            raise
        aside = stop_aside(run)
        aside.write_text(json.dumps({**entry, ASIDE_RUN_DIR: os.path.abspath(run_dir)}), encoding="utf-8")
        return (
            f"no stop record in {Path(run_dir) / RUN_INFO}, which cannot be written: {storage_problem(exc)}"
        )
    return None


def stop_of_run(
    run_dir: str | os.PathLike[str], run: str, reasons: tuple[str, ...] | None = None
) -> dict[str, Any] | None:
    """The first stop of the playbook run ``run`` (None: it failed no cell): the one kept aside when
    run.json could not be written (:func:`record_stop`), else its first ``stopped`` entry in run.json, of
    ``reasons`` only when given."""
    try:
        aside = json.loads(stop_aside(run).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        aside = None
    if isinstance(aside, dict) and aside.get("cell"):
        return {k: v for k, v in aside.items() if k != ASIDE_RUN_DIR}
    path = Path(run_dir) / "run.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return next(
        (s for s in stops(data) if s.get("run") == run and (reasons is None or s.get("reason") in reasons)),
        None,
    )


def read_run_info(run_dir: Path) -> dict[str, Any] | None:
    """The run's run.json, None when there is none. One that cannot be read or does not fit the published
    schema (:func:`benchstack.results.formats.validate_run_info`) raises ValueError: one line naming the file
    and the field."""
    path = run_dir / RUN_INFO
    if not path.is_file():
        return None
    info = read_json(path)
    problems = validate_run_info(info)
    if problems:
        more = f" (and {len(problems) - 1} more; see bench-stack validate)" if len(problems) > 1 else ""
        raise ValueError(f"{path}: not a valid run record: {problems[0]}{more}")
    record: dict[str, Any] = info  # the schema checked it is an object
    return record
