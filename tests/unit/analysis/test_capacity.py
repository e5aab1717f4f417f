from benchstack.analysis.capacity import capacity_warnings
from benchstack.records.cellplan import ConnectionLoad


def closed(concurrency: int) -> ConnectionLoad:
    return ConnectionLoad("wrk", concurrency)


FP = {"sysctls": {"net.core.somaxconn": "4096"}, "nofile_limit": "1024"}


def test_load_within_every_limit_gives_no_warning() -> None:
    assert capacity_warnings([closed(100), closed(32)], FP, FP) == []


def test_concurrency_above_somaxconn_warns_about_the_backlog() -> None:
    small = {"sysctls": {"net.core.somaxconn": "128"}, "nofile_limit": "65536"}
    [warning] = capacity_warnings([closed(500)], small, {"nofile_limit": "65536"})
    assert "exceeds the target's net.core.somaxconn 128" in warning


def test_concurrency_near_the_open_files_limit_warns_for_each_host() -> None:
    warnings = capacity_warnings([closed(1000)], FP, FP)
    assert [w.split(" on the ")[1].split(",")[0] for w in warnings] == ["loadgen", "target"]


def test_missing_fingerprints_give_no_warning() -> None:
    assert capacity_warnings([closed(5000)], None, None) == []
    assert capacity_warnings([], FP, FP) == []


def test_open_loop_plans_count_rate_times_timeout_as_connections() -> None:
    plan = ConnectionLoad("httperf", None, rate=1000, threshold_ms=300)
    fp = {"sysctls": {"net.core.somaxconn": "128"}, "nofile_limit": "1048576"}
    [warning] = capacity_warnings([plan], fp, fp)
    assert warning.startswith("concurrency 300 exceeds the target's net.core.somaxconn 128")


def test_httperf_beyond_fd_setsize_is_warned_about() -> None:
    plan = ConnectionLoad("httperf", None, rate=2000, timeout_s=1)
    warnings = capacity_warnings([plan], None, None)
    assert warnings == [
        "httperf at 2000/s with a 1 s timeout may hold 2000 connections; it can hold about 992 "
        "(select's FD_SETSIZE) and counts the rest as fd-unavail errors"
    ]
