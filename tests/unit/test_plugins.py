"""The Ansible plugins, imported by file path (they are not a package) and run without a connection."""

import importlib.util
import json
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest.mock import MagicMock

import pytest
import yaml
from ansible.errors import AnsibleActionFail, AnsibleFilterError, AnsibleLookupError
from conftest import Helpers, read_data

from benchstack.cell import validate_cell
from benchstack.experiment import CellPlan

ROOT = Path(__file__).resolve().parents[2]
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
lookup = load_plugin("lookup", "bench_experiment")
bench_cell = load_plugin("action", "bench_cell")
bench_run_info = load_plugin("action", "bench_run_info")
bench_report = load_plugin("action", "bench_report")
bench_extra_cells = load_plugin("action", "bench_extra_cells")
bench_merge = load_plugin("action", "bench_merge")


def run_lookup(term: str) -> dict[str, Any]:
    [exp] = lookup.LookupModule().run([term])
    return exp


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


# ---------------------------------------------------------------- lookup


def test_repo_has_experiments() -> None:
    assert EXPERIMENTS, "experiments/*.yml should not be empty"


@pytest.mark.parametrize("path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_every_repo_experiment_loads_by_name_and_expands_into_cells(path: Path) -> None:
    exp = run_lookup(path.stem)
    assert exp["name"] == path.stem
    assert exp["source"] == str(path)
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [s["name"] for s in exp["stacks"]] == [s["name"] for s in raw["stacks"]]
    levels = sum(
        len(p["concurrency"]) if isinstance(p["concurrency"], list) else 1 for p in raw["load"]["plans"]
    )
    assert len(exp["cells"]) == exp["load"]["repetitions"] * len(raw["stacks"]) * levels
    ids = [c["cell_id"] for c in exp["cells"]]
    assert len(ids) == len(set(ids))
    assert all(set(c) == set(CellPlan.__dataclass_fields__) for c in exp["cells"])
    # The stacks the lookup accepted also pass the filters the roles use.
    assert len(filters.bench_stacks(exp["stacks"])) == len(raw["stacks"])


@pytest.mark.parametrize("path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_repo_experiment_loads_by_path_the_same_as_by_name(path: Path) -> None:
    assert run_lookup(str(path)) == run_lookup(path.stem)


def test_seed_experiment_cells_use_each_stack_port_and_path() -> None:
    exp = run_lookup("sinatra-thin-nginx")
    by_stack = {c["stack"]: c for c in exp["cells"]}
    assert by_stack["sinatra-thin-x4-nginx"]["port"] == 8004
    assert by_stack["sinatra-thin-x4-nginx"]["path"] == "/hello/bar"
    assert by_stack["nginx-static"]["path"] == "/index.html"
    assert by_stack["nginx-static"]["warmup"] == {"requests": 200}
    # Measuring order: all stacks once before any stack twice; within a stack, plan by plan.
    assert [c["stack"] for c in exp["cells"][:2]] == ["sinatra-thin-x1", "sinatra-thin-x1"]
    assert [c["tool"] for c in exp["cells"][:2]] == ["ab", "wrk"]


def test_lookup_returns_one_result_per_term(tmp_path: Path) -> None:
    path = write_experiment(tmp_path, small_experiment())
    out = lookup.LookupModule().run([str(path), str(path)])
    assert [e["name"] for e in out] == ["small", "small"]
    assert [c["cell_id"] for c in out[0]["cells"]] == ["pool__ab__c50__r1"]
    assert out[0]["load"]["repetitions"] == 1 and out[0]["load"]["warmup"] is None


def test_bare_name_resolves_into_the_project_experiments_folder() -> None:
    assert lookup.resolve("foo") == ROOT / "experiments" / "foo.yml"
    assert lookup.resolve("foo", base=Path("/elsewhere")) == Path("/elsewhere/experiments/foo.yml")


def test_term_with_a_slash_or_yaml_suffix_is_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert lookup.resolve("mine.yml") == tmp_path / "mine.yml"
    assert lookup.resolve("mine.yaml") == tmp_path / "mine.yaml"
    assert lookup.resolve("sub/mine") == tmp_path / "sub" / "mine"
    assert lookup.resolve("/abs/x.yml") == Path("/abs/x.yml")


def test_invalid_experiment_raises_lookup_error_naming_the_field(tmp_path: Path) -> None:
    data = small_experiment()
    data["load"]["plans"] = [{"tool": "wrk", "concurrency": 4}]
    path = write_experiment(tmp_path, data)
    with pytest.raises(AnsibleLookupError) as err:
        run_lookup(str(path))
    assert "load.plans[0].duration_s" in str(err.value)
    assert str(path) in str(err.value)


def test_invalid_stack_raises_lookup_error_naming_stack_and_field(tmp_path: Path) -> None:
    data = small_experiment()
    data["stacks"][0]["server"]["kind"] = "gunicorn"
    with pytest.raises(AnsibleLookupError, match=r"stack 'pool': server.kind"):
        run_lookup(str(write_experiment(tmp_path, data)))


def test_missing_experiment_raises_lookup_error() -> None:
    with pytest.raises(AnsibleLookupError, match="cannot read the file"):
        run_lookup("no-such-experiment-here")


def test_broken_yaml_raises_lookup_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.yml"
    path.write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(AnsibleLookupError, match="not valid YAML"):
        run_lookup(str(path))


def test_lookup_documentation_is_valid_yaml() -> None:
    doc = yaml.safe_load(lookup.DOCUMENTATION)
    assert doc["name"] == "bench_experiment"
    assert doc["options"]["_terms"]["required"] is True


# ---------------------------------------------------------------- filters


def stack(**over: Any) -> dict[str, Any]:
    s = {"name": "pool", "port": 8002, "app": {"kind": "sinatra"}, "server": {"kind": "thin", "instances": 2}}
    s["front"] = {"kind": "nginx"}
    s.update(over)
    return s


def test_filter_module_exposes_its_filters() -> None:
    assert set(filters.FilterModule().filters()) == {
        "bench_stacks",
        "bench_stack_needs",
        "bench_instance_checks",
        "bench_front_checks",
        "bench_capacity_warnings",
        "bench_loadgen_targets",
    }


def test_capacity_filter_warns_from_fingerprints() -> None:
    f = filters.FilterModule().filters()["bench_capacity_warnings"]
    fp = {"sysctls": {"net.core.somaxconn": "64"}, "nofile_limit": "65536"}
    assert f([{"concurrency": 100}], fp, fp) != []
    assert f([{"concurrency": 10}], fp, fp) == []


def test_bench_stacks_filter_derives_endpoints_and_honours_its_roots() -> None:
    [s] = filters.FilterModule().filters()["bench_stacks"]([stack()], run_root="/tmp/run", app_root="/srv")
    assert [ep["socket"] for ep in s["endpoints"]] == [
        "/tmp/run/pool-1/server.sock",
        "/tmp/run/pool-2/server.sock",
    ]
    assert s["app"]["dir"] == "/srv/sinatra"


def test_bench_stack_needs_filter() -> None:
    assert filters.bench_stack_needs([stack()])["ruby_gems"] == ["rack", "sinatra", "thin"]


def test_bench_instance_checks_filter_asks_every_instance() -> None:
    checks = filters.bench_instance_checks([stack()])
    assert len(checks) == 4
    assert checks[-1]["unix_socket"] == "/run/bench-stack/pool-2/server.sock"


def test_bench_front_checks_filter_uses_the_host() -> None:
    checks = filters.bench_front_checks([stack()], "10.0.0.5")
    assert [c["url"] for c in checks] == ["http://10.0.0.5:8002/", "http://10.0.0.5:8002/hello/bar"]


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("bench_stacks", ([stack(port=0)],)),
        ("bench_stack_needs", ([stack(port=0)],)),
        ("bench_instance_checks", ([stack(port=0)],)),
        ("bench_front_checks", ([stack(port=0)], "h")),
    ],
)
def test_filters_turn_stack_errors_into_filter_errors(name: str, args: tuple) -> None:
    with pytest.raises(AnsibleFilterError, match=r"stack 'pool': port: must be an integer"):
        filters.FilterModule().filters()[name](*args)


