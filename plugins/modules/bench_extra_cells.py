#!/usr/bin/python
"""Documentation of the action plugins/action/bench_extra_cells.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_extra_cells
short_description: List the extra repetitions a bench-stack run needs
description:
  - >-
    The extra cells (next repetitions of noisy load points) a run still needs, for benchmark.yml (one
    target's, with ``target``).
  - The work is done by the action plugin of the same name (plugins/action/bench_extra_cells.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  run_dir: {description: Run folder on the controller., type: path, required: true}
  plan:
    description: The run's plan (the fact bench_plan, benchstack.plan.resolved).
    type: dict
    required: true
  target:
    description: >-
      Only this target's load points (a run with several targets: each target's loadgens ask for their own).
    type: str
"""

EXAMPLES = r"""
- name: The extra repetitions target web1 still needs
  bench_extra_cells:
    run_dir: "{{ bench_plan.run_dir }}"
    plan: "{{ bench_plan }}"
    target: web1
  register: bench_extra
"""

RETURN = r"""
cells:
  description: The cells to measure next (bench_cell's cell).
  type: list
  elements: dict
  returned: always
first_table:
  description: The summary table so far, when these are the first extra repetitions ("" otherwise).
  type: str
  returned: success
to_measure:
  description: >-
    Whether the run still measures a cell here: a planned cell not stored, or an extra round due (false
    for a resumed run whose cells are all stored, and in check mode).
  type: bool
  returned: always
labels:
  description: >-
    Why each cell of the round is measured, by cell id, as the progress line shows it (an unresolved
    comparison with its ratio so far, the baseline of unresolved comparisons, a disturbed cell measured
    again), with the time budget left.
  type: dict
  returned: always
round:
  description: The round's number (the repetition of each of its cells); null when no round is due.
  type: int
  returned: always
serves:
  description: >-
    What the round is for, once per load point that needs it (the baseline's cells serve those), as the
    console's progress line says it.
  type: list
  elements: str
  returned: always
budget_s:
  description: The experiment's time budget for measuring (load.max_seconds), null without one.
  type: int
  returned: success
left_s:
  description: Seconds of the budget left when the round was planned, null without a budget or cells.
  type: float
  returned: success
"""
