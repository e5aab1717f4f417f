"""The run folder around the cells (issue 44, leftovers of finding 5): checked before any load, its lock
given up when the run stops, a stop kept aside (run.json not writable) recorded and removed.

Which task does what is read from playbooks/benchmark.yml; the actions run without a connection."""

import errno
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from ansible.errors import AnsibleActionFail
from ansible.template import trust_as_template
from conftest import read_yaml, templated
from test_plugins import (
    ROOT,
    _refuse,
    bench_run_info,
    load_plugin,
    make_action,
    run_plan,
    small_experiment,
    write_experiment,
)

from benchstack.measure import runlock, runner
from benchstack.measure.barrier import playbook_run_id
from benchstack.results import runfolder
from benchstack.results.runfolder import record_stop, settle_stops_aside, stop_aside, stop_of_run

bench_run_folder = load_plugin("action", "bench_run_folder")
THIS_RUN = playbook_run_id(os.getppid())  # the actions' playbook run: the test's parent process


@pytest.fixture(autouse=True)
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The controller's temporary folder, where stops are kept aside: the test's own."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def plays() -> list[dict[str, Any]]:
    return read_yaml(ROOT / "playbooks" / "benchmark.yml")


def play(name: str) -> dict[str, Any]:
    [found] = [p for p in plays() if p.get("name") == name]
    return found


def module_of(task: dict[str, Any]) -> str:
    return next(k for k in task if k.startswith(("bench_", "ansible.builtin.")))


def folder_action(run: Path, state: str, check_mode: bool = False) -> dict[str, Any]:
    return make_action(bench_run_folder, {"run_dir": str(run), "state": state}, check_mode).run(task_vars={})


def held(run: Path) -> dict[str, Any] | None:
    return runlock.read_entry(run / runlock.LOCK_FILE)


# ------------------------------------------------------------------ 1. checked before any load


def test_the_run_folder_is_checked_before_the_host_is_held_the_stacks_restarted_or_the_noise_probed() -> None:
    """Issue 44: a new run whose results folder could not be written ran the noise probe (5 x 1 s of load)
    and failed only at "Write run.json"."""
    tasks = play("Fingerprint the hosts and open the run")["tasks"]
    [first] = [i for i, t in enumerate(tasks) if module_of(t) == "bench_run_folder"]
    check = tasks[first]
    assert check["bench_run_folder"]["state"] == "writable"
    assert (check["delegate_to"], check["run_once"]) == ("localhost", True)
    loads = [
        i
        for i, t in enumerate(tasks)
        if module_of(t)
        in ("bench_provision_state", "ansible.builtin.systemd_service", "bench_http_check")
        + ("bench_noise_probe",)
    ]
    assert len(loads) == 5 and first < min(loads)


def test_a_run_folder_that_cannot_be_written_stops_the_run_naming_the_path_and_errno_and_gives_up_its_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "results" / "run"
    (run / "cells").mkdir(parents=True)
    assert runlock.acquire(run, os.getppid()) == []  # a resume holds it from its plan
    refuse = _refuse(errno.EROFS)
    monkeypatch.setattr(
        runner, "probe_writable", lambda folder: refuse() if folder == run / "cells" else None
    )
    with pytest.raises(AnsibleActionFail) as err:
        folder_action(run, "writable")
    assert str(err.value) == (
        f"bench_run_folder: the run folder {run} cannot be written (EROFS (Read-only file system): "
        f"{run / 'cells'}): no load is sent; make it writable (or free space) and run again"
    )
    assert held(run) is None  # the run ends here: a resume does not find it held


def test_a_file_where_a_folder_of_the_run_goes_is_named_without_any_patching(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "loadgens" / "lg2").mkdir(parents=True)
    (run / "loadgens" / "lg2" / "raw").write_text("not a folder\n")
    assert runner.run_folder_problem(run) == (
        f"the run folder {run} cannot be written (ENOTDIR (Not a directory): {run / 'loadgens/lg2/raw'}): "
        "no load is sent; make it writable (or free space) and run again"
    )


def test_a_new_runs_folder_is_probed_where_it_will_be_made_and_nothing_is_left_behind(tmp_path: Path) -> None:
    run = tmp_path / "results" / "new-run"
    assert folder_action(run, "writable")["msg"] == "writable"
    assert not run.exists() and list(tmp_path.iterdir()) == [tmp_path / "tmp"]
    assert folder_action(run, "writable", check_mode=True)["skipped"] is True


# ------------------------------------------------------------------ 2. the lock given up when the run stops