def test_filter_error_for_a_non_mapping_field_names_it() -> None:
    with pytest.raises(AnsibleFilterError, match=r"stack 'pool': front: must be a mapping"):
        filters.bench_stacks([stack(front="nginx")])


# ---------------------------------------------------------------- action plugins


@pytest.mark.parametrize(
    "module",
    [bench_cell, bench_run_info, bench_report, bench_extra_cells, bench_merge],
    ids=lambda m: m.__name__,
)
def test_action_documentation_lists_exactly_the_valid_args(module: ModuleType) -> None:
    doc = yaml.safe_load(module.DOCUMENTATION)
    assert set(doc["options"]) == set(module.ActionModule._VALID_ARGS)
    required = getattr(module.ActionModule, "_REQUIRED", module.ActionModule._VALID_ARGS)
    assert {k for k, opt in doc["options"].items() if opt.get("required")} == set(required)


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

    def __call__(self, command: str) -> dict[str, Any]:
        helper = self.helpers.reply(command)
        if helper is not None:
            return dict(zip(("rc", "stdout", "stderr"), helper, strict=True))
        self.commands.append(command)
        if command.startswith("wrk -v"):
            return {"rc": 1, "stdout": "wrk 4.1.0 [epoll] Copyright (C) 2012 Will Glozer\n", "stderr": ""}
        return {"rc": self.rc, "stdout": self.measured, "stderr": ""}


