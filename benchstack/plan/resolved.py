"""The resolved plan: an experiment read, validated and resolved once per run, in Python.

``bench-stack.yml`` compiles it in its first play (``playbooks/plan.yml``, the ``bench_plan`` action) and
sets it as the fact ``bench_plan`` on every host, before any host is touched. Later plays hand its fields
to the roles, templates print them, and verify, the benchmark and the report read the same plan: no path,
address or unit name is derived twice. ``bench-stack experiment`` compiles the same plan, so the command line
and the playbook accept and refuse exactly the same experiments.

The plan is typed (:class:`ResolvedPlan`: the typed experiment, its resolved stacks
(:class:`benchstack.plan.stacks.Stack`) and what is derived from them, each host's :class:`HostPlan`); every
function here that derives a part of it reads the stacks' fields. :meth:`ResolvedPlan.to_dict` makes the
fact, the one place the plan's stacks become dicts; the plugins that only read the fact (bench_run_info:
:func:`run_record`; bench_extra_cells: :func:`experiment_of`) take it as a mapping.

The fact holds:

* ``experiment``: name, description, source file, the stacks as written and the load plan with its
  defaults (run.json records this as the experiment as run), and ``sha256`` (benchstack.results.runfolder);
* ``roots``: the run, app and unit-config roots every derived path hangs from;
* ``stacks``: every stack resolved (:func:`benchstack.plan.stacks.resolve_stacks`, each printed by
  :meth:`benchstack.plan.stacks.Stack.to_dict`), its ``app.env`` values apart (:func:`env_apart`);
* ``role_stacks``: per role that serves stacks (app_server, nginx, apache), the stacks it serves with only
  the fields its argument_specs declare (:mod:`benchstack.plan.rolecontract`): what provision.yml hands it;
* ``needs``: runtimes, packages, apps, fronts and servers the targets need;
* ``role_units`` and ``role_made``: per OS family the roles' units and the files and units each makes
  (:func:`benchstack.plan.roles.role_units`, :func:`benchstack.plan.roles.role_made`), which
  provisioning keeps running and records; ``stack_units``: per OS family, per stack the units that serve it
  (:func:`benchstack.plan.roles.stack_units`), each checked before every cell of the stack;
* ``hosts``: per host of the inventory's targets and loadgens (:func:`with_hosts`; none when the command line
  compiles the plan), the ``roles`` it runs in order, and for a loadgen its ``target``, the ``address`` it
  loads it at, its ``peers``, ``loopback``, and the requests verify sends through the fronts
  (``front_checks``); for every host the names it must resolve (``dns_names``); and ``mode``, the run's
  (loopback when every loadgen loads itself);
* ``log_shipping``: only when the experiment ships its fronts' access logs (``logs``,
  :func:`benchstack.plan.logship.plan_fact`): the store, the run's own key prefix, the fronts shipped from and
  the stacks measured with shipping on; the targets then run the log_shipper role after their fronts;
* ``user_apps``: every app deployed from ``app.src`` or ``app.git``
  (:func:`benchstack.kinds.apps.deploy.user_apps`): its folders on the target, its source (a content hash
  computed here, on the controller, or a git repository and version) and the key the webapp role compares
  with the target's deployment record; a repository's URL masked where it holds credentials, and
  ``git_repos``: app name -> the URL as written, for those alone (the clone task reads it; -v prints
  the user apps' items);
* ``owned``: what the stacks own under the roots, by role (:func:`benchstack.plan.roles.owned`): the rest
  of what bench-stack wrote there for a stack is removed before the app servers start (provision.yml);
* ``instance_checks``: one request per app server instance and expected answer (verify);
* ``targets``: the targets the run measures (those the loadgens load, in inventory order; none when the
  command line compiles the plan), and ``target_order``: ``sequential`` (one target after the other) or
  ``parallel`` (:mod:`benchstack.plan.targets`), and ``target_groups``: the targets measured together, group
  after group (``[[a], [b]]``, or ``[[a, b]]`` in parallel);
* ``seed``: what each round's random order is drawn from (``load.seed``, or one per run folder:
  :func:`seed_for`; None from the command line without ``load.seed``: rotated stacks);
* ``cells``: every cell in measuring order, on every target (each names its target; with several targets
  the ids start with the target), and ``progress``: per cell id, "i/n" and the seconds the cells after it
  take at least (their durations, warm-ups and pauses; a number of requests at the rate no stack beats,
  :func:`requests_seconds`; targets measured in parallel count once);
* ``warnings``: what is allowed but probably wrong (a stack on port 22), and the limits below that the
  user lifted.

Limits: a plan whose cells take longer than :data:`MAX_PLAN_SECONDS` at least (request counts included), or
whose stacks keep more
than :data:`MAX_PROCESSES` app server processes on a target, is refused unless the user says yes
(``bench-stack experiment --yes``, ``-e bench_yes=true``): both are sometimes meant, and neither should
happen by a slip of a zero. More than :data:`MAX_CELLS` cells are refused always.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from benchstack.common.inputs import InputError, masked, read_bounded, shown, user_path
from benchstack.kinds.apps.deploy import git_credentials, user_apps
from benchstack.kinds.apps.fields import env_file_line
from benchstack.kinds.servers import processes as server_processes
from benchstack.kinds.stackfields import DEFAULT_ROOTS, Roots
from benchstack.plan import pyreqs
from benchstack.plan.experiment import (
    NAME_RE,
    Experiment,
    ExperimentError,
    ExperimentFileError,
    cells,
    load_experiment,
    load_points,
)
from benchstack.plan.loadplan import Load
from benchstack.plan.logship import plan_fact, shipped_fronts
from benchstack.plan.readers import (
    FrontCheck,
    InstanceCheck,
    Needs,
    front_checks,
    instance_checks,
    needs,
    port_warnings,
    stack_names,
)
from benchstack.plan.rolecontract import role_stacks
from benchstack.plan.roles import FAMILIES, host_roles, owned, role_made, role_units, stack_units
from benchstack.plan.stacks import Stack
from benchstack.plan.targets import PARALLEL, SEQUENTIAL, target_cells
from benchstack.plan.topology import loadgen_places, loadgen_targets, mode
from benchstack.records.cellplan import CellPlan
from benchstack.results.runfolder import check_run_dir, experiment_hash

PLAN_SCHEMA = "bench-stack/plan/v1"
DEFAULT_EXPERIMENT = "sinatra-thin-nginx"
# The least time the planned cells take (durations, warm-ups, pauses, request counts) above which the plan
# needs a yes: 5,000 levels of 600 s were accepted without a word, 34.7 days of cells; so were ab cells of
# 1,000,000 requests at c=1 with as large a warm-up, 100 repetitions and 10 stacks (issue 44: days of load).
MAX_PLAN_SECONDS = 2 * 3600
# A cell bounded by a number of requests (ab, a warm-up) takes at least that many requests at a rate no
# stack reaches on the hosts bench-stack runs on, so the estimate is a floor, like a duration: one
# connection waits for each answer, and a loopback round trip through a server is 50 us at the very least
# (20,000 a second); all connections together, 50,000 a second (about twice nginx's static file on the
# 2-core hosts here). An open-loop tool's (httperf) warm-up runs at its offered rate.
REQUESTS_PER_S_PER_CONNECTION = 20_000
MAX_REQUESTS_PER_S = 50_000
# App server processes on one target (its stacks all run at once) above which the plan needs a yes. A Ruby
# or Python worker holds 30 to 100 MB, so 256 of them are 8 to 25 GB: more than the small hosts bench-stack
# is run on, which would swap or lose stacks to the OOM killer, and the cells would measure that. 64
# unicorn instances of 64 workers were 4,160 Ruby processes.
MAX_PROCESSES = 256
# Cells of one run, yes or not: each is at least a pause and a round of tasks, and the plan, a fact on every
# host, holds each one (10,000 cells are about 5 MB of it).
MAX_CELLS = 10_000
YES_HINT = "if you mean it, say yes: bench-stack experiment --yes, or -e bench_yes=true"
# The controller's key for the fingerprints of app.env values (:func:`env_key`): this variable names the
# file, else it lives in the user's configuration folder.
ENV_KEY_VARIABLE = "BENCH_STACK_KEY_FILE"
ENV_KEY_BYTES = 32


def experiment_path(term: str | os.PathLike[str], project_dir: Path) -> Path:
    """The file of an experiment given by name (``experiments/NAME.yml``) or by path (anything with a ``/``
    or a ``.yml``/``.yaml`` suffix)."""
    text = str(term)
    if "/" in text or text.endswith((".yml", ".yaml")):
        try:
            return user_path(text)
        except InputError as exc:
            raise ExperimentFileError(str(exc), shown(text)) from None
    path = project_dir / "experiments" / f"{text}.yml"
    # A bare term that is not a name is looked up nowhere (300 characters made the lookup itself fail).
    if not NAME_RE.match(text) or not path.exists():
        known = sorted(p.stem for p in (project_dir / "experiments").glob("*.yml"))
        missing = f"no {path}" if NAME_RE.match(text) else "not a name of letters, digits, '.', '_' or '-'"
        raise ExperimentError(
            [f"no experiment named {shown(text)}: {missing} (there are: {', '.join(known) or 'none'})"]
        )
    return path


@dataclass(frozen=True)
class HostPlan:
    """One host of the inventory's targets and loadgens, as the plan places it (the plan's ``hosts[HOST]``):
    the roles it runs in order; for a loadgen its ``target``, the ``address`` it loads it at, its ``peers``
    and ``loopback`` (:func:`benchstack.plan.topology.loadgen_places`) and the requests verify sends through
    the fronts; the names it must resolve."""

    roles: tuple[str, ...]
    target: str | None = None
    address: str | None = None
    peers: tuple[str, ...] = ()
    loopback: bool = False
    front_checks: tuple[FrontCheck, ...] = ()
    dns_names: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "roles": list(self.roles),
            "target": self.target,
            "address": self.address,
            "peers": list(self.peers),
            "loopback": self.loopback,
            "front_checks": [check.to_dict() for check in self.front_checks],
            "dns_names": list(self.dns_names),
        }


@dataclass(frozen=True)
class ResolvedPlan:
    """A run's plan (:func:`compile_plan`), typed: the module docstring lists what it holds.
    :meth:`to_dict` makes the fact ``bench_plan`` that every playbook, role and plugin reads, and that
    ``bench-stack experiment --plan`` prints: the one place the plan's stacks become dicts."""

    # The experiment as validated, its stacks resolved with their app.env values.
    experiment: Experiment
    # The experiment as run (the fact's ``experiment``): app.env values as fingerprints, its sha256.
    as_run: Mapping[str, Any]
    roots: Roots
    # The resolved stacks with their app.env values apart (:func:`env_apart`), and those values' env file
    # lines by stack name.
    stacks: tuple[Stack, ...]
    app_env_lines: Mapping[str, tuple[str, ...]]
    needs: Needs
    user_apps: tuple[Mapping[str, Any], ...]
    owned: Mapping[str, Any]
    instance_checks: tuple[InstanceCheck, ...]
    targets: tuple[str, ...]
    parallel: bool
    seed: int | None
    cells: tuple[CellPlan, ...]
    warnings: tuple[str, ...]
    # App name -> its app.git.repo as written, for a URL with credentials (deploy.git_credentials).
    git_repos: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # Set by with_hosts (the inventory's hosts; none from the command line).
    hosts: Mapping[str, HostPlan] = field(default_factory=lambda: MappingProxyType({}))
    mode: str | None = None
    # Set by the plan play (bench_plan).
    results_dir: str | None = None
    run_dir: str | None = None

    @property
    def name(self) -> str:
        return self.experiment.name

    @property
    def sha256(self) -> str:
        """The experiment's content hash (:func:`benchstack.results.runfolder.experiment_hash`)."""
        return str(self.as_run["sha256"])

    @property
    def target_order(self) -> str:
        return PARALLEL if self.parallel else SEQUENTIAL

    def to_dict(self) -> dict[str, Any]:
        """The plan as the fact ``bench_plan`` holds it (the module docstring), in the order of its keys."""
        targets = list(self.targets)
        ships = bool(self.needs.log_shipping)
        fact: dict[str, Any] = {
            "schema": PLAN_SCHEMA,
            "experiment": dict(self.as_run),
            "roots": asdict(self.roots),
            "stacks": [stack.to_dict() for stack in self.stacks],
            "role_stacks": role_stacks(self.stacks),
            "app_env_lines": {name: list(lines) for name, lines in self.app_env_lines.items()},
            "needs": self.needs.to_dict(),
            "role_units": {family: role_units(self.stacks, family, ships) for family in FAMILIES},
            "role_made": {family: role_made(self.stacks, family, ships) for family in FAMILIES},
            "stack_units": {family: stack_units(self.stacks, family) for family in FAMILIES},
            "hosts": {host: place.to_dict() for host, place in self.hosts.items()},
            # Every load tool the loadgens run, warm-ups' included (loadgen_tools).
            "tools": self.experiment.load.tools(),
            "user_apps": [dict(app) for app in self.user_apps],
            "git_repos": dict(self.git_repos),
            "owned": dict(self.owned),
            "instance_checks": [check.to_dict() for check in self.instance_checks],
            "targets": targets,
            "target_order": self.target_order,
            "target_groups": [targets] if self.parallel else [[t] for t in targets],
            "seed": self.seed,
            "cells": [c.to_dict() for c in self.cells],
            "progress": progress(list(self.cells), self.parallel),
            "warnings": list(self.warnings),
        }
        if self.experiment.logs is not None:
            fact["log_shipping"] = plan_fact(self.experiment.logs, self.stacks, self.run_dir)
        if self.results_dir is not None:
            fact["results_dir"] = self.results_dir
        if self.run_dir is not None:
            fact["run_dir"] = self.run_dir
        if self.mode is not None:
            fact["mode"] = self.mode
        return fact


