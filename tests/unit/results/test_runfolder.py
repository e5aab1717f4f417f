import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchstack.measure.runner import write_run_info
from benchstack.plan.experiment import load_experiment
from benchstack.results import files
from benchstack.results.runfolder import (
    RunDirError,
    check_run_dir,
    experiment_hash,
    point_latest,
    results_root_problem,
    resumed_experiment,
)

ROOT = Path(__file__).resolve().parents[3]


def as_looked_up(name: str) -> dict[str, Any]:
    """A repository experiment the way the bench_experiment lookup hands it to the playbook."""
    exp = load_experiment(ROOT / "experiments" / f"{name}.yml")
    load = exp.load.as_dict()
    return {"name": exp.name, "description": exp.description, "stacks": exp.stacks, "load": load}


THIN = as_looked_up("sinatra-thin-nginx")
OTHER = as_looked_up("apache-vs-nginx")


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    root.mkdir()
    return root


def a_run_of(results: Path, experiment: dict[str, Any], name: str = "20250102T030405Z-run") -> Path:
    run = results / name
    run.mkdir()
    write_run_info(run, {"experiment": experiment, "hosts": {}})
    (run / "cells").mkdir()
    return run


# ---------------------------------------------------------------- accepted


def test_a_new_folder_under_the_results_root_is_accepted_and_not_created(results: Path) -> None:
    assert check_run_dir(results / "new-run", results, experiment_hash(THIN)) == results / "new-run"
    assert not (results / "new-run").exists()


def test_an_empty_folder_is_accepted(results: Path) -> None:
    (results / "empty").mkdir()
    assert check_run_dir(results / "empty", results, experiment_hash(THIN)) == results / "empty"


def test_a_run_of_the_same_experiment_is_accepted_for_a_resume(results: Path) -> None:
    run = a_run_of(results, THIN)
    assert check_run_dir(run, results, experiment_hash(THIN)) == run


def test_a_new_description_keeps_the_same_experiment(results: Path) -> None:
    run = a_run_of(results, THIN)
    assert check_run_dir(run, results, experiment_hash({**THIN, "description": "typo fixed"})) == run


def test_a_run_json_from_before_the_recorded_hash_is_hashed_from_its_experiment(results: Path) -> None:
    run = a_run_of(results, THIN)
    info = json.loads((run / "run.json").read_text())
    del info["experiment_sha256"]
    (run / "run.json").write_text(json.dumps(info))
    assert check_run_dir(run, results, experiment_hash(THIN)) == run
    with pytest.raises(RunDirError, match="holds a run of another experiment"):
        check_run_dir(run, results, experiment_hash(OTHER))


def test_a_folder_outside_the_results_root_is_accepted_when_the_user_insists(
    tmp_path: Path, results: Path
) -> None:
    elsewhere = tmp_path / "elsewhere" / "run"
    assert check_run_dir(elsewhere, results, experiment_hash(THIN), allow_outside=True) == elsewhere


def test_the_latest_link_is_followed_to_the_run_it_names(results: Path) -> None:
    run = a_run_of(results, THIN)
    (results / "latest").symlink_to(run.name)
    assert check_run_dir(results / "latest", results, experiment_hash(THIN)) == run


# ---------------------------------------------------------------- refused


@pytest.mark.parametrize("allow_outside", [False, True])
@pytest.mark.parametrize(
    ("where", "tree"),
    [
        ("/etc", "/etc"),
        ("/etc/ssh/x", "/etc/ssh"),
        ("/usr/local/runs", "/usr"),
        ("/run/systemd/x", "/run/systemd"),
        ("/root/.ssh/r", "a .ssh folder"),
    ],
)
def test_a_system_folder_or_one_inside_it_is_refused_even_when_the_user_insists(
    results: Path, where: str, tree: str, allow_outside: bool
) -> None:
    """Issue 44, finding 8: bench_results_dir=/etc/ssh/x was accepted; a run folder is refused there too
    (``/etc`` was refused only as outside the results folder, or as not empty)."""
    with pytest.raises(RunDirError) as err:
        check_run_dir(where, results, experiment_hash(THIN), allow_outside=allow_outside)
    assert str(err.value) == (
        f"run folder {where} is in {tree}, which bench-stack must not write into: a run needs a folder of "
        "its own"
    )
    problem = results_root_problem(where)
    assert problem is not None and problem.endswith("runs need a folder of their own")


def test_a_file_is_refused(results: Path) -> None:
    given = results / "a-file"
    given.write_text("not a folder\n")
    with pytest.raises(RunDirError, match=f"^run folder {given} is a file, not a folder"):
        check_run_dir(given, results, experiment_hash(THIN))
    assert given.read_text() == "not a folder\n"


def test_a_run_of_another_experiment_is_refused_naming_it(results: Path) -> None:
    run = a_run_of(results, OTHER)
    with pytest.raises(RunDirError) as err:
        check_run_dir(run, results, experiment_hash(THIN))
    recorded = experiment_hash(OTHER)[:12]
    assert f"holds a run of another experiment (apache-vs-nginx, content hash {recorded};" in str(err.value)


def test_a_changed_load_plan_is_another_experiment(results: Path) -> None:
    run = a_run_of(results, THIN)
    changed = {**THIN, "load": {**THIN["load"], "repetitions": THIN["load"]["repetitions"] + 1}}
    with pytest.raises(RunDirError, match="holds a run of another experiment"):
        check_run_dir(run, results, experiment_hash(changed))