def test_when_every_loadgen_stopped_the_rescue_gives_up_the_run_folder_before_failing() -> None:
    """Issue 44: the run folder's lock was released only by the report, which a stopped run never reaches."""
    [block] = [t for t in play("Measure the cells")["tasks"] if "block" in t]
    names = [module_of(t) for t in block["rescue"]]
    assert names == ["bench_host_lock", "bench_run_folder", "ansible.builtin.fail"]
    give_up = block["rescue"][1]
    assert give_up["bench_run_folder"]["state"] == "released"
    assert (give_up["delegate_to"], give_up["run_once"]) == ("localhost", True)
    assert give_up["failed_when"] is False  # the stop's message below is what the user needs
    when = "{{ " + give_up["when"] + " }}"

    def stops(rescuing: list[str], hosts: list[str]) -> bool:
        hostvars = {h: {"ansible_failed_result": {"msg": "x"}} if h in rescuing else {} for h in hosts}
        own = {k: trust_as_template(v) for k, v in give_up["vars"].items()}  # as a task's vars: templates
        variables = {"ansible_play_hosts": hosts, "hostvars": hostvars, **own}
        return templated(when, variables) is True

    assert stops(["lg1"], ["lg1"]) and stops(["lg1", "lg2"], ["lg1", "lg2"])
    # lg2 measured all its cells: the play goes on to the report, which gives the lock up.
    assert not stops(["lg1"], ["lg1", "lg2"])


def test_giving_up_the_run_folder_lets_a_resume_take_it_without_a_warning(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    assert runlock.acquire(run, os.getppid()) == []
    assert folder_action(run, "released")["msg"] == "released"
    assert held(run) is None
    assert runlock.acquire(run, os.getpid()) == []  # the resume: no "took over" warning
    assert folder_action(run, "released")["msg"] == "not held by this run"
    assert held(run)["pid"] == os.getpid()  # another run's lock is left alone


@pytest.mark.parametrize("where", ["write_run_info", "acquire_fails"])
def test_bench_run_info_that_cannot_write_gives_up_a_resumes_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    plan = run_plan(str(write_experiment(tmp_path, small_experiment())))
    run = tmp_path / "run"
    run.mkdir()
    runlock.acquire(run, os.getppid())
    if where == "write_run_info":
        monkeypatch.setattr(bench_run_info, "write_run_info", _refuse(errno.ENOSPC))
    else:
        monkeypatch.setattr(bench_run_info, "acquire", _refuse(errno.EACCES))
    with pytest.raises(AnsibleActionFail, match="cannot be written"):
        make_action(bench_run_info, {"run_dir": str(run), "plan": plan}).run(task_vars={})
    assert held(run) is None


# ------------------------------------------------------------------ 3. a stop kept aside is not left behind


def stopped_aside(run: Path, monkeypatch: pytest.MonkeyPatch, at_run: str = THIS_RUN) -> Path:
    """A stop of the playbook run ``at_run`` kept aside: run.json could not be written."""
    with monkeypatch.context() as m:
        m.setattr(runfolder, "update_run_json", _refuse(errno.EROFS))
        said = record_stop(run, "c1", "storage", "c1: cannot store the cell", run=at_run)
    assert said is not None and said.startswith("no stop record in")
    aside = stop_aside(at_run)
    assert aside.is_file()
    return aside


def recorded(run: Path) -> list[dict[str, Any]]:
    return json.loads((run / "run.json").read_text(encoding="utf-8")).get("stopped", [])


def a_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    runfolder.update_run_json(run, lambda d: None, create=True)
    return run


def test_a_stop_kept_aside_is_recorded_in_run_json_and_removed_once_run_json_can_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = a_run(tmp_path)
    aside = stopped_aside(run, monkeypatch)
    with monkeypatch.context() as m:  # still not writable: it stays aside, and says why
        m.setattr(runfolder, "update_run_json", _refuse(errno.EROFS))
        [said] = settle_stops_aside(run, THIS_RUN)
    assert said.startswith(f"the stop at cell c1 stays in {aside}: run.json cannot take it (EROFS")
    assert aside.is_file()
    now = f"the stop at cell c1 kept in {aside} is now in {run / 'run.json'}"
    assert settle_stops_aside(run, THIS_RUN) == [now]
    assert not aside.exists()
    [stop] = recorded(run)
    assert (stop["cell"], stop["reason"], stop["run"]) == ("c1", "storage", THIS_RUN)
    assert stop_of_run(run, THIS_RUN) == stop  # the playbook run's later cells still see it
    assert settle_stops_aside(run, THIS_RUN) == [] and recorded(run) == [stop]  # once


def test_the_stopped_runs_rescue_records_and_removes_its_own_stop_kept_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = a_run(tmp_path)
    aside = stopped_aside(run, monkeypatch)
    other = stopped_aside(tmp_path / "another-run", monkeypatch, at_run="9-other")
    result = folder_action(run, "released")
    assert not aside.exists() and [s["cell"] for s in recorded(run)] == ["c1"]
    assert result["warnings"] == [f"the stop at cell c1 kept in {aside} is now in {run / 'run.json'}"]
    assert other.is_file()  # another run folder's


def test_a_resume_that_writes_run_json_records_the_stops_earlier_playbook_runs_kept_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = run_plan(str(write_experiment(tmp_path, small_experiment())))
    run = a_run(tmp_path)
    aside = stopped_aside(run, monkeypatch, at_run="1234-earlier")
    elsewhere = stopped_aside(tmp_path / "elsewhere", monkeypatch, at_run="99-elsewhere")
    result = make_action(bench_run_info, {"run_dir": str(run), "plan": plan}).run(task_vars={})
    assert not aside.exists() and elsewhere.is_file()
    assert [(s["cell"], s["run"]) for s in recorded(run)] == [("c1", "1234-earlier")]
    assert f"the stop at cell c1 kept in {aside} is now in {run / 'run.json'}" in result["warnings"]
