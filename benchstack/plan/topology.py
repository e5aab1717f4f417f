"""Which target each loadgen loads, and which loadgens load a target together (the inventory's shape).

A loadgen that is also a target loads itself (loopback); others load their ``bench_target``, or the first
target. Loadgens sharing a target are peers: they measure each cell at the same time and their cells are
merged (:mod:`benchstack.measure.merge`). Loadgens of different targets measure their own target's cells
(:mod:`benchstack.plan.targets`): one run measures every target a loadgen loads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


class TopologyError(ValueError):
    """The inventory's targets and loadgens do not make a run bench-stack can measure."""


def loadgen_targets(
    loadgens: Sequence[str], targets: Sequence[str], chosen: Mapping[str, str | None]
) -> dict[str, str]:
    """Each loadgen's target. ``chosen``: the loadgens' ``bench_target`` where set."""
    if not targets:
        raise TopologyError("the inventory has no host in the targets group")
    result = {}
    for lg in loadgens:
        target = chosen.get(lg) or (lg if lg in targets else targets[0])
        if target not in targets:
            raise TopologyError(f"loadgen {lg}: bench_target {target} is not in the targets group")
        result[lg] = target
    return result


def peers(loadgen: str, mapping: Mapping[str, str]) -> list[str]:
    """The loadgens (in inventory order) that load the same target as ``loadgen``, itself included."""
    return [lg for lg, target in mapping.items() if target == mapping[loadgen]]


def measured_targets(mapping: Mapping[str, str], targets: Sequence[str]) -> list[str]:
    """The targets some loadgen loads, in the targets group's order: the ones a run measures."""
    loaded = set(mapping.values())
    return [t for t in targets if t in loaded]


def loopback(loadgen: str, target: str) -> bool:
    """Whether ``loadgen`` loading ``target`` loads itself (loopback mode: one host runs the load tool and
    the stacks it loads); the one definition of a cell's mode (:class:`benchstack.measure.runner.Target`), the
    run's (:func:`mode`) and which hosts split their CPUs (:mod:`benchstack.plan.cpusplit`)."""
    return loadgen == target


def mode(mapping: Mapping[str, str]) -> str:
    """The run's mode (run.json's ``mode``): ``loopback`` when every loadgen loads itself, else
    ``network``."""
    return "loopback" if mapping and all(loopback(lg, t) for lg, t in mapping.items()) else "network"


@dataclass(frozen=True)
class Place:
    """Where a loadgen sends its load: its ``target``, the ``address`` it reaches it at, its ``peers``
    (:func:`peers`) and whether it loads itself (``loopback``)."""

    target: str
    address: str
    peers: tuple[str, ...]
    loopback: bool


def loadgen_places(mapping: Mapping[str, str], addresses: Mapping[str, str]) -> dict[str, Place]:
    """Per loadgen, its :class:`Place`: the ``address`` it sends the load to is ``127.0.0.1`` when it loads
    itself, else the target's entry in ``addresses`` (its ``bench_address``, else ``ansible_host``, else its
    name)."""
    return {
        lg: Place(
            target=target,
            address="127.0.0.1" if loopback(lg, target) else addresses[target],
            peers=tuple(peers(lg, mapping)),
            loopback=loopback(lg, target),
        )
        for lg, target in mapping.items()
    }