def test_a_non_empty_folder_without_run_json_is_refused(results: Path) -> None:
    (results / "photos").mkdir()
    (results / "photos" / "cat.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(RunDirError, match="is not empty and holds no bench-stack run"):
        check_run_dir(results / "photos", results, experiment_hash(THIN))


def test_a_link_under_the_results_root_that_leads_out_of_it_is_refused(results: Path) -> None:
    (results.parent / "elsewhere").mkdir()
    (results / "sneaky").symlink_to(results.parent / "elsewhere")
    with pytest.raises(
        RunDirError, match=r"run folder .*/sneaky \(.*/elsewhere\) is outside the results folder"
    ):
        check_run_dir(results / "sneaky", results, experiment_hash(THIN))


def test_dot_dot_out_of_the_results_root_is_refused(results: Path) -> None:
    with pytest.raises(RunDirError, match="is outside the results folder"):
        check_run_dir(results / ".." / "escaped", results, experiment_hash(THIN))


def test_the_results_root_itself_is_refused(results: Path) -> None:
    with pytest.raises(RunDirError, match="is the results folder itself"):
        check_run_dir(results, results, experiment_hash(THIN))


def test_a_folder_inside_another_run_is_refused(results: Path) -> None:
    run = a_run_of(results, THIN)
    with pytest.raises(RunDirError, match=f"is inside the run folder {run}:"):
        check_run_dir(run / "cells" / "nested", results, experiment_hash(THIN))


def test_an_unreadable_run_json_is_refused_naming_it(results: Path) -> None:
    run = a_run_of(results, THIN)
    (run / "run.json").write_text("[1, 2")
    with pytest.raises(RunDirError, match=f"^{run}/run.json: cannot read this run's record"):
        check_run_dir(run, results, experiment_hash(THIN))


# ---------------------------------------------------------------- the hash


def test_the_hash_survives_run_json(results: Path) -> None:
    run = a_run_of(results, THIN)
    recorded = json.loads((run / "run.json").read_text())
    assert recorded["experiment_sha256"] == experiment_hash(THIN) == experiment_hash(recorded["experiment"])


def test_the_hash_ignores_key_order_but_not_values() -> None:
    reordered = {key: THIN[key] for key in reversed(list(THIN))}
    assert experiment_hash(reordered) == experiment_hash(THIN)
    assert experiment_hash({**THIN, "name": "other"}) != experiment_hash(THIN)
    assert experiment_hash(OTHER) != experiment_hash(THIN)


# ---------------------------------------------------------------- results/latest


def test_latest_points_at_a_run_in_the_results_root_by_a_relative_link(results: Path) -> None:
    first = a_run_of(results, THIN, "run-1")
    second = a_run_of(results, THIN, "run-2")
    assert point_latest(first, results) == results / "latest"
    assert point_latest(second, results) == results / "latest"
    assert os.readlink(results / "latest") == "run-2"
    assert sorted(p.name for p in results.iterdir()) == ["latest", "run-1", "run-2"]


def test_no_latest_link_for_a_run_outside_the_results_root(tmp_path: Path, results: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "run"
    elsewhere.mkdir(parents=True)
    assert point_latest(elsewhere, results) is None
    assert point_latest(results, results) is None
    assert list(results.iterdir()) == []
    assert list(elsewhere.parent.iterdir()) == [elsewhere]


def test_a_latest_that_is_not_a_link_is_not_replaced(results: Path) -> None:
    run = a_run_of(results, THIN)
    (results / "latest").mkdir()
    with pytest.raises(RunDirError, match="exists and is not a link"):
        point_latest(run, results)
    assert (results / "latest").is_dir() and not (results / "latest").is_symlink()


# ---------------------------------------------------------------- the experiment a resume runs (issue 44)


def test_a_resume_without_an_experiment_runs_the_file_the_run_recorded(results: Path) -> None:
    source = str(ROOT / "experiments" / "apache-vs-nginx.yml")
    run = a_run_of(results, {**OTHER, "source": source})
    assert resumed_experiment(run) == source
    (results / "latest").symlink_to(run.name)
    assert resumed_experiment(results / "latest") == source


@pytest.mark.parametrize("kind", ["missing", "empty", "no-run-json", "file", "newline"])
def test_a_folder_that_holds_no_run_leaves_the_experiment_to_the_default(results: Path, kind: str) -> None:
    given = results / "new"
    if kind == "empty":
        given.mkdir()
    elif kind == "no-run-json":
        given.mkdir()
        (given / "cat.jpg").write_bytes(b"\xff\xd8")
    elif kind == "file":
        given.write_text("x")
    elif kind == "newline":
        given = results / "a\nb"
    assert resumed_experiment(given) is None  # check_run_dir then says what is wrong with it


def test_a_run_that_records_no_file_asks_for_the_experiment(results: Path) -> None:
    run = a_run_of(results, THIN)
    with pytest.raises(RunDirError) as err:
        resumed_experiment(run)
    assert str(err.value) == (
        f"run folder {run}: its run.json records no experiment file: name it with -e experiment=NAME|PATH "
        f"(the run's experiment is sinatra-thin-nginx, content hash {experiment_hash(THIN)[:12]})"
    )


def test_run_json_is_read_within_bounds(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = a_run_of(results, THIN)
    monkeypatch.setattr(files, "MAX_RECORD_BYTES", 100)
    with pytest.raises(RunDirError, match=r"run.json: cannot read this run's record \(larger than 100 bytes"):
        check_run_dir(run, results, experiment_hash(THIN))
