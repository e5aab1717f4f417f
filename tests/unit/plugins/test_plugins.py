"""The Ansible plugins, imported by file path (they are not a package) and run without a connection."""

import dataclasses
import errno
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest.mock import MagicMock

import jinja2
import pytest
import yaml
from ansible.errors import AnsibleActionFail, AnsibleFilterError
from ansible.plugins.action import ActionBase
from conftest import (
    CELL_PLAN_BASE,
    STORED_META,
    Helpers,
    batch_commands,
    batch_reply,
    read_data,
    read_yaml,
)

from benchstack.measure import runlock, runner
from benchstack.measure.runlock import holder
from benchstack.measure.runner import CellOptions, measure_cell
from benchstack.plan import settings
from benchstack.plan.experiment import cells
from benchstack.plan.resolved import experiment_of, seed_for
from benchstack.provision import hostcommand, hostrecord, made
from benchstack.records.cellplan import CellPlan
from benchstack.results import runfolder
from benchstack.results.cell import validate_cell
from benchstack.results.layout import LOCK_FILE
from benchstack.results.runfolder import experiment_hash

ROOT = Path(__file__).resolve().parents[3]
PLUGINS = ROOT / "plugins"
EXPERIMENTS = sorted((ROOT / "experiments").glob("*.yml"))


def load_plugin(kind: str, name: str) -> ModuleType:
    path = PLUGINS / kind / f"{name}.py"
    module_name = f"bench_test_{kind}_{name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


filters = load_plugin("filter", "bench")
bench_plan = load_plugin("action", "bench_plan")
bench_cell = load_plugin("action", "bench_cell")
bench_run_info = load_plugin("action", "bench_run_info")
bench_report = load_plugin("action", "bench_report")
bench_extra_cells = load_plugin("action", "bench_extra_cells")
bench_merge = load_plugin("action", "bench_merge")
bench_host_lock = load_plugin("action", "bench_host_lock")
bench_provision_state = load_plugin("action", "bench_provision_state")
bench_provision_record = load_plugin("action", "bench_provision_record")