def compile_plan(
    source: str | os.PathLike[str],
    roots: Roots = DEFAULT_ROOTS,
    targets: list[str] | None = None,
    parallel: bool = False,
    seed: int | None = None,
    allow_large: bool = False,
    python_constraints: Sequence[str] | None = None,
    python_versions: Sequence[str] | None = None,
    make_key: bool = True,
) -> ResolvedPlan:
    """The plan of the experiment in ``source`` under ``roots``, measured on ``targets`` (one after the
    other, or all at once when ``parallel``), each round in the random order of ``load.seed`` or else
    ``seed`` (None: rotated stacks, no random order); ExperimentError listing every problem.
    ``allow_large``: the user said yes to a long plan or many processes (they become warnings).
    ``python_constraints`` (default: the python role's) and ``python_versions`` (the targets' Pythons;
    default: the supported distributions') check Python user apps' requirements (benchstack.plan.pyreqs).
    ``make_key``: a run, which makes the controller's fingerprint key when there is none (:func:`env_key`);
    a check (``bench-stack experiment``) reads it where it exists and otherwise changes nothing."""
    exp = _loaded(source, roots, python_constraints, python_versions)
    targets = list(targets or [])
    parallel = parallel and len(targets) > 1
    # Counted before they are made: a list of 100,000 levels would otherwise be expanded first.
    count = exp.load.repetitions * len(exp.stacks) * len(load_points(exp)) * max(1, len(targets))
    if count > MAX_CELLS:
        fewer = "plan fewer levels, stacks, repetitions or targets"
        raise ExperimentError(
            [f"load: {count:_} cells planned, more than {MAX_CELLS:_}: {fewer}"], str(source)
        )
    seed = seed if exp.load.seed is None else exp.load.seed
    planned = target_cells(cells(exp, seed), targets, parallel)
    large = size_problems(exp, planned, parallel)
    if large and not allow_large:
        raise ExperimentError([f"{problem} ({YES_HINT})" for problem in large], str(source))
    has_env = any(isinstance(s.get("app"), dict) and s["app"].get("env") for s in exp.stacks)
    key = env_key(make=make_key) if has_env else b""
    as_run = _as_run(exp, source, key)
    apps = user_apps(exp.resolved, roots)
    stacks, env_lines = env_apart(exp.resolved, key)
    found = needs(exp.resolved)
    if exp.logs is not None:
        found = replace(found, log_shipping=shipped_fronts(exp.resolved))
    return ResolvedPlan(
        experiment=exp,
        as_run=as_run,
        roots=roots,
        stacks=stacks,
        app_env_lines=env_lines,
        needs=found,
        user_apps=tuple(apps),
        owned=owned(exp.resolved, found.app_kinds, apps, roots),
        instance_checks=tuple(instance_checks(exp.resolved)),
        targets=tuple(targets),
        parallel=parallel,
        seed=seed,
        cells=tuple(planned),
        warnings=(*port_warnings(exp.resolved), *(f"{problem} (said yes)" for problem in large)),
        git_repos=git_credentials(exp.resolved),
    )


