"""provision.yml decides without gathering facts: the record keeps the facts the decision needs with the
host's identity (benchstack.provision.hoststate.identity, benchstack.provision.hostrecord.host_facts), and
bench_provision_state gathers only when the record lacks them or the host is another one. The host side runs
on this machine."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest.mock import MagicMock

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from conftest import read_yaml

from benchstack.provision import hostrecord, hoststate, made, markers

ROOT = Path(__file__).resolve().parents[3]
FACTS = {
    "distribution": "Debian",
    "distribution_major_version": "12",
    "os_family": "Debian",
    "architecture": "x86_64",
    "processor_vcpus": 2,
}
# What setup returns for the min and hardware subsets (the part that matters here).
GATHERED = {
    **{f"ansible_{name}": value for name, value in FACTS.items()},
    "ansible_processor_nproc": 2,
    "ansible_memtotal_mb": 1024,
}
UNITS = {"Debian": {"nginx": ["nginx.service"]}, "RedHat": {"nginx": ["nginx.service"]}}


def load_action(name: str) -> ModuleType:
    path = ROOT / "plugins" / "action" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"decision_facts_{name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench_provision_state = load_action("bench_provision_state")


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(hostrecord, "MARKER", str(tmp_path / "provisioned.json"))
    # A host provisioned since bench-stack records what it made (benchstack.provision.made): nothing to add.
    monkeypatch.setattr(made, "PATH", str(tmp_path / "made.json"))
    (tmp_path / "made.json").write_text(json.dumps(made.empty()), encoding="utf-8")
    return tmp_path / "provisioned.json"


def decision(task_vars: dict[str, Any], gathered: dict[str, Any] | None = None, **args: Any) -> Any:
    """bench_provision_state as provision.yml runs it (units per OS family, hashes computed here), its
    commands run on this machine; ``gathered``: what setup answers (None: gathering fails the test)."""
    task = MagicMock()
    task.args = {"roles": ["host"], "units": UNITS, **args}
    task.check_mode = False
    task.async_val = 0
    action = bench_provision_state.ActionModule(task, MagicMock(), MagicMock(), MagicMock(), MagicMock())
    action._templar = Templar(loader=DataLoader(), variables=task_vars)
    action.commands, action.gathers = [], []

    def execute(command: str) -> dict[str, Any]:
        action.commands.append(command)
        done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
        return {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}

    def execute_module(module_name: str, module_args: dict[str, Any], task_vars: dict[str, Any]) -> dict:
        assert module_name == "ansible.legacy.setup"
        action.gathers.append(module_args["gather_subset"])
        assert gathered is not None, "the decision gathered facts"
        return {"ansible_facts": dict(gathered)}

    action._low_level_execute_command = execute
    action._execute_module = execute_module
    return action


def write_record(marker: Path, profile: str, identity: str, facts: dict[str, Any] = FACTS) -> None:
    """A record of host run with ``profile`` on a host with ``facts``, taken at ``identity``."""
    inputs = markers.role_hash(bench_provision_state.files_hash("host"), {"host_profile": profile}, facts)
    record = {
        "schema": hostrecord.SCHEMA,
        "roles": {"host": {"hash": inputs, "facts": {}, "at": "t"}},
        "host": {"identity": identity, "facts": facts},
    }
    marker.write_text(json.dumps(record), encoding="utf-8")


def task_vars(profile: str = "{{ 'tuned' if ansible_facts['processor_vcpus'] > 1 else 'stock' }}") -> dict:
    # The role's variable reads a fact, as bench_cpu_split_now reads processor_vcpus.
    return {"ansible_run_tags": ["all"], "host_profile": trust_as_template(profile)}


def test_the_same_host_is_decided_from_the_facts_its_record_keeps_in_one_command(marker: Path) -> None:
    write_record(marker, "tuned", hoststate.identity())
    action = decision(task_vars())
    result = action.run(task_vars=task_vars())
    state = result["ansible_facts"]["bench_provision"]
    assert state["skip"] == ["host"] and state["run"] == {} and state["facts"] == "record"
    assert action.gathers == [] and len(action.commands) == 1
    # Later tasks and plays (reinstall, dns_check, benchmark.yml) see the OS facts.
    assert result["ansible_facts"]["ansible_os_family"] == "Debian"
    assert result["ansible_facts"]["ansible_processor_vcpus"] == 2


def test_another_host_behind_the_same_name_has_its_facts_gathered_and_recorded(marker: Path) -> None:
    write_record(marker, "tuned", "0" * 64)
    action = decision(task_vars(), GATHERED)
    result = action.run(task_vars=task_vars())
    state = result["ansible_facts"]["bench_provision"]
    assert action.gathers == [["min", "hardware"]] and state["facts"] == "gathered"
    # The same facts give the same inputs: the role is skipped; the hardware facts the roles read are set.
    assert state["skip"] == ["host"] and result["ansible_facts"]["ansible_processor_nproc"] == 2
    # No role runs, so the decision keeps the host's facts itself: the next run gathers nothing.
    record = json.loads(marker.read_text(encoding="utf-8"))
    assert record["host"] == {"identity": hoststate.identity(), "facts": FACTS}
    assert record["roles"]["host"]["hash"] == state["hashes"]["host"]
    again = decision(task_vars())
    assert again.run(task_vars=task_vars())["ansible_facts"]["bench_provision"]["facts"] == "record"
    assert again.gathers == []


def test_a_host_without_a_record_has_its_facts_gathered_and_its_roles_run(marker: Path) -> None:
    action = decision(task_vars(), GATHERED)
    state = action.run(task_vars=task_vars())["ansible_facts"]["bench_provision"]
    assert state["run"] == {"host": "no record of it on this host"}
    # Written with the roles' records at the end (bench_provision_record), not before they run.
    assert not marker.exists() and state["record"]["host"]["identity"] == hoststate.identity()


def test_a_role_variable_reading_a_fact_the_record_lacks_has_every_fact_gathered(marker: Path) -> None:
    profile = "{{ 'tuned' if ansible_facts['memtotal_mb'] > 512 else 'stock' }}"
    write_record(marker, "tuned", hoststate.identity())
    action = decision(task_vars(profile), GATHERED)
    state = action.run(task_vars=task_vars(profile))["ansible_facts"]["bench_provision"]
    assert action.gathers == [["all"]] and state["facts"] == "gathered" and state["skip"] == ["host"]


def test_facts_the_play_has_are_used_as_they_are_and_pick_the_familys_units(marker: Path) -> None:
    redhat = {**FACTS, "os_family": "RedHat"}
    write_record(marker, "tuned", hoststate.identity(), redhat)
    given = {**task_vars(), "ansible_facts": redhat}
    units = {"Debian": {"host": ["bench-a.service"]}, "RedHat": {"host": ["bench-b.service"]}}
    action = decision(given, units=units)
    state = action.run(task_vars=given)["ansible_facts"]["bench_provision"]
    assert action.gathers == [] and state["facts"] == "given"
    # The inputs are the recorded ones; the RedHat unit is the one that must be active (none is, here).
    assert state["run"] == {"host": "not active: bench-b.service"}


def test_the_host_identity_follows_the_release_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = tmp_path / "os-release"
    release.write_text('ID=debian\nVERSION_ID="12"\n')
    monkeypatch.setattr(hoststate, "RELEASE_FILES", (str(release), str(tmp_path / "debian_version")))
    first = hoststate.identity()
    assert hoststate.identity() == first
    (tmp_path / "debian_version").write_text("")  # an empty file is not a missing one
    assert hoststate.identity() != first
    (tmp_path / "debian_version").unlink()
    release.write_text('ID=debian\nVERSION_ID="13"\n')
    assert hoststate.identity() != first


def test_the_record_keeps_the_hosts_facts_through_every_write() -> None:
    host = hostrecord.host_entry("a" * 64, {**FACTS, "kernel": "6.1"})
    assert host == {"identity": "a" * 64, "facts": FACTS}
    assert hostrecord.host_entry("a" * 64, {"os_family": "Debian"}) is None
    record = {"schema": hostrecord.SCHEMA, "roles": {"nginx": {"hash": "h"}}, "host": host}
    assert hostrecord.without(record, ["nginx"])["host"] == host
    after = hostrecord.record_after(
        record, markers.Decision(hashes={"nginx": "h2"}, run={"nginx": "x"}), {}, "t"
    )
    assert after["host"] == host
    assert not hostrecord.same_state(record, hostrecord.with_host(record, None))
    assert hostrecord.host_facts(record, "a" * 64) == FACTS
    assert hostrecord.host_facts(record, "b" * 64) is None


def test_a_host_as_the_plan_says_leaves_provisioning_after_the_one_command_and_gathers_nothing() -> None:
    play = read_yaml(ROOT / "playbooks" / "provision.yml")[1]
    assert play["gather_facts"] is False
    decide, leave, gather = play["tasks"][:3]
    assert "bench_provision_state" in decide and decide["bench_provision_state"]["units"] == (
        "{{ bench_plan.role_units }}"
    )
    assert leave["ansible.builtin.meta"] == "end_host"
    for part in ("bench_provision.run", "bench_provision.stale.units", "bench_provision.stale.files"):
        assert part in leave["when"]
    assert gather["ansible.builtin.setup"] == {"gather_subset": ["min", "hardware"]}
    assert "bench_provision.run" in gather["when"]


def test_real_hosts_end_the_local_hosts_play_at_its_first_task() -> None:
    plays = read_yaml(ROOT / "playbooks" / "hosts.yml")
    # The plan, then one play on the controller: no play runs on the inventory's hosts.
    assert [p.get("hosts") for p in plays] == [None, "localhost"]
    first, *rest = plays[1]["tasks"]
    assert (
        first["ansible.builtin.meta"] == "end_play" and first["when"] == "bench_container_hosts | length == 0"
    )
    (wait,) = [t for t in rest if "ansible.builtin.raw" in t]
    assert wait["delegate_to"] == "{{ item }}" and wait["loop"] == "{{ bench_container_hosts }}"
