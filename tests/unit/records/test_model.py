import re

from conftest import read_data

from benchstack.kinds.loadtools import ab, wrk
from benchstack.records.model import error_count, failed_count, failed_rate, fatal_messages, slow_rate


def test_fatal_messages_are_each_patterns_lines_stripped_in_pattern_order() -> None:
    patterns = (re.compile(r"^(b: .+)$", re.M), re.compile(r"^(a: .+)$", re.M))
    text = "a: one  \nb: two\t\nnot fatal\na: three\n"
    assert fatal_messages(patterns, text) == ["b: two", "a: one", "a: three"]
    assert fatal_messages(patterns, "all fine\n") == []


def test_a_slow_request_is_failed_only_when_it_failed_too() -> None:
    # /mixed under ab -k: 516 non-2xx (484 also length failures); 600 of its 1000 requests slowed past the
    # threshold, as in test_runner: 516 failed + 84 slow ones beyond them.
    p = ab.parse(read_data("ab", "gnuplot-mixed.txt"))
    p.errors["over_threshold"] = 600
    assert (error_count(ab.COUNTING, p.errors), failed_count(ab.COUNTING, p.errors)) == (600, 516)
    assert failed_rate(ab.COUNTING, 1000, p.errors) == 0.516
    assert slow_rate(ab.COUNTING, 1000, p.errors) == 0.6
    # wrk: 7 timeouts (failed, not in the histogram) and 3 slow responses among the 192 with a latency
    w = wrk.parse(read_data("wrk", "report-timeouts.txt"))
    w.errors["over_threshold"] = 3
    assert (error_count(wrk.COUNTING, w.errors), failed_count(wrk.COUNTING, w.errors)) == (10, 7)
    assert failed_rate(wrk.COUNTING, w.requests_completed, w.errors) == 7 / w.requests_completed


def test_slow_responses_alone_are_no_failed_request_and_uncounted_ones_no_rate() -> None:
    p = ab.parse(read_data("ab", "gnuplot-slow.txt"))
    assert slow_rate(ab.COUNTING, 400, p.errors) is None  # no threshold: nothing counted
    p.errors["over_threshold"] = 31
    assert (failed_count(ab.COUNTING, p.errors), failed_rate(ab.COUNTING, 400, p.errors)) == (0, 0.0)
    assert slow_rate(ab.COUNTING, 400, p.errors) == 31 / 400