def _loaded(
    source: str | os.PathLike[str],
    roots: Roots,
    constraints: Sequence[str] | None,
    pythons: Sequence[str] | None,
) -> Experiment:
    """The experiment in ``source``; ExperimentError for its roots or Python user apps' requirements."""
    if problems := roots.problems():
        raise ExperimentError(problems, str(source))
    exp = load_experiment(source, roots)
    constraints = pyreqs.role_constraints() if constraints is None else constraints
    if problems := pyreqs.stack_problems(exp.resolved, constraints, pythons or pyreqs.SYSTEM_PYTHONS):
        raise ExperimentError(problems, str(source))
    return exp


def _as_run(exp: Experiment, source: str | os.PathLike[str], key: bytes) -> dict[str, Any]:
    """The experiment as run (run.json keeps it): as written, but app.env values only as keyed fingerprints
    (they may be secrets); the load section as a mapping (Load.as_dict); its sha256."""
    as_run = {
        "name": exp.name,
        "description": exp.description,
        "source": str(source),
        "stacks": redacted_stacks(exp.stacks, key),
        "load": exp.load.as_dict(),
    }
    if exp.logs is not None:
        as_run["logs"] = exp.logs.as_dict()
    as_run["sha256"] = experiment_hash(as_run)
    return as_run


