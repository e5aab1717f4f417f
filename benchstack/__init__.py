"""bench-stack: provisioning and honest benchmarking of web stacks, the Python side.

One package per step of a run: plan, provision, measure, results, analysis, report; the adapters of every
kind in kinds (apps, servers, fronts, loadtools); what every step shares in common. cli is the command
line; actionargs checks the Ansible plugins' arguments. The map: docs/index.md.
"""

__version__ = "0.1.0"
