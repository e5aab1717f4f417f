#!/usr/bin/python
"""Documentation of the action plugins/action/bench_cell.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_cell
short_description: Measure one bench-stack cell
description:
  - >-
    Measure one cell on this loadgen and store it in the run folder on the controller.
  - The work is done by the action plugin of the same name (plugins/action/bench_cell.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  cell:
    description: One entry of the plan's cells (bench_plan.cells).
    type: dict
    required: true
  host: {description: Address of the target as this loadgen reaches it., type: str, required: true}
  target: {description: Inventory name of the target., type: str, required: true}
  run_dir: {description: Run folder on the controller., type: path, required: true}
  experiment: {description: Experiment name., type: str, required: true}
  peers:
    description: >-
      Every loadgen loading this target at the same time (this one included), in inventory order. More
      than one: cells go to loadgens/<loadgen>/ and are merged afterwards by bench_merge.
    type: list
    elements: str
    required: false
  cpus:
    description: >-
      Loopback hosts: the CPUs the load tool runs on (taskset -c), apart from the stacks' (bench_cpu_split).
    type: str
    required: false
  units:
    description: >-
      The units that serve the cell's stack on the target, each a dict of unit and listen
      (bench_plan.stack_units). Before the cell each is checked and, when down, restarted (at most twice
      in the playbook run, counted in the run folder's .bench-stack.restarts.json); a unit still down, or
      down with its restarts used, fails the cell before its load, and one not active when the measured run
      begins makes the cell disturbed (benchstack.measure.stackunits). Checked by the first peer only, for
      all of them (over the target's connection in network mode); the others' measured runs wait for it.
    type: list
    elements: dict
    required: false
  target_stats:
    description: Take the target's vmstat during the cell in network mode (needs a connection to it).
    type: bool
    default: true
  keep_going:
    description: >-
      After a failed cell of this playbook run, measure the later cells anyway (the failure is recorded,
      the action does not fail). Default: a failed cell stops the run. A run folder that cannot be written
      stops it either way (reason storage).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Measure one cell
  bench_cell:
    cell: "{{ bench_plan.cells[0] }}"
    host: 10.0.0.5
    target: web1
    run_dir: "{{ bench_plan.run_dir }}"
    experiment: "{{ bench_plan.experiment.name }}"
    peers: [loadgen1, loadgen2]
"""

RETURN = r"""
cell:
  description: The cell as stored (benchstack/schemas/cell.schema.json); absent when the cell was skipped.
  type: dict
  returned: success
failed_cell:
  description: The cell failed and keep_going measured on; its failure is in run.json's stopped.
  type: bool
  returned: when a cell failed with keep_going
"""