def with_hosts(
    plan: ResolvedPlan,
    targets: Sequence[str],
    loadgens: Sequence[str],
    chosen: Mapping[str, str | None],
    address: Callable[[str], str],
) -> ResolvedPlan:
    """``plan`` with its ``hosts``: every host of the inventory's ``targets`` and ``loadgens`` groups, the
    roles it runs, and for a loadgen what it loads (:func:`benchstack.plan.topology.loadgen_places`;
    ``chosen``: the loadgens' ``bench_target`` where set; ``address``: where a loadgen reaches a target, asked
    only for the targets some other host loads), and the run's ``mode``
    (:func:`benchstack.plan.topology.mode`). TopologyError when a loadgen's target is not in the targets
    group, or that group is empty."""
    mapping = loadgen_targets(loadgens, targets, chosen) if loadgens else {}
    loaded = {t for lg, t in mapping.items() if t != lg}
    places = loadgen_places(mapping, {t: address(t) for t in targets if t in loaded})
    hosts: dict[str, HostPlan] = {}
    for host in [*targets, *(lg for lg in loadgens if lg not in targets)]:
        roles = tuple(host_roles(plan.needs, host in targets, host in loadgens))
        place = places.get(host)
        if place is None:
            hosts[host] = HostPlan(roles=roles, dns_names=tuple(stack_names(plan.stacks, None)))
            continue
        reached = place.address
        hosts[host] = HostPlan(
            roles=roles,
            target=place.target,
            address=reached,
            peers=place.peers,
            loopback=place.loopback,
            front_checks=tuple(front_checks(plan.stacks, reached)),
            dns_names=tuple(stack_names(plan.stacks, reached)),
        )
    return replace(plan, hosts=MappingProxyType(hosts), mode=mode(mapping))


