"""Number checks, the median over repetitions and how a table prints a number: one definition each.

JSON and YAML read ``true`` as a bool, and a bool is an int in Python, so every check here refuses bools:
``requests: true`` is not one request.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from typing import TypeGuard


def is_int(value: object) -> TypeGuard[int]:
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    """An int or a float that is not a bool (NaN and infinities included)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_finite_number(value: object) -> bool:
    """A number (:func:`is_number`) that is neither NaN nor infinite."""
    return is_number(value) and math.isfinite(value)


def as_number(value: object) -> float | None:
    """``value`` as a float when it is a number (:func:`is_number`), else None."""
    return float(value) if is_number(value) else None


def median(values: Iterable[float | int | None]) -> float | None:
    """The median of the values that are not None, or None when there are none."""
    present = [float(v) for v in values if v is not None]
    return statistics.median(present) if present else None


def fmt(value: float | None, digits: int = 2) -> str:
    """A table's number: ``digits`` decimals, ``-`` for None."""
    return "-" if value is None else f"{value:.{digits}f}"


def step_for(value: float, spread: float | None) -> float:
    """The rounding step a figure known to +-``spread`` supports: the decade below the spread's leading digit
    (39708.29 +-1985 -> 100: 39700); without a spread, three significant digits of ``value``."""
    if spread is not None and spread > 0:
        return 10.0 ** (math.floor(math.log10(spread)) - 1)
    if value:
        return 10.0 ** (math.floor(math.log10(abs(value))) - 2)
    return 0.01


def rounded(value: float | None, step: float) -> str:
    """``value`` to a multiple of ``step`` (a power of ten), with no more decimals than the step has;
    ``-`` for None."""
    if value is None:
        return "-"
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    return f"{round(value / step) * step:.{decimals}f}"
