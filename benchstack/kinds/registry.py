"""The registry of one kind of adapter (app kinds, fronts, server kinds, load tools): its adapters by name,
in the order messages list them, with the two lookups every caller needs.

A registry finds its adapters itself (:meth:`Registry.of_package`): every module of its package is a kind's,
holding the adapter under one name (``KIND``, a load tool's ``TOOL``), but the package's helpers, which the
package names (``SUPPORT``: its base class, its sections, what they share). So adding a kind is adding its
module; each adapter says where it is listed (``order``), and the registry lists them by it."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Collection, Iterable
from typing import Any, Protocol, TypeVar


class _Named(Protocol):
    @property
    def name(self) -> str: ...

    # Where messages, the schemas' enums and the docs list the adapter: the registry sorts by it.
    @property
    def order(self) -> int: ...


T = TypeVar("T", bound=_Named)


class Registry(dict[str, T]):
    """Adapters by name; ``what`` names the kind in messages (``app kind``, ``tool``)."""

    def __init__(self, what: str, adapters: Iterable[T]) -> None:
        super().__init__((a.name, a) for a in adapters)
        self.what = what

    @classmethod
    def of_package(
        cls,
        what: str,
        package: str,
        path: Iterable[str],
        adapter: tuple[str, type[Any]],
        support: Collection[str],
    ) -> Registry[T]:
        """The registry of the adapters that the modules of ``package`` (its folders ``path``) hold, each
        under the name ``adapter[0]``, an instance of ``adapter[1]``, in their ``order``; every module but
        those ``support`` names must hold one. TypeError naming a module that holds none, ValueError naming
        two adapters of one order or one name."""
        found: list[T] = []
        for module in sorted(m.name for m in pkgutil.iter_modules(path)):
            if module in support:
                continue
            held = getattr(importlib.import_module(f"{package}.{module}"), adapter[0], None)
            if not isinstance(held, adapter[1]):
                raise TypeError(
                    f"{package}.{module} holds no {what} ({adapter[0]}, a {adapter[1].__name__}):"
                    f" a module of the package that is not a {what}'s belongs in its SUPPORT"
                )
            found.append(held)
        for key in ("order", "name"):
            values = [getattr(a, key) for a in found]
            twice = sorted({str(v) for v in values if values.count(v) > 1})
            if twice:
                raise ValueError(f"two {what}s of {package} have the {key} {', '.join(twice)}")
        return cls(what, sorted(found, key=lambda a: a.order))

    def find(self, name: object) -> T | None:
        """The adapter called ``name``, None when there is none."""
        return self.get(name) if isinstance(name, str) else None

    def by_name(self, name: object) -> T:
        """The adapter called ``name``; ValueError naming the known ones when there is none."""
        found = self.find(name)
        if found is None:
            raise ValueError(f"unknown {self.what} {name!r}; known: {', '.join(self)}")
        return found
