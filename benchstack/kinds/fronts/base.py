"""What the rest of bench-stack asks a front kind's adapter (:mod:`benchstack.kinds.fronts`).

One adapter per kind holds everything that differs between fronts: its keys in a stack's ``front`` section
and their checks and defaults, the role that runs it, what it can put in front of (the protocols it speaks
to an app server; the apps it serves itself are the app kinds' to say, :mod:`benchstack.kinds.apps`), the
fields it derives for its role's templates, what its role must install for the run's stacks, and how health
checks name it. ``none`` is a kind too: no front, the app server listens on the stack's port itself.

A front declares its own keys (:class:`Choice`, :class:`Bounded`): scripts/kind_files.py writes the
experiment schema's branch of the kind and the docs tables from them, and :meth:`FrontKind.check` checks them
with the same declarations. A front section is typed twice: as written and checked (:class:`FrontSpec`, a
subclass per kind with keys), and resolved (:class:`Front`, a subclass per kind that derives fields), which
prints itself for the plan.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from benchstack.kinds.stackfields import ordered

if TYPE_CHECKING:
    from benchstack.kinds.apps import AppKind
    from benchstack.kinds.servers import ServerKind
    from benchstack.kinds.servers.section import ServerSpec
    from benchstack.plan.stacks import Stack


@dataclass(frozen=True)
class Choice:
    """A front key that takes one of a few words."""

    values: tuple[str, ...]
    default: str
    # The schema's description of the key.
    description: str


@dataclass(frozen=True)
class Bounded:
    """A front key that takes an integer from ``low`` to ``high``."""

    # What it sets (an Apache directive): the schema's description and the docs name it.
    sets: str
    low: int
    high: int
    default: int
    # A few words for the docs table: what it must be besides its bounds.
    note: str = ""


@dataclass(frozen=True)
class FrontSpec:
    """A ``front`` section as written, checked, with its defaults (a kind with keys subclasses it)."""

    kind: str
    # The keys as written, in their order (the plan keeps it).
    written: tuple[str, ...]

    def fields(self) -> dict[str, Any]:
        """The section's own fields, in the order they were filled in."""
        return {"kind": self.kind}


@dataclass(frozen=True)
class Front:
    """A resolved ``front`` section: the section as written and what the kind derives for its role (a kind
    that derives fields subclasses it)."""

    spec: FrontSpec

    @property
    def kind(self) -> str:
        return self.spec.kind

    def derived(self) -> dict[str, Any]:
        """The fields derived for the front's role, in the order they were derived."""
        return {}

    def as_dict(self) -> dict[str, Any]:
        """The section as the plan holds it (``stacks[].front``): a dict of its own."""
        return ordered(self.spec.written, {**self.spec.fields(), **self.derived()})


class FrontKind(ABC):
    """A front kind. Subclasses set the class attributes and implement :meth:`check`; the registry holds one
    instance of each."""

    name: ClassVar[str]
    # Where messages, the schemas' enums and the docs list it: the registry sorts its kinds by it, each
    # kind its own number.
    order: ClassVar[int]
    # The role that runs it (its stacks are that role's `<role>_stacks`); None for no front.
    role: ClassVar[str | None] = None
    # The front.* fields its role's templates read besides the stack's own (the role's argument_specs
    # declare them as sub-options of `front`; the plan hands the role only those).
    role_fields: ClassVar[tuple[str, ...]] = ()
    # How an unknown key's message names the section ("key of {called}").
    called: ClassVar[str]
    # Its keys that take one of a few words, besides kind, in the order the plan prints them.
    choices: ClassVar[dict[str, Choice]] = {}
    # The choice whose value decides which integer keys it takes (Apache's mpm); None when they are one set.
    variant: ClassVar[str | None] = None
    # Its integer keys, by the value of `variant` ("" without one), in the order the plan prints them.
    integers: ClassVar[dict[str, dict[str, Bounded]]] = {}

    def key_of(self, value: str = "") -> str:
        """What an unknown key is, in messages: of the section, or of it with its ``variant`` ``value``."""
        return f"key of {self.called}" + (f" with {self.variant} {value}" if self.variant else "")

    @property
    def direct(self) -> bool:
        """Whether there is no front: an app server listens on the stack's port itself, bound to TCP."""
        return self.role is None

    @abstractmethod
    def check(self, front: Mapping[str, Any], who: str) -> FrontSpec:
        """The stack's ``front`` section (its kind is this one) checked, with its defaults. StackError
        (:func:`benchstack.kinds.stackfields.err`) on the first problem."""

    def serve_problem(self, front: FrontSpec, app: AppKind) -> tuple[str, str] | None:
        """(field, message) when the front cannot serve the app itself, without an app server (the app kind
        said it can). None by default."""
        return None

    def proxy_problem(self, front: FrontSpec, server: ServerKind) -> tuple[str, str] | None:
        """(field, message) when the front cannot stand before an app server of kind ``server`` (a protocol
        it does not speak). None by default."""
        return None

    def check_server(self, server: ServerSpec, port: object, who: str) -> None:
        """Check the stack's server (its options filled in) for what this front asks of it. Nothing by
        default: any instance count and bind."""
        return

    def resolve(self, front: FrontSpec, stack_name: str, app: AppKind, server: ServerKind | None) -> Front:
        """The resolved section of a valid stack called ``stack_name``, whose app the front serves itself
        (``server`` None) or through an app server of kind ``server``. Nothing derived by default: the app's
        folder and entry are the app's fields, the upstream is the stack's."""
        return Front(front)

    def label(self, front: Front) -> str:
        """How a health check through the front names it (``front``: a resolved stack's)."""
        return self.name

    def needs(self, stacks: Sequence[Stack]) -> dict[str, list[str]]:
        """What the plan's ``needs`` holds for the front's role, from the resolved ``stacks`` it fronts."""
        return {}