def run_record(
    plan: Mapping[str, Any],
    inventory: str | None,
    targets: Sequence[str],
    loadgens: Sequence[str],
    facts: Mapping[str, Mapping[str, Any]],
    verify: Any = None,
) -> dict[str, Any]:
    """run.json's content (:func:`benchstack.measure.runner.write_run_info` adds its schema and version), from
    the plan's fact (``plan``: :meth:`ResolvedPlan.to_dict`, as bench_run_info reads it): the plan's
    experiment as run with its cells, seed and target order, the inventory's ``targets`` and
    ``loadgens`` and the run's mode, and what the run learnt of each host of the play, from ``facts``
    (host -> the facts :data:`RUN_FACTS` names, where set): its fingerprint, whether it was as the plan
    says when measuring began (``hosts_match_plan``), what this run's provisioning swept (``swept``: null
    when no host was provisioned), a loadgen's noise floor and a target's DNS-caching probe (null when none
    ran); ``verify``: what verify.yml noted when it ran in this playbook run."""
    probed = [lg for lg in loadgens if lg in facts]
    # A target that skipped the probe registered a result without rows.
    dns = {
        h: f["dns_check_probe_result"]
        for h, f in facts.items()
        if "rows" in (f.get("dns_check_probe_result") or {})
    }
    provisioned = any("bench_provision" in f for f in facts.values())
    return {
        "experiment": {**plan["experiment"], "cells": plan["cells"]},
        "inventory": inventory,
        "targets": list(targets),
        "loadgens": list(loadgens),
        "mode": plan["mode"],
        "seed": plan["seed"],
        "noise_floor": {lg: (facts[lg].get("bench_noise") or {}).get("floor") for lg in probed},
        "target_order": plan["target_order"] if len(plan["targets"]) > 1 else None,
        "hosts": {h: f.get("host_fingerprint") for h, f in facts.items()},
        # Per host: matches (provisioning would change nothing), else differs: the roles it would run and
        # why, and stale: what no stack of the plan owns that still runs or is there.
        "hosts_match_plan": {
            h: (f.get("bench_plan_match") or {}).get("plan_match") for h, f in facts.items()
        },
        "swept": {h: (f.get("bench_provision") or {}).get("stale") for h, f in facts.items()}
        if provisioned
        else None,
        "verify": verify,
        "dns_probe": dns or None,
        # Only in a run that ships its fronts' access logs (the report step adds the objects it found).
        **({"log_shipping": plan["log_shipping"]} if plan.get("log_shipping") else {}),
    }