@pytest.fixture(autouse=True)
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses bench_cell's runner makes between warm-up and measurement (load.pause_s, 1 s by default),
    recorded instead of slept: test_runner proves where the pause falls."""
    slept: list[float] = []

    def measure(*args: Any, options: CellOptions, **kw: Any) -> tuple[dict[str, Any], bool]:
        return measure_cell(*args, options=dataclasses.replace(options, sleep=slept.append), **kw)

    monkeypatch.setattr(bench_cell, "measure_cell", measure)
    return slept


def write_experiment(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "exp.yml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def small_experiment(**load: Any) -> dict[str, Any]:
    return {
        "name": "small",
        "stacks": [
            {
                "name": "pool",
                "port": 18080,
                "app": {"kind": "sinatra"},
                "server": {"kind": "thin", "instances": 2},
                "front": {"kind": "nginx"},
            }
        ],
        "load": {
            "path": "/hello/bar",
            "plans": [{"tool": "ab", "concurrency": [50], "requests": 2000}],
            **load,
        },
    }


# ---------------------------------------------------------------- plan


class PassThrough:
    """A templar for variables that are already plain values."""

    def template(self, value: Any) -> Any:
        return value


def run_plan(
    experiment: str | None = None, task_vars: dict[str, Any] | None = None, templar: Any = None, **args: Any
) -> dict:
    """The bench_plan action's fact bench_plan, as the plan play sets it (``templar``: the task's, by default
    one for plain values)."""
    args = {"results_dir": args.pop("results_dir", tempfile.gettempdir()), **args}
    if experiment is not None:
        args["experiment"] = experiment
    action = make_action(bench_plan, args)
    action._templar = templar or PassThrough()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ActionBase, "run", lambda self, tmp=None, task_vars=None: {})
        result = action.run(task_vars=task_vars or {})
    return result["ansible_facts"]["bench_plan"]


def test_repo_has_experiments() -> None:
    assert EXPERIMENTS, "experiments/*.yml should not be empty"


@pytest.mark.parametrize("path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_every_repo_experiment_plans_by_name_and_expands_into_cells(path: Path) -> None:
    plan = run_plan(path.stem)
    exp = plan["experiment"]
    assert exp["name"] == path.stem
    assert exp["source"] == str(path)
    raw = read_yaml(path)
    assert [s["name"] for s in plan["stacks"]] == [s["name"] for s in raw["stacks"]]
    assert exp["stacks"] == raw["stacks"]  # as written: run.json records the experiment as run
    levels = sum(
        len(p["concurrency"]) if isinstance(p["concurrency"], list) else 1 for p in raw["load"]["plans"]
    )
    assert len(plan["cells"]) == exp["load"]["repetitions"] * len(raw["stacks"]) * levels
    ids = [c["cell_id"] for c in plan["cells"]]
    assert len(ids) == len(set(ids))
    assert all(set(c) == set(CellPlan.__dataclass_fields__) for c in plan["cells"])
    # Every stack is resolved: endpoints with addresses, one per instance.
    for s in plan["stacks"]:
        assert len(s["endpoints"]) == (s["server"]["instances"] if s["server"] else 0)
        assert all(ep["address"] for ep in s["endpoints"])


@pytest.mark.parametrize("path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_repo_experiment_plans_by_path_the_same_as_by_name(path: Path) -> None:
    by_path, by_name = run_plan(str(path)), run_plan(path.stem)
    # Each run folder draws its own seed, so the order of the cells differs, not the cells.
    per_run = ("run_dir", "seed", "cells", "progress")
    assert {k: v for k, v in by_path.items() if k not in per_run} == {
        k: v for k, v in by_name.items() if k not in per_run
    }
    assert sorted(c["cell_id"] for c in by_path["cells"]) == sorted(c["cell_id"] for c in by_name["cells"])


def test_seed_experiment_cells_use_each_stack_port_and_path() -> None:
    plan = run_plan("sinatra-thin-nginx")
    by_stack = {c["stack"]: c for c in plan["cells"]}
    assert by_stack["sinatra-thin-x4-nginx"]["port"] == 8004
    assert by_stack["sinatra-thin-x4-nginx"]["path"] == "/hello/bar"
    assert by_stack["nginx-static"]["path"] == "/index.html"
    assert by_stack["nginx-static"]["warmup"] == {"requests": 1000}
    # Measuring order: round by round, every load point once per round, in the run's seeded order.
    points = len(plan["stacks"]) * len(plan["experiment"]["load"]["plans"])
    reps = [c["repetition"] for c in plan["cells"]]
    assert reps == sorted(reps) and len(plan["cells"]) == points * max(reps)
    assert plan["seed"] == seed_for(plan["run_dir"])
    expected = [c.cell_id for c in cells(experiment_of(plan), plan["seed"])]
    assert [c["cell_id"] for c in plan["cells"]] == expected


def test_the_plan_fills_in_load_defaults_and_a_new_run_folder(tmp_path: Path) -> None:
    path = write_experiment(tmp_path, small_experiment())
    plan = run_plan(str(path), results_dir=str(tmp_path / "results"))
    assert [c["cell_id"] for c in plan["cells"]] == ["pool__ab__c50__r1"]
    assert plan["experiment"]["load"]["repetitions"] == 1 and plan["experiment"]["load"]["warmup"] is None
    assert plan["run_dir"].startswith(str(tmp_path / "results") + "/")
    assert plan["run_dir"].endswith("-small")
    assert not Path(plan["run_dir"]).exists()  # chosen, not made: provisioning alone writes no run folder


def test_the_roots_come_from_the_project_variables(tmp_path: Path) -> None:
    path = write_experiment(tmp_path, small_experiment())
    plan = run_plan(
        str(path),
        {
            "bench_run_root": "/run/bench-elsewhere",
            "bench_app_root": "/srv/apps",
            "bench_unit_config_dir": "/etc/bench-u",
        },
    )
    [s] = plan["stacks"]
    assert [ep["socket"] for ep in s["endpoints"]] == [
        "/run/bench-elsewhere/pool-1/server.sock",
        "/run/bench-elsewhere/pool-2/server.sock",
    ]
    assert s["server"]["unit_runtime_directory"] == "bench-elsewhere/pool-%i"
    assert s["server"]["env_file"] == "/etc/bench-u/pool.env"
    assert s["app"]["dir"] == "/srv/apps/sinatra"
    # verify asks the sockets where the units put them
    assert [c["unix_socket"] for c in plan["instance_checks"]][
        -1
    ] == "/run/bench-elsewhere/pool-2/server.sock"
    assert plan["roots"] == {"run": "/run/bench-elsewhere", "apps": "/srv/apps", "units": "/etc/bench-u"}


def test_a_run_root_outside_run_is_refused_before_anything(tmp_path: Path) -> None:
    path = write_experiment(tmp_path, small_experiment())
    with pytest.raises(AnsibleActionFail, match=r"bench_run_root: must be a folder under /run"):
        run_plan(str(path), {"bench_run_root": "/var/run-elsewhere"})


def test_invalid_experiment_fails_naming_the_field(tmp_path: Path) -> None:
    data = small_experiment()
    data["load"]["plans"] = [{"tool": "wrk", "concurrency": 4}]
    path = write_experiment(tmp_path, data)
    with pytest.raises(AnsibleActionFail) as err:
        run_plan(str(path))
    assert "load.plans[0].duration_s" in str(err.value)
    assert str(path) in str(err.value)


def test_invalid_stack_fails_naming_stack_and_field(tmp_path: Path) -> None:
    data = small_experiment()
    data["stacks"][0]["server"]["kind"] = "gunicorn"
    with pytest.raises(AnsibleActionFail, match=r"stack 'pool': server.kind"):
        run_plan(str(write_experiment(tmp_path, data)))


def test_a_bad_role_variable_fails_in_the_plan_with_one_line(tmp_path: Path) -> None:
    path = write_experiment(tmp_path, small_experiment())
    with pytest.raises(AnsibleActionFail) as err:
        run_plan(str(path), {"nginx_upstream_keepalive": "many", "nginx_profile": "fast"})
    lines = str(err.value).splitlines()
    assert lines[0] == "invalid variables:"
    assert any(line.startswith("  - role nginx:") and "nginx_upstream_keepalive" in line for line in lines)
    assert any("nginx_profile" in line and "tuned" in line for line in lines)


def test_a_run_folder_of_another_experiment_is_refused(tmp_path: Path) -> None:
    results = tmp_path / "results"
    other = results / "other"
    other.mkdir(parents=True)
    (other / "run.json").write_text(json.dumps({"experiment": {"name": "x", "stacks": [], "load": {}}}))
    path = write_experiment(tmp_path, small_experiment())
    with pytest.raises(
        AnsibleActionFail, match=r"^bench_run_dir: .*another experiment|^bench_run_dir: .*'x'"
    ):
        run_plan(str(path), results_dir=str(results), run_dir=str(other))


def test_a_run_folder_outside_the_results_is_refused_unless_insisted(tmp_path: Path) -> None:
    path = write_experiment(tmp_path, small_experiment())
    with pytest.raises(AnsibleActionFail, match=r"^bench_run_dir: .*outside the results folder"):
        run_plan(str(path), results_dir=str(tmp_path / "results"), run_dir=str(tmp_path / "elsewhere"))
    plan = run_plan(
        str(path),
        results_dir=str(tmp_path / "results"),
        run_dir=str(tmp_path / "elsewhere"),
        allow_outside=True,
    )
    assert plan["run_dir"] == str(tmp_path / "elsewhere")


def test_missing_experiment_name_is_one_message_listing_the_known_ones() -> None:
    with pytest.raises(AnsibleActionFail) as err:
        run_plan("no-such-experiment-here")
    # .message is what Ansible prints: the message followed by every chained cause.
    known = ", ".join(p.stem for p in EXPERIMENTS)
    assert err.value.message == (
        "invalid experiment:\n  - no experiment named 'no-such-experiment-here': no "
        f"{ROOT}/experiments/no-such-experiment-here.yml (there are: {known})"
    )


def test_missing_experiment_file_is_said_once(tmp_path: Path) -> None:
    path = tmp_path / "nope.yml"
    with pytest.raises(AnsibleActionFail) as err:
        run_plan(str(path))
    assert err.value.message == f"{path}: cannot read the file: No such file or directory"


def test_binary_experiment_file_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "exp.yml"
    path.write_bytes("name: x\n".encode("utf-16"))
    with pytest.raises(AnsibleActionFail) as err:
        run_plan(str(path))
    assert err.value.message == f"{path}: not UTF-8 text (a UTF-16 byte-order mark): save it as UTF-8"


def test_broken_yaml_fails_the_plan(tmp_path: Path) -> None:
    path = tmp_path / "broken.yml"
    path.write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(AnsibleActionFail, match="not valid YAML"):
        run_plan(str(path))


# ---------------------------------------------------------------- filters


def stack(**over: Any) -> dict[str, Any]:
    s = {"name": "pool", "port": 8002, "app": {"kind": "sinatra"}, "server": {"kind": "thin", "instances": 2}}
    s["front"] = {"kind": "nginx"}
    s.update(over)
    return s


def test_filter_module_exposes_its_filters() -> None:
    assert set(filters.FilterModule().filters()) == {
        "bench_capacity_warnings",
        "bench_server_command",
        "bench_helper_files",
    }


def test_each_helper_file_is_installed_once_under_the_hosts_folder() -> None:
    helper = {"src": "perl/M.pm", "dest": "{perl_lib}/M.pm"}
    assert filters.bench_helper_files([helper, helper], {"perl_lib": "/p5"}) == [
        {"src": "perl/M.pm", "dest": "/p5/M.pm"}
    ]
    with pytest.raises(AnsibleFilterError, match="no host value for perl_lib"):
        filters.bench_helper_files([helper], {})


def test_a_start_commands_placeholders_take_the_hosts_values_and_a_missing_one_fails_the_task() -> None:
    assert filters.bench_server_command("{php_fpm} --nodaemonize", {"php_fpm": "/usr/sbin/php-fpm8.2"}) == (
        "/usr/sbin/php-fpm8.2 --nodaemonize"
    )
    with pytest.raises(AnsibleFilterError, match="no host value for php_fpm"):
        filters.bench_server_command("{php_fpm} --nodaemonize", {})


def inventory(
    targets: list[str], loadgens: list[str], hostvars: dict[str, Any], play: list[str] | None = None
) -> dict[str, Any]:
    """The task variables the plan reads the inventory from (``play``: the hosts in the play, --limit)."""
    hosts = [*targets, *(lg for lg in loadgens if lg not in targets)]
    return {
        "groups": {"targets": targets, "loadgens": loadgens},
        "hostvars": {h: hostvars.get(h, {}) for h in hosts},
        "ansible_play_hosts_all": hosts if play is None else play,
    }


def test_the_targets_a_run_measures_are_the_ones_its_loadgens_in_the_play_load() -> None:
    hostvars = {"lg1": {"bench_target": "t2"}}
    assert run_plan(None, inventory(["t1", "t2", "t3"], ["lg1", "lg2"], hostvars))["targets"] == ["t1", "t2"]
    limited = inventory(["t1", "t2"], ["lg1", "lg2"], hostvars, play=["t1", "t2", "lg1"])
    assert run_plan(None, limited)["targets"] == ["t2"]  # --limit lg1
    alone = inventory(["t1"], ["lg1"], {}, play=["t1"])
    assert run_plan(None, alone)["targets"] == []  # a play without loadgens
    with pytest.raises(AnsibleActionFail, match="^loadgen lg1: bench_target t9 is not in the targets group"):
        run_plan(None, inventory(["t1"], ["lg1"], {"lg1": {"bench_target": "t9"}}))


def test_the_plan_gives_each_host_its_roles_and_each_loadgen_its_target_address_and_peers() -> None:
    hostvars = {
        "t1": {"bench_address": "10.0.0.1", "ansible_host": "192.0.2.1"},
        "t2": {"ansible_host": "192.0.2.2"},
        "lg1": {"bench_target": "t1"},
        "lg2": {"bench_target": "t1"},
        "lg3": {"bench_target": "t2"},
    }
    plan = run_plan(None, inventory(["t1", "t2", "both"], ["lg1", "lg2", "lg3", "both"], hostvars))
    hosts = plan["hosts"]
    assert list(hosts) == ["t1", "t2", "both", "lg1", "lg2", "lg3"]
    target_roles = ["ruby", "webapp", "app_server", "nginx"]  # sinatra on thin (behind nginx), nginx static
    assert hosts["t1"]["roles"] == ["host", *target_roles]
    assert hosts["both"]["roles"] == ["host", *target_roles, "loadgen"]
    assert hosts["lg1"]["roles"] == ["host", "loadgen"]
    assert {h: (p["target"], p["address"], p["peers"], p["loopback"]) for h, p in hosts.items()} == {
        "t1": (None, None, [], False),
        "t2": (None, None, [], False),
        # A host in both groups loads itself over loopback; the others at bench_address, else ansible_host.
        "both": ("both", "127.0.0.1", ["both"], True),
        "lg1": ("t1", "10.0.0.1", ["lg1", "lg2"], False),
        "lg2": ("t1", "10.0.0.1", ["lg1", "lg2"], False),
        "lg3": ("t2", "192.0.2.2", ["lg3"], False),
    }
    assert plan["mode"] == "network"
    # verify asks each stack through its front as the loadgen reaches the target; the names it resolves.
    assert {c["url"] for c in hosts["lg1"]["front_checks"]} >= {"http://10.0.0.1:8001/hello/bar"}
    assert hosts["t1"]["front_checks"] == [] and "10.0.0.1" not in hosts["lg1"]["dns_names"]
    assert hosts["lg3"]["dns_names"] == []  # an address resolves without DNS
    named = run_plan(None, inventory(["web"], ["lg"], {"web": {"bench_address": "web.lab"}}))
    assert named["hosts"]["lg"]["dns_names"] == ["web.lab"] and named["hosts"]["web"]["dns_names"] == []
    loopback = run_plan(None, inventory(["box"], ["box"], {}))
    assert loopback["mode"] == "loopback" and loopback["hosts"]["box"]["address"] == "127.0.0.1"


def test_the_plan_of_two_targets_plans_every_cell_on_each_and_warns_of_an_unloaded_target() -> None:
    play = inventory(["t1", "t2", "t3", "t4"], ["t1", "t2"], {}, play=["t1", "t2", "t3"])
    plan = run_plan("multi-host", play, parallel=False)
    assert plan["targets"] == ["t1", "t2"] and plan["target_order"] == "sequential"
    half = len(plan["cells"]) // 2
    assert {c["target"] for c in plan["cells"][:half]} == {"t1"}  # one target after the other
    assert [c["cell_id"] for c in plan["cells"][half:]] == [
        "t2__" + c["cell_id"].removeprefix("t1__") for c in plan["cells"][:half]
    ]
    # t4 is not in the play (--limit): nothing to warn about.
    assert [w for w in plan["warnings"] if "no loadgen" in w] == [
        "no loadgen loads t3: provisioned, not measured (give a loadgen its bench_target)"
    ]


def test_capacity_filter_warns_from_fingerprints() -> None:
    f = filters.FilterModule().filters()["bench_capacity_warnings"]
    fp = {"sysctls": {"net.core.somaxconn": "64"}, "nofile_limit": "65536"}
    assert f([{**CELL_PLAN_BASE, "concurrency": 100}], fp, fp) != []
    assert f([{**CELL_PLAN_BASE, "concurrency": 10}], fp, fp) == []
    with pytest.raises(AnsibleFilterError, match="not a cell plan"):
        f([{"concurrency": 100}], fp, fp)


# ---------------------------------------------------------------- action plugins


def make_action(module: ModuleType, args: dict[str, Any], check_mode: bool = False) -> Any:
    task = MagicMock()
    task.args = args
    task.check_mode = check_mode
    task.async_val = 0
    task.action = module.__name__
    return module.ActionModule(task, MagicMock(), MagicMock(), MagicMock(), MagicMock())


class Loadgen:
    """Stands in for the connection: answers _low_level_execute_command with captured output."""

    def __init__(self, measured: str, rc: int = 0) -> None:
        self.measured = measured
        self.rc = rc
        self.helpers = Helpers()
        self.commands: list[str] = []
        self.sent: list[str] = []  # every command, as the connection got it

    def __call__(self, command: str) -> dict[str, Any]:
        self.sent.append(command)
        inside = batch_commands(command)
        if inside is not None:
            replies = [self(c) for c in inside]
            return {"rc": 0, "stdout": batch_reply([(r["rc"], r["stdout"], r["stderr"]) for r in replies])}
        helper = self.helpers.reply(command)
        if helper is not None:
            return dict(zip(("rc", "stdout", "stderr"), helper, strict=True))
        self.commands.append(command)
        if command.startswith("wrk -v"):
            return {"rc": 1, "stdout": "wrk 4.1.0 [epoll] Copyright (C) 2012 Will Glozer\n", "stderr": ""}
        return {"rc": self.rc, "stdout": self.helpers.measured(command, self.measured), "stderr": ""}


def cell_args(tmp_path: Path, tool: str = "ab", **load: Any) -> dict[str, Any]:
    data = small_experiment(**load)
    if tool == "wrk":
        data["load"]["plans"] = [{"tool": "wrk", "concurrency": 32, "threads": 2, "duration_s": 3}]
    plan = run_plan(str(write_experiment(tmp_path, data)))
    return {
        "cell": plan["cells"][0],
        "host": "127.0.0.1",
        "target": "target1",
        "run_dir": str(tmp_path / "run"),
        "experiment": plan["experiment"]["name"],
    }


def run_cell(args: dict[str, Any], loadgen: Loadgen, hostname: str = "loadgen1", **kw: Any) -> dict[str, Any]:
    action = make_action(bench_cell, args, **kw)
    action._low_level_execute_command = loadgen
    return action.run(task_vars={"inventory_hostname": hostname})


def test_bench_cell_measures_and_stores_a_cell(tmp_path: Path, pauses: list[float]) -> None:
    args = cell_args(tmp_path, warmup={"requests": 100})
    loadgen = Loadgen(read_data("ab", "normal.txt"))
    result = run_cell(args, loadgen)
    assert result["changed"] is True
    assert pauses == [args["cell"]["pause_s"]] and pauses[0] > 0
    cell = result["cell"]
    assert validate_cell(cell, require_meta=True) == []
    assert (cell["target"], cell["loadgen"], cell["mode"]) == ("target1", "loadgen1", "network")
    assert len(loadgen.commands) == 2  # warm-up, then the measured run
    stored = tmp_path / "run" / "cells" / f"{args['cell']['cell_id']}.json"
    assert json.loads(stored.read_text(encoding="utf-8")) == cell


def test_bench_cell_on_the_target_itself_is_loopback(tmp_path: Path) -> None:
    result = run_cell(cell_args(tmp_path), Loadgen(read_data("ab", "normal.txt")), hostname="target1")
    assert result["cell"]["mode"] == "loopback"


def test_bench_cell_rerun_is_unchanged_and_sends_no_load(tmp_path: Path) -> None:
    args = cell_args(tmp_path)
    first = run_cell(args, Loadgen(read_data("ab", "normal.txt")))
    again = Loadgen(read_data("ab", "normal.txt"))
    second = run_cell(args, again)
    assert second["changed"] is False
    assert second["cell"] == first["cell"]
    assert again.commands == []


def test_bench_cell_probes_the_wrk_version(tmp_path: Path) -> None:
    loadgen = Loadgen(read_data("latency", "wrk-fast.txt"))
    result = run_cell(cell_args(tmp_path, tool="wrk"), loadgen)
    assert loadgen.commands[0] == "wrk -v 2>&1 | head -n 1"
    assert result["cell"]["tool_version"] == "wrk 4.1.0 [epoll] Copyright (C) 2012 Will Glozer"


def test_bench_cell_failure_is_an_action_failure_naming_the_raw_file(tmp_path: Path) -> None:
    args = cell_args(tmp_path)
    with pytest.raises(AnsibleActionFail, match=rf"raw/{args['cell']['cell_id']}\.txt"):
        run_cell(args, Loadgen(read_data("ab", "connect-refused.txt"), rc=1))


def test_bench_cell_on_a_hung_stack_records_where_the_run_stopped(tmp_path: Path) -> None:
    args = cell_args(tmp_path, tool="wrk")
    with pytest.raises(AnsibleActionFail, match="completed no request and counted no error"):
        run_cell(args, Loadgen(read_data("wrk", "hung-server.txt")))
    [stop] = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["stopped"]
    assert (stop["cell"], stop["reason"]) == (args["cell"]["cell_id"], "hung")
    assert "the stack did not answer within the run" in stop["message"]


def test_bench_cell_with_a_stack_that_cannot_be_brought_back_loads_nothing_and_stops_the_run(
    tmp_path: Path,
) -> None:
    """Issue 44: a unit of the cell's stack still down after its restarts (the check before the cell, in
    loopback mode on the loadgen itself) sends no load, stores no cell, and stops the run in run.json
    (the verdict's ``stopped``); with keep_going the run goes on past it."""
    args = cell_args(tmp_path)
    plan = run_plan(str(write_experiment(tmp_path, small_experiment())))
    units = plan["stack_units"]["Debian"][args["cell"]["stack"]]
    assert units and all(set(u) == {"unit", "listen"} for u in units)
    args["units"] = units
    down = units[0]["unit"]
    loadgen = Loadgen(read_data("ab", "normal.txt"))
    states = {u["unit"]: "active active 0 0" for u in units} | {down: "failed failed 2 21"}
    loadgen.helpers.units = "".join(f"BENCH-STACK-UNIT {u} {state} -\n" for u, state in states.items())
    with pytest.raises(
        AnsibleActionFail, match=f"cannot be brought back on target1: {re.escape(down)} is failed"
    ):
        run_cell(args, loadgen, hostname="target1")
    assert loadgen.commands == []
    assert not (tmp_path / "run" / "cells").exists()
    [stop] = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["stopped"]
    assert (stop["cell"], stop["reason"]) == (args["cell"]["cell_id"], "failed")
    assert f"{down} is failed after 2 restarts" in stop["message"]
    result = run_cell({**args, "keep_going": True}, loadgen, hostname="target1")
    assert result["failed_cell"] is True and loadgen.commands == []


def test_bench_cell_reports_missing_arguments(tmp_path: Path) -> None:
    args = cell_args(tmp_path)
    del args["host"], args["experiment"]
    with pytest.raises(AnsibleActionFail, match="^bench_cell: missing required arguments: experiment, host$"):
        run_cell(args, Loadgen(""))


def test_bench_cell_refuses_a_cell_that_is_not_a_cell_plan(tmp_path: Path) -> None:
    args = cell_args(tmp_path)
    loadgen = Loadgen(read_data("ab", "normal.txt"))
    with pytest.raises(AnsibleActionFail, match="^bench_cell: cell: not a cell plan: unknown keys bogus$"):
        run_cell({**args, "cell": {**args["cell"], "bogus": 1}}, loadgen)
    assert loadgen.commands == []


def test_bench_cell_rejects_unknown_arguments(tmp_path: Path) -> None:
    with pytest.raises(AnsibleActionFail, match="^bench_cell: Unsupported parameters for .*: bogus"):
        run_cell({**cell_args(tmp_path), "bogus": 1}, Loadgen(""))


def test_bench_cell_in_check_mode_sends_no_load(tmp_path: Path) -> None:
    loadgen = Loadgen(read_data("ab", "normal.txt"))
    result = run_cell(cell_args(tmp_path), loadgen, check_mode=True)
    assert result["skipped"] is True and result["changed"] is False
    assert loadgen.commands == []
    assert not (tmp_path / "run").exists()


def test_bench_run_info_writes_run_json_from_the_plan_and_what_the_run_learnt_of_each_host(
    tmp_path: Path,
) -> None:
    play = inventory(["web"], ["lg1", "lg2"], {"web": {"bench_address": "10.0.0.1"}})
    plan = run_plan(str(write_experiment(tmp_path, small_experiment())), play)
    match = {"matches": True, "differs": {}, "stale": []}
    play["hostvars"]["web"].update(
        host_fingerprint={"hostname": "web"},
        bench_plan_match={"plan_match": match},
        bench_provision={"stale": {"units": ["bench-old@1.service"], "files": []}},
        dns_check_probe_result={"requests": 5, "rows": []},
    )
    floor = {
        "stack": "s",
        "url": "http://10.0.0.1:8001/",
        "command": "wrk -t1 -c8 -d1s, 5 times",
        "requests": 100,
        "rps": [20.0] * 5,
        "cv": 0.01,
        "foreign": 0.0,
        "steal": 0.0,
        "problem": None,
    }
    for lg, probed in (("lg1", floor), ("lg2", None)):
        play["hostvars"][lg].update(
            host_fingerprint={"hostname": lg},
            bench_plan_match={"plan_match": match},
            # lg2's probe was skipped; a skipped DNS probe has no rows.
            bench_noise={"floor": probed} if probed else {"skipped": True},
            dns_check_probe_result={"skipped": True},
        )
    play["hostvars"]["localhost"] = {"bench_verified": {"passed": True}}
    task_vars = {**play, "inventory_dir": "/inv"}
    result = make_action(bench_run_info, {"run_dir": str(tmp_path), "plan": plan}).run(task_vars=task_vars)
    assert result["changed"] is True and result["path"] == str(tmp_path / "run.json")
    data = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert data["schema"] == "bench-stack/run/v6"
    assert data["experiment"] == {**plan["experiment"], "cells": plan["cells"]}
    assert data["experiment_sha256"] == experiment_hash(data["experiment"])
    assert {k: data[k] for k in ("inventory", "targets", "loadgens", "mode", "seed", "target_order")} == {
        "inventory": "/inv",
        "targets": ["web"],
        "loadgens": ["lg1", "lg2"],
        "mode": "network",
        "seed": plan["seed"],
        "target_order": None,
    }
    assert data["hosts"] == {h: {"hostname": h} for h in ("web", "lg1", "lg2")}
    assert data["hosts_match_plan"] == {h: match for h in ("web", "lg1", "lg2")}
    assert data["noise_floor"] == {"lg1": floor, "lg2": None}
    assert data["swept"] == {"web": {"units": ["bench-old@1.service"], "files": []}, "lg1": None, "lg2": None}
    assert data["verify"] == {"passed": True}
    assert data["dns_probe"] == {"web": {"requests": 5, "rows": []}}
    # Without provisioning, a DNS probe or verify in this playbook run: null.
    for host in play["hostvars"].values():
        host.pop("bench_provision", None)
        host.pop("dns_check_probe_result", None)
    del play["hostvars"]["localhost"]
    make_action(bench_run_info, {"run_dir": str(tmp_path), "plan": plan}).run(task_vars=play)
    data = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert data["swept"] is None and data["dns_probe"] is None and data["verify"] is None
    assert data["inventory"] is None


@pytest.mark.parametrize("where", ["acquire", "write_run_info"])
def test_bench_run_info_in_a_run_folder_that_cannot_be_written_fails_in_one_line_before_any_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    plan = run_plan(str(write_experiment(tmp_path, small_experiment())))
    monkeypatch.setattr(bench_run_info, where, _refuse(errno.EACCES))
    with pytest.raises(AnsibleActionFail) as err:
        make_action(bench_run_info, {"run_dir": str(tmp_path), "plan": plan}).run(task_vars={})
    assert str(err.value) == (
        f"bench_run_info: the run folder {tmp_path} cannot be written (EACCES (Permission denied)): no cell "
        "is measured; make it writable (or free space) and run again"
    )


def test_bench_run_info_refuses_a_record_off_the_schema_naming_the_field(tmp_path: Path) -> None:
    plan = {**run_plan(str(write_experiment(tmp_path, small_experiment()))), "mode": "lan"}
    with pytest.raises(AnsibleActionFail) as err:
        make_action(bench_run_info, {"run_dir": str(tmp_path), "plan": plan}).run(task_vars={})
    assert err.value.message == (
        f"bench_run_info: {tmp_path / 'run.json'}: not writing an invalid run record: "
        "mode must be one of loopback, network, not 'lan'"
    )
    assert not (tmp_path / "run.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"run_dir": "/x"}, "missing required arguments: plan"),
        ({"run_dir": "/x", "plan": "text"}, "argument 'plan' is of type .* unable to convert to dict"),
        ({"plan": {}}, "missing required arguments: run_dir"),
    ],
)
def test_bench_run_info_requires_run_dir_and_a_plan(args: dict[str, Any], message: str) -> None:
    with pytest.raises(AnsibleActionFail, match=f"^bench_run_info: {message}"):
        make_action(bench_run_info, args).run(task_vars={})


