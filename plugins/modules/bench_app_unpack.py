#!/usr/bin/python
"""Documentation of the action plugins/action/bench_app_unpack.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_app_unpack
short_description: Copy a user app's source folder to its release folder on the target
description:
  - >-
    Deploy a user app's source folder (app.src) into its release folder on the target.
  - The work is done by the action plugin of the same name (plugins/action/bench_app_unpack.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  src: {description: The source folder on the controller., type: path, required: true}
  sha256: {description: The content hash the plan computed for it., type: str, required: true}
  dest: {description: The release folder on the target., type: path, required: true}
  group: {description: Group owning the files (the benchmark group)., type: str, required: true}
  stack: {description: A stack of the app, named in errors., type: str, required: true}
"""

EXAMPLES = r"""
- name: Deploy a user app's source folder
  bench_app_unpack:
    src: /home/me/apps/shop
    sha256: "{{ app_source.sha256 }}"
    dest: /srv/bench/apps/shop/releases/1a2b3c
    group: bench
    stack: shop-puma-nginx
"""

RETURN = r"""
files: {description: Files the archive held (those the plan hashed)., type: int, returned: success}
"""
