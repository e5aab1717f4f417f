#!/usr/bin/python
"""Documentation of the action plugins/action/bench_provision_state.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_provision_state
short_description: Decide which roles run on this host (skip those whose inputs did not change)
description:
  - >-
    Hash each role's inputs on the controller, read the host's record and the state of the services the roles
    keep running in one command, and set the decision as the fact C(bench_provision) (C(run), C(skip),
    C(stale), C(package_roles), C(stages); benchstack.provision.markers), with the facts the skipped roles
    export. Before roles run, their old records are removed from the host.
  - >-
    An app folder or stack file the plan would write into that exists without being bench-stack's, an
    existing account or group bench-stack did not make (unless O(adopt_user)) and a privileged group are
    refused, before any role runs (benchstack.provision.accounts).
  - >-
    With O(run_dir), the same command first holds the host for this playbook run (benchstack.measure.runlock):
    refused while another live run holds it (after waiting up to O(lock_wait) seconds); held until
    bench_host_lock gives it up. In check mode the holder is judged and nothing is written.
  - The work is done by the action plugin of the same name (plugins/action/bench_provision_state.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  roles: {description: The roles this host runs, in order., type: list, elements: str, required: true}
  units:
    description: >-
      Role -> systemd units it keeps running; or, per OS family, the plan's role_units (family -> role ->
      units): then the host's family is taken from the facts, the record or a gather (the plugin's docstring).
    type: dict
  owned:
    description: >-
      What the plan's stacks own under its roots (the plan's owned, benchstack.plan.roles.owned); without
      it nothing under the roots is looked for.
    type: dict
  accounts:
    description: >-
      The benchmark account and groups as this host's roles get them (host_user, host_group,
      app_server_group, webapp_group; ruby_rbenv_users and python_pyenv_users, lists): refused when another
      program's or privileged
      (benchstack.provision.accounts); those it will create are recorded as bench-stack's.
    type: dict
  adopt_user:
    description: >-
      Use (and record as bench-stack's) an existing unprivileged account or group of accounts that
      bench-stack did not create (host_adopt_user).
    type: bool
    default: false
  skip_unchanged:
    description: Skip roles whose inputs did not change (false, or any --tags, runs every role).
    type: bool
    default: true
  report_only:
    description: >-
      Only say whether the host is as the plan says (matches, plan_match, run, drift, stale); no fact set,
      no record written (benchmark.yml, doctor.yml).
    type: bool
    default: false
  hashes:
    description: Role -> its input hash as this run's provisioning computed it (the rest are computed here).
    type: dict
  run_dir:
    description: >-
      Hold this host for this playbook run, which measures into this run folder (named in the lock), in the
      same command; without it the lock is not looked at.
    type: path
  lock_wait:
    description: >-
      Seconds to wait for another live run's hold on the host to end before refusing (bench_lock_wait).
    type: float
    default: 0
"""

EXAMPLES = r"""
- name: Decide which roles run, holding the host for this run
  bench_provision_state:
    roles: "{{ bench_here.roles }}"
    units: "{{ bench_plan.role_units }}"
    owned: "{{ bench_plan.owned }}"
    run_dir: "{{ bench_plan.run_dir }}"
    lock_wait: 300
"""

RETURN = r"""
ansible_facts:
  description: >-
    C(bench_provision): the decision (hashes, run, skip, drift, reinstall, record, facts, stale, stages,
    package_roles), with the facts the skipped roles export; without O(report_only).
  type: dict
  returned: success
lock: {description: What holding the host took, as messages., type: list, elements: str, returned: success}
matches: {description: Whether the host is as the plan says (O(report_only))., type: bool, returned: success}
plan_match: {description: matches, differs and stale (O(report_only))., type: dict, returned: success}
run: {description: Role -> why it would run (O(report_only))., type: dict, returned: success}
stale: {description: What no stack of the plan owns (O(report_only))., type: dict, returned: success}
msg: {description: The decision in one line., type: str, returned: success}
"""
