"""Q91: P99 (any percentile) over a sliding time window.

Two answers with different costs:

* :class:`ExactSlidingPercentile` keeps every sample of the window: a deque in arrival order (for
  expiry) plus a sorted list (for rank queries). Exact; memory O(n) for n samples in the window.
* :class:`BucketedSlidingPercentile` keeps counts in log-spaced buckets per time slot. Memory is
  O(slots x buckets) whatever the traffic; the answer is the upper edge of the bucket that holds
  the exact percentile, so for samples in ``[min_value, max_value]`` it never under-reports and
  over-reports by a relative error of at most ``ratio - 1``.

Both use the nearest-rank percentile: the ``ceil(q * n)``-th smallest of the ``n`` samples. Time
comes from an injected clock (seconds). Time order is enforced, not assumed: a clock reading
earlier than one already seen is read as the latest time seen, so samples stay in arrival order.
A NaN sample has no rank and is refused with ``ValueError``; infinities are ordinary values.
"""

from __future__ import annotations

import bisect
import math
import numbers
import time
from collections import Counter, deque
from collections.abc import Callable
from fractions import Fraction

from ._checks import check_count, check_real

__all__ = ["BucketedSlidingPercentile", "ExactSlidingPercentile", "nearest_rank"]


def check_sample(value: float) -> float:
    """A sample must be a real number that sorts: NaN compares false with everything."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"a sample must be a number and not NaN, got {value!r}")
    return value

def check_bucket_settings(min_value: float, max_value: float, ratio: float, slot_width: float, slots: int) -> None:
    """Finite numbers with ``0 < min_value < max_value``, ``ratio > 1``, ``slot_width > 0``, ``slots >= 1``.

    An infinite ``max_value`` would build edges until the float overflows.
    """
    for name, v in (("min_value", min_value), ("max_value", max_value), ("ratio", ratio)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    if not (0 < min_value < max_value and ratio > 1):
        raise ValueError("need 0 < min_value < max_value and ratio > 1")
    check_real("slot_width", slot_width, allow_zero=False, allow_inf=False)
    check_count("slots", slots)


# --8<-- [start:exact]
def nearest_rank(q: float, n: int) -> int:
    """``ceil(q * n)``, at least 1, with ``q`` read as the decimal it was written as."""
    if not 0 < q <= 1:
        raise ValueError("q must be in (0, 1]")
    exact = Fraction(repr(q)) * n
    return max(1, math.ceil(exact))


class ExactSlidingPercentile:
    """Exact percentiles of the samples with ``t > now - window`` (in floats; inf: keep all)."""

    def __init__(self, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._window = check_real("window", window, allow_zero=False)
        self._clock = clock
        self._latest = -math.inf  # latest clock reading: time never goes back in here
        self._arrivals: deque[tuple[float, float]] = deque()  # (time, value), oldest first
        self._sorted: list[float] = []  # the same values, ascending

    def add(self, value: float) -> None:
        check_sample(value)
        now = self._now()
        self._expire(now)
        self._arrivals.append((now, value))
        bisect.insort(self._sorted, value)  # O(log n) search + O(n) shift

    def quantile(self, q: float) -> float | None:
        """Nearest-rank ``q`` quantile of the window, or ``None`` if it is empty."""
        self._expire(self._now())
        if not self._sorted:
            return None
        return self._sorted[nearest_rank(q, len(self._sorted)) - 1]

    def _now(self) -> float:
        self._latest = max(self._latest, self._clock())  # a step back reads as "no time passed"
        return self._latest

    def _expire(self, now: float) -> None:
        cutoff = now - self._window
        gone = []
        while self._arrivals and self._arrivals[0][0] <= cutoff:
            gone.append(self._arrivals.popleft()[1])
        if len(gone) <= _FEW:  # usual case: one O(n) delete each (any equal copy will do)
            for value in gone:
                del self._sorted[bisect.bisect_left(self._sorted, value)]
        else:  # after an idle gap: one O(n) pass, not len(gone) shifts
            drop = Counter(gone)
            kept = []
            for value in self._sorted:
                if drop[value]:
                    drop[value] -= 1
                else:
                    kept.append(value)
            self._sorted[:] = kept
    # --8<-- [end:exact]

    def p99(self) -> float | None:
        return self.quantile(0.99)

    def __len__(self) -> int:
        self._expire(self._now())
        return len(self._sorted)


_FEW = 8  # expiring more samples than this in one call rebuilds the sorted list in one pass


# --8<-- [start:bucketed-head]
class BucketedSlidingPercentile:
    """Approximate percentiles from log-spaced buckets, over ``slots`` time slots.

    Bucket ``i`` counts values in ``(edge[i-1], edge[i]]`` with ``edge[i] = min_value * ratio**i``.
    A query returns the upper edge of the bucket holding the exact nearest-rank value ``v``, so
    ``v <= estimate <= v * ratio`` for ``min_value <= v <= max_value``; values outside that range
    are clamped into the end buckets. Expiry moves in whole slots of ``slot_width`` seconds.
    """

    # --8<-- [end:bucketed-head]
    def __init__(
        self,
        *,
        min_value: float,
        max_value: float,
        ratio: float,
        slot_width: float,
        slots: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        check_bucket_settings(min_value, max_value, ratio, slot_width, slots)
        edges = [min_value]
        while edges[-1] < max_value:
            edges.append(edges[-1] * ratio)
        self._edges = edges
        self._slot_width = slot_width
        self._clock = clock
        self._slots: deque[tuple[int, list[int]]] = deque()  # (slot number, counts), oldest first
        self._max_slots = slots
        self._totals = [0] * len(edges)  # sum of the live slots' counts
        self._n = 0

    # --8<-- [start:bucketed-body]
    def add(self, value: float) -> None:
        check_sample(value)
        slot = self._advance()
        i = min(bisect.bisect_left(self._edges, value), len(self._edges) - 1)
        if not self._slots or self._slots[-1][0] != slot:
            self._slots.append((slot, [0] * len(self._edges)))
        self._slots[-1][1][i] += 1
        self._totals[i] += 1
        self._n += 1

    def quantile(self, q: float) -> float | None:
        """Upper edge of the bucket that holds the nearest-rank ``q`` quantile, or ``None``."""
        self._advance()
        if self._n == 0:
            return None
        rank = nearest_rank(q, self._n)
        seen = 0
        for i, count in enumerate(self._totals):
            seen += count
            if seen >= rank:
                return self._edges[i]
        raise AssertionError("bucket counts do not add up")  # unreachable while _n is consistent

    def _advance(self) -> int:
        """Drop slots that left the window; return the current slot number."""
        slot = math.floor(self._clock() / self._slot_width)
        if self._slots:
            slot = max(slot, self._slots[-1][0])  # a step back counts in the newest slot
        while self._slots and self._slots[0][0] <= slot - self._max_slots:
            _, counts = self._slots.popleft()
            for i, c in enumerate(counts):
                self._totals[i] -= c
            self._n -= sum(counts)
        return slot
    # --8<-- [end:bucketed-body]

    @property
    def edges(self) -> list[float]:
        return list(self._edges)

    def p99(self) -> float | None:
        return self.quantile(0.99)

    def __len__(self) -> int:
        self._advance()
        return self._n