def test_bench_run_info_in_check_mode_writes_nothing(tmp_path: Path) -> None:
    args = {"run_dir": str(tmp_path), "plan": {"a": 1}}
    result = make_action(bench_run_info, args, check_mode=True).run(task_vars={})
    assert result["skipped"] is True
    assert list(tmp_path.iterdir()) == []


def test_bench_report_without_cells_fails(tmp_path: Path) -> None:
    with pytest.raises(AnsibleActionFail, match="no cells in"):
        make_action(bench_report, {"run_dir": str(tmp_path)}).run(task_vars={})


def test_bench_report_of_a_cell_of_the_wrong_shape_fails_naming_the_file(tmp_path: Path) -> None:
    args = cell_args(tmp_path)
    run_cell(args, Loadgen(read_data("ab", "normal.txt")))
    [path] = (tmp_path / "run" / "cells").glob("*.json")
    path.write_text("[1, 2, 3]")
    with pytest.raises(AnsibleActionFail) as err:
        make_action(bench_report, {"run_dir": args["run_dir"]}).run(task_vars={})
    assert err.value.message == (
        f"bench_report: {path}: not a valid cell: a cell must be a JSON object, not list"
    )


def test_bench_report_in_check_mode_skips_even_without_cells(tmp_path: Path) -> None:
    # bench_cell measures nothing in check mode, so the report must not demand cells then.
    result = make_action(bench_report, {"run_dir": str(tmp_path / "run")}, check_mode=True).run(task_vars={})
    assert result["skipped"] is True and result["changed"] is False


