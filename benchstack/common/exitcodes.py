"""The exit codes of bench-stack, one scheme for the CLI and ``./run bench`` (docs/verdict.md, "Exit codes").

==  =========================================================================================================
0   passed: the verdict is valid (or not gated on), every threshold passed, no regression
1   error, nothing judged: bad input (unparsable output, invalid cells, run.json or experiment, no cells);
    ``./run bench``: the setup or the playbook failed before the run's gate (ansible-playbook's own code is
    printed)
2   wrong usage (argparse; ``./run`` with an unknown command)
3   the verdict is invalid (``validate --strict``, the run's gate); ``compare --strict``: the hosts or setup
    differ
4   a regression: ``compare --fail-on-regression``, a load point of B slower than A by more than the margin
    (the history's ``regress`` uses 4 for the same finding)
5   the object store failed (the history's ``publish`` and ``import s3://``: issue 42)
6   the verdict is noisy (with ``fail_on`` noisy, the default)
7   a threshold failed (``load.thresholds``; ``validate --fail-on-slow``: slow responses above
    ``load.max_error_rate``)
==  =========================================================================================================

When several apply, the code is the first of: invalid (the numbers do not measure the stacks, so nothing else
about them holds), a threshold failed (a definite answer against the user's own limit), noisy (an answer not
yet resolved). ``fail_on`` says what fails the gate: ``noisy`` (default: anything but valid, or a failed
threshold), ``invalid`` (an invalid verdict or a failed threshold), ``never`` (always 0: the report is the
result).

``ansible-playbook bench-stack.yml`` can only end with its own code 2 for a failed task: the gate fails the
playbook's last task with a message naming the code above, and ``./run bench`` exits with that code
(:data:`OUTCOME_ENV`).
"""

from __future__ import annotations

OK = 0
ERROR = 1
USAGE = 2
INVALID = 3
REGRESSION = 4
STORE_FAILED = 5
NOISY = 6
THRESHOLD_FAILED = 7

FAIL_ON = ("noisy", "invalid", "never")
DEFAULT_FAIL_ON = "noisy"

# The environment variable that names a file the report play writes the run's gate into (its first line the
# exit code, its second the run folder): how ./run bench tells a gate that failed the playbook from a task
# that failed.
OUTCOME_ENV = "BENCH_STACK_OUTCOME"

MEANING = {
    OK: "passed",
    ERROR: "error: nothing judged",
    USAGE: "wrong usage",
    INVALID: "the verdict is invalid",
    REGRESSION: "a regression",
    STORE_FAILED: "the object store failed",
    NOISY: "the verdict is noisy",
    THRESHOLD_FAILED: "a threshold failed",
}


def gate_code(status: str, thresholds_failed: int, fail_on: str = DEFAULT_FAIL_ON) -> int:
    """The exit code of a run whose verdict is ``status`` (valid, noisy, invalid) with ``thresholds_failed``
    thresholds failed (or without a value), gated by ``fail_on`` (:data:`FAIL_ON`)."""
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail_on: must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    if fail_on == "never":
        return OK
    if status == "invalid":
        return INVALID
    if thresholds_failed:
        return THRESHOLD_FAILED
    if status == "noisy" and fail_on == "noisy":
        return NOISY
    return OK


def gate_message(code: int, status: str, thresholds_failed: int, fail_on: str) -> str:
    """One line that says why the gate ended the run with ``code``."""
    if code == OK:
        kept = (
            " (bench_fail_on=never)"
            if fail_on == "never" and (status != "valid" or thresholds_failed)
            else ""
        )
        return f"verdict {status}, thresholds failed: {thresholds_failed}: exit 0{kept}"
    return (
        f"exit {code}, {MEANING[code]}: verdict {status}, thresholds failed: {thresholds_failed} "
        f"(bench_fail_on={fail_on}; -e bench_fail_on=never keeps the exit code 0)"
    )
