"""Action: decide which roles provisioning runs on this host (benchstack.provision.markers), in one command.

Hashes each role's inputs on the controller, reads the host's record and the state of the services the
roles keep running in one command, and returns the decision as the fact ``bench_provision`` (``run``: role
-> why it runs; ``skip``: roles whose inputs did not change; ``stale``: the units and files no stack of the
plan owns, which provision.yml stops, disables and removes; ``package_roles``: the roles that run whose OS
packages provision.yml installs in one transaction; ``stages``: the roles that run, before and after that
sweep), with the facts the skipped roles export. Before
roles run, their old records are removed from the host. With ``owned`` (the plan's ``owned``), ``stale`` also
holds the env files, server configs and app folders under the plan's roots that no stack of the plan owns,
when the host's record of what bench-stack made names them (benchstack.provision.made); those it does not name
are someone else's: ``stale.foreign``, left alone and named. The same command reads that record and the
accounts of ``accounts``: an app folder or stack file the plan would write into that exists without being
bench-stack's, an existing account or group bench-stack did not make (unless ``adopt_user``) and a privileged
group are refused here, before any role runs (benchstack.provision.accounts); what the roles are about to make
is recorded first.

With ``run_dir``, the same one command first holds the host for this playbook run (benchstack.measure.runlock
take_host, the lock in benchstack.provision.hoststate): refused, naming the run folder and pid of another live
run that holds it (after waiting up to ``lock_wait`` seconds for it to end, polling); an ended run's lock
taken over once its workers are gone (what holding it took, as messages: the result's ``lock``). Held until
measuring ends (bench_host_lock gives it up). A host this run holds already (benchmark.yml after
provision.yml) costs nothing more: the read is needed anyway, and the lock is not written again. In check
mode (``--check``, whatever the task's check_mode) the holder is judged and nothing is written.

Facts: with ``units`` per OS family (the plan's ``role_units``), the task needs no gathered facts. The
same command reads the host's identity; when the record holds the facts the decision needs for that
identity (benchstack.provision.hostrecord.host_facts), they are used and set on the host
(``bench_provision.facts``: ``record``); otherwise this task gathers them (``gathered``: the ``min`` and
``hardware`` subsets, the ones the roles read; all of them when a role variable reads another fact) and the
record keeps them. Facts the play already has are used as they are (``given``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ansible import constants as C
from ansible.errors import AnsibleUndefinedVariable
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.utils.display import Display

from benchstack.actionargs import BenchAction, action_args
from benchstack.measure.runlock import RunLockError, take_host
from benchstack.plan import roles as provision
from benchstack.plan.settings import lock_wait_seconds
from benchstack.provision import accounts, hostcommand, hostrecord, made, markers, sweep

display = Display()

# What a task may pass: the options documented in plugins/modules/bench_provision_state.py (ansible-doc).
ARGS = action_args(__file__)

PROJECT_DIR = Path(__file__).resolve().parents[2]
# What this task gathers when neither the play nor the record has the facts: the decision's, and the ones the
# roles read (processor_vcpus, processor_nproc), so provision.yml gathers nothing more. Then everything, once,
# when a role variable reads a fact outside those (as the play's own gathering used to give it).
GATHER_SUBSETS = (["min", "hardware"], ["all"])
# Code outside the roles that the roles run (filters, modules): a change there reruns every role.
SHARED = [PROJECT_DIR / "plugins" / "filter", PROJECT_DIR / "plugins" / "modules"]


def files_hash(role: str) -> str:
    roles = [role, *markers.INCLUDES.get(role, ())]
    return markers.tree_hash([PROJECT_DIR / "roles" / r for r in roles] + SHARED)


@dataclass(frozen=True)
class Asked:
    """What the task asks, from its arguments: the roles, their units (by OS family, or one set for any),
    the input hashes already known, the plan's owned (with its roots) and the accounts the roles make."""

    roles: list[str]
    by_family: bool
    families: dict[str, dict[str, list[str]]]
    hashes: dict[str, str]
    # Every family's units, for when the family is not known yet: systemctl answers for a unit it lacks too.
    all_units: list[str]
    owned: dict[str, Any] | None
    roots: dict[str, str] | None
    wanted: dict[str, Any]