def test_bench_report_writes_the_report_and_returns_the_table(tmp_path: Path) -> None:
    args = cell_args(tmp_path)
    run_cell(args, Loadgen(read_data("ab", "normal.txt")))
    result = make_action(bench_report, {"run_dir": args["run_dir"]}).run(task_vars={})
    assert result["changed"] is True
    assert Path(result["report"]) == tmp_path / "run" / "report.md"
    assert Path(result["report"]).is_file()
    assert Path(result["report_html"]) == tmp_path / "run" / "report.html"
    assert Path(result["report_html"]).is_file()
    assert "pool" in result["table"]
    assert result["table_lines"] == result["table"].splitlines()
    assert result["table_lines"][0].startswith("|")
    # The run prints the table, then its verdict: no run.json here, so nothing shows verification, and the
    # loadgen's vmstat (tests/data/vmstat/vmstat-during-wrk.txt) is of a host with no CPU idle left.
    assert "Verdict: INVALID (load points: 1 invalid)" in result["table_lines"]
    # One cell: its median's precision is unknown, too.
    assert [r["code"] for r in result["verdict"]["reasons"]] == [
        "not_verified",
        "loadgen_saturated",
        "precision",
    ]
    assert result["comparisons"] == []  # one stack: nothing to compare


def test_bench_report_prints_the_comparisons_between_the_table_and_the_verdict(tmp_path: Path) -> None:
    from benchstack.kinds.loadtools import parse
    from benchstack.results.cell import cell_to_dict, make_cell, write_cell

    parsed = parse("ab", read_data("ab", "normal.txt"))
    for stack, rps in (("a", 1000.0), ("b", 1250.0)):
        for rep in range(1, 9):
            meta = {**STORED_META, "experiment": "e", "raw_output": f"raw/{stack}-{rep}.txt"}
            cell = cell_to_dict(make_cell(parsed, **meta, stack=stack, repetition=rep, requests=2000))
            write_cell(tmp_path, {**cell, "rps": rps + rep})
    result = make_action(bench_report, {"run_dir": str(tmp_path)}).run(task_vars={})
    lines = result["table_lines"]
    start = lines.index("Comparisons (baseline a):")
    assert lines[start : start + 3] == [
        "Comparisons (baseline a):",
        "ab c50:",
        "  b: faster, 1.25x the req/s of a (1.25-1.25; 8 pairs 0.0 s apart)",
    ]
    assert lines[0].startswith("| stack |") and lines[start + 4].startswith("Verdict: ")
    assert [(c["stack"], c["baseline"], c["state"]) for c in result["comparisons"]] == [("b", "a", "faster")]


# ---------------------------------------------------------------- adaptive repetitions


def test_bench_extra_cells_returns_the_next_repetition_of_a_noisy_load_point(tmp_path: Path) -> None:
    data = small_experiment(repetitions=2, max_repetitions=3, max_cv=0.05)
    plan = run_plan(str(write_experiment(tmp_path, data)))
    run_dir = tmp_path / "run"
    normal = read_data("ab", "normal.txt")
    # repetition 2 edited to half the req/s of repetition 1: CV far above 5 %
    outputs = {1: normal, 2: normal.replace("second:    18967.23", "second:    9000.00")}
    for cell in plan["cells"]:
        args = {"cell": cell, "host": "127.0.0.1", "target": "t", "run_dir": str(run_dir)}
        run_cell({**args, "experiment": "small"}, Loadgen(outputs[cell["repetition"]]))
    action = make_action(bench_extra_cells, {"run_dir": str(run_dir), "plan": plan})
    result = action.run(task_vars={})
    assert [c["cell_id"] for c in result["cells"]] == ["pool__ab__c50__r3"]
    assert result["changed"] is False
    check = make_action(bench_extra_cells, {"run_dir": str(run_dir), "plan": plan}, check_mode=True)
    assert check.run(task_vars={})["cells"] == []


