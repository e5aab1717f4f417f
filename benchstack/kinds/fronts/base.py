"""What the rest of bench-stack asks a front kind's adapter (:mod:`benchstack.kinds.fronts`).

One adapter per kind holds everything that differs between fronts: its keys in a stack's ``front`` section
and their checks and defaults, the role that runs it, what it can put in front of (the protocols it speaks
to an app server; the apps it serves itself are the app kinds' to say, :mod:`benchstack.kinds.apps`), the
fields it derives for its role's templates, what its role must install for the run's stacks, and how health
checks name it. ``none`` is a kind too: no front, the app server listens on the stack's port itself.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from benchstack.kinds.apps import AppKind
    from benchstack.kinds.servers import ServerKind


class FrontKind(ABC):
    """A front kind. Subclasses set the class attributes and implement :meth:`resolve`; the registry holds
    one instance of each."""

    name: ClassVar[str]
    # The role that runs it (its stacks are that role's `<role>_stacks`); None for no front.
    role: ClassVar[str | None] = None
    # The front.* fields its role's templates read besides the stack's own (the role's argument_specs
    # declare them as sub-options of `front`; the plan hands the role only those).
    role_fields: ClassVar[tuple[str, ...]] = ()

    @property
    def direct(self) -> bool:
        """Whether there is no front: an app server listens on the stack's port itself, bound to TCP."""
        return self.role is None

    @abstractmethod
    def resolve(self, front: dict[str, Any], who: str, stack_name: object) -> None:
        """Check the stack's ``front`` section (its kind is this one); fill in its defaults and the fields
        that follow from them. StackError (:func:`benchstack.kinds.stackfields.err`) on the first problem."""

    def serve(self, front: dict[str, Any], who: str, app: AppKind) -> None:
        """The front serves the app itself, without an app server (the app kind said it can): derive what its
        role needs for that. Nothing by default: the app's folder and entry are the app's fields."""
        return

    def proxy(self, front: dict[str, Any], who: str, server: ServerKind) -> None:
        """The front stands before an app server of kind ``server``: refuse a protocol it does not speak,
        derive what its role needs for that. Nothing by default: the upstream is the stack's field."""
        return

    def check_server(self, s: dict[str, Any], who: str) -> None:
        """Check the stack's server (its options filled in) for what this front asks of it. Nothing by
        default: any instance count and bind."""
        return

    def label(self, front: dict[str, Any]) -> str:
        """How a health check through the front names it."""
        return self.name

    def needs(self, stacks: list[dict[str, Any]]) -> dict[str, Any]:
        """What the plan's ``needs`` holds for the front's role, from the resolved ``stacks`` it fronts."""
        return {}
