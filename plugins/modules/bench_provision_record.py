#!/usr/bin/python
"""Documentation of the action plugins/action/bench_provision_record.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_provision_record
short_description: Record the roles that ran to the end on this host
description:
  - >-
    Record on the host the inputs each role just ran to the end with (benchstack.plan.roles).
  - The work is done by the action plugin of the same name (plugins/action/bench_provision_record.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  made:
    description: >-
      Role -> what it made (files, binaries, units; the plan's role_made for the host's OS family,
      benchstack.provision.hoststate); each role's OS packages are its fact <role>_os_packages, the host
      role's sysctls those of its host_tuned_sysctls with host_profile tuned.
    type: dict
notes:
  - Reads the fact bench_provision set by bench_provision_state earlier in the run.
"""

EXAMPLES = r"""
- name: Record the roles that ran to the end
  bench_provision_record:
    made: "{{ bench_plan.role_made[ansible_facts['os_family']] }}"
  tags: [always]
"""

RETURN = r"""
msg: {description: What was recorded, or why nothing was., type: str, returned: always}
"""