def test_bench_extra_cells_says_whether_the_run_measures_anything_more(tmp_path: Path) -> None:
    """benchmark.yml restarts the stacks only for a run that measures: a planned cell missing or an extra
    round due; a resumed run whose cells are all stored and whose rounds are over measures nothing."""
    plan = run_plan(str(write_experiment(tmp_path, small_experiment(repetitions=2, max_repetitions=2))))
    run_dir = tmp_path / "run"

    def to_measure() -> bool:
        return bool(
            make_action(bench_extra_cells, {"run_dir": str(run_dir), "plan": plan}).run(task_vars={})[
                "to_measure"
            ]
        )

    assert to_measure()  # nothing stored yet
    normal = read_data("ab", "normal.txt")
    first, *rest = plan["cells"]
    for cell in rest:
        args = {"cell": cell, "host": "127.0.0.1", "target": "t", "run_dir": str(run_dir)}
        run_cell({**args, "experiment": "small"}, Loadgen(normal))
    assert to_measure()  # one planned cell missing
    args = {"cell": first, "host": "127.0.0.1", "target": "t", "run_dir": str(run_dir)}
    run_cell({**args, "experiment": "small"}, Loadgen(normal))
    assert not to_measure()  # every cell stored, at max_repetitions: no round due
    check = make_action(bench_extra_cells, {"run_dir": str(run_dir), "plan": plan}, check_mode=True)
    assert check.run(task_vars={})["to_measure"] is False


def test_bench_extra_cells_prints_the_first_table_before_the_first_extra_round_only(tmp_path: Path) -> None:
    data = small_experiment(repetitions=2, max_repetitions=4, max_seconds=600)
    plan = run_plan(str(write_experiment(tmp_path, data)))
    run_dir = tmp_path / "run"
    normal = read_data("ab", "normal.txt")
    slow = normal.replace("second:    18967.23", "second:    9000.00")
    outputs = {1: normal, 2: slow, 3: normal}
    for cell in plan["cells"]:
        args = {"cell": cell, "host": "127.0.0.1", "target": "t", "run_dir": str(run_dir)}
        run_cell({**args, "experiment": "small"}, Loadgen(outputs[cell["repetition"]]))
    first = make_action(bench_extra_cells, {"run_dir": str(run_dir), "plan": plan}).run(task_vars={})
    text = first["first_table"]
    assert text.startswith("First table, after 2 rounds. More rounds follow for 1 load point(s)")
    assert "600 s of measuring" in text and "| pool | ab | c50 | 2 |" in text
    # The resume hint names this run and a command on PATH (`./run bench -e X` ran `-e experiment=-e`).
    assert f"./run bench -e bench_run_dir={run_dir} (" in text
    # What the console's progress line shows of the round (plugins/callback/bench_stack.py).
    assert (first["round"], first["budget_s"]) == (3, 600)
    assert first["serves"] == ["pool ab c50: its median known to unknown, +-5 % wanted"]
    assert 0 < first["left_s"] <= 600
    [extra] = first["cells"]
    args = {"cell": extra, "host": "127.0.0.1", "target": "t", "run_dir": str(run_dir), "experiment": "small"}
    run_cell(args, Loadgen(outputs[3]))
    second = make_action(bench_extra_cells, {"run_dir": str(run_dir), "plan": plan}).run(task_vars={})
    assert [c["cell_id"] for c in second["cells"]] == ["pool__ab__c50__r4"]
    assert second["first_table"] == ""


def test_bench_extra_cells_fails_naming_a_cell_of_the_wrong_shape(tmp_path: Path) -> None:
    plan = run_plan(str(write_experiment(tmp_path, small_experiment(repetitions=1, max_repetitions=2))))
    args = cell_args(tmp_path)
    run_cell(args, Loadgen(read_data("ab", "normal.txt")))
    [cell] = (tmp_path / "run" / "cells").glob("*.json")
    cell.write_text(json.dumps({**json.loads(cell.read_text()), "rps": "fast"}))
    action = make_action(bench_extra_cells, {"run_dir": args["run_dir"], "plan": plan})
    with pytest.raises(AnsibleActionFail) as err:
        action.run(task_vars={})
    assert err.value.message == f"{cell}: not a valid cell: rps must be a non-negative number, not 'fast'"


# ---------------------------------------------------------------- several loadgens