class ActionModule(BenchAction):
    ARGS = ARGS

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        self._held: list[str] = []
        self._host_name = str(task_vars.get("inventory_hostname", "this host"))
        self._args = args
        asked = self._asked(args)
        tags = task_vars.get("ansible_run_tags") or ["all"]
        skip_unchanged = boolean(args.get("skip_unchanged", True)) and list(tags) == ["all"]
        names = accounts.names(asked.wanted) if asked.wanted else None
        stdout = self._read(task_vars, asked.all_units, asked.roots, names)
        record, active = hostcommand.parse_read(stdout, asked.all_units)
        identity = hostcommand.parse_identity(stdout)
        hashes, facts, source = self._role_hashes(asked, task_vars, record, identity)
        family = str(facts.get("os_family", "")) if asked.by_family else ""
        if family not in asked.families:
            raise self.failure(f"no units for the OS family {family!r}")
        host = hostrecord.host_entry(identity, facts) or record.get("host")
        now = hostcommand.parse_now(stdout)
        decision = markers.decide(
            asked.roles, hashes, record, asked.families[family], active, skip_unchanged, now
        )
        found = hostcommand.parse_found(stdout)
        # What bench-stack made here (on a host provisioned before that record: what the provisioning
        # record proves it made).
        ours = made.parse(found.get("made"))
        if ours is None:
            proven = accounts.proven(found.get("accounts"))
            ours = made.migrated(record, asked.roots, "host" in asked.roles, proven)
        stale = sweep.stale(found, asked.all_units, "nginx" in asked.roles, asked.owned, asked.roles, ours)
        if boolean(args.get("report_only", False)):
            return self._reported(result, decision, stale)
        adopt = boolean(args.get("adopt_user", False))
        self._own(found, ours, asked.owned, asked.roles, asked.wanted, adopt)
        kept = self._kept(record, decision, hashes, host)
        result.update(
            changed=False,
            lock=self._held,
            ansible_facts={
                "bench_provision": {
                    **decision.to_dict(),
                    "record": kept,
                    # Where the decision's facts came from: the play, the record, or this task's gather.
                    "facts": source,
                    "stale": stale,
                    # The roles that run, before and after the sweep of what no stack of the plan owns.
                    "stages": provision.stages(decision.run),
                    # Whose OS packages provision.yml installs in one transaction before the roles run.
                    "package_roles": provision.package_roles(
                        decision.run, tags, task_vars.get("ansible_skip_tags") or []
                    ),
                },
                **decision.facts,
                **self._facts,
            },
            msg=summary(decision, stale),
        )
        return result

    def _asked(self, args: dict[str, Any]) -> Asked:
        """The task's arguments as :class:`Asked`; a failure for an owned without its roots."""
        roles = [str(r) for r in args["roles"]]
        given_units = args.get("units") or {}
        by_family = bool(given_units) and all(k in provision.FAMILIES for k in given_units)
        families = {
            family: {str(k): [str(u) for u in v] for k, v in (units or {}).items() if k in roles}
            for family, units in (given_units.items() if by_family else [("", given_units)])
        }
        given = args.get("hashes") or {}
        owned = args.get("owned") or None
        roots = owned.get("roots") if isinstance(owned, dict) else None
        if owned is not None and not (
            isinstance(roots, dict) and all(isinstance(roots.get(k), str) for k in ("apps", "units"))
        ):
            raise self.failure("owned: the plan's owned (with its roots)")
        return Asked(
            roles=roles,
            by_family=by_family,
            families=families,
            hashes={role: str(given[role]) for role in roles if role in given},
            all_units=list(dict.fromkeys(u for f in families.values() for r in roles for u in f.get(r, []))),
            owned=owned,
            roots=roots,
            wanted={str(k): v for k, v in (args.get("accounts") or {}).items() if v},
        )

    def _role_hashes(
        self, asked: Asked, task_vars: dict[str, Any], record: dict[str, Any], identity: str | None
    ) -> tuple[dict[str, str], dict[str, Any], str]:
        """Every role's input hash (those not given computed here), and the facts they were computed with
        and their source: the play's, else the host record's, else gathered now (set on the host too)."""
        # Facts the task sets on the host (restored from the record or gathered), as setup names them.
        self._facts: dict[str, Any] = {}
        facts, source = dict(task_vars.get("ansible_facts") or {}), "given"
        if (asked.by_family or len(asked.hashes) < len(asked.roles)) and "os_family" not in facts:
            cached = hostrecord.host_facts(record, identity)
            if cached is not None:
                facts, source = cached, "record"
                self._facts = {f"ansible_{name}": value for name, value in cached.items()}
            else:
                facts, source = self._gather(task_vars, GATHER_SUBSETS[0]), "gathered"
        todo = [r for r in asked.roles if r not in asked.hashes]
        computed, facts, source = self._hashes(todo, task_vars, facts, source)
        return {**asked.hashes, **computed}, facts, source

    def _reported(
        self, result: dict[str, Any], decision: markers.Decision, stale: dict[str, list[str]]
    ) -> dict[str, Any]:
        """report_only: whether the host matches the plan, and what differs; nothing written."""
        left = stale["units"] + stale["files"]
        result.update(
            changed=False,
            matches=not decision.run and not left,
            plan_match={"matches": not decision.run and not left, "differs": decision.run, "stale": left},
            run=decision.run,
            skip=decision.skip,
            drift=decision.drift,
            stale=stale,
            lock=self._held,
            msg=summary(decision, stale),
        )
        if self._facts:
            result["ansible_facts"] = self._facts
        return result

    def _kept(
        self, record: dict[str, Any], decision: markers.Decision, hashes: dict[str, str], host: Any
    ) -> dict[str, Any]:
        """The host's record as the roles about to run leave it: a role about to run with other inputs
        loses its record first (a run that stops half way must not leave a record of a state the host is
        not in; same inputs describe the same state: kept), with the host's facts; written when it
        changed."""
        entries = record.get("roles") or {}
        rerun = [r for r in decision.run if r in entries and entries[r].get("hash") != hashes[r]]
        kept = hostrecord.with_host(hostrecord.without(record, rerun), host)
        # The host's facts changed or are new: kept now when no role runs (bench_provision_record writes
        # them with the roles' records otherwise).
        new_host = kept.get("host") != record.get("host") and not decision.run
        if (rerun or new_host) and not self._task.check_mode:
            res = self._low_level_execute_command(hostrecord.write_command(kept))
            if res.get("rc") != 0:
                raise self.failure(f"cannot write {hostrecord.MARKER}: {res}")
        return kept

    def _own(
        self,
        found: dict[str, Any],
        ours: dict[str, Any],
        owned: dict[str, Any] | None,
        roles: list[str],
        wanted: dict[str, Any],
        adopt: bool,
    ) -> None:
        """Refuse what the roles would write into or change that bench-stack did not make (an app folder or a
        stack's files under the roots, an account or group; a privileged group), one line each; then record
        what they are about to make (benchstack.provision.made), before they make it."""
        existing = made.existing_keys(found.get("paths") or [], owned["roots"]) if owned else None
        planned = made.planned_keys(owned, roles) if owned else []
        problems = [
            f"{path}: exists and bench-stack did not make it (its record {made.PATH} does not name it): "
            "the plan would write into it; move it away, or choose another bench_app_root or "
            "bench_unit_config_dir"
            for path in made.foreign_planned(planned, existing or {}, ours)
        ]
        if wanted and not isinstance(found.get("accounts"), dict):
            asked = accounts.names(wanted)
            names = ", ".join(dict.fromkeys(asked["users"] + asked["groups"]))
            problems.append(f"cannot read the accounts {names} on the host")
        verdict = accounts.check(wanted, found.get("accounts"), ours, adopt)
        problems += verdict.problems
        if problems:
            host = self._host_name
            raise self.failure(f"{host}: " + f"\nbench_provision_state: {host}: ".join(problems))
        after = made.after(ours, existing, planned, verdict.users, verdict.groups)
        # Written only over a record the host answered for (the read's section is there, null when none).
        if "made" in found and after != made.parse(found.get("made")) and not self._task.check_mode:
            res = self._low_level_execute_command(made.write_command(after))
            if res.get("rc") != 0:
                raise self.failure(f"cannot write {made.PATH}: {res}")

    def _hashes(
        self, roles: list[str], task_vars: dict[str, Any], facts: dict[str, Any], source: str
    ) -> tuple[dict[str, str], dict[str, Any], str]:
        """Each role's input hash, its variables rendered with ``facts`` (those of the record or gathered
        here, when the play has none); a variable that reads a fact they lack has them all gathered once.
        The hashes, and the facts and their source in the end."""
        every = False
        while True:
            variables, templar = task_vars, self._templar
            if source != "given":
                variables = {
                    **task_vars,
                    "ansible_facts": {**(task_vars.get("ansible_facts") or {}), **facts},
                    **{f"ansible_{name}": value for name, value in facts.items()},
                }
                templar = self._templar.copy_with_new_env(available_variables=variables)
            try:
                hashes = {}
                for role in roles:
                    mine = markers.role_variables(role, variables)
                    rendered = {name: templar.template(value) for name, value in mine.items()}
                    hashes[role] = markers.role_hash(files_hash(role), rendered, facts)
                return hashes, facts, source
            except AnsibleUndefinedVariable:
                if source == "given" or every:
                    raise
                facts, source, every = self._gather(task_vars, GATHER_SUBSETS[1]), "gathered", True

    def _gather(self, task_vars: dict[str, Any], subset: list[str]) -> dict[str, Any]:
        """The host's facts (``subset``), as setup gathers them; set on the host by this task."""
        res = self._execute_module(
            module_name="ansible.legacy.setup", module_args={"gather_subset": subset}, task_vars=task_vars
        )
        gathered = res.get("ansible_facts")
        if res.get("failed") or not isinstance(gathered, dict):
            host = task_vars.get("inventory_hostname", "the host")
            raise self.failure(f"cannot gather {host}'s facts: {res.get('msg', res)}")
        self._facts = dict(gathered)
        return {name.removeprefix("ansible_"): value for name, value in gathered.items()}

    def _read(
        self,
        task_vars: dict[str, Any],
        units: list[str],
        roots: dict[str, str] | None,
        names: dict[str, list[str]] | None = None,
    ) -> str:
        """The one command's output; with ``run_dir``, once it holds the host (module docstring)."""
        python = hostcommand.host_python(task_vars)
        args = self._args
        if not args.get("run_dir"):
            res = self._low_level_execute_command(hostcommand.read_command(units, python, roots, None, names))
            return str(res.get("stdout") or "")
        host = self._host_name
        lock_wait = lock_wait_seconds(args.get("lock_wait") or 0)
        if lock_wait is None:
            raise self.failure(f"lock_wait: seconds (0 or more), not {args.get('lock_wait')!r}")
        last: dict[str, str] = {}

        def ask(request: dict[str, Any]) -> dict[str, Any]:
            res = self._low_level_execute_command(
                hostcommand.read_command(units, python, roots, request, names)
            )
            answer = hostcommand.parse_lock(str(res.get("stdout") or ""))
            if res.get("rc") != 0 or answer is None:
                raise self.failure(f"cannot read {host}: {res}")
            last["stdout"] = str(res.get("stdout") or "")
            return answer

        # --check, even where the task reads with check_mode false (benchmark.yml): the holder judged only.
        check_only = bool(self._task.check_mode) or boolean(task_vars.get("ansible_check_mode", False))
        try:
            # The workers' parent is ansible-playbook: the lock is this playbook run's (as the run folder's).
            self._held = take_host(
                host,
                args["run_dir"],
                os.getppid(),
                ask,
                check_only=check_only,
                lock_wait=lock_wait,
                waiting=waiting,
            )
        except RunLockError as exc:
            raise self.failure(str(exc)) from None
        return last["stdout"]


def waiting(message: str) -> None:
    """Said at once, while the task waits (a warning would be held back until the task ends)."""
    display.display(f"[WAITING]: {message}", color=C.COLOR_WARN, stderr=True)


def summary(decision: markers.Decision, stale: dict[str, list[str]]) -> str:
    left = stale["units"] + stale["files"]
    return (
        f"run: {', '.join(f'{r} ({why})' for r, why in decision.run.items()) or 'nothing'}; "
        f"unchanged, skipped: {', '.join(decision.skip) or 'nothing'}"
        + (f"; reinstalled first: {', '.join(decision.reinstall)}" if decision.reinstall else "")
        + (f"; no stack of the plan owns: {', '.join(left)}" if left else "")
        + (
            f"; not made by bench-stack, left alone: {', '.join(stale['foreign'])}"
            if stale.get("foreign")
            else ""
        )
    )