# The facts of a host run.json takes (run_record): its fingerprint (the host role), whether it was as
# the plan says (benchmark.yml), its provisioning (bench_provision_state), a loadgen's noise floor
# (bench_noise_probe), a target's DNS-caching probe (the dns_check role).
RUN_FACTS = (
    "host_fingerprint",
    "bench_plan_match",
    "bench_provision",
    "bench_noise",
    "dns_check_probe_result",
)


def seed_for(run_dir: str | os.PathLike[str]) -> int:
    """The seed of a run that names none (``load.seed``): drawn from its folder's name, which holds the time
    it started, so every run gets its own order and a resumed run keeps its first attempt's."""
    digest = hashlib.sha256(Path(run_dir).name.encode("utf-8")).hexdigest()
    return int(digest[:8], 16)


def reseeded(plan: ResolvedPlan, seed: int) -> ResolvedPlan:
    """``plan`` with its cells in the order of ``seed`` (unless the experiment names its own seed)."""
    if plan.experiment.load.seed is not None:
        return plan
    planned = target_cells(cells(plan.experiment, seed), list(plan.targets), plan.parallel)
    return replace(plan, seed=seed, cells=tuple(planned))


def redacted_stacks(stacks: list[dict[str, Any]], key: bytes) -> list[dict[str, Any]]:
    """The stacks as written with each ``app.env`` value replaced by ``hmac-sha256:`` and 16 hex digits of
    its HMAC under the controller's ``key``: two runs with different values still differ, no value is
    written to the run folder, and without the key no guess can be checked against it (a plain sha256 of
    ``hunter2`` is found by any dictionary). An ``app.git.repo`` URL's credentials are masked
    (:func:`benchstack.common.inputs.masked`)."""
    out = []
    for stack in stacks:
        env = stack.get("app", {}).get("env") if isinstance(stack.get("app"), dict) else None
        if isinstance(env, dict) and env:
            hidden = {k: env_fingerprint(key, k, v) for k, v in env.items()}
            stack = {**stack, "app": {**stack["app"], "env": hidden}}
        git = stack.get("app", {}).get("git") if isinstance(stack.get("app"), dict) else None
        if isinstance(git, dict) and isinstance(git.get("repo"), str):
            # A token in the repository's URL: masked, as everywhere but the clone (issue 44).
            stack = {**stack, "app": {**stack["app"], "git": {**git, "repo": masked(git["repo"])}}}
        out.append(stack)
    return out