def test_two_loadgens_measure_one_cell_together_and_bench_merge_merges_it(tmp_path: Path) -> None:
    args = {**cell_args(tmp_path), "peers": ["lg1", "lg2"]}
    results: dict[str, dict[str, Any]] = {}

    def loadgen(name: str) -> None:
        results[name] = run_cell(args, Loadgen(read_data("ab", "normal.txt")), hostname=name)

    threads = [threading.Thread(target=loadgen, args=(n,)) for n in ("lg1", "lg2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    cell_id = args["cell"]["cell_id"]
    run = tmp_path / "run"
    for name in ("lg1", "lg2"):
        assert results[name]["changed"] is True
        assert (run / "loadgens" / name / "cells" / f"{cell_id}.json").is_file()
        assert "-g" in results[name]["cell"]["command"]  # per-request data for the merge
    assert not (run / "cells").exists()  # nothing in the run's cells until the merge
    merge = make_action(bench_merge, {"run_dir": str(run), "cell_id": cell_id, "loadgens": ["lg1", "lg2"]})
    merged = merge.run(task_vars={})
    assert merged["changed"] is True
    assert merged["cell"]["merged"]["loadgens"] == ["lg1", "lg2"]
    assert merged["cell"]["requests_completed"] == 2 * results["lg1"]["cell"]["requests_completed"]


def test_a_merged_cell_that_cannot_be_written_stops_the_run_and_the_resume_merges_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = ({**c, "peers": ["lg1", "lg2"]} for c in three_cells(tmp_path)[:2])
    threads = [
        threading.Thread(target=run_cell, args=(first, Loadgen(read_data("ab", "normal.txt")), n))
        for n in ("lg1", "lg2")
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    run, cell_id = tmp_path / "run", first["cell"]["cell_id"]
    merge = make_action(bench_merge, {"run_dir": str(run), "cell_id": cell_id, "loadgens": ["lg1", "lg2"]})
    with monkeypatch.context() as m:
        m.setattr(os, "fsync", _refuse(errno.ENOSPC))
        with pytest.raises(
            AnsibleActionFail, match="the run stops here, no further cell is measured$"
        ) as err:
            merge.run(task_vars={})
    assert str(err.value).startswith(
        f"{cell_id}: cannot store the merged cell: ENOSPC (No space left on device)"
    )
    [stop] = json.loads((run / "run.json").read_text(encoding="utf-8"))["stopped"]
    assert (stop["cell"], stop["reason"], stop["run"]) == (cell_id, "storage", bench_cell.playbook_run())
    later = Loadgen(read_data("ab", "normal.txt"))
    assert run_cell(second, later, hostname="lg1")["skipped"] is True and later.sent == []
    assert list((run / "cells").iterdir()) == []  # nothing half-written
    assert merge.run(task_vars={})["changed"] is True  # the resume's merge


def test_two_loadgens_leave_no_barrier_behind_measuring_or_resuming(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    args = {**cell_args(tmp_path), "peers": ["lg1", "lg2"]}

    def both_loadgens() -> list[bool]:
        results: dict[str, dict[str, Any]] = {}

        def loadgen(name: str) -> None:
            results[name] = run_cell(args, Loadgen(read_data("ab", "normal.txt")), hostname=name)

        threads = [threading.Thread(target=loadgen, args=(n,)) for n in ("lg1", "lg2")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        return [results[n]["changed"] for n in ("lg1", "lg2")]

    assert both_loadgens() == [True, True]
    assert list(tmp.iterdir()) == []
    # The rerun finds both cells stored: the loadgens measure nothing and leave no barrier either.
    assert both_loadgens() == [False, False]
    assert list(tmp.iterdir()) == []


def both(args: dict[str, Any], outputs: dict[str, str]) -> dict[str, dict[str, Any]]:
    """bench_cell on lg1 and lg2 at once, as the play runs it."""
    results: dict[str, dict[str, Any]] = {}

    def loadgen(name: str) -> None:
        results[name] = run_cell(args, Loadgen(outputs[name]), hostname=name)

    threads = [threading.Thread(target=loadgen, args=(n,)) for n in ("lg1", "lg2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_a_cell_one_loadgen_stored_and_another_did_not_is_measured_again_by_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    args = {**cell_args(tmp_path), "peers": ["lg1", "lg2"]}
    cell_id = args["cell"]["cell_id"]
    run = tmp_path / "run"
    both(args, {"lg1": read_data("ab", "normal.txt"), "lg2": read_data("ab", "normal.txt")})
    first = json.loads((run / "loadgens" / "lg1" / "cells" / f"{cell_id}.json").read_text())
    # Interrupted between the two: lg1's cell is stored, lg2's is not (and nothing is merged).
    (run / "loadgens" / "lg2" / "cells" / f"{cell_id}.json").unlink()
    again = both(args, {"lg1": read_data("ab", "keepalive.txt"), "lg2": read_data("ab", "keepalive.txt")})
    assert [again[n]["changed"] for n in ("lg1", "lg2")] == [True, True]
    assert again["lg1"]["cell"]["requests_completed"] == 5000 != first["requests_completed"]
    [aside] = (run / "loadgens" / "lg1" / "superseded").iterdir()
    assert json.loads((aside / "cells" / f"{cell_id}.json").read_text()) == first
    assert (aside / first["raw_output"]).read_text() == read_data("ab", "normal.txt")
    assert any(str(aside.relative_to(run)) in n for n in again["lg1"]["cell"]["notes"])
    assert (run / "loadgens" / "lg1" / "raw" / f"{cell_id}.txt").read_text() == read_data(
        "ab", "keepalive.txt"
    )


def test_a_cell_every_loadgen_stored_is_not_measured_and_nobody_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    args = {**cell_args(tmp_path), "peers": ["lg1", "lg2"]}
    both(args, {"lg1": read_data("ab", "normal.txt"), "lg2": read_data("ab", "normal.txt")})
    monkeypatch.setattr(bench_cell, "BARRIER_TIMEOUT_S", 0.2)
    loadgen = Loadgen("")
    result = run_cell(args, loadgen, hostname="lg1")  # lg2 never comes: lg1 does not wait for it
    assert result["changed"] is False and loadgen.commands == []


def test_a_loadgen_whose_peer_never_comes_fails_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(bench_cell, "BARRIER_TIMEOUT_S", 0.2)
    args = {**cell_args(tmp_path), "peers": ["lg1", "lg2"]}
    with pytest.raises(AnsibleActionFail, match=r"__r1: loadgens not ready after 0.2 s: lg2$"):
        run_cell(args, Loadgen(read_data("ab", "normal.txt")), hostname="lg1")


def test_a_worker_whose_playbook_has_ended_measures_nothing_and_records_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_cell, "playbook_running", lambda: False)
    loadgen = Loadgen(read_data("ab", "normal.txt"))
    with pytest.raises(AnsibleActionFail, match="the playbook that started this cell has ended"):
        run_cell(cell_args(tmp_path), loadgen)
    assert loadgen.commands == [] and not (tmp_path / "run").exists()


def test_a_cell_that_fails_after_its_playbook_ended_is_not_recorded_as_where_the_run_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The resume that the user started meanwhile owns run.json now. (Asked before the cell, when its
    # command returns, then after the failure.)
    running = iter([True, True, False])
    monkeypatch.setattr(bench_cell, "playbook_running", lambda: next(running))
    with pytest.raises(AnsibleActionFail, match="the playbook has ended: not recorded"):
        run_cell(cell_args(tmp_path, tool="wrk"), Loadgen(read_data("wrk", "hung-server.txt")))
    assert not (tmp_path / "run" / "run.json").exists()


def test_a_worker_whose_playbook_ends_during_the_cell_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SIGKILL of the controller mid-cell: its worker and docker exec lived on and stored the cell.
    running = iter([True, False])
    monkeypatch.setattr(bench_cell, "playbook_running", lambda: next(running))
    loadgen = Loadgen(read_data("ab", "normal.txt"))
    with pytest.raises(AnsibleActionFail, match="has ended \\(not stored\\)"):
        run_cell(cell_args(tmp_path), loadgen)
    assert len(loadgen.commands) == 1  # it measured
    run = tmp_path / "run"
    assert not (run / "cells").exists() and not (run / "raw").exists() and not (run / "run.json").exists()
    assert list((run / ".bench-stack.workers").iterdir()) == []


def two_cells(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    data = small_experiment()
    data["load"]["repetitions"] = 2
    plan = run_plan(str(write_experiment(tmp_path, data)))
    base = {"host": "127.0.0.1", "target": "target1", "run_dir": str(tmp_path / "run")}
    base["experiment"] = plan["experiment"]["name"]
    first, second = plan["cells"][:2]
    return {**base, "cell": first}, {**base, "cell": second}


def test_after_a_failed_cell_the_run_measures_no_more_cells(tmp_path: Path) -> None:
    # docker restart of the target mid-run: that cell failed, and the loop measured the next one anyway.
    first, second = two_cells(tmp_path)
    with pytest.raises(AnsibleActionFail):
        run_cell(first, Loadgen(read_data("ab", "connect-refused.txt"), rc=1))
    later = Loadgen(read_data("ab", "normal.txt"))
    result = run_cell(second, later)
    assert result["skipped"] is True and later.commands == []
    assert result["msg"].startswith(
        f"not measured: this run stopped at cell {first['cell']['cell_id']} (failed)"
    )
    assert not (tmp_path / "run" / "cells").exists()
    [stop] = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["stopped"]
    assert stop["cell"] == first["cell"]["cell_id"] and stop["run"]


def test_keep_going_records_the_failed_cell_and_measures_the_next(tmp_path: Path) -> None:
    first, second = two_cells(tmp_path)
    failed = run_cell({**first, "keep_going": True}, Loadgen(read_data("ab", "connect-refused.txt"), rc=1))
    assert failed["failed_cell"] is True and "failed" not in failed
    result = run_cell({**second, "keep_going": True}, Loadgen(read_data("ab", "normal.txt")))
    assert result["changed"] is True and result["cell"]["repetition"] == 2
    [stop] = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["stopped"]
    assert stop["cell"] == first["cell"]["cell_id"]


def three_cells(tmp_path: Path) -> list[dict[str, Any]]:
    data = small_experiment()
    data["load"]["repetitions"] = 3
    plan = run_plan(str(write_experiment(tmp_path, data)))
    base = {"host": "127.0.0.1", "target": "target1", "run_dir": str(tmp_path / "run")}
    base["experiment"] = plan["experiment"]["name"]
    return [{**base, "cell": c} for c in plan["cells"][:3]]


def _refuse(code: int) -> Any:
    def refuse(*_args: Any, **_kw: Any) -> None:
        raise OSError(code, os.strerror(code))

    return refuse


@pytest.mark.parametrize("keep_going", [False, True], ids=["stop", "keep_going"])
@pytest.mark.parametrize("code", [errno.EACCES, errno.EPERM, errno.ENOSPC], ids=errno.errorcode.get)
def test_a_storage_failure_stops_the_run_at_the_first_failed_write_and_the_resume_measures_the_lost_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, keep_going: bool
) -> None:
    """Issue 44: cells/ could not be written (EACCES, EPERM, ENOSPC), and the run measured the remaining
    cells anyway, losing each. The first failed write stops the run (even with keep_going): run.json's
    stop names the errno and the path, the later cells send no load, and the resume measures the lost one."""
    first, second, third = ({**c, "keep_going": keep_going} for c in three_cells(tmp_path))
    run_cell(first, Loadgen(read_data("ab", "normal.txt")))
    lost = Loadgen(read_data("ab", "normal.txt"))
    with monkeypatch.context() as m:
        m.setattr(os, "fsync", _refuse(code))  # the cell's write (benchstack.results.cell.write_cell)
        with pytest.raises(
            AnsibleActionFail, match="the run stops here, no further cell is measured$"
        ) as err:
            run_cell(second, lost)
        later = Loadgen(read_data("ab", "normal.txt"))
        result = run_cell(third, later)
    assert len(lost.commands) == 1  # it was measured, then lost at the write
    assert later.commands == [] and later.sent == [] and result["skipped"] is True
    run = tmp_path / "run"
    lost_id = second["cell"]["cell_id"]
    assert result["msg"] == (
        f"not measured: this run stopped at cell {lost_id} (storage); once {run} can be written again, "
        f"resume: ansible-playbook bench-stack.yml -e bench_run_dir={run}"
    )
    [stop] = json.loads((run / "run.json").read_text(encoding="utf-8"))["stopped"]
    assert (stop["cell"], stop["reason"], stop["run"]) == (lost_id, "storage", bench_cell.playbook_run())
    name = f"{errno.errorcode[code]} ({os.strerror(code)}): {run / 'cells' / f'{lost_id}.json'}"
    assert stop["message"] == f"{lost_id}: cannot store the cell, nothing of it is kept: {name}"
    assert name in str(err.value)
    assert sorted(p.name for p in (run / "cells").iterdir()) == [f"{first['cell']['cell_id']}.json"]
    # The resume (another playbook run) measures the lost cell and the one not measured, not the stored one.
    monkeypatch.setattr(bench_cell, "playbook_run", lambda: "resume-1")
    for args, measured in ((first, False), (second, True), (third, True)):
        again = Loadgen(read_data("ab", "normal.txt"))
        assert run_cell(args, again)["changed"] is measured
        assert len(again.commands) == (1 if measured else 0)
    assert len(list((run / "cells").iterdir())) == 3


def test_a_run_folder_that_cannot_be_written_stops_before_any_load_and_keeps_the_stop_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither cells/ nor run.json can be written: the cell sends no load, the failure says there is no stop
    record in run.json (and why), and the stop kept for this playbook run stops its later cells."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the stop is kept aside
    first, second = (dict(c, keep_going=True) for c in three_cells(tmp_path)[:2])
    run = tmp_path / "run"
    run.mkdir()
    with monkeypatch.context() as m:
        m.setattr(runner, "probe_writable", _refuse(errno.EROFS))
        m.setattr(runfolder, "update_run_json", _refuse(errno.EROFS))
        loadgen = Loadgen(read_data("ab", "normal.txt"))
        with pytest.raises(AnsibleActionFail) as err:
            run_cell(first, loadgen)
        later = Loadgen(read_data("ab", "normal.txt"))
        result = run_cell(second, later)
    assert loadgen.commands == [] and loadgen.sent == []
    assert str(err.value) == (
        f"{first['cell']['cell_id']}: the run folder cannot be written, nothing measured: EROFS (Read-only "
        f"file system): {run / 'cells'}; no stop record in {run / 'run.json'}, which cannot be written: "
        "EROFS (Read-only file system): the run stops here, no further cell is measured"
    )
    assert later.commands == [] and result["skipped"] is True and "(storage)" in result["msg"]
    assert not (run / "run.json").exists()


def test_bench_cell_refuses_peers_without_this_loadgen(tmp_path: Path) -> None:
    args = {**cell_args(tmp_path), "peers": ["lg1", "lg2"]}
    with pytest.raises(AnsibleActionFail, match="do not include this loadgen"):
        run_cell(args, Loadgen(read_data("ab", "normal.txt")), hostname="lg3")


def test_bench_cell_without_a_way_to_the_target_still_measures_and_notes_it(tmp_path: Path) -> None:
    result = run_cell(cell_args(tmp_path), Loadgen(read_data("ab", "normal.txt")))
    assert result["cell"]["system"]["target"] is None
    assert any(
        "target: vmstat did not start" in n and "not in the inventory" in n for n in result["cell"]["notes"]
    )


# ---------------------------------------------------------------- the run lock


def test_a_resume_is_refused_in_its_plan_while_another_live_run_holds_the_folder_and_the_report_releases_it(
    tmp_path: Path,
) -> None:
    # The orphaned cell of a killed run ran while the resumed run planned, provisioned and verified.
    results = tmp_path / "results"
    run = results / "run1"
    path = write_experiment(tmp_path, small_experiment())
    first = run_plan(str(path), results_dir=str(results), run_dir=str(run))
    make_action(bench_run_info, {"run_dir": str(run), "plan": first}).run(task_vars={})
    other = subprocess.Popen(["sleep", "60"])
    try:
        (run / LOCK_FILE).write_text(json.dumps(holder(other.pid)), encoding="utf-8")
        with pytest.raises(
            AnsibleActionFail,
            match=rf"^bench_run_dir: .*in use by another bench-stack run \(pid {other.pid} ",
        ):
            run_plan(str(path), results_dir=str(results), run_dir=str(run))
        info = {"run_dir": str(run), "plan": first}
        with pytest.raises(AnsibleActionFail, match="bench_run_info: .*in use by another bench-stack run"):
            make_action(bench_run_info, info).run(task_vars={})
    finally:
        other.kill()
        other.wait()
    # That run has ended: the plan takes its lock over, says so, and the report gives it up.
    plan = run_plan(str(path), results_dir=str(results), run_dir=str(run))
    assert any(w.startswith("took over the run folder's lock") for w in plan["warnings"])
    assert json.loads((run / LOCK_FILE).read_text(encoding="utf-8"))["pid"] == os.getppid()
    args = {**cell_args(tmp_path), "run_dir": str(run)}
    run_cell(args, Loadgen(read_data("ab", "normal.txt")))
    make_action(bench_report, {"run_dir": str(run)}).run(task_vars={})
    assert not (run / LOCK_FILE).exists()


# ---------------------------------------------------------------- the host's lock (bench_provision_state)


@pytest.fixture
def host_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The host side as the actions send it, on a lock file and a record of the test's (the host is this
    machine)."""
    lock = tmp_path / "host" / "run.lock"
    script = tmp_path / "hoststate.py"
    source = hostcommand.HOSTSTATE.read_text(encoding="utf-8")
    script.write_text(
        source.replace(f'LOCK_PATH = "{runlock.HOST_LOCK_FILE}"', f'LOCK_PATH = "{lock}"'), encoding="utf-8"
    )
    monkeypatch.setattr(hostcommand, "HOSTSTATE", script)
    monkeypatch.setattr(hostrecord, "MARKER", str(tmp_path / "host" / "provisioned.json"))
    monkeypatch.setattr(made, "PATH", str(tmp_path / "host" / "made.json"))
    return lock


def on_this_host(action: Any) -> Any:
    commands: list[str] = []

    def execute(command: str) -> dict[str, Any]:
        commands.append(command)
        done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
        return {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}

    action._low_level_execute_command = execute
    action.commands = commands
    return action


def holding_state(run_dir: Path, check_mode: bool = False, **args: Any) -> Any:
    """bench_provision_state as provision.yml runs it (holding the host for the run), one role recorded."""
    given = {"roles": ["host"], "hashes": {"host": "h1"}, "run_dir": str(run_dir), **args}
    return on_this_host(make_action(bench_provision_state, given, check_mode=check_mode))


def test_bench_provision_state_holds_the_host_in_its_one_command_and_bench_host_lock_releases_it(
    tmp_path: Path, host_lock: Path
) -> None:
    record = {"schema": hostrecord.SCHEMA, "roles": {"host": {"hash": "h1", "facts": {}, "at": "t"}}}
    Path(hostrecord.MARKER).parent.mkdir(parents=True)
    Path(hostrecord.MARKER).write_text(json.dumps(record), encoding="utf-8")
    Path(made.PATH).write_text(json.dumps(made.empty()), encoding="utf-8")
    action = holding_state(tmp_path)
    result = action.run(task_vars={"inventory_hostname": "web", "ansible_run_tags": ["all"]})
    assert len(action.commands) == 1 and result["changed"] is False and result["lock"] == []
    # The record read in the same command: the role is skipped.
    assert result["ansible_facts"]["bench_provision"]["skip"] == ["host"]
    held = json.loads(host_lock.read_text(encoding="utf-8"))
    assert held["pid"] == os.getppid() and held["run"] == str(tmp_path.resolve())
    release = on_this_host(make_action(bench_host_lock, {"state": "released"}))
    result = release.run(task_vars={})
    assert result["changed"] is False and result["msg"] == "released"
    assert host_lock.read_text(encoding="utf-8") == ""
    with pytest.raises(AnsibleActionFail, match="value of state must be one of: released, got: held"):
        make_action(bench_host_lock, {"state": "held"}).run(task_vars={})


def test_bench_host_lock_delegated_gives_up_the_delegated_hosts_lock_through_its_python(
    tmp_path: Path, host_lock: Path
) -> None:
    """benchmark.yml's stopped run gives up its target from the loadgen's task (delegate_to): the target's
    Python answers, and the lock is released."""
    Path(made.PATH).parent.mkdir(parents=True, exist_ok=True)
    holding_state(tmp_path).run(task_vars={"inventory_hostname": "web", "ansible_run_tags": ["all"]})
    assert json.loads(host_lock.read_text(encoding="utf-8"))["pid"] == os.getppid()
    release = on_this_host(make_action(bench_host_lock, {"state": "released"}))
    release._task.delegate_to = "web"
    task_vars = {
        "inventory_hostname": "lg1",
        "ansible_python_interpreter": "/nowhere/python",  # the loadgen's: not the one asked
        "ansible_delegated_vars": {"web": {"ansible_python_interpreter": sys.executable}},
    }
    result = release.run(task_vars=task_vars)
    assert result["msg"] == "released" and host_lock.read_text(encoding="utf-8") == ""
    assert release.commands[0].startswith(f"{sys.executable} -c ")


def _measure_play_rescue() -> list[dict[str, Any]]:
    plays = read_yaml(ROOT / "playbooks" / "benchmark.yml")
    [measure] = [p for p in plays if p.get("name") == "Measure the cells"]
    [block] = [t for t in measure["tasks"] if "block" in t]
    assert any("target.yml" in str(t.get("ansible.builtin.include_tasks")) for t in block["block"])
    return block["rescue"]


def test_a_stopped_run_gives_up_its_loadgen_and_target_then_fails_naming_the_resume_command() -> None:
    """Issue 44: a run that stopped (a failed cell, a storage failure) left the host lock behind: a failed
    loadgen leaves the plays that follow, and none of them runs once every loadgen has failed."""
    release, _, stopped = _measure_play_rescue()  # the run folder's: test_run_folder
    assert release["bench_host_lock"] == {"state": "released"}
    assert release["delegate_to"] == "{{ item }}"
    hosts = jinja2.Environment().compile_expression(release["loop"].strip("{} "))
    assert hosts(inventory_hostname="lg1", bench_here={"target": "web"}) == ["lg1", "web"]
    assert hosts(inventory_hostname="box", bench_here={"target": "box"}) == ["box"]  # loopback
    assert release.get("ignore_unreachable") is True  # a restarted host must not hide the message below
    assert "ansible.builtin.fail" in stopped
    assert (
        "resume: ansible-playbook bench-stack.yml -e bench_run_dir={{ bench_plan.run_dir | quote }}"
        in " ".join(stopped["ansible.builtin.fail"]["msg"].split())
    )


def test_bench_provision_state_refuses_a_host_another_live_run_holds_naming_its_folder_and_pid(
    tmp_path: Path, host_lock: Path
) -> None:
    other = subprocess.Popen(["sleep", "60"])
    try:
        host_lock.parent.mkdir(parents=True)
        host_lock.write_text(json.dumps(holder(other.pid, run="/results/other-run")), encoding="utf-8")
        # check mode: the task's, or --check where the task reads with check_mode false (benchmark.yml)
        for check_mode, cli_check in ((False, False), (True, False), (False, True)):
            with pytest.raises(
                AnsibleActionFail,
                match=rf"^bench_provision_state: web is in use by another bench-stack run \(run folder "
                rf"/results/other-run, pid {other.pid} on ",
            ):
                holding_state(tmp_path, check_mode=check_mode, report_only=True).run(
                    task_vars={"inventory_hostname": "web", "ansible_check_mode": cli_check}
                )
        assert json.loads(host_lock.read_text(encoding="utf-8"))["pid"] == other.pid
        with pytest.raises(AnsibleActionFail, match="argument 'lock_wait' is of type str"):
            holding_state(tmp_path, lock_wait="soon").run(task_vars={"inventory_hostname": "web"})
    finally:
        other.kill()
        other.wait()


def test_bench_provision_state_under_check_takes_no_lock_even_where_the_task_reads_in_check_mode_false(
    tmp_path: Path, host_lock: Path
) -> None:
    result = holding_state(tmp_path, report_only=True).run(
        task_vars={"inventory_hostname": "web", "ansible_check_mode": True}
    )
    assert result["lock"] == [] and not host_lock.exists()
    holding_state(tmp_path, report_only=True).run(task_vars={"inventory_hostname": "web"})
    assert json.loads(host_lock.read_text(encoding="utf-8"))["pid"] == os.getppid()


def test_bench_lock_wait_is_checked_with_the_plan_before_any_host() -> None:
    problems = settings.project_problems
    assert problems({"bench_lock_wait": "300"}) == []
    assert problems({"bench_lock_wait": 0}) == []
    assert problems({"bench_lock_wait": "5m"}) == [
        "bench_lock_wait: must be a number of seconds, 0 or more, not '5m'"
    ]
    assert problems({"bench_lock_wait": -1}) != []
    assert "bench_lock_wait" in bench_plan.given_settings({"bench_lock_wait": "5m"}, PassThrough())[0]


# ---------------------------------------------------------------- bench_provision_state: stale units


def provision_state(
    report_only: bool, found: dict[str, Any], owned: dict[str, Any] | None = None
) -> dict[str, Any]:
    """bench_provision_state on a host whose record matches the plan, with ``found`` left by any stack
    (and the plan's ``owned``: the read command must ask for its roots)."""
    hashes = {"host": "h1", "app_server": "h2"}
    record = {
        "schema": "bench-stack/provisioned/v1",
        "roles": {r: {"hash": h, "facts": {}, "at": "t"} for r, h in hashes.items()},
    }
    stdout = "\n".join(
        [
            json.dumps(record),
            "--- bench-stack units ---",
            "active",
            "--- bench-stack made ---",
            "{}",
            "--- bench-stack found ---",
            json.dumps(found),
        ]
    )
    args = {
        "roles": ["host", "app_server"],
        "units": {"app_server": ["bench-kept@1.service"]},
        "hashes": hashes,
        "report_only": report_only,
        **({"owned": owned} if owned is not None else {}),
    }
    action = make_action(bench_provision_state, args)

    def execute(command: str) -> dict[str, Any]:
        if owned is not None:
            assert f"{owned['roots']['units']}/*.env" in command
        return {"rc": 0, "stdout": stdout, "stderr": ""}

    action._low_level_execute_command = execute
    return action.run(task_vars={"ansible_run_tags": ["all"]})


def test_bench_provision_state_hands_provisioning_what_no_stack_of_the_plan_owns() -> None:
    found = {
        "units": {"bench-kept@1.service": "enabled active", "bench-gone@1.service": "enabled active"},
        "files": ["/etc/systemd/system/bench-gone@.service", "/etc/systemd/system/bench-kept@.service"],
    }
    result = provision_state(False, found)
    assert result["ansible_facts"]["bench_provision"]["stale"] == {
        "units": ["bench-gone@1.service"],
        "files": ["/etc/systemd/system/bench-gone@.service"],
        "foreign": [],
    }
    assert result["msg"].endswith(
        "; no stack of the plan owns: bench-gone@1.service, /etc/systemd/system/bench-gone@.service"
    )
    report = provision_state(True, found)
    assert report["matches"] is False and report["plan_match"] == {
        "matches": False,
        "differs": {},
        "stale": ["bench-gone@1.service", "/etc/systemd/system/bench-gone@.service"],
    }
    clean = {"units": {"bench-kept@1.service": "enabled active"}, "files": found["files"][1:]}
    assert provision_state(True, clean)["plan_match"] == {"matches": True, "differs": {}, "stale": []}


def test_bench_provision_state_hands_provisioning_the_env_files_and_app_folders_no_stack_owns() -> None:
    owned = {
        "roots": {"apps": "/opt/b/apps", "units": "/etc/b/units"},
        "app_server": ["/etc/b/units/kept.env"],
        "app": {"kinds": ["sinatra"], "user_apps": [], "dirs": ["/opt/b/apps/sinatra"]},
    }
    paths = ["/etc/b/units/kept.env", "/etc/b/units/gone.env", "/opt/b/apps/sinatra", "/opt/b/apps/php"]
    # bench-stack made all but the php folder (benchstack.provision.made).
    ours = {**made.empty(), "paths": paths[:3]}
    found = {"units": {"bench-kept@1.service": "enabled active"}, "files": [], "paths": paths, "made": ours}
    result = provision_state(False, found, owned)
    # app_server runs here, app does not (a host's roles say which of the plan's paths it owns).
    assert result["ansible_facts"]["bench_provision"]["stale"] == {
        "units": [],
        "files": ["/etc/b/units/gone.env", "/opt/b/apps/sinatra"],
        "foreign": ["/opt/b/apps/php"],
    }
    assert result["msg"].endswith("; not made by bench-stack, left alone: /opt/b/apps/php")
    with pytest.raises(AnsibleActionFail, match="owned: the plan's owned"):
        provision_state(False, found, {"app_server": []})


def test_bench_provision_state_hands_provisioning_its_stages_and_whose_packages_install_at_once() -> None:
    args = {
        "roles": ["host", "ruby", "webapp", "app_server", "nginx", "loadgen"],
        "hashes": dict.fromkeys(["host", "ruby", "webapp", "app_server", "nginx", "loadgen"], "h"),
    }
    action = make_action(bench_provision_state, args)
    action._low_level_execute_command = lambda command: {"rc": 0, "stdout": "", "stderr": ""}
    # No record on the host: every role runs; --skip-tags bench_nginx keeps nginx's packages out of the one
    # transaction.
    task_vars = {"ansible_run_tags": ["all"], "ansible_skip_tags": ["bench_nginx"]}
    state = action.run(task_vars=task_vars)["ansible_facts"]["bench_provision"]
    assert state["stages"] == [["host", "ruby", "webapp"], ["app_server", "nginx", "loadgen"]]
    assert state["package_roles"] == ["host", "ruby", "loadgen"]


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The requests bench_provision_record sends to the host side (hoststate), recorded instead of built."""
    requests: list[dict[str, Any]] = []

    def hoststate_command(python: str, request: dict[str, Any]) -> str:
        requests.append(request)
        return "read what the roles made"

    monkeypatch.setattr(hostcommand, "hoststate_command", hoststate_command)
    return requests


def test_bench_provision_record_records_what_each_role_that_ran_made_with_the_hosts_sysctls(
    asked: list[dict[str, Any]],
) -> None:
    plan = run_plan(None, inventory(["box"], ["box"], {}))
    role_made = plan["role_made"]["Debian"]
    action = make_action(bench_provision_record, {"made": role_made})
    action._templar = PassThrough()
    commands: list[str] = []

    def execute(command: str) -> dict[str, Any]:
        commands.append(command)
        stdout = json.dumps({"host": {"made": {}, "state": {}}, "nginx": {"made": {}, "state": {}}})
        return {"rc": 0, "stdout": stdout, "stderr": ""}

    action._low_level_execute_command = execute
    state = {"hashes": {"host": "h1", "nginx": "h2"}, "run": {"host": "new", "nginx": "new"}}
    task_vars = {
        "bench_provision": {**state, "skip": [], "record": {}},
        "host_profile": "tuned",  # and the role's own host_tuned_sysctls
        "nginx_os_packages": ["nginx"],
    }
    assert action.run(task_vars=task_vars)["changed"] is True
    manifests = asked[0]["manifests"]
    # The role's own defaults, read here, not through the package's reader under test.
    defaults = read_yaml(ROOT / "roles" / "host" / "defaults" / "main.yml")
    assert manifests["host"]["sysctls"] == list(defaults["host_tuned_sysctls"])
    assert "net.core.somaxconn" in manifests["host"]["sysctls"]
    assert manifests["host"]["files"] == role_made["host"]["files"]
    assert manifests["nginx"] == {**role_made["nginx"], "packages": ["nginx"]}
    assert commands[-1].startswith("mkdir -p ")  # the record written
    asked.clear()
    action.run(task_vars={**task_vars, "host_profile": "stock"})
    assert asked[0]["manifests"]["host"]["sysctls"] == []


def test_bench_provision_record_adds_what_a_role_said_it_made_and_refuses_a_declaration_that_is_no_dict(
    asked: list[dict[str, Any]],
) -> None:
    action = make_action(bench_provision_record, {"made": {"webapp": {"files": ["/a/b"]}}})
    action._templar = PassThrough()
    stdout = json.dumps({role: {"made": {}, "state": {}} for role in ("webapp", "loadgen", "ruby")})
    action._low_level_execute_command = lambda command: {"rc": 0, "stdout": stdout, "stderr": ""}
    state = {
        "hashes": dict.fromkeys(("webapp", "loadgen", "ruby"), "h"),
        "run": dict.fromkeys(("webapp", "loadgen", "ruby"), "new"),
    }
    task_vars = {
        "bench_provision": {**state, "skip": [], "record": {}},
        "webapp_made": {"files": ["/a/b", "/a/c"]},
        "loadgen_made": {"files": ["/usr/local/bin/wrk"]},
        "ruby_made": {"binaries": ["/opt/rbenv/versions/3.3.6/bin/ruby"]},
    }
    action.run(task_vars=task_vars)
    manifests = asked[0]["manifests"]
    assert manifests["webapp"]["files"] == ["/a/b", "/a/c"]
    assert manifests["loadgen"]["files"] == ["/usr/local/bin/wrk"]
    assert manifests["ruby"]["binaries"] == ["/opt/rbenv/versions/3.3.6/bin/ruby"]
    with pytest.raises(AnsibleActionFail, match="ruby_made must be a dict"):
        action.run(task_vars={**task_vars, "ruby_made": ["/opt/rbenv"]})
