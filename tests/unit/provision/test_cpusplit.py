"""Loopback hosts: the load tool and the stacks on disjoint CPUs (benchstack.plan.cpusplit)."""

import pytest

from benchstack.plan.cpusplit import cpu_split


def test_a_two_cpu_loopback_host_gives_one_cpu_to_the_tool_and_one_to_the_stacks() -> None:
    assert cpu_split(2, "auto", loopback=True) == {"loadgen_cpus": "0", "stack_cpus": "1"}


def test_more_cpus_are_halved() -> None:
    assert cpu_split(4, "auto", loopback=True) == {"loadgen_cpus": "0-1", "stack_cpus": "2-3"}
    assert cpu_split(3, "auto", loopback=True) == {"loadgen_cpus": "0", "stack_cpus": "1-2"}


@pytest.mark.parametrize(
    ("vcpus", "setting", "loopback"), [(1, "auto", True), (8, "off", True), (8, "auto", False)]
)
def test_no_split_on_one_cpu_when_off_or_in_network_mode(vcpus: int, setting: str, loopback: bool) -> None:
    assert cpu_split(vcpus, setting, loopback) is None


def test_an_unknown_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="bench_cpu_split must be one of auto, off"):
        cpu_split(2, "yes", True)
