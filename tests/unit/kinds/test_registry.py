"""The kinds' registries (benchstack.kinds.registry): each finds its kinds' modules itself, so a new kind is
its module alone; the registry holds every module's adapter, takes no helper for a kind, and lists the kinds
in the order they declare."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from benchstack.kinds import apps, fronts, loadtools, servers
from benchstack.kinds.apps.base import AppKind
from benchstack.kinds.fronts.base import FrontKind
from benchstack.kinds.loadtools.base import LoadTool
from benchstack.kinds.registry import Registry
from benchstack.kinds.servers.base import ServerKind

PACKAGES = [(servers, "KIND", ServerKind), (apps, "KIND", AppKind), (fronts, "KIND", FrontKind)]
PACKAGES += [(loadtools, "TOOL", LoadTool)]


def held(package: ModuleType, attribute: str, base: type) -> dict[str, Any]:
    """Module -> the adapter it holds, for every module of ``package`` that holds one, whatever the package
    says of its helpers."""
    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        adapter = getattr(module, attribute, None)
        if isinstance(adapter, base):
            found[info.name] = adapter
    return found


@pytest.mark.parametrize(("package", "attribute", "base"), PACKAGES)
def test_the_registry_holds_every_modules_adapter_and_nothing_else(
    package: ModuleType, attribute: str, base: type
) -> None:
    adapters = held(package, attribute, base)
    registry = package.REGISTRY
    assert sorted(registry) == sorted(a.name for a in adapters.values())
    assert all(registry[a.name] is a for a in adapters.values())
    # Every module that holds none is a helper the package names.
    helpers = {m.name for m in pkgutil.iter_modules(package.__path__)} - set(adapters)
    assert helpers == set(package.SUPPORT)


@pytest.mark.parametrize(("package", "attribute", "base"), PACKAGES)
def test_the_registry_lists_its_kinds_by_their_own_order(
    package: ModuleType, attribute: str, base: type
) -> None:
    orders = [a.order for a in package.REGISTRY.values()]
    assert orders == sorted(set(orders))


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty package ``fakekinds`` with a base class ``Kind(name, order)``; its modules forgotten after."""
    folder = tmp_path / "fakekinds"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "base.py").write_text(
        "class Kind:\n    def __init__(self, name, order):\n        self.name, self.order = name, order\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield folder
    for name in [m for m in sys.modules if m == "fakekinds" or m.startswith("fakekinds.")]:
        del sys.modules[name]


def kind_module(folder: Path, module: str, name: str, order: int) -> None:
    (folder / f"{module}.py").write_text(
        f"from fakekinds.base import Kind\n\nKIND = Kind({name!r}, {order})\n"
    )


def registry(support: tuple[str, ...] = ("base",)) -> Registry[Any]:
    package = importlib.import_module("fakekinds")
    kind = importlib.import_module("fakekinds.base").Kind
    return Registry.of_package("fake kind", "fakekinds", package.__path__, ("KIND", kind), support)


def test_a_packages_kinds_are_found_without_a_list_in_their_order(fake: Path) -> None:
    kind_module(fake, "zeta", "zeta", 10)
    kind_module(fake, "alpha", "alpha", 30)
    kind_module(fake, "mid", "mid-kind", 20)
    (fake / "helper.py").write_text("VALUE = 1\n")
    found = registry(("base", "helper"))
    assert list(found) == ["zeta", "mid-kind", "alpha"]
    assert found.what == "fake kind"
    with pytest.raises(ValueError, match="unknown fake kind 'x'; known: zeta, mid-kind, alpha"):
        found.by_name("x")


def test_a_helper_the_package_does_not_name_is_refused_not_taken_for_a_kind(fake: Path) -> None:
    kind_module(fake, "one", "one", 10)
    (fake / "helper.py").write_text("VALUE = 1\n")
    with pytest.raises(TypeError, match=r"fakekinds.helper holds no fake kind \(KIND, a Kind\)"):
        registry()


def test_a_module_holding_something_else_under_the_name_is_refused(fake: Path) -> None:
    (fake / "odd.py").write_text("KIND = 'odd'\n")
    with pytest.raises(TypeError, match="fakekinds.odd holds no fake kind"):
        registry()


def test_two_kinds_of_one_order_are_refused(fake: Path) -> None:
    kind_module(fake, "one", "one", 10)
    kind_module(fake, "two", "two", 10)
    with pytest.raises(ValueError, match="two fake kinds of fakekinds have the order 10"):
        registry()


def test_two_kinds_of_one_name_are_refused(fake: Path) -> None:
    kind_module(fake, "one", "one", 10)
    kind_module(fake, "two", "one", 20)
    with pytest.raises(ValueError, match="two fake kinds of fakekinds have the name one"):
        registry()
