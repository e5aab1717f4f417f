#!/usr/bin/python
"""Documentation of the action plugins/action/bench_host_lock.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_host_lock
short_description: Give up this host for the next bench-stack run
description:
  - >-
    Give up this host's lock once this playbook run's measuring is over (benchstack.measure.runlock). One run
    at a time provisions and measures a host; the lock lives on the host (benchstack.provision.hoststate) and
    names the holder's controller, pid and run folder. It was taken by bench_provision_state with C(run_dir)
    in the one command that read the host.
  - >-
    Giving it up changes nothing a role made, so the task never reports a change; in check mode nothing is
    written. With C(delegate_to) it gives up the delegated host's lock, through that host's connection and
    Python.
  - The work is done by the action plugin of the same name (plugins/action/bench_host_lock.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  state:
    description: released (the lock is taken by bench_provision_state with run_dir).
    type: str
    choices: [released]
    default: released
"""

EXAMPLES = r"""
- name: Give up the loadgen and its target
  bench_host_lock:
    state: released
  delegate_to: "{{ item }}"
  loop: [loadgen1, web1]
"""

RETURN = r"""
msg: {description: C(released), or C(not held by this run)., type: str, returned: success}
"""
