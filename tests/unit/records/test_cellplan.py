import json

import pytest

from benchstack.plan.experiment import cells, experiment_from_dict
from benchstack.records.cellplan import CellPlan

EXPERIMENT = {
    "name": "cellplan",
    "stacks": [{"name": "s", "port": 8001, "app": {"kind": "static"}, "front": {"kind": "nginx"}}],
    "load": {
        "warmup": {"requests": 10},
        "plans": [
            {"tool": "ab", "concurrency": [2], "requests": 20, "keepalive": True},
            {"tool": "httperf", "rate": [50], "duration_s": 2},
        ],
    },
}


def test_a_cell_plan_comes_back_from_its_json_as_it_was() -> None:
    planned = cells(experiment_from_dict(EXPERIMENT))
    assert {c.tool for c in planned} == {"ab", "httperf"}
    for cell in planned:
        written = json.loads(json.dumps(cell.to_dict()))
        assert list(written) == list(CellPlan.__dataclass_fields__)
        assert CellPlan.from_dict(written) == cell


def test_what_is_not_a_cell_plan_is_refused_by_name() -> None:
    [cell, *_] = cells(experiment_from_dict(EXPERIMENT))
    with pytest.raises(ValueError, match="^not a cell plan: unknown keys bogus, other$"):
        CellPlan.from_dict({**cell.to_dict(), "other": 1, "bogus": 2})
    missing = cell.to_dict()
    del missing["port"]
    with pytest.raises(ValueError, match="^not a cell plan: .*'port'"):
        CellPlan.from_dict(missing)
