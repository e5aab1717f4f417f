"""An experiment's ``logs`` (issue 42, item 3): opt-in shipping of the fronts' access logs. The schema refuses
bad sections naming the field; the plan adds the log_shipper role after the fronts of the targets, with
fluentd's unit among the units it keeps running, one key prefix per run, and marks the stacks measured with
shipping on; the fronts log whatever their profile; what the plan sets is refused from outside and checked
on the host."""

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import read_yaml

from benchstack.plan.experiment import validate_experiment
from benchstack.plan.resolved import compile_plan, run_record, with_hosts
from benchstack.plan.roles import LOG_SHIPPER_UNIT, stages
from benchstack.plan.rolevars import PLAN_SET_TOO
from benchstack.plan.settings import role_problems, role_value_problems
from benchstack.results.formats import validate_run_info

ROOT = Path(__file__).resolve().parents[3]
LOGS = {"ship": "s3", "bucket": "bench-access-logs", "endpoint": "http://172.17.0.1:9000"}
EXPERIMENT: dict[str, Any] = {
    "name": "ship",
    "stacks": [
        {"name": "thin-nginx", "port": 8001, "app": {"kind": "sinatra"}, "server": {"kind": "thin"},
         "front": {"kind": "nginx"}},
        {"name": "static-apache", "port": 8002, "app": {"kind": "static"}, "front": {"kind": "apache"}},
        {"name": "thin-direct", "port": 8003, "app": {"kind": "sinatra"}, "server": {"kind": "thin"}},
    ],
    "load": {"plans": [{"tool": "wrk", "concurrency": 4, "duration_s": 1}]},
    "logs": LOGS,
}  # fmt: skip


def experiment(**logs: Any) -> dict[str, Any]:
    data = copy.deepcopy(EXPERIMENT)
    data["logs"] = {**LOGS, **logs}
    return data


def written(tmp_path: Path, data: dict[str, Any], name: str = "ship.yml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("logs", "problem"),
    [
        ({"ship": "kafka"}, "logs.ship: must be 's3'"),
        ({"bucket": "Bench_Logs"}, "logs.bucket: must be an S3 bucket name"),
        ({"endpoint": "http://key:secret@store:9000"}, "logs.endpoint: must be an http(s)://host[:port]"),
        ({"endpoint": "ftp://store"}, "logs.endpoint: must be an http(s)://host[:port]"),
        ({"prefix": "runs"}, "logs.prefix: must be a key prefix of folders each ending in '/'"),
        ({"prefix": "runs/../x/"}, "logs.prefix: must be a key prefix of folders"),
        ({"region": "Mars 1"}, "logs.region: must be an AWS region"),
        ({"secret": "x"}, "logs.secret: unknown field (allowed: bucket, endpoint, prefix, region, ship)"),
    ],
)
def test_a_bad_logs_section_is_refused_naming_the_field(logs: dict[str, Any], problem: str) -> None:
    problems = validate_experiment(experiment(**logs))
    assert [p for p in problems if p.startswith(problem)], problems
    assert len(problems) == 1, problems


def test_a_logs_section_without_a_bucket_or_with_no_front_to_ship_from_is_refused() -> None:
    data = experiment()
    del data["logs"]["bucket"]
    assert validate_experiment(data) == ["logs.bucket: must name the bucket the access logs go to"]
    data = experiment()
    data["stacks"] = [data["stacks"][2]]
    [problem] = validate_experiment(data)
    assert problem.startswith(
        "logs: ships the fronts' access logs, but no stack has a front (nginx or apache)"
    )


