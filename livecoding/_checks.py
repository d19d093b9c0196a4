"""Argument checks and the worker-death error shared by the live-coding answers.

Every number a caller passes is checked once, at construction or at the call, so that a NaN, an
infinity or a wrong type fails at once with a ``ValueError`` naming the argument, instead of
spinning a CPU (a NaN timeout never compares as expired) or killing a worker thread later
(``threading`` refuses waits longer than ``threading.TIMEOUT_MAX`` with ``OverflowError``).
"""

from __future__ import annotations

import math
import numbers
import threading

__all__ = ["WorkerDied", "check_count", "check_real", "wait_slice"]


class WorkerDied(RuntimeError):
    """The single worker stopped (``batch_fn`` raised a ``BaseException``, or it was cancelled).

    Set on the futures of every request it can no longer answer, and raised by ``submit()``
    afterwards, so callers get an error instead of waiting forever.
    """


def check_count(name: str, value: object, minimum: int = 1) -> int:
    """An ``int`` (not ``bool``) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return value


def check_real(
    name: str, value: object, *, allow_zero: bool = True, allow_inf: bool = True
) -> float:
    """A real number (seconds, a rate, a cost): never NaN or negative; ``inf`` only if allowed."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero) or (math.isinf(value) and not allow_inf):
        low = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {low}{'' if allow_inf else ' and finite'}, got {value!r}")
    return float(value)


def wait_slice(remaining: float) -> float:
    """One ``Condition.wait`` at most: a longer (or infinite) wait is done as several."""
    return min(remaining, threading.TIMEOUT_MAX)
