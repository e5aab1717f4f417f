#!/usr/bin/python
"""Documentation of the action plugins/action/bench_report.py, where ansible-doc reads it.

No code: the action runs on the controller. Its argument spec is this DOCUMENTATION's options
(benchstack.actionargs), so what is documented is what a task may pass.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: bench_report
short_description: Write report.md, report.html, plots and cells.csv for a bench-stack run
description:
  - >-
    Write a run's report (report.md, report.html, plots, cells.csv) and return its summary table followed by
    the comparisons against the baseline, the run's verdict and its thresholds (all also stored in run.json),
    which the run prints at the end, and the run's gate (exit_code). With ``results_dir``,
    ``<results_dir>/latest`` then points at the run (only ever inside the results folder). Then the run
    folder's lock is released (``benchstack.measure.runlock``).
    With C(history) (the default), the run is then recorded in the history database (docs/history.md):
    the URL in the controller's environment variable C(BENCH_STACK_DB), else C(<results_dir>/history.sqlite);
    with neither, nothing. Best effort: a database that cannot be opened or written is a warning, and the
    run's results and report stand (C(bench-stack import RUN_DIR) records it later).
  - >-
    With C(publish) (C(s3://bucket/prefix), C(-e bench_publish)), the run folder is then published to that
    S3-compatible store (docs/history.md), as C(bench-stack publish) does: credentials, region and endpoint
    from the controller's AWS variables (or C(publish_endpoint)), never printed. Best effort: a store that
    cannot be reached or written is a warning, and the run folder stands.
  - The work is done by the action plugin of the same name (plugins/action/bench_report.py); these
    options are also its argument spec (benchstack.actionargs).
options:
  run_dir: {description: Run folder on the controller., type: path, required: true}
  results_dir: {description: Results root whose C(latest) link points at the run., type: path}
  history:
    description: Record the run in the history database (C(-e bench_history=false) turns it off).
    type: bool
    default: true
  publish:
    description: >-
      Publish the run folder to this C(s3://bucket/prefix) (objects C(prefix/RUN/...)); empty (the
      default) publishes nothing.
    type: str
    default: ""
  publish_endpoint:
    description: >-
      The store's endpoint URL (C(-e bench_publish_endpoint)); empty: C(AWS_ENDPOINT_URL_S3),
      C(AWS_ENDPOINT_URL), else AWS.
    type: str
    default: ""
  fail_on:
    description:
      - >-
        What fails the run's gate (returned as C(exit_code); the report play fails its last task on it):
        C(noisy), a verdict other than valid or a failed threshold; C(invalid), an invalid verdict or a failed
        threshold; C(never), nothing (the code is 0). The playbooks pass C(bench_fail_on).
      - Where the environment variable C(BENCH_STACK_OUTCOME) names a file, the code and the run folder are
        written there (C(./run bench) exits with the code).
    type: str
    choices: [noisy, invalid, never]
    default: noisy
"""

EXAMPLES = r"""
- name: Write the run's report
  bench_report:
    run_dir: "{{ bench_plan.run_dir }}"
    results_dir: "{{ bench_plan.results_dir }}"
    history: "{{ bench_history | default(true) | bool }}"
    publish: "{{ bench_publish | default('') }}"
    publish_endpoint: "{{ bench_publish_endpoint | default('') }}"
    fail_on: "{{ bench_fail_on | default('noisy') }}"
  register: bench_report_result
"""

RETURN = r"""
report: {description: Path of report.md., type: path, returned: success}
report_html: {description: Path of report.html., type: path, returned: success}
table: {description: The summary table, comparisons and verdict as text., type: str, returned: success}
table_lines: {description: The same, one line per item., type: list, elements: str, returned: success}
verdict: {description: The run's verdict (also in run.json)., type: dict, returned: success}
thresholds:
  description: Each threshold of load.thresholds on each load point it matches (also in run.json).
  type: list
  elements: dict
  returned: success
exit_code:
  description: The run's gate, as docs/verdict.md's exit codes (0 passed, 3 invalid, 6 noisy, 7 a threshold).
  type: int
  returned: success
gate: {description: One line saying why the gate gave exit_code., type: str, returned: success}
comparisons:
  description: The comparisons against the baseline (also in run.json).
  type: list
  elements: dict
  returned: success
latest: {description: The C(latest) link, when results_dir was given., type: path, returned: success}
history:
  description: >-
    What the history database recorded: C(outcome) added, updated, unchanged, off, skipped (no database:
    no results_dir nor BENCH_STACK_DB) or failed (with C(warning)); C(database), its URL without password.
  type: dict
  returned: success
published:
  description: >-
    What publishing did: C(outcome) published, unchanged (the store held it already), off or failed (with
    C(warning)); C(url), the run's place in the store; C(uploaded), how many files were uploaded.
  type: dict
  returned: success
"""