def test_the_targets_ship_after_their_fronts_with_fluentds_unit_kept_running(tmp_path: Path) -> None:
    plan = compile_plan(written(tmp_path, experiment()), targets=["t"])
    placed = with_hosts(plan, ["t"], ["lg"], {}, str).to_dict()
    roles = placed["hosts"]["t"]["roles"]
    assert roles[-3:] == ["nginx", "apache", "log_shipper"]
    assert placed["hosts"]["lg"]["roles"] == ["host", "loadgen"]
    # Provisioned with the fronts, after the sweep.
    assert stages(roles)[1][-1] == "log_shipper"
    for family in ("Debian", "RedHat"):
        assert placed["role_units"][family]["log_shipper"] == [LOG_SHIPPER_UNIT]
        assert placed["role_made"][family]["log_shipper"]["units"] == [LOG_SHIPPER_UNIT]
    assert placed["needs"]["log_shipping"] == ["nginx", "apache"]


def test_each_run_ships_under_its_own_prefix_and_names_the_stacks_measured_with_shipping_on(
    tmp_path: Path,
) -> None:
    plan = compile_plan(written(tmp_path, experiment(prefix="team/logs/")))
    fact = plan.to_dict()["log_shipping"]
    assert fact == {
        "ship": "s3", "bucket": "bench-access-logs", "endpoint": "http://172.17.0.1:9000",
        "region": "us-east-1", "prefix": "team/logs/", "run_prefix": "team/logs/<run>/",
        "fronts": ["nginx", "apache"], "stacks": ["thin-nginx", "static-apache"],
    }  # fmt: skip
    run = "/srv/results/20261205T020000Z-ship"
    fact = replace(plan, run_dir=run).to_dict()["log_shipping"]
    assert fact["run_prefix"] == "team/logs/20261205T020000Z-ship/"
    # run.json keeps it, and its experiment as run keeps the section with its defaults.
    placed = with_hosts(replace(plan, run_dir=run), ["t"], ["t"], {}, str).to_dict()
    record = {"schema": "bench-stack/run/v6", **run_record(placed, None, ["t"], ["t"], {})}
    assert record["log_shipping"]["run_prefix"] == "team/logs/20261205T020000Z-ship/"
    assert record["experiment"]["logs"]["region"] == "us-east-1"
    assert validate_run_info(record) == []


def test_an_experiment_that_ships_nothing_has_no_part_of_it_in_its_plan(tmp_path: Path) -> None:
    data = experiment()
    del data["logs"]
    shipping = compile_plan(written(tmp_path, experiment(), "a.yml"))
    plain = compile_plan(written(tmp_path, data, "b.yml"))
    fact = with_hosts(plain, ["t"], ["t"], {}, str).to_dict()
    assert "log_shipping" not in fact and "log_shipping" not in fact["needs"]
    assert "log_shipper" not in fact["hosts"]["t"]["roles"]
    assert all("log_shipper" not in units for units in fact["role_units"].values())
    assert "logs" not in fact["experiment"]
    # Shipping is part of what a resume must match.
    assert shipping.sha256 != plain.sha256


def test_the_plan_sets_what_the_fronts_and_fluentd_are_given_from_the_experiment() -> None:
    roles = read_yaml(ROOT / "playbooks" / "vars" / "roles.yml")
    for name in PLAN_SET_TOO:
        assert "bench_log_shipping" in roles[name], name
    assert roles["log_shipper_s3_prefix"] == "{{ bench_log_shipping.run_prefix | default('') }}"


def test_what_the_plan_sets_is_refused_from_outside_and_checked_on_the_host() -> None:
    given = {"log_shipper_s3_bucket": "mine", "nginx_access_log": True}
    problems = role_problems(given)
    assert len(problems) == 2 and all("is set by the run's plan from the experiment" in p for p in problems)
    # The role's own check (a user's playbook, molecule/log-shipper) still checks where the value lands.
    assert role_value_problems({"log_shipper_s3_bucket": "bench-access-logs", "nginx_access_log": True}) == []
    [bad] = role_value_problems({"log_shipper_s3_prefix": "x\n<match **>"})
    assert bad.startswith("role log_shipper: log_shipper_s3_prefix: must be an S3 key prefix")