def env_apart(stacks: Sequence[Stack], key: bytes) -> tuple[tuple[Stack, ...], dict[str, tuple[str, ...]]]:
    """The resolved stacks without their ``app.env`` values (fingerprints instead, as in the experiment),
    and the env file lines of those values by stack name: the only place of the plan that holds them. Each
    role and play loops over the stacks and -v prints every item; the app_server role alone reads the
    lines, in a task that prints nothing (``app_server_env_lines``)."""
    out, lines = [], {}
    for stack in stacks:
        env, server = stack.app.env, stack.server
        if not env or server is None:
            out.append(stack)
            continue
        own = {k: v for k, v in server.environment.items() if k not in env}
        lines[stack.name] = tuple(env_file_line(k, v) for k, v in env.items())
        hidden = {k: env_fingerprint(key, k, v) for k, v in env.items()}
        out.append(
            replace(
                stack,
                app=replace(stack.app, env=MappingProxyType(hidden)),
                server=replace(
                    server,
                    environment=MappingProxyType(own),
                    env_file_lines=tuple(env_file_line(k, v) for k, v in own.items()),
                ),
            )
        )
    return tuple(out), lines


def env_fingerprint(key: bytes, name: str, value: object) -> str:
    """The keyed fingerprint of the value of the env variable ``name`` (the name is hashed too, so one value
    under two names does not show as the same)."""
    digest = hmac.new(key, f"{name}\0{value}".encode(), hashlib.sha256).hexdigest()
    return f"hmac-sha256:{digest[:16]}"


def env_key_path() -> Path:
    """Where the controller keeps its fingerprint key: ``$BENCH_STACK_KEY_FILE``, else
    ``$XDG_CONFIG_HOME/bench-stack/env-fingerprint.key`` (``~/.config`` by default)."""
    given = os.environ.get(ENV_KEY_VARIABLE)
    if given:
        return Path(given).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "bench-stack" / "env-fingerprint.key"


def env_key(path: Path | None = None, make: bool = True) -> bytes:
    """The controller's fingerprint key: read, or made once (random, readable by its owner only). The same
    key for every run keeps an unchanged experiment's content hash, so a run can be resumed.
    Without ``make`` (a check, which must change nothing outside a run) a missing key is not made: a random
    key of this call stands in, so the fingerprints still hide the values, and hold for this call only."""
    path = path or env_key_path()
    if not make and not os.path.lexists(path):
        return secrets.token_bytes(ENV_KEY_BYTES)
    if not os.path.lexists(path):
        # Written whole under another name, then linked: a run compiling at the same moment reads all of
        # one key or makes its own, never a part.
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(ENV_KEY_BYTES))
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError as exc:
            raise ExperimentError([f"cannot make the fingerprint key {path}: {exc.strerror}"]) from None
        finally:
            tmp.unlink(missing_ok=True)
    try:
        key = read_bounded(path, ENV_KEY_BYTES)
    except InputError as exc:
        raise ExperimentError([f"fingerprint key {path}: {exc}"]) from None
    if len(key) != ENV_KEY_BYTES:
        raise ExperimentError(
            [f"fingerprint key {path}: {len(key)} bytes, not {ENV_KEY_BYTES}: remove it, a new one is made"]
        )
    return key


def size_problems(exp: Experiment, planned: list[CellPlan], parallel: bool) -> list[str]:
    """What makes a plan too large to run without a yes: its least time, the processes its stacks keep."""
    problems = []
    seconds = planned_seconds(planned, parallel)
    if seconds > MAX_PLAN_SECONDS:
        problems.append(
            f"load: the {len(planned):_} cells take at least {duration_text(seconds)} (durations, warm-ups "
            f"and pauses; requests at {MAX_REQUESTS_PER_S:_}/s at most, {REQUESTS_PER_S_PER_CONNECTION:_}/s "
            f"a connection), more than {duration_text(MAX_PLAN_SECONDS)}"
        )
    processes = sum(server_processes(s) for s in exp.resolved)
    if processes > MAX_PROCESSES:
        biggest = max(exp.resolved, key=server_processes)
        problems.append(
            f"stacks: {processes:_} app server processes on each target (stack {shown(biggest.name)} "
            f"alone {server_processes(biggest):_}: instances x (workers + a master)), "
            f"more than {MAX_PROCESSES}"
        )
    return problems


def duration_text(seconds: float) -> str:
    """``45 min``, ``2 h``, ``3.5 h``, ``34.8 days``."""
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f}".removesuffix(".0") + " h"
    return f"{seconds / 86400:.1f}".removesuffix(".0") + " days"


