import pytest

from benchstack.topology import TopologyError, check_one_load_per_target, loadgen_targets, peers


def test_a_loadgen_that_is_a_target_loads_itself() -> None:
    assert loadgen_targets(["box"], ["box"], {}) == {"box": "box"}


def test_loadgens_without_bench_target_load_the_first_target() -> None:
    mapping = loadgen_targets(["lg1", "lg2"], ["t1", "t2"], {"lg2": None})
    assert mapping == {"lg1": "t1", "lg2": "t1"}


def test_bench_target_outside_the_targets_group_is_refused() -> None:
    with pytest.raises(TopologyError, match="lg1: bench_target t9 is not in the targets group"):
        loadgen_targets(["lg1"], ["t1"], {"lg1": "t9"})


def test_no_targets_is_refused() -> None:
    with pytest.raises(TopologyError, match="no host in the targets group"):
        loadgen_targets(["lg1"], [], {})


def test_peers_are_the_loadgens_of_the_same_target_in_inventory_order() -> None:
    mapping = {"lg2": "t1", "lg1": "t1", "lg3": "t2"}
    assert peers("lg1", mapping) == ["lg2", "lg1"]
    assert peers("lg3", mapping) == ["lg3"]


def test_one_run_measures_one_target() -> None:
    check_one_load_per_target({"lg1": "t1", "lg2": "t1"})
    with pytest.raises(TopologyError, match="load 2 targets"):
        check_one_load_per_target({"lg1": "t1", "lg2": "t2"})
