"""The plan fact (``bench_plan``, :func:`benchstack.plan.resolved.compile_plan`) of every experiment file the
project holds, and the problems of every one it refuses, as tests/data/plan/golden.json holds them
(test_plan_golden.py). Written before the stack sections and the plan became typed (issue 26, item 1); a
change to the file is a change of what the playbooks, the templates and run.json read
(:meth:`benchstack.plan.resolved.ResolvedPlan.to_dict` makes it).

Each experiment is compiled as the plan play compiles it: without targets, on one target loaded by itself
(:func:`benchstack.plan.resolved.with_hosts`), and on two targets measured in parallel; seed 7, the same
fingerprint key every time (:data:`KEY`). Its run.json experiment
(:func:`benchstack.plan.resolved.run_record`) is kept too. The plan on one target is kept whole (JSON with
sorted keys); the others as one digest per top-level key, so a difference names its key; and each as the
digest of its JSON in the order it was built (``-v`` output and run.json print the fact's keys in that
order).

Regenerate (only for an intended change of the plan, and say so in the commit):
``.venv/bin/python tests/unit/plan_cases.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchstack.plan.experiment import ExperimentError  # noqa: E402
from benchstack.plan.resolved import ENV_KEY_VARIABLE, compile_plan, run_record, with_hosts  # noqa: E402

GOLDEN = ROOT / "tests" / "data" / "plan" / "golden.json"
# Every YAML file of the project that holds stacks: the catalogue, the e2e test's, the Molecule scenarios'
# (their bad plans too) and the corpus of bad inputs (refused, some of them accepted with a yes).
EXPERIMENTS = sorted(
    [
        *(ROOT / "experiments").glob("*.yml"),
        ROOT / "tests" / "e2e" / "experiment.yml",
        *(ROOT / "molecule").glob("*/experiment.yml"),
        *(ROOT / "molecule").glob("*/bad/*.yml"),
        *(p for p in (ROOT / "tests" / "bad-inputs").glob("*.yml") if not p.with_suffix(".links").exists()),
    ]
)
KEY = bytes(range(32))
SEED = 7


def relative(value: Any) -> Any:
    """``value`` with the project's folder written as ``<root>``: the golden file holds on any checkout."""
    return json.loads(json.dumps(value).replace(str(ROOT), "<root>"))


def digest(value: Any, sort_keys: bool = False) -> str:
    """sha256 of ``value`` as JSON, in its own key order unless ``sort_keys`` (16 hex digits)."""
    return hashlib.sha256(json.dumps(value, sort_keys=sort_keys).encode()).hexdigest()[:16]


def outcome(path: Path) -> dict[str, Any]:
    """The plans of the experiment in ``path`` (none, one and two targets), or the problems it is refused
    with; a plan that is too large is compiled again with a yes (its problems are kept too)."""
    result: dict[str, Any] = {}
    try:
        compile_plan(path, seed=SEED)
    except ExperimentError as exc:
        result["problems"] = exc.problems
    try:
        plan = compile_plan(path, seed=SEED, allow_large=True).to_dict()
        one = with_hosts(
            compile_plan(path, targets=["t1"], seed=SEED), ["t1"], ["t1"], {}, lambda t: t
        ).to_dict()
        two = with_hosts(
            compile_plan(path, targets=["t1", "t2"], parallel=True, seed=SEED),
            ["t1", "t2"],
            ["l1", "l2"],
            {"l1": "t1", "l2": "t2"},
            lambda t: f"{t}.example",
        ).to_dict()
    except ExperimentError:
        return relative(result)
    record = run_record(one, "inventories/local", ["t1"], ["t1"], {})
    plans = {"plan": plan, "one_target": one, "two_targets": two, "run_experiment": record["experiment"]}
    plans = relative(plans)
    result["one_target"] = plans["one_target"]
    result |= {
        name: {key: digest(part, sort_keys=True) for key, part in value.items()}
        if isinstance(value, dict)
        else value
        for name, value in plans.items()
        if name != "one_target"
    }
    result["as_built"] = {name: digest(value) for name, value in plans.items()}
    return relative(result)


def golden() -> dict[str, Any]:
    """Every experiment file's outcome, by its path in the project."""
    with tempfile.TemporaryDirectory() as tmp:
        key = Path(tmp) / "key"
        key.write_bytes(KEY)
        before = os.environ.get(ENV_KEY_VARIABLE)
        os.environ[ENV_KEY_VARIABLE] = str(key)
        try:
            return {str(p.relative_to(ROOT)): outcome(p) for p in EXPERIMENTS}
        finally:
            if before is None:
                del os.environ[ENV_KEY_VARIABLE]
            else:
                os.environ[ENV_KEY_VARIABLE] = before


if __name__ == "__main__":
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(golden(), sort_keys=True, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN.relative_to(ROOT)}")
