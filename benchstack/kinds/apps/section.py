"""A stack's ``app`` and ``runtime`` sections, typed: checked, with their defaults and what follows from
them (where the app lives on the target, how it gets there, its bundle), and printed for the plan by
:meth:`App.as_dict` and :meth:`Runtime.as_dict`. An app's derived fields are checked themselves (its folder
must be a safe path, a source folder must hold the entry file), so the check builds them
(:meth:`benchstack.kinds.apps.AppKind.check_app`): an ``App`` exists only for a valid section."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchstack.common.inputs import masked
from benchstack.kinds.stackfields import ordered

# Stacks whose app.dir is the bundled app's folder (or the user's own folder already on the target).
BUNDLED_DEPLOYS = ("bundled", "dir")
# Deployed by the webapp role from the controller or a repository, to APPS/user/NAME.
USER_DEPLOYS = ("src", "git")


@dataclass(frozen=True)
class Check:
    """One answer every deployment of the app must give: GET ``path`` answers ``body``."""

    path: str
    body: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "body": self.body}


@dataclass(frozen=True)
class GitSource:
    """``app.git``: a repository and the version to deploy (a moving ref is resolved on the target)."""

    repo: str
    version: str
    moving_ref: bool
    written: tuple[str, ...] = ()

    @property
    def shown_repo(self) -> str:
        """The repository with the credentials of its URL masked: what the plan's stacks, run.json and
        every message hold (the clone alone gets :attr:`repo`, through the plan's ``git_repos``)."""
        return masked(self.repo)

    def as_dict(self) -> dict[str, Any]:
        return ordered(
            self.written, {"repo": self.shown_repo, "version": self.version, "moving_ref": self.moving_ref}
        )


@dataclass(frozen=True)
class SourceFolder:
    """``app.src``: a folder on the controller, read here (:func:`benchstack.kinds.apps.userapp.scan`)."""

    path: str
    sha256: str
    bytes: int
    files: int
    dependency_files: tuple[str, ...]
    lock_sha256: dict[str, str]  # dependency lock file -> its sha256


@dataclass(frozen=True)
class Bundle:
    """Where Bundler keeps a user's app's gems and config on the target."""

    path: str
    gemfile: str
    app_config: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "gemfile": self.gemfile, "app_config": self.app_config}


@dataclass(frozen=True)
class Deployment:
    """A user's app deployed from ``app.src`` or ``app.git``: its folder on the target, its source, its
    bundle (None for a kind without one)."""

    dir: str
    src: SourceFolder | None
    git: GitSource | None
    bundle: Bundle | None


@dataclass(frozen=True)
class App:
    """A checked ``app`` section with its defaults and derived fields."""

    kind: str
    # The file a deployment holds; None when the app's code is in the front's config.
    entry: str | None
    # bundled, dir, src or git.
    deploy: str
    # A user app's name (its folder under APPS/user); None for the others.
    name: str | None
    dir: str
    env: Mapping[str, str]
    checks: tuple[Check, ...]
    # Set for a user's app (deploy src or git).
    user: Deployment | None = None
    written: tuple[str, ...] = ()

    @property
    def bundle(self) -> Bundle | None:
        return self.user.bundle if self.user else None

    @property
    def src(self) -> SourceFolder | None:
        return self.user.src if self.user else None

    @property
    def git(self) -> GitSource | None:
        return self.user.git if self.user else None

    def as_dict(self) -> dict[str, Any]:
        """The section as the plan holds it (``stacks[].app``): a dict of its own."""
        fields: dict[str, Any] = {
            "kind": self.kind,
            "entry": self.entry,
            "deploy": self.deploy,
            "name": self.name,
            "dir": self.dir,
        }
        if self.src:
            fields |= {
                "src": self.src.path,
                "sha256": self.src.sha256,
                "bytes": self.src.bytes,
                "files": self.src.files,
                "dependency_files": list(self.src.dependency_files),
                "lock_sha256": self.src.lock_sha256,
            }
        if self.git:
            # Known once cloned, on the target.
            fields |= {"git": self.git.as_dict(), "dependency_files": None}
        if self.user:
            fields["bundle"] = self.user.bundle.as_dict() if self.user.bundle else None
        fields |= {"env": dict(self.env), "checks": [check.as_dict() for check in self.checks]}
        return ordered(self.written, fields)


@dataclass(frozen=True)
class Runtime:
    """A checked ``runtime`` section: the app kind's runtime, and a Ruby version for rbenv."""

    kind: str
    version: str | None = None
    written: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The section as the plan holds it (``stacks[].runtime``)."""
        fields = {"kind": self.kind, **({"version": self.version} if self.version is not None else {})}
        return ordered(self.written, fields)
