"""Q91: P99 (any percentile) over a sliding time window.

Two answers with different costs:

* :class:`ExactSlidingPercentile` keeps every sample of the window: a deque in arrival order (for
  expiry) plus a sorted list (for rank queries). Exact; memory O(n) for n samples in the window.
* :class:`BucketedSlidingPercentile` keeps counts in log-spaced buckets per time slot. Memory is
  O(slots x buckets) whatever the traffic; the answer is the upper edge of the bucket that holds
  the exact percentile, so for samples in ``[min_value, max_value]`` it never under-reports and
  over-reports by a relative error of at most ``ratio - 1``.

Both use the nearest-rank percentile: the ``ceil(q * n)``-th smallest of the ``n`` samples. Time
comes from an injected clock (seconds); samples are assumed to arrive in non-decreasing time.
"""

from __future__ import annotations

import bisect
import math
import time
from collections import deque
from collections.abc import Callable
from fractions import Fraction

__all__ = ["BucketedSlidingPercentile", "ExactSlidingPercentile", "nearest_rank"]


# --8<-- [start:exact]
def nearest_rank(q: float, n: int) -> int:
    """1-based rank of the ``q`` quantile among ``n`` samples: ``ceil(q * n)``, at least 1.

    ``q`` is read as the decimal it was written as (``0.9`` is 9/10, not the nearest binary
    fraction), so ``q * n`` landing on an integer is not pushed up by rounding error.
    """
    if not 0 < q <= 1:
        raise ValueError("q must be in (0, 1]")
    exact = Fraction(repr(q)) * n
    return max(1, math.ceil(exact))


class ExactSlidingPercentile:
    """Exact percentiles of the samples taken in the last ``window`` seconds.

    A sample taken at ``t`` is in the window at ``now`` iff ``now - window < t <= now``.
    """

    def __init__(self, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        if window <= 0:
            raise ValueError("window must be > 0")
        self._window = window
        self._clock = clock
        self._arrivals: deque[tuple[float, float]] = deque()  # (time, value), oldest first
        self._sorted: list[float] = []  # the same values, ascending

    def add(self, value: float) -> None:
        now = self._clock()
        self._expire(now)
        self._arrivals.append((now, value))
        bisect.insort(self._sorted, value)  # O(log n) search + O(n) shift

    def quantile(self, q: float) -> float | None:
        """Nearest-rank ``q`` quantile of the window, or ``None`` if it is empty."""
        self._expire(self._clock())
        if not self._sorted:
            return None
        return self._sorted[nearest_rank(q, len(self._sorted)) - 1]

    def _expire(self, now: float) -> None:
        cutoff = now - self._window
        while self._arrivals and self._arrivals[0][0] <= cutoff:
            _, value = self._arrivals.popleft()
            # Remove one copy of value; any copy will do, equal values are interchangeable.
            del self._sorted[bisect.bisect_left(self._sorted, value)]
    # --8<-- [end:exact]

    def p99(self) -> float | None:
        return self.quantile(0.99)

    def __len__(self) -> int:
        self._expire(self._clock())
        return len(self._sorted)


# --8<-- [start:bucketed]
class BucketedSlidingPercentile:
    """Approximate percentiles from log-spaced buckets, over ``slots`` time slots.

    Bucket ``i`` counts values in ``(edge[i-1], edge[i]]`` with ``edge[i] = min_value * ratio**i``.
    A query returns the upper edge of the bucket holding the exact nearest-rank value ``v``, so
    ``v <= estimate <= v * ratio`` for ``min_value <= v <= max_value``; values outside that range
    are clamped into the end buckets. Expiry moves in whole slots of ``slot_width`` seconds.
    """

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
        if not (0 < min_value < max_value and ratio > 1 and slot_width > 0 and slots >= 1):
            raise ValueError(
                "need 0 < min_value < max_value, ratio > 1, slot_width > 0, slots >= 1"
            )
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

    def add(self, value: float) -> None:
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
        while self._slots and self._slots[0][0] <= slot - self._max_slots:
            _, counts = self._slots.popleft()
            for i, c in enumerate(counts):
                self._totals[i] -= c
            self._n -= sum(counts)
        return slot
    # --8<-- [end:bucketed]

    @property
    def edges(self) -> list[float]:
        return list(self._edges)

    def p99(self) -> float | None:
        return self.quantile(0.99)

    def __len__(self) -> int:
        self._advance()
        return self._n
