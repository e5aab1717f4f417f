"""Variables of the roles renamed on 2026-12-03 (app -> webapp, bench_host -> host; issue 26, item 5),
set under their old names: refused before any host is touched, naming the new name
(benchstack.common.renamed). The plan play and ``bench-stack experiment --vars`` refuse them as every bad
variable (tests/bad-inputs/variables/renamed-variables.yml, test_role_variables.py)."""

import re
from pathlib import Path

import pytest
from ansible.errors import AnsibleActionFail
from test_plugins import run_plan

from benchstack.common.renamed import ROLES, renamed_to
from benchstack.plan.settings import role_options, role_variable_names, setting_problems


def test_an_old_variable_is_refused_naming_its_new_name_and_where_to_change_it() -> None:
    assert setting_problems({"app_gem_source": "file:///srv/gems/", "bench_host_profile": "tuned"}, []) == [
        "app_gem_source was renamed to webapp_gem_source in bench-stack 2026-12-03 (the role app is now "
        "webapp): rename it in your inventory, group_vars or -e (docs/upgrading.md)",
        "bench_host_profile was renamed to host_profile in bench-stack 2026-12-03 (the role bench_host is "
        "now host): rename it in your inventory, group_vars or -e (docs/upgrading.md)",
    ]


def test_every_variable_of_a_renamed_role_is_known_by_its_old_name() -> None:
    options = dict(role_options())
    for old, new in ROLES.items():
        for name in options[new]:
            assert renamed_to(old + name[len(new) :], role_variable_names()) == name


@pytest.mark.parametrize(
    "name",
    [
        "app_server_user",
        "app_env_lines",
        "bench_user",
        "bench_host_lock",
        "host_profile",
        "webapp_gem_source",
    ],
)
def test_a_name_that_merely_starts_like_an_old_one_is_not_taken_for_it(name: str) -> None:
    assert renamed_to(name, role_variable_names()) is None


def test_the_upgrading_page_lists_every_renamed_variable_old_and_new() -> None:
    page = (Path(__file__).resolve().parents[3] / "docs" / "upgrading.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `(\w+)` \| `(\w+)` \|$", page, re.M))
    options = dict(role_options())
    assert rows == {(old + name[len(new) :], name) for old, new in ROLES.items() for name in options[new]}


def test_the_plan_refuses_an_old_name_on_another_host_naming_the_host(tmp_path: Path) -> None:
    task_vars = {
        "inventory_hostname": "t1",
        "ansible_play_hosts_all": ["t1", "lg1"],
        "hostvars": {"t1": {}, "lg1": {"bench_host_nofile": 4096}},
    }
    with pytest.raises(AnsibleActionFail) as err:
        run_plan("sinatra-thin-nginx", task_vars, results_dir=str(tmp_path))
    assert str(err.value).splitlines()[1:] == [
        "  - bench_host_nofile was renamed to host_nofile in bench-stack 2026-12-03 (the role bench_host is "
        "now host): rename it in your inventory, group_vars or -e (docs/upgrading.md) (on lg1)"
    ]
    assert not (tmp_path / "results").exists()
