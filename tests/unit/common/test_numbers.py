import math

import pytest

from benchstack.common.numbers import as_number, fmt, is_finite_number, is_int, is_number, median


@pytest.mark.parametrize("value", [True, False])
def test_a_bool_is_neither_an_int_nor_a_number(value: bool) -> None:
    assert not is_int(value)
    assert not is_number(value)
    assert not is_finite_number(value)
    assert as_number(value) is None


def test_ints_and_floats_are_numbers_and_only_ints_are_ints() -> None:
    assert is_int(0) and is_int(-3)
    assert not is_int(3.0) and not is_int("3") and not is_int(None)
    assert is_number(3) and is_number(2.5)
    assert not is_number("2.5") and not is_number(None)


def test_nan_and_infinity_are_numbers_but_not_finite_ones() -> None:
    for value in (math.nan, math.inf, -math.inf):
        assert is_number(value)
        assert not is_finite_number(value)
    assert is_finite_number(0) and is_finite_number(-1.5)


def test_as_number_gives_a_float_or_none() -> None:
    assert as_number(3) == 3.0 and isinstance(as_number(3), float)
    assert as_number(0.25) == 0.25
    assert as_number("0.25") is None
    assert as_number(None) is None


def test_median_skips_missing_values() -> None:
    assert median([3, None, 1, 2]) == 2.0
    assert median([4, 1, None]) == 2.5
    assert median([]) is None
    assert median([None, None]) is None


def test_fmt_prints_two_decimals_or_a_dash() -> None:
    assert fmt(None) == "-"
    assert fmt(1234.5) == "1234.50"
    assert fmt(2) == "2.00"
    assert fmt(0.125, 1) == "0.1"
