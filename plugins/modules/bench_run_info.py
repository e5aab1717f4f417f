#!/usr/bin/python
"""Documentation of the action plugins/action/bench_run_info.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_run_info
short_description: Write a bench-stack run's run.json
description:
  - >-
    Write run.json (the experiment as run, every host's fingerprint) on the controller.
  - >-
    Its content is the plan's (benchstack.plan.resolved.run_record: the experiment with its cells, seed,
    target order, the inventory's targets and loadgens, the run's mode) with what the run learnt of each host
    of the play, from its facts host_fingerprint, bench_plan_match, bench_provision, bench_noise and
    dns_check_probe_result, and localhost's bench_verified (verify.yml).
  - The work is done by the action plugin of the same name (plugins/action/bench_run_info.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  run_dir: {description: Run folder on the controller., type: path, required: true}
  plan: {description: The run's plan (the fact bench_plan)., type: dict, required: true}
"""

EXAMPLES = r"""
- name: Write run.json
  bench_run_info:
    run_dir: "{{ bench_plan.run_dir }}"
    plan: "{{ bench_plan }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
path: {description: Path of the run.json written., type: path, returned: success}
"""
