import re

from benchstack.model import fatal_messages


def test_fatal_messages_are_each_patterns_lines_stripped_in_pattern_order() -> None:
    patterns = (re.compile(r"^(b: .+)$", re.M), re.compile(r"^(a: .+)$", re.M))
    text = "a: one  \nb: two\t\nnot fatal\na: three\n"
    assert fatal_messages(patterns, text) == ["b: two", "a: one", "a: three"]
    assert fatal_messages(patterns, "all fine\n") == []
