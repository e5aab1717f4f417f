from benchstack.capacity import capacity_warnings

FP = {"sysctls": {"net.core.somaxconn": "4096"}, "nofile_limit": "1024"}


def test_load_within_every_limit_gives_no_warning() -> None:
    assert capacity_warnings([{"concurrency": 100}, {"concurrency": 32}], FP, FP) == []


def test_concurrency_above_somaxconn_warns_about_the_backlog() -> None:
    small = {"sysctls": {"net.core.somaxconn": "128"}, "nofile_limit": "65536"}
    [warning] = capacity_warnings([{"concurrency": 500}], small, {"nofile_limit": "65536"})
    assert "exceeds the target's net.core.somaxconn 128" in warning


def test_concurrency_near_the_open_files_limit_warns_for_each_host() -> None:
    warnings = capacity_warnings([{"concurrency": 1000}], FP, FP)
    assert [w.split(" on the ")[1].split(",")[0] for w in warnings] == ["loadgen", "target"]


def test_missing_fingerprints_give_no_warning() -> None:
    assert capacity_warnings([{"concurrency": 5000}], None, None) == []
    assert capacity_warnings([], FP, FP) == []
