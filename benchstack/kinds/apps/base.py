"""What the rest of bench-stack asks an app kind's adapter (:mod:`benchstack.kinds.apps`).

One adapter per kind holds everything that differs between apps: the runtime it runs on, the entry file a
deployment of it holds, the answers every deployment must give (its default ``app.checks``), what the
runtime roles install for the bundled app, whether a user's app of it brings a Gemfile, and who serves it:
an app server, or its front (a static folder, an app inside Apache), with the fronts that can.

The checks of an ``app`` section are the same for every kind (:meth:`AppKind.check_app`); what they ask
of the kind is its attributes. How an app reaches the target (bundled, ``app.dir``, ``app.src``,
``app.git``) is :mod:`benchstack.kinds.apps.deploy`'s; ``app.env`` and ``app.checks`` are
:mod:`benchstack.kinds.apps.fields`'.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from benchstack.common.inputs import shown
from benchstack.kinds.apps.deploy import check_user_app
from benchstack.kinds.apps.fields import check_env, check_problems
from benchstack.kinds.apps.section import USER_DEPLOYS, App, Bundle, Check, Deployment, Runtime
from benchstack.kinds.stackfields import Roots, err, mapping, safe_path_problem, typed_keys

# A Ruby version rbenv can install (3.1.2, 3.3.0-preview1, ...); it names a folder on the target.
RUBY_VERSION_RE = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(-[a-z0-9]+)?$")
RUNTIME_KEYS = {"kind", "version"}


def hello_checks(kind: str) -> list[dict[str, str]]:
    """The answers of a hello app: GET / and GET /hello/:name, like the Sinatra app."""
    return [
        {"path": "/", "body": f"Hello World! I am {kind}!"},
        {"path": "/hello/bar", "body": "Hello bar!"},
    ]


class AppKind:
    """An app kind. Subclasses set the class attributes (and :meth:`checks` when theirs are not a hello
    app's); the registry holds one instance of each."""

    name: ClassVar[str]
    # Where messages, the schemas' enums and the docs list it: the registry sorts its kinds by it, each
    # kind its own number.
    order: ClassVar[int]
    # The runtime it runs on (ruby, perl, python, php), none for an app its front serves ...
    runtime: ClassVar[str]
    # ... and the interface an app server serves it through (rack, psgi, wsgi, asgi, php): every server kind
    # of that interface serves it (ServerKind.interface); None when only its front serves it.
    interface: ClassVar[str | None] = None
    # The file a deployment holds (the bundled app's, which a user's app folder must have too); None for an
    # app whose code is in the front's config (nothing to deploy).
    entry: ClassVar[str | None]
    # A few words after the entry in the docs' table of app kinds: what it must do, or where the code is
    # without one.
    entry_note: ClassVar[str] = ""
    # The fronts that can serve it without an app server, the first the one messages suggest ...
    fronts: ClassVar[tuple[str, ...]] = ()
    # ... and whether they always do (static files, an app inside Apache) or only when the stack has no
    # server (PHP: mod_php, or php-fpm behind a front).
    front_only: ClassVar[bool] = False
    # What answers inside an Apache front when the front serves it (the front's handler).
    apache_handler: ClassVar[str | None] = None
    # What the runtime roles install for the bundled app: gems (ruby role), Python packages (python role's
    # venv), Perl modules as CPAN distributions (perl role).
    gems: ClassVar[tuple[str, ...]] = ()
    pip: ClassVar[tuple[str, ...]] = ()
    perl: ClassVar[tuple[str, ...]] = ()
    # Whether a user's app of it runs from its own bundle (a Gemfile: Bundler installs it, the server runs
    # through `bundle exec`).
    bundler: ClassVar[bool] = False

    def checks(self) -> list[dict[str, str]]:
        """The answers every deployment must give (``app.checks``' default): a hello app's."""
        return hello_checks(self.name)

    @property
    def user_gems(self) -> tuple[str, ...]:
        """The gems a user's app of it needs besides its own bundle's."""
        return ("bundler",) if self.bundler else ()

    def served_by_front(self, front: str, server: object) -> bool:
        """Whether the stack's front serves the app itself (no app server), given the stack's front kind and
        ``server`` section."""
        return self.front_only or (not server and front in self.fronts)

    def front_problem(self, front: str) -> str | None:
        """Why the front kind ``front`` cannot serve the app itself; None when it can."""
        if front == "none":
            return f"app {self.name} needs a front ({self.fronts[0]})"
        if front not in self.fronts:
            return f"app {self.name} needs front.kind {' or '.join(self.fronts)}"
        return None

    @property
    def server_hint(self) -> str:
        """What a stack of it without a server could do instead, for the message that asks for one."""
        if self.fronts and not self.front_only:
            return f" (or front.kind {self.fronts[0]}, which runs it with {self.apache_handler})"
        return ""

    def bundle(self, user: str, app_name: str, app_dir: str) -> Bundle | None:
        """Where Bundler keeps a user's app's gems and config (under ``user``, the users' apps folder);
        None for a kind without a bundle."""
        if not self.bundler:
            return None
        # Bundler reads these from the stack's env file for `bundle exec` and from the install command: a
        # per-app gem folder, and a config folder of its own so no .bundle/config of the app overrides them.
        bundle = f"{user}/.bundle/{app_name}"
        return Bundle(path=bundle, gemfile=f"{app_dir}/Gemfile", app_config=bundle)

    def check_app(
        self, app: Mapping[str, Any], who: str, roots: Roots, base_dir: Path | None, stack_name: object
    ) -> tuple[App | None, list[str]]:
        """Check the stack's ``app`` section of this kind (its keys are known): the section with its
        defaults and derived fields (entry, deploy, name, dir, a user app's source and bundle, env, checks),
        or None and every problem found. A relative ``app.src`` is taken from ``base_dir``."""
        given = [key for key in ("dir", "src", "git") if key in app]
        if len(given) > 1:
            return None, [
                f"{who}: app.{given[0]} and app.{given[1]}: give one: app.dir is a folder already "
                "on the target, app.src a folder on the controller, app.git a repository "
                f"(src and git are deployed to {roots.apps.rstrip('/')}/user/NAME, their app.dir)"
            ]
        deploy = given[0] if given else "bundled"
        problems = []
        if "name" in app and deploy not in USER_DEPLOYS:
            problems.append(f"{who}: app.name: names an app deployed from app.src or app.git only")
        name = app.get("name", stack_name if deploy in USER_DEPLOYS else None)
        user: Deployment | None = None
        if deploy in USER_DEPLOYS:
            user, more = check_user_app(self, who, app, deploy, name, roots, base_dir)
            problems += more
            app_dir = user.dir if user else None
        else:
            app_dir = app.get("dir", f"{roots.apps.rstrip('/')}/{self.name}")
            if problem := safe_path_problem(app_dir):
                problems.append(f"{who}: app.dir: {problem}")
        env, more = check_env(who, app)
        problems += more
        checks = app.get("checks", self.checks())
        problems += check_problems(who, checks)
        if problems:
            return None, problems
        return App(
            kind=self.name,
            entry=self.entry,
            deploy=deploy,
            name=name,
            dir=str(app_dir),
            env=env,
            checks=tuple(Check(path=c["path"], body=c["body"]) for c in checks),
            user=user,
            written=tuple(app),
        ), []

    def check_runtime(self, s: Mapping[str, Any], who: str) -> Runtime:
        """Check the stack's ``runtime`` section (default: the kind's runtime); only a Ruby stack may name a
        version (the ruby role's rbenv method installs it)."""
        runtime = mapping(s, "runtime", {"kind": self.runtime}, who)
        if runtime.get("kind", self.runtime) != self.runtime:
            raise err(who, "runtime.kind", f"app {self.name} runs on {self.runtime}")
        typed_keys(who, "runtime", runtime, "key", keys=RUNTIME_KEYS, options={})
        written = tuple(runtime) if "runtime" in s else ()
        if "version" not in runtime:
            return Runtime(kind=self.runtime, written=written)
        version = runtime["version"]
        if self.runtime != "ruby":
            raise err(who, "runtime.version", "only a ruby runtime takes a version (installed with rbenv)")
        if not isinstance(version, str) or not RUBY_VERSION_RE.fullmatch(version):
            raise err(
                who, "runtime.version", f"must be a Ruby version string such as '3.1.2', not {shown(version)}"
            )
        return Runtime(kind=self.runtime, version=version, written=written)


class EmbeddedApp(AppKind):
    """An app that runs inside Apache (mod_lua, mod_mruby): no app server, no runtime of its own. Its
    handler is its kind; it answers ``Hello World! I am KIND!`` at ``/``, or at its script's path."""

    runtime = "none"
    fronts = ("apache",)
    front_only = True
    # The Apache module it runs in.
    module: ClassVar[str]

    @property  # the handler is the app's own name: a property where other apps set a class value
    def apache_handler(self) -> str:  # type: ignore[override]
        return self.name

    def checks(self) -> list[dict[str, str]]:
        return [{"path": f"/{self.entry or ''}", "body": f"Hello World! I am {self.name}!"}]

    def front_problem(self, front: str) -> str | None:
        if front == "none":
            return super().front_problem(front)
        if front not in self.fronts:
            return f"app {self.name} runs inside Apache ({self.module}): it needs front.kind apache"
        return None
