#!/usr/bin/python
"""Documentation of the action plugins/action/bench_run_folder.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_run_folder
short_description: Check a bench-stack run folder before any load, give it up when the run stops
description:
  - >-
    C(state=writable), before any load is sent (before the stacks' restart and the noise probe): a probe write
    into the run folder (or, for a new run, the folder it will be made in), its cells/ and raw/ and each
    loadgen's (benchstack.measure.runner.run_folder_problem; nothing is left behind, no folder is made). A
    folder that cannot be written fails the task in one line naming the path and the errno; this playbook
    run's lock on the run folder (benchstack.measure.runlock) is given up first, since the run ends there.
  - >-
    C(state=released), when the run stops (every loadgen's measuring failed): this playbook run's lock on the
    run folder is given up, as the report does at the end of a run, and the stop it kept aside in the
    controller's temporary folder when run.json could not be written is recorded in run.json and removed
    (benchstack.results.runfolder.settle_stops_aside; kept aside while run.json still cannot take it).
  - Nothing is written in check mode. The task never reports a change.
  - The work is done by the action plugin of the same name (plugins/action/bench_run_folder.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  run_dir: {description: Run folder on the controller., type: path, required: true}
  state:
    description: C(writable) (check it before any load) or C(released) (give it up, the run stopped).
    type: str
    choices: [writable, released]
    default: writable
"""

EXAMPLES = r"""
- name: Check that the run folder can be written, before any load
  bench_run_folder:
    run_dir: "{{ bench_plan.run_dir }}"
    state: writable
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
msg: {description: C(writable); C(released) or C(not held by this run)., type: str, returned: success}
"""
