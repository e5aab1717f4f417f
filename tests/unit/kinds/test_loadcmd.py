import pytest

from benchstack.kinds.loadtools.base import ClosedRun
from benchstack.kinds.loadtools.loadcmd import build_command
from benchstack.plan.loadplan import Load

URL = "http://127.0.0.1:8001/hello/bar"


def test_ab_command_plain() -> None:
    assert build_command("ab", ClosedRun(URL, 100, requests=2000)) == ["ab", "-n", "2000", "-c", "100", URL]


def test_ab_command_with_keepalive_timeout_and_time_limit_puts_t_before_n() -> None:
    # ab's -t resets the request count to 50000, so -n must follow it.
    cmd = build_command("ab", ClosedRun(URL, 10, requests=500, duration_s=5, keepalive=True, timeout_s=3))
    assert cmd == ["ab", "-t", "5", "-n", "500", "-c", "10", "-k", "-s", "3", URL]
    assert cmd.index("-t") < cmd.index("-n")


def test_ab_requires_requests() -> None:
    with pytest.raises(ValueError, match="ab needs requests"):
        build_command("ab", ClosedRun(URL, 10))


def test_ab_rejects_fewer_requests_than_concurrency() -> None:
    with pytest.raises(ValueError, match=r"requests >= concurrency \(-n 5 < -c 10\)"):
        build_command("ab", ClosedRun(URL, 10, requests=5))


def test_ab_rejects_threads_and_huge_concurrency() -> None:
    with pytest.raises(ValueError, match="threads applies to wrk only"):
        build_command("ab", ClosedRun(URL, 10, requests=100, threads=2))
    with pytest.raises(ValueError, match="at most 20000"):
        build_command("ab", ClosedRun(URL, 20001, requests=30000))


def test_ab_needs_a_path_in_the_url() -> None:
    with pytest.raises(ValueError, match="needs a path"):
        build_command("ab", ClosedRun("http://127.0.0.1:8001", 1, requests=1))


def test_wrk_command_defaults_threads_to_two_and_always_prints_latency() -> None:
    assert build_command("wrk", ClosedRun(URL, 32, duration_s=10)) == [
        "wrk", "-t", "2", "-c", "32", "-d", "10s", "--latency", URL,
    ]  # fmt: skip


def test_wrk_threads_default_never_exceeds_connections() -> None:
    assert build_command("wrk", ClosedRun(URL, 1, duration_s=3))[:5] == ["wrk", "-t", "1", "-c", "1"]


def test_wrk_command_with_threads_and_timeout() -> None:
    cmd = build_command("wrk", ClosedRun(URL, 64, duration_s=30, threads=4, keepalive=True, timeout_s=2))
    assert cmd == ["wrk", "-t", "4", "-c", "64", "-d", "30s", "--latency", "--timeout", "2s", URL]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"concurrency": 32}, "wrk needs duration_s"),
        ({"concurrency": 32, "duration_s": 10, "requests": 100}, "cannot run a fixed number of requests"),
        ({"concurrency": 2, "duration_s": 10, "threads": 4}, r"threads <= connections \(-t 4 > -c 2\)"),
        ({"concurrency": 32, "duration_s": 10, "keepalive": False}, "always keeps connections alive"),
        ({"concurrency": 0, "duration_s": 10}, "concurrency must be a positive integer"),
        ({"concurrency": 4, "duration_s": 0}, "duration_s must be a positive integer"),
        ({"concurrency": 4, "duration_s": 1, "timeout_s": 0.5}, "timeout_s must be a positive integer"),
    ],
)
def test_wrk_bad_combinations_raise(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_command("wrk", ClosedRun(URL, **kwargs))


def test_unknown_tool_and_bad_url_raise() -> None:
    with pytest.raises(ValueError, match="unknown tool 'vegeta'"):
        build_command("vegeta", ClosedRun(URL, 1))
    with pytest.raises(ValueError, match="http:// or https://"):
        build_command("ab", ClosedRun("127.0.0.1:8001/", 1, requests=1))


@pytest.mark.parametrize(
    ("plans", "warmup", "tools"),
    [
        # wrk counts no requests: a request-count warm-up runs ab, which the loadgen then needs too
        ([{"tool": "wrk", "concurrency": [32]}], {"requests": 2000}, ["ab", "wrk"]),
        ([{"tool": "wrk", "concurrency": [32]}], {"duration_s": 1}, ["wrk"]),
        ([{"tool": "ab", "concurrency": [8]}], {"duration_s": 1}, ["ab", "wrk"]),
        ([{"tool": "ab", "concurrency": [8]}], {"requests": 100}, ["ab"]),
        ([{"tool": "httperf", "rate": [100]}], {"requests": 100}, ["httperf"]),
        ([{"tool": "httperf", "rate": [100]}, {"tool": "wrk", "concurrency": [4]}], None, ["httperf", "wrk"]),
    ],
)
def test_load_tools_are_the_plans_and_their_warmups(
    plans: list[dict[str, object]], warmup: dict[str, int] | None, tools: list[str]
) -> None:
    assert Load.from_dict({"plans": plans, "warmup": warmup}, first_stack="a").tools() == tools
