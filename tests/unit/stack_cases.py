"""What benchstack.plan.stacks derives, for every shipped experiment and for a matrix of app kind x front x
server x bind, as tests/data/stacks/resolved.json holds it (test_stacks_golden.py): the resolved stacks and
what the plan derives from them (needs, health checks, user apps, role projections, port warnings), or the
problems a stack is refused with. The file was written before app kinds and fronts moved into adapters
(benchstack.kinds.apps, benchstack.kinds.fronts; main at b9fc506); a change to it is a change of the plan.

Regenerate (only for an intended change of the plan, and say so in the commit):
``.venv/bin/python tests/unit/stack_cases.py``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchstack.kinds.apps.deploy import user_apps  # noqa: E402
from benchstack.kinds.stackfields import DEFAULT_ROOTS, Roots, StackError  # noqa: E402
from benchstack.plan.experiment import MAX_STACKS  # noqa: E402
from benchstack.plan.readers import front_checks, instance_checks, needs, port_warnings  # noqa: E402
from benchstack.plan.rolecontract import role_stacks  # noqa: E402
from benchstack.plan.stacks import Stack, resolve_stacks  # noqa: E402

GOLDEN = ROOT / "tests" / "data" / "stacks" / "resolved.json"
# Every experiment the project ships or runs: the catalogue, the e2e test's, the Molecule scenarios'; and the
# corpus of bad inputs, whose stacks are refused (or pass, when only their load section is bad).
EXPERIMENTS = sorted(
    [
        *(ROOT / "experiments").glob("*.yml"),
        ROOT / "tests" / "e2e" / "experiment.yml",
        *(ROOT / "molecule").glob("*/experiment.yml"),
        *(p for p in (ROOT / "tests" / "bad-inputs").glob("*.yml") if not p.with_suffix(".links").exists()),
    ]
)
# Written out, not read from the registries when the cases run: a kind that left one would leave the matrix
# unnoticed. APPS, FRONT_KINDS and SERVERS are written by scripts/kind_files.py: a kind that leaves a registry
# shows in its diff. FRONTS are the fronts' variants the matrix tries.
# BEGIN app-kinds: written by scripts/kind_files.py from benchstack.kinds.apps
APPS = tuple("sinatra psgi wsgi asgi php static lua-inline lua-file mruby-inline mruby-file".split())
# END app-kinds
# BEGIN front-kinds: written by scripts/kind_files.py from benchstack.kinds.fronts
FRONT_KINDS = tuple("none nginx apache".split())
# END front-kinds
# BEGIN server-kinds: written by scripts/kind_files.py from benchstack.kinds.servers
SERVERS = (
    "thin",
    "webrick",
    "unicorn",
    "puma",
    "starlet",
    "starman",
    "gunicorn",
    "uvicorn",
    "php-fpm",
    "passenger",
    "waitress",
)
# END server-kinds
FRONTS: dict[str, dict[str, Any] | None] = {
    "default": None,
    "none": {"kind": "none"},
    "nginx": {"kind": "nginx"},
    "nginx-stock": {"kind": "nginx", "profile": "stock"},
    "apache": {"kind": "apache"},
    "apache-prefork": {"kind": "apache", "mpm": "prefork", "max_request_workers": 300},
    "apache-worker": {"kind": "apache", "mpm": "worker", "threads_per_child": 10, "max_request_workers": 40},
}
BINDS = ("default", "unix", "tcp")
OTHER_ROOTS = Roots(run="/run/bench-other", apps="/srv/bs-apps", units="/etc/bench-other/units")


def derived(stacks: Sequence[Stack], roots: Roots = DEFAULT_ROOTS) -> dict[str, Any]:
    """The resolved stacks and what the plan derives from them alone, as the plan's fact holds them."""
    return {
        "stacks": [s.to_dict() for s in stacks],
        "needs": needs(stacks).to_dict(),
        "instance_checks": [c.to_dict() for c in instance_checks(stacks)],
        "front_checks": [c.to_dict() for c in front_checks(stacks, "bench-target")],
        "user_apps": user_apps(stacks, roots),
        "role_stacks": role_stacks(stacks),
        "port_warnings": port_warnings(stacks),
    }


def outcome(stacks: object, roots: Roots = DEFAULT_ROOTS, base_dir: Path | None = None) -> dict[str, Any]:
    try:
        return derived(resolve_stacks(stacks, roots, base_dir), roots)
    except StackError as exc:
        return {"problems": exc.problems}


