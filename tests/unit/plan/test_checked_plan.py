"""One orchestration for the plan's checks (issue 43, benchstack.plan.checked): the plan play (the bench_plan
action) and ``bench-stack experiment`` refuse each bad input with the same words, not only the same
problems."""

from pathlib import Path

import pytest
from ansible.errors import AnsibleActionFail
from conftest import bench_stack, read_yaml
from test_plugins import bench_plan, run_plan
from test_role_variables import AS_ARGUMENTS, CASES

from benchstack.plan.checked import PlanRefused, PlanRequest, checked_plan

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_the_plan_play_and_the_command_line_refuse_with_the_same_words(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = read_yaml(path)
    args = {AS_ARGUMENTS[k]: v for k, v in given.items() if k in AS_ARGUMENTS}
    variables = {k: v for k, v in given.items() if k not in AS_ARGUMENTS}
    args.setdefault("results_dir", str(ROOT / "results"))
    monkeypatch.setattr(bench_plan, "load_extra_vars", lambda _loader: dict(given))
    with pytest.raises(AnsibleActionFail) as err:
        run_plan("sinatra-thin-nginx", variables, **args)
    result = bench_stack("experiment", "sinatra-thin-nginx", "--vars", path)
    assert result.returncode == 1
    assert result.stderr == f"bench-stack: {err.value}\n"


def test_a_refused_results_folder_is_said_after_the_experiment_and_its_settings(tmp_path: Path) -> None:
    request = PlanRequest("sinatra-thin-nginx", ROOT, "/etc")
    with pytest.raises(PlanRefused) as refused:
        checked_plan(request, ["bench_x: a problem of the settings"])
    assert str(refused.value) == "invalid variables:\n  - bench_x: a problem of the settings"
    with pytest.raises(PlanRefused) as refused:
        checked_plan(request)
    assert str(refused.value).startswith("bench_results_dir: ")
    plan, run_dir = checked_plan(PlanRequest("sinatra-thin-nginx", ROOT, str(tmp_path / "new")))
    assert Path(run_dir).parent == tmp_path / "new" and run_dir.endswith(f"-{plan.name}")
    assert not (tmp_path / "new").exists()  # nothing is created
