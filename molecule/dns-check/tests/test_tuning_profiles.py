"""host's own tuning, checked from the side effect's evidence (side_effect.py): a setting the container
platform did not set is recorded with the reason it was skipped where /proc/sys is read-only, written where
it is not; stock after tuned on the same host puts the originals back and removes the profile's files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))

from sideeffect import load  # noqa: E402

KEY = "net.ipv4.tcp_fin_timeout"  # tuned to 30; the platform leaves the kernel's 60
PLATFORM_SET = ["net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.ip_local_port_range"]


@pytest.fixture(scope="module")
def steps() -> dict[str, dict[str, Any]]:
    return {name: load(f"tuning-{name}") for name in ("converged", "tuned-writable", "stock", "tuned-again")}


def test_a_setting_the_platform_did_not_set_is_tried_and_recorded_as_skipped_with_the_reason(
    steps: dict[str, dict[str, Any]],
) -> None:
    entry = steps["converged"]["record"]["sysctls"][KEY]
    assert (entry["status"], entry["wanted"], entry["value"]) == ("skipped", "30", "60")
    # the reason comes from the role's own sysctl -w, which the read-only /proc/sys refused
    assert entry["reason"].startswith("could not be written (sysctl: permission denied on key")
    assert steps["converged"]["sysctls"][KEY] == "60"


def test_where_the_host_allows_it_tuned_writes_the_setting_itself(steps: dict[str, dict[str, Any]]) -> None:
    step = steps["tuned-writable"]
    assert step["playbook"]["rc"] == 0, step["playbook"]["output"]
    entry = step["record"]["sysctls"][KEY]
    assert (entry["status"], entry["original"], entry["value"]) == ("set", "60", "30")
    assert step["sysctls"][KEY] == "30"
    writes = [t for t in step["playbook"]["tasks"] if t["name"].startswith("Set the tuned kernel settings")]
    assert any(t["changed"] for t in writes)


def test_stock_after_tuned_puts_the_originals_back_and_removes_the_profiles_files(
    steps: dict[str, dict[str, Any]],
) -> None:
    step = steps["stock"]
    assert step["playbook"]["rc"] == 0, step["playbook"]["output"]
    assert step["record"]["profile"] == "stock"
    assert step["files"] == dict.fromkeys(step["files"], False)
    assert step["sysctls"][KEY] == "60"
    entry = step["record"]["sysctls"][KEY]
    assert (entry["status"], entry["value"], entry["wanted"]) == ("set", "60", "60")
    # settings the platform made are the originals here: nothing to put back, nothing changed
    for key in PLATFORM_SET:
        assert step["sysctls"][key] == steps["converged"]["sysctls"][key]
        assert step["record"]["sysctls"][key]["status"] == "set"


def test_tuned_again_where_proc_sys_is_read_only_leaves_the_host_as_the_converge_did(
    steps: dict[str, dict[str, Any]],
) -> None:
    again, converged = steps["tuned-again"], steps["converged"]
    assert again["playbook"]["rc"] == 0, again["playbook"]["output"]
    assert again["record"] == converged["record"]
    assert again["sysctls"] == converged["sysctls"]
    assert again["files"] == converged["files"] == dict.fromkeys(converged["files"], True)