def matrix_stack(app: str, front: str, server: str | None, bind: str) -> dict[str, Any]:
    stack: dict[str, Any] = {"name": "m", "port": 8100, "app": {"kind": app}}
    if server is not None:
        stack["server"] = {"kind": server, "instances": 2, **({} if bind == "default" else {"bind": bind})}
    if FRONTS[front] is not None:
        stack["front"] = dict(FRONTS[front])
    return stack


def matrix() -> dict[str, tuple[list[dict[str, Any]], Roots]]:
    """Case id -> (stacks, roots): every app kind with every front and every server (or none) in each bind;
    the same on other roots for a few; and stacks that differ only where adapters decide (env, checks,
    options, a user's app)."""
    cases: dict[str, tuple[list[dict[str, Any]], Roots]] = {}
    for app in APPS:
        for front in FRONTS:
            for server in (None, *SERVERS):
                for bind in BINDS if server else ("default",):
                    stack = matrix_stack(app, front, server, bind)
                    cases[f"{app}/{front}/{server or '-'}/{bind}"] = ([stack], DEFAULT_ROOTS)
    for app, server in (("sinatra", "puma"), ("php", "php-fpm"), ("static", None), ("mruby-file", None)):
        for front in FRONT_KINDS:
            stack = matrix_stack(app, front, server, "default")
            cases[f"roots/{app}/{front}/{server or '-'}"] = ([stack], OTHER_ROOTS)
    extra: dict[str, dict[str, Any]] = {
        "env-static": {"app": {"kind": "static", "env": {"A": "1"}}, "front": {"kind": "nginx"}},
        "env-thin": {"app": {"kind": "sinatra", "env": {"A": 1}}, "server": {"kind": "thin"}},
        "checks-own": {
            "app": {"kind": "wsgi", "checks": [{"path": "/x", "body": "y"}]},
            "server": {"kind": "gunicorn"},
        },
        "dir-own": {"app": {"kind": "lua-file", "dir": "/srv/lua"}, "front": {"kind": "apache"}},
        "inline-src": {"app": {"kind": "lua-inline", "src": "apps"}, "front": {"kind": "apache"}},
        "inline-git": {
            "app": {"kind": "mruby-inline", "git": {"repo": "/r.git", "version": "v1"}},
            "front": {"kind": "apache"},
        },
        "git-psgi": {
            "app": {"kind": "psgi", "git": {"repo": "/r.git", "version": "main", "moving_ref": True}},
            "server": {"kind": "starman"},
            "front": {"kind": "nginx"},
        },
        "git-sinatra": {
            "app": {"kind": "sinatra", "name": "gs", "git": {"repo": "/r.git", "version": "abc1234"}},
            "runtime": {"kind": "ruby", "version": "3.1.2"},
            "server": {"kind": "unicorn"},
            "front": {"kind": "apache", "mpm": "prefork"},
        },
        "runtime-wrong": {"app": {"kind": "php"}, "runtime": {"kind": "ruby"}, "front": {"kind": "apache"}},
        "runtime-version-php": {
            "app": {"kind": "php"},
            "runtime": {"kind": "php", "version": "8.2.0"},
            "front": {"kind": "apache", "mpm": "prefork"},
        },
        "mod-php-event": {"app": {"kind": "php"}, "front": {"kind": "apache", "mpm": "event"}},
        "front-unknown-key": {"app": {"kind": "static"}, "front": {"kind": "nginx", "mpm": "event"}},
        "front-none-key": {
            "app": {"kind": "sinatra"},
            "server": {"kind": "thin"},
            "front": {"kind": "none", "x": 1},
        },
        "front-profile-bad": {"app": {"kind": "static"}, "front": {"kind": "nginx", "profile": "fast"}},
        "front-kind-bad": {"app": {"kind": "static"}, "front": {"kind": "caddy"}},
        "front-not-mapping": {"app": {"kind": "static"}, "front": ["nginx"]},
        "apache-mpm-bad": {"app": {"kind": "static"}, "front": {"kind": "apache", "mpm": "winnt"}},
        "apache-prefork-spares": {
            "app": {"kind": "static"},
            "front": {"kind": "apache", "mpm": "prefork", "min_spare_servers": 20, "max_spare_servers": 10},
        },
        "apache-threads-multiple": {
            "app": {"kind": "static"},
            "front": {"kind": "apache", "threads_per_child": 30, "max_request_workers": 100},
        },
        "apache-spare-threads": {
            "app": {"kind": "static"},
            "front": {"kind": "apache", "min_spare_threads": 50, "max_spare_threads": 60},
        },
        "apache-prefork-threads-key": {
            "app": {"kind": "static"},
            "front": {"kind": "apache", "mpm": "prefork", "threads_per_child": 10},
        },
        "apache-big": {
            "app": {"kind": "sinatra"},
            "server": {"kind": "puma", "bind": "tcp", "port_base": 30000},
            "front": {
                "kind": "apache",
                "mpm": "worker",
                "threads_per_child": 64,
                "max_request_workers": 2048,
            },
        },
        "app-kind-bad": {"app": {"kind": "rails"}, "server": {"kind": "thin"}},
        "app-unknown-key-and-kind": {"app": {"kind": "x", "y": 1}},
        "server-not-mapping": {"app": {"kind": "wsgi"}, "server": "gunicorn"},
        "no-server-php": {"app": {"kind": "php"}, "front": {"kind": "nginx"}},
        "low-port-direct": {"port": 80, "app": {"kind": "sinatra"}, "server": {"kind": "thin"}},
        "low-port-front": {"port": 80, "app": {"kind": "static"}, "front": {"kind": "nginx"}},
        "bad-name-and-front": {"name": "Bad Name", "app": {"kind": "static"}, "front": {"kind": "iis"}},
        "app-bad-and-front-bad": {"app": {"kind": "static", "dir": "a b"}, "front": {"kind": "iis"}},
    }
    for case, fields in extra.items():
        stack = {"name": "x", "port": 8200, **fields}
        cases[f"extra/{case}"] = ([stack], DEFAULT_ROOTS)
    return cases


