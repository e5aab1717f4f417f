#!/usr/bin/python
"""Documentation of the action plugins/action/bench_image_labels.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_image_labels
short_description: Start the local Docker engine when none answers; return the labels of the given images
description:
  - >-
    Make sure the local Docker engine answers, then read the labels of base images.
  - The work is done by the action plugin of the same name (plugins/action/bench_image_labels.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  tags: {description: Image tags to inspect; a missing one is left out., type: list, elements: str}
  engine_script:
    description: Run first (not in check mode); it installs and starts the engine when none answers.
    type: path
"""

EXAMPLES = r"""
- name: Start the engine if needed, read the base images' labels
  bench_image_labels:
    tags: [bench-stack/debian:12, bench-stack/debian:13]
    engine_script: "{{ playbook_dir }}/../scripts/docker-engine.sh"
  register: bench_images_info
"""

RETURN = r"""
labels: {description: "Per present tag, its labels ({} when it has none).", type: dict}
"""