def planned_seconds(planned: list[CellPlan], parallel: bool = False) -> float:
    """The least time the planned cells take (:func:`least_seconds`); targets measured in parallel count
    once, the slowest of them."""
    per_target: dict[str | None, float] = {}
    for cell in planned:
        per_target[cell.target] = per_target.get(cell.target, 0.0) + least_seconds(cell)
    if parallel:
        return max(per_target.values(), default=0.0)
    return sum(per_target.values())


def requests_seconds(requests: int | None, concurrency: int | None, rate: int | None = None) -> float:
    """The least time ``requests`` take: at an open-loop tool's offered ``rate``, else at
    :data:`REQUESTS_PER_S_PER_CONNECTION` for each of ``concurrency`` connections, at most
    :data:`MAX_REQUESTS_PER_S` in all."""
    if not requests:
        return 0.0
    if rate:
        return requests / rate
    return requests / min(MAX_REQUESTS_PER_S, REQUESTS_PER_S_PER_CONNECTION * max(1, concurrency or 1))


def least_seconds(cell: CellPlan) -> float:
    """What a cell takes at least: its warm-up and measured run (a duration, or a number of requests:
    :func:`requests_seconds`) and the pause between them."""
    warmup = cell.warmup or {}
    warm = warmup.get("duration_s") or requests_seconds(warmup.get("requests"), cell.concurrency, cell.rate)
    run = cell.duration_s or requests_seconds(cell.requests, cell.concurrency, cell.rate)
    return float(cell.pause_s + warm + run)


def progress(planned: list[CellPlan], parallel: bool = False) -> dict[str, str]:
    """Per cell id, the label a measured cell's line shows: "i/n, at least S s left" after it. ``parallel``:
    the targets' cells are measured side by side, so the time left is the slowest target's."""
    total = len(planned)
    out = {}
    if not parallel:
        left = sum(least_seconds(c) for c in planned)
        for i, cell in enumerate(planned, 1):
            left -= least_seconds(cell)
            out[cell.cell_id] = f"{i}/{total}, at least {round(left)} s left after it"
        return out
    per_target: dict[str | None, list[CellPlan]] = {}
    for cell in planned:
        per_target.setdefault(cell.target, []).append(cell)
    left_after = {
        target: [sum(least_seconds(c) for c in own[k + 1 :]) for k in range(len(own))]
        for target, own in per_target.items()
    }
    position = {cell.cell_id: k for own in per_target.values() for k, cell in enumerate(own)}
    for i, cell in enumerate(planned, 1):
        k = position[cell.cell_id]
        left = max(lefts[k] if k < len(lefts) else 0.0 for lefts in left_after.values())
        out[cell.cell_id] = f"{i}/{total}, at least {round(left)} s left after it"
    return out


def run_dir_for(
    plan: ResolvedPlan,
    results_root: str | os.PathLike[str],
    given: str | os.PathLike[str] | None = None,
    allow_outside: bool = False,
    now: datetime | None = None,
    from_folder: bool = False,
) -> str:
    """The run folder of this run: ``given`` when it may hold this experiment's run (a new folder, or a
    run of the same experiment to resume; RunDirError otherwise, saying what to run), else a new
    ``<results_root>/<UTC timestamp>-<experiment>``. ``from_folder``: the experiment is the one ``given``'s
    run.json names (:func:`benchstack.results.runfolder.resumed_experiment`). Nothing is created."""
    if given:
        source = plan.experiment.source
        return str(check_run_dir(given, results_root, plan.sha256, allow_outside, source, from_folder))
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return str(Path(results_root).expanduser().resolve() / f"{stamp}-{plan.name}")


def experiment_of(plan: Mapping[str, Any]) -> Experiment:
    """The experiment of a plan's fact (``plan``: :meth:`ResolvedPlan.to_dict`, as bench_extra_cells reads
    it) as :mod:`benchstack.measure.repetitions` takes it: already validated, so not read again; its stacks
    as written (the extra rounds need no more of them), none resolved."""
    exp = plan["experiment"]
    return Experiment(
        name=exp["name"],
        description=exp["description"],
        stacks=exp["stacks"],
        load=Load.from_dict(exp["load"]),
        source=exp["source"],
    )
