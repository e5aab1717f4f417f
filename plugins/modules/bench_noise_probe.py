#!/usr/bin/python
"""Documentation of the action plugins/action/bench_noise_probe.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_noise_probe
short_description: Measure how noisy a loadgen's host is before a bench-stack run's cells
description:
  - >-
    The noise floor of this loadgen's host, just before the cells (``benchstack.measure.probe``).
  - The work is done by the action plugin of the same name (plugins/action/bench_noise_probe.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  plan: {description: The run's plan (the fact bench_plan)., type: dict, required: true}
  host: {description: Address of the target as this loadgen reaches it., type: str, required: true}
"""

EXAMPLES = r"""
- name: Noise floor of this loadgen's host
  bench_noise_probe:
    plan: "{{ bench_plan }}"
    host: 10.0.0.5
  register: bench_noise
"""

RETURN = r"""
floor:
  description: The host's noise floor (benchstack.measure.probe); null when nothing could probe.
  type: dict
  returned: success
summary: {description: Lines to print before the cells., type: list, elements: str, returned: success}
"""
