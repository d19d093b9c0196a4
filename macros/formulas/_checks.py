"""Input checks shared by the formula modules. Every failure is a ValueError naming the input."""

from __future__ import annotations

import math
from numbers import Real


def _is_real(v: object) -> bool:
    if type(v) is int or type(v) is float:  # the common case, without the slower ABC check
        return True
    return isinstance(v, Real) and not isinstance(v, bool)


def positive(name: str, value: float) -> float:
    """``value`` must be a finite number > 0."""
    if not _is_real(value) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return value


def non_negative(name: str, value: float) -> float:
    """``value`` must be a finite number >= 0."""
    if not _is_real(value) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    return value


def positive_int(name: str, value: int) -> int:
    """``value`` must be an integer >= 1 (a float with an integral value is accepted)."""
    if _is_real(value) and math.isfinite(value) and float(value).is_integer() and value >= 1:
        return int(value)
    raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")


def non_negative_int(name: str, value: int) -> int:
    """``value`` must be an integer >= 0."""
    if _is_real(value) and math.isfinite(value) and float(value).is_integer() and value >= 0:
        return int(value)
    raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")


def fraction(name: str, value: float, *, allow_zero: bool = False, allow_one: bool = True) -> float:
    """``value`` must lie in (0, 1] (or [0, 1] / (0, 1) as flagged)."""
    if not _is_real(value) or not math.isfinite(value):
        raise ValueError(f"{name} must be a number between 0 and 1, got {value!r}")
    low_ok = value >= 0 if allow_zero else value > 0
    high_ok = value <= 1 if allow_one else value < 1
    if not (low_ok and high_ok):
        lo = "[0" if allow_zero else "(0"
        hi = "1]" if allow_one else "1)"
        raise ValueError(f"{name} must lie in {lo}, {hi}, got {value!r}")
    return value
