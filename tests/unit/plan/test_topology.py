import pytest

from benchstack.plan.topology import (
    Place,
    TopologyError,
    loadgen_places,
    loadgen_targets,
    loopback,
    measured_targets,
    mode,
    peers,
)


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


def test_a_run_measures_every_target_a_loadgen_loads_in_the_targets_order() -> None:
    mapping = loadgen_targets(["lg-b", "lg-a1", "lg-a2"], ["ta", "tb", "tc"], {"lg-b": "tb", "lg-a2": "ta"})
    assert mapping == {"lg-b": "tb", "lg-a1": "ta", "lg-a2": "ta"}
    assert measured_targets(mapping, ["ta", "tb", "tc"]) == ["ta", "tb"]  # tc: no loadgen loads it
    assert peers("lg-a1", mapping) == ["lg-a1", "lg-a2"]


def test_a_loadgen_is_in_loopback_mode_when_it_loads_itself_and_the_run_when_every_loadgen_does() -> None:
    assert loopback("box", "box") and not loopback("lg", "box")
    assert mode({"a": "a", "b": "b"}) == "loopback"
    assert mode({"a": "a", "lg": "a"}) == "network"
    assert mode({}) == "network"  # nothing loads: no loopback


def test_each_loadgen_loads_its_target_at_its_address_or_itself_over_127_0_0_1() -> None:
    mapping = {"t2": "t2", "lg1": "t1", "lg2": "t1"}
    places = loadgen_places(mapping, {"t1": "10.0.0.1"})
    assert places == {
        "t2": Place(target="t2", address="127.0.0.1", peers=("t2",), loopback=True),
        "lg1": Place(target="t1", address="10.0.0.1", peers=("lg1", "lg2"), loopback=False),
        "lg2": Place(target="t1", address="10.0.0.1", peers=("lg1", "lg2"), loopback=False),
    }
