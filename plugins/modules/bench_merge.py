#!/usr/bin/python
"""Documentation of the action plugins/action/bench_merge.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_merge
short_description: Merge the loadgens' cells of one bench-stack load point
description:
  - >-
    Merge the cells several loadgens measured of one load point at the same time (bench_cell with ``peers``)
    into the run's cell. Thin: ``benchstack.measure.merge.merge_stored`` does the work.
  - The work is done by the action plugin of the same name (plugins/action/bench_merge.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  run_dir: {description: Run folder on the controller., type: path, required: true}
  cell_id: {description: The cell to merge., type: str, required: true}
  loadgens:
    description: The loadgens whose cells to merge (two or more).
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Merge the loadgens' cells of one load point
  bench_merge:
    run_dir: "{{ bench_plan.run_dir }}"
    cell_id: "{{ bench_plan.cells[0].cell_id }}"
    loadgens: [loadgen1, loadgen2]
  delegate_to: localhost
"""

RETURN = r"""
cell: {description: The merged cell as stored., type: dict, returned: success}
"""
