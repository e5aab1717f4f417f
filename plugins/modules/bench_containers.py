#!/usr/bin/python
"""Documentation of the action plugins/action/bench_containers.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_containers
short_description: Tell which containers run as wanted; give each one's settings hash for its label
description:
  - >-
    Which local hosts' containers already run exactly as hosts.yml would start them.
  - The work is done by the action plugin of the same name (plugins/action/bench_containers.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  containers:
    description: Per container name, the docker_container settings hosts.yml starts it with (image included).
    type: dict
    required: true
  label: {description: The label that holds a container's settings hash., type: str, required: true}
"""

EXAMPLES = r"""
- name: Which containers already run as wanted
  bench_containers:
    containers: "{{ bench_container_settings }}"
    label: bench-stack.settings
"""

RETURN = r"""
current: {description: Names whose container runs its tag's image and has the wanted hash., type: list}
stale: {description: "The others, in the order given: missing, stopped, older image or settings.", type: list}
hashes: {description: Per name, the hash of its wanted settings (the label's value)., type: dict}
"""
