"""The registry of one kind of adapter (app kinds, fronts, server kinds, load tools): its adapters by name,
in the order messages list them, with the two lookups every caller needs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar


class _Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=_Named)


class Registry(dict[str, T]):
    """Adapters by name; ``what`` names the kind in messages (``app kind``, ``tool``)."""

    def __init__(self, what: str, adapters: Iterable[T]) -> None:
        super().__init__((a.name, a) for a in adapters)
        self.what = what

    def find(self, name: object) -> T | None:
        """The adapter called ``name``, None when there is none."""
        return self.get(name) if isinstance(name, str) else None

    def by_name(self, name: object) -> T:
        """The adapter called ``name``; ValueError naming the known ones when there is none."""
        found = self.find(name)
        if found is None:
            raise ValueError(f"unknown {self.what} {name!r}; known: {', '.join(self)}")
        return found
