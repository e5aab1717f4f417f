#!/usr/bin/python
"""Documentation of the action plugins/action/bench_plan.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_plan
short_description: Compile a bench-stack run's plan (validate every input first)
description:
  - >-
    Compile the run's plan once, on the controller, before any host is touched.
  - The work is done by the action plugin of the same name (plugins/action/bench_plan.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  experiment:
    description: >-
      Experiment name (experiments/NAME.yml) or path. Default: the experiment file the run in run_dir
      records (its run.json), so a resume needs only the folder; else sinatra-thin-nginx.
    type: str
  results_dir: {description: Results root on the controller., type: path, required: true}
  run_dir: {description: A run folder to write or resume (bench_run_dir)., type: path}
  allow_outside: {description: Let run_dir lie outside results_dir., type: bool, default: false}
  parallel:
    description: Measure the targets at the same time instead of one after the other (bench_targets_parallel).
    type: bool
    default: false
  allow_large:
    description: >-
      Accept a plan over the limits a user may lift: cells taking hours, hundreds of app server processes
      (bench_yes; benchstack.plan.resolved). They are then warnings.
    type: bool
    default: false
notes:
  - >-
    The targets the run measures are those the loadgens of the play load (their bench_target, else
    themselves when they are targets, else the first target), in the targets group's order; with several,
    every cell is planned once per target and its id starts with the target (benchstack.plan.targets). The
    plan's hosts give each host of the targets and loadgens groups its roles and each loadgen its target, the
    address it loads it at (the target's bench_address, else its ansible_host, else its name; 127.0.0.1 when
    it loads itself), its peers and its loopback flag (benchstack.plan.resolved.with_hosts).
  - The roots of every derived path come from the variables bench_run_root, bench_app_root and
    bench_unit_config_dir when set (defaults in benchstack.kinds.stackfields.Roots, the one place they live).
"""

EXAMPLES = r"""
- name: Compile the run's plan
  bench_plan:
    experiment: sinatra-thin-nginx
    results_dir: "{{ playbook_dir }}/../results"
  run_once: true
"""

RETURN = r"""
ansible_facts:
  description: The fact bench_plan, the compiled plan (benchstack.plan.resolved).
  type: dict
  returned: success
"""