def relative(value: Any) -> Any:
    """``value`` with the project's folder written as ``<root>``: the golden file holds on any checkout."""
    return json.loads(json.dumps(value).replace(str(ROOT), "<root>"))


def _mapping_first(text: str) -> bool:
    """Whether the YAML's first node opens a mapping: any other document is no mapping whatever follows
    (deep-nesting.yml's 100,000 brackets took ~0.6 s of the pure-Python scanner, to a RecursionError)."""
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.NodeEvent | yaml.CollectionStartEvent):
            return isinstance(event, yaml.MappingStartEvent)
    return False


@functools.cache
def experiment_stacks(path: Path) -> object:
    """The experiment file's stacks as written; None for a file that is no YAML mapping (bad inputs). Read
    once: golden() asks for each file twice. Callers must not change what it returns."""
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text) if _mapping_first(text) else None
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError):  # deep-nesting.yml
        return None
    stacks = data.get("stacks") if isinstance(data, dict) else None
    # More stacks than an experiment may hold are refused before any is resolved (stacks-1001.yml).
    return None if isinstance(stacks, list) and len(stacks) > MAX_STACKS else stacks


def experiment_outcome(path: Path) -> dict[str, Any]:
    return relative(outcome(experiment_stacks(path), base_dir=path.parent))


def digest(value: Any, sort_keys: bool = True) -> str:
    """The first 16 hex digits of the sha256 of ``json.dumps(value, sort_keys=sort_keys)``."""
    return hashlib.sha256(json.dumps(value, sort_keys=sort_keys).encode()).hexdigest()[:16]


def digests(result: dict[str, Any]) -> dict[str, Any]:
    """A resolved outcome as digests: one per stack (by name) and one per derived part, so a difference
    names the stack or part it is in; and one of the whole in its keys' order (``as_built``), so the plan's
    JSON stays the same byte for byte, not only once sorted."""
    return {
        "stacks": {s["name"]: digest(s) for s in result["stacks"]},
        **{part: digest(value) for part, value in result.items() if part != "stacks"},
        "as_built": digest(result, sort_keys=False),
    }


def golden() -> dict[str, Any]:
    """Every case's outcome: the problems a case is refused with in full (each list once, with the cases
    that get it), a resolved case as :func:`digests` (in full they would be megabytes)."""
    outcomes = {str(p.relative_to(ROOT)): experiment_outcome(p) for p in EXPERIMENTS if experiment_stacks(p)}
    outcomes |= {case: relative(outcome(stacks, roots)) for case, (stacks, roots) in matrix().items()}
    refused: dict[str, list[str]] = {}
    for case, result in outcomes.items():
        if "problems" in result:
            refused.setdefault("\n".join(result["problems"]), []).append(case)
    return {
        "resolved": {case: digests(result) for case, result in outcomes.items() if "problems" not in result},
        "refused": refused,
    }


if __name__ == "__main__":
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(golden(), sort_keys=True, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN.relative_to(ROOT)}")