def cell_args(tmp_path: Path, tool: str = "ab", **load: Any) -> dict[str, Any]:
    data = small_experiment(**load)
    if tool == "wrk":
        data["load"]["plans"] = [{"tool": "wrk", "concurrency": 32, "threads": 2, "duration_s": 3}]
    [exp] = lookup.LookupModule().run([str(write_experiment(tmp_path, data))])
    return {
        "cell": exp["cells"][0],
        "host": "127.0.0.1",
        "target": "target1",
        "run_dir": str(tmp_path / "run"),
        "experiment": exp["name"],
    }


def run_cell(args: dict[str, Any], loadgen: Loadgen, hostname: str = "loadgen1", **kw: Any) -> dict[str, Any]:
    action = make_action(bench_cell, args, **kw)
    action._low_level_execute_command = loadgen
    return action.run(task_vars={"inventory_hostname": hostname})


def test_bench_cell_measures_and_stores_a_cell(tmp_path: Path) -> None:
    args = cell_args(tmp_path, warmup={"requests": 100})
    loadgen = Loadgen(read_data("ab", "normal.txt"))
    result = run_cell(args, loadgen)
    assert result["changed"] is True
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


def test_bench_cell_reports_missing_arguments(tmp_path: Path) -> None:
    args = cell_args(tmp_path)
    del args["host"], args["experiment"]
    with pytest.raises(AnsibleActionFail, match="missing arguments: experiment, host"):
        run_cell(args, Loadgen(""))


def test_bench_cell_rejects_unknown_arguments(tmp_path: Path) -> None:
    with pytest.raises(AnsibleActionFail, match="Invalid options"):
        run_cell({**cell_args(tmp_path), "bogus": 1}, Loadgen(""))


def test_bench_cell_in_check_mode_sends_no_load(tmp_path: Path) -> None:
    loadgen = Loadgen(read_data("ab", "normal.txt"))
    result = run_cell(cell_args(tmp_path), loadgen, check_mode=True)
    assert result["skipped"] is True and result["changed"] is False
    assert loadgen.commands == []
    assert not (tmp_path / "run").exists()


def test_bench_run_info_writes_run_json(tmp_path: Path) -> None:
    result = make_action(bench_run_info, {"run_dir": str(tmp_path), "info": {"experiment": "e"}}).run(
        task_vars={}
    )
    assert result["changed"] is True and result["path"] == str(tmp_path / "run.json")
    data = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert data["experiment"] == "e" and data["schema"] == "bench-stack/run/v1"


@pytest.mark.parametrize("args", [{"run_dir": "/x"}, {"run_dir": "/x", "info": "text"}, {"info": {}}])
def test_bench_run_info_requires_run_dir_and_an_info_dict(args: dict[str, Any]) -> None:
    with pytest.raises(AnsibleActionFail, match="run_dir and info"):
        make_action(bench_run_info, args).run(task_vars={})


def test_bench_run_info_in_check_mode_writes_nothing(tmp_path: Path) -> None:
    args = {"run_dir": str(tmp_path), "info": {"a": 1}}
    result = make_action(bench_run_info, args, check_mode=True).run(task_vars={})
    assert result["skipped"] is True
    assert list(tmp_path.iterdir()) == []


def test_bench_report_without_cells_fails(tmp_path: Path) -> None:
    with pytest.raises(AnsibleActionFail, match="no cells in"):
        make_action(bench_report, {"run_dir": str(tmp_path)}).run(task_vars={})


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


# ---------------------------------------------------------------- adaptive repetitions


def test_bench_extra_cells_returns_the_next_repetition_of_a_noisy_load_point(tmp_path: Path) -> None:
    data = small_experiment(repetitions=2, max_repetitions=3, max_cv=0.05)
    path = write_experiment(tmp_path, data)
    [exp] = lookup.LookupModule().run([str(path)])
    run_dir = tmp_path / "run"
    normal = read_data("ab", "normal.txt")
    # repetition 2 edited to half the req/s of repetition 1: CV far above 5 %
    outputs = {1: normal, 2: normal.replace("second:    18967.23", "second:    9000.00")}
    for plan in exp["cells"]:
        args = {"cell": plan, "host": "127.0.0.1", "target": "t", "run_dir": str(run_dir)}
        run_cell({**args, "experiment": "small"}, Loadgen(outputs[plan["repetition"]]))
    action = make_action(bench_extra_cells, {"run_dir": str(run_dir), "experiment": str(path)})
    result = action.run(task_vars={})
    assert [c["cell_id"] for c in result["cells"]] == ["pool__ab__c50__r3"]
    assert result["changed"] is False
    check = make_action(
        bench_extra_cells, {"run_dir": str(run_dir), "experiment": str(path)}, check_mode=True
    )
    assert check.run(task_vars={})["cells"] == []


def test_bench_extra_cells_reports_a_bad_experiment(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("name: x\n")
    with pytest.raises(AnsibleActionFail, match="invalid experiment"):
        make_action(bench_extra_cells, {"run_dir": str(tmp_path), "experiment": str(bad)}).run(task_vars={})


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
