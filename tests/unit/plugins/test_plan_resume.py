"""Resuming needs only the run folder (issue 44, item 7 of what to build; finding 9): the README's
`ansible-playbook bench-stack.yml -e bench_run_dir=results/<run>` was refused with "holds a run of another
experiment", since without -e experiment the plan compiled the default experiment. The run folder's run.json
names its experiment file and content hash; the plan compiles that file and holds it to that hash, and a
refusal says what to run."""

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from ansible.errors import AnsibleActionFail
from test_plugins import bench_run_info, make_action, run_plan, small_experiment, write_experiment

from benchstack.results.layout import RUN_INFO


def started_run(tmp_path: Path, experiment: dict[str, Any] | None = None) -> tuple[Path, Path, Path]:
    """(results root, run folder, experiment file) of a run that wrote its run.json as a run does
    (bench_run_info, from the plan of `-e experiment=FILE -e bench_run_dir=FOLDER`), then stopped."""
    results = tmp_path / "results"
    run = results / "20250102T030405Z-small"
    path = write_experiment(tmp_path, experiment or small_experiment())
    first = run_plan(str(path), results_dir=str(results), run_dir=str(run))
    make_action(bench_run_info, {"run_dir": str(run), "plan": first}).run(task_vars={})
    return results, run, path


def test_a_resume_with_only_the_run_folder_runs_the_experiment_the_folder_records(tmp_path: Path) -> None:
    results, run, path = started_run(tmp_path)
    recorded = json.loads((run / RUN_INFO).read_text(encoding="utf-8"))
    assert recorded["experiment"]["source"] == str(path)

    plan = run_plan(None, results_dir=str(results), run_dir=str(run))

    assert plan["experiment"]["name"] == "small"  # not the default experiment (sinatra-thin-nginx)
    assert plan["experiment"]["source"] == str(path)
    assert plan["experiment"]["sha256"] == recorded["experiment_sha256"]
    assert plan["run_dir"] == str(run)


def test_a_new_run_folder_without_an_experiment_still_runs_the_default(tmp_path: Path) -> None:
    plan = run_plan(None, results_dir=str(tmp_path / "results"), run_dir=str(tmp_path / "results" / "new"))
    assert plan["experiment"]["name"] == "sinatra-thin-nginx"


def test_an_experiment_file_changed_since_the_run_began_is_refused_saying_what_to_run(tmp_path: Path) -> None:
    results, run, path = started_run(tmp_path)
    write_experiment(tmp_path, small_experiment(repetitions=3))
    with pytest.raises(AnsibleActionFail) as err:
        run_plan(None, results_dir=str(results), run_dir=str(run))
    message = err.value.message
    assert message.startswith(f"bench_run_dir: run folder {run} holds a run of small (content hash ")
    assert f"and its experiment file {path} now has content hash " in message
    assert "the file changed since the run began. Put it back as it was to resume the run" in message
    assert message.endswith(
        f"start a new run folder of it: ansible-playbook bench-stack.yml -e experiment={path}"
    )


def test_another_experiment_given_for_a_run_folder_is_refused_with_both_commands(tmp_path: Path) -> None:
    results, run, _ = started_run(tmp_path)
    with pytest.raises(AnsibleActionFail) as err:
        run_plan("perf-one-stack", results_dir=str(results), run_dir=str(run))
    message = err.value.message
    assert message.startswith(f"bench_run_dir: run folder {run} holds a run of another experiment (small, ")
    resume = f"ansible-playbook bench-stack.yml -e {shlex.quote(f'bench_run_dir={run}')}"
    assert f"To resume that run, leave out -e experiment (the folder names it): {resume};" in message
    new = Path(__file__).resolve().parents[3] / "experiments" / "perf-one-stack.yml"
    assert message.endswith(
        f"to run this experiment in a new run folder, leave out bench_run_dir: "
        f"ansible-playbook bench-stack.yml -e experiment={new}"
    )
    # And the command it names for the resume works.
    assert run_plan(None, results_dir=str(results), run_dir=str(run))["experiment"]["name"] == "small"


def test_a_run_whose_experiment_file_is_gone_asks_for_it_by_name(tmp_path: Path) -> None:
    results, run, path = started_run(tmp_path)
    path.unlink()
    with pytest.raises(AnsibleActionFail) as err:
        run_plan(None, results_dir=str(results), run_dir=str(run))
    assert err.value.message.startswith(
        f"bench_run_dir: run folder {run}: its experiment file {path} is no longer there: name it with "
        "-e experiment=NAME|PATH (the run's experiment is small, content hash "
    )
    # The same experiment from where it is now resumes the run.
    (tmp_path / "moved").mkdir()
    moved = write_experiment(tmp_path / "moved", small_experiment())
    assert run_plan(str(moved), results_dir=str(results), run_dir=str(run))["run_dir"] == str(run)


def test_a_run_folder_of_an_app_env_experiment_says_the_key_may_differ(tmp_path: Path) -> None:
    env = small_experiment()
    env["stacks"][0]["app"] = {"kind": "sinatra", "env": {"TOKEN": "a"}}
    results, run, path = started_run(tmp_path, env)
    env["stacks"][0]["app"]["env"] = {"TOKEN": "b"}
    write_experiment(tmp_path, env)
    with pytest.raises(AnsibleActionFail) as err:
        run_plan(None, results_dir=str(results), run_dir=str(run))
    assert "(or, with app.env, the controller's fingerprint key is another: resume on the controller" in (
        err.value.message
    )
