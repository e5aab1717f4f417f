import pytest
from cell_records import record, records

from benchstack.analysis.loadpoints import by_load_point, groups_of, load_label, point_columns, point_figures
from benchstack.analysis.stats import median_ci, outliers, relative_half_width
from benchstack.results.cell import Cell


def cell(stack: str, repetition: int, concurrency: int = 10) -> Cell:
    return record({"stack": stack, "concurrency": concurrency, "repetition": repetition})


# Stored cells come sorted by file name, where repetition 10 sorts before repetition 2.
STORED = [cell("b", 1), cell("a", 10), cell("a", 2, 100), cell("a", 2), cell("a", 1)]


def test_load_points_are_sorted_and_keep_the_cells_order_within_each() -> None:
    groups = by_load_point(STORED)
    assert list(groups) == [("a", "ab", False, 10), ("a", "ab", False, 100), ("b", "ab", False, 10)]
    assert [c.repetition for c in groups["a", "ab", False, 10]] == [10, 2, 1]


def test_the_tables_show_each_load_points_repetitions_in_order() -> None:
    groups = groups_of(STORED)
    assert list(groups) == list(by_load_point(STORED))
    assert [c.repetition for c in groups["a", "ab", False, 10]] == [1, 2, 10]


def test_the_tool_column_names_keep_alive_open_loop_and_merged_loadgens() -> None:
    assert load_label("ab", True) == "ab -k"
    assert load_label("wrk", True, 2) == "wrk x2 loadgens"
    assert load_label("httperf", False) == "httperf (open loop)"


def test_a_rows_first_columns_name_the_stack_the_tool_and_the_load() -> None:
    merged = records([{"merged": {"loadgens": ["l1", "l2"], "latency": "requests"}}, {}])
    assert point_columns(("s", "wrk", True, 32), merged) == {
        "stack": "s",
        "tool": "wrk x2 loadgens",
        "load": "c32",
    }
    assert point_columns(("s", "httperf", False, 500), records([{}])) == {
        "stack": "s",
        "tool": "httperf (open loop)",
        "load": "500/s",
    }


def test_point_figures_are_the_statistics_each_reader_computed_before() -> None:

    values = [1000.0, 1040.0, 980.0, 1010.0, 995.0, 1500.0, 1005.0, 990.0, 1020.0, 1001.0]
    cells = records([{"rps": v} for v in values])
    figures = point_figures(cells)
    assert figures.rps == tuple(values)
    assert figures.n == 10
    assert figures.median == 1003.0
    assert figures.interval == median_ci(values)
    assert figures.precision == pytest.approx(relative_half_width(values), rel=1e-12)
    assert figures.outliers == sum(outliers(values)) == 1
    assert figures.interval is not None
    assert figures.spread == pytest.approx((figures.interval.high - figures.interval.low) / 2)


def test_point_figures_of_too_few_cells_have_no_interval() -> None:

    two = point_figures(records([{"rps": 10.0}, {"rps": 14.0}]))
    assert (two.median, two.interval, two.precision, two.spread) == (12.0, None, None, 2.0)
    none = point_figures([])
    assert (none.n, none.median, none.interval, none.precision, none.spread, none.outliers) == (
        0, None, None, None, None, 0,
    )  # fmt: skip
