"""Q91: sliding-window percentiles, exact and bucketed, against a brute-force reference."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lc_support import DETERMINISTIC, INF, NAN, CountingList, FakeClock

from livecoding.sliding_p99 import BucketedSlidingPercentile, ExactSlidingPercentile, nearest_rank


def reference(samples: list[tuple[float, float]], now: float, window: float, percent: int) -> float | None:
    """Brute force: keep samples with now - window < t <= now, sort, take rank ceil(p*n/100)."""
    live = sorted(v for t, v in samples if now - window < t <= now)
    if not live:
        return None
    rank = -(-percent * len(live) // 100)  # integer ceiling, no floats involved
    return live[rank - 1]


def test_nearest_rank_reads_q_as_a_decimal() -> None:
    # 0.07 * 100 is 7.000000000000001 in binary floating point; a naive ceil gives rank 8.
    assert math.ceil(0.07 * 100) == 8
    assert nearest_rank(0.07, 100) == 7
    assert nearest_rank(0.99, 100) == 99
    assert nearest_rank(0.99, 1) == 1
    assert nearest_rank(1.0, 5) == 5
    with pytest.raises(ValueError):
        nearest_rank(0.0, 5)


@DETERMINISTIC
@given(percent=st.integers(1, 100), n=st.integers(1, 10**6))
def test_nearest_rank_is_the_integer_ceiling(percent: int, n: int) -> None:
    assert nearest_rank(percent / 100, n) == -(-percent * n // 100)


def test_exact_hand_example_and_expiry_boundary() -> None:
    clock = FakeClock()
    w = ExactSlidingPercentile(window=10.0, clock=clock)
    assert w.p99() is None
    for v in range(100, 0, -1):  # 100 .. 1, arrival order must not matter
        w.add(float(v))
    # 100 samples: P99 is the 99th smallest, P50 the 50th, q=1.0 the largest.
    assert (w.p99(), w.quantile(0.5), w.quantile(1.0)) == (99.0, 50.0, 100.0)
    clock.set(9.5)
    w.add(1000.0)  # 101 samples: rank ceil(99.99) = 100 -> 100.0
    assert w.p99() == 100.0 and len(w) == 101
    clock.set(10.0)  # the t=0 samples are now exactly window old: out (now - window < t)
    assert len(w) == 1 and w.p99() == 1000.0
    clock.set(19.5)
    assert len(w) == 0 and w.p99() is None


def test_exact_expiry_removes_one_copy_of_duplicates() -> None:
    clock = FakeClock()
    w = ExactSlidingPercentile(window=5.0, clock=clock)
    for t, v in [(0, 7.0), (1, 7.0), (2, 3.0), (3, 7.0)]:
        clock.set(t)
        w.add(v)
    clock.set(5.0)  # only the t=0 sample expires: 7, 3, 7 remain
    assert len(w) == 3 and w.quantile(0.34) == 7.0 and w.quantile(0.33) == 3.0


stream = st.lists(
    st.tuples(
        st.integers(0, 3),  # gap to the previous sample, seconds
        st.floats(1.0, 1e4, allow_nan=False, allow_infinity=False),
        st.integers(1, 100),  # percentile queried after this sample
    ),
    min_size=1,
    max_size=120,
)


@DETERMINISTIC
@given(samples=stream, window=st.integers(1, 20))
def test_exact_matches_reference(samples, window: int) -> None:
    clock = FakeClock()
    w = ExactSlidingPercentile(window=float(window), clock=clock)
    seen: list[tuple[float, float]] = []
    now = 0
    for gap, value, percent in samples:
        now += gap
        clock.set(float(now))
        w.add(value)
        seen.append((now, value))
        assert w.quantile(percent / 100) == reference(seen, now, window, percent)
        assert w.p99() == reference(seen, now, window, 99)


@DETERMINISTIC
@given(samples=stream, window=st.integers(1, 20), ratio=st.sampled_from([1.01, 1.05, 1.1, 1.5, 2.0]))
def test_bucketed_error_bound(samples, window: int, ratio: float) -> None:
    """Estimate is the smallest bucket edge >= the exact value, so v <= est <= v * ratio."""
    clock = FakeClock()
    b = BucketedSlidingPercentile(
        min_value=1.0, max_value=1e4, ratio=ratio, slot_width=1.0, slots=window, clock=clock
    )
    edges = b.edges
    assert edges[0] == 1.0 and edges[-1] >= 1e4
    for lo, hi in zip(edges, edges[1:]):
        assert hi / lo == pytest.approx(ratio, rel=1e-12)
    seen: list[tuple[float, float]] = []
    now = 0
    for gap, value, percent in samples:
        now += gap
        clock.set(float(now))  # timestamps on slot boundaries: bucketed expiry equals exact expiry
        b.add(value)
        seen.append((now, value))
        exact = reference(seen, now, window, percent)
        est = b.quantile(percent / 100)
        assert est == min(e for e in edges if e >= exact)
        assert exact <= est <= exact * ratio * (1 + 1e-12)
        assert (est - exact) / exact <= (ratio - 1) * (1 + 1e-9)  # the stated relative error bound


def test_bucketed_hand_example() -> None:
    # ratio 2 from 1: edges 1, 2, 4, ..., 1024. Bucket i holds (edge[i-1], edge[i]].
    b = BucketedSlidingPercentile(min_value=1, max_value=1000, ratio=2, slot_width=1, slots=60, clock=FakeClock())
    assert b.edges == [2.0**i for i in range(11)]
    for v in range(1, 101):
        b.add(v)
    assert b.p99() == 128  # exact P99 is 99, which lies in (64, 128]
    assert b.quantile(0.04) == 4  # exact value 4 sits on an edge: reported as itself
    assert b.quantile(0.05) == 8  # exact value 5 lies in (4, 8]
    assert b.quantile(0.01) == 1


def test_bucketed_out_of_range_values_are_clamped() -> None:
    b = BucketedSlidingPercentile(min_value=1, max_value=100, ratio=2, slot_width=1, slots=1, clock=FakeClock())
    b.add(0.001)
    assert b.quantile(1.0) == 1  # below min_value: reported as min_value
    b.add(10**9)
    assert b.quantile(1.0) == 128  # above max_value: clamped into the top bucket (under-reports)


def test_bucketed_window_expiry_by_slot() -> None:
    clock = FakeClock()
    b = BucketedSlidingPercentile(min_value=1, max_value=1000, ratio=2, slot_width=1, slots=5, clock=clock)
    b.add(3)  # t = 0, slot 0
    clock.set(2.5)
    b.add(300)  # slot 2
    clock.set(4.99)  # slots 0..4 are live
    assert len(b) == 2 and b.quantile(0.5) == 4
    clock.set(5.0)  # slot 5 is current: slot 0 has left the window
    assert len(b) == 1 and b.quantile(0.5) == 512
    clock.set(7.0)  # slot 2 has left too
    assert len(b) == 0 and b.p99() is None


# ----- inputs, time order, float boundaries, expiry cost (issue 28) -------------------------------


def test_nan_samples_are_refused_and_leave_the_window_intact() -> None:
    clock = FakeClock()
    w = ExactSlidingPercentile(window=10.0, clock=clock)
    w.add(1.0)
    with pytest.raises(ValueError, match="NaN"):
        w.add(NAN)  # the minimal breaking case was 1, nan, 0, 0
    w.add(0.0)
    w.add(0.0)
    assert (len(w), w.quantile(0.5), w.quantile(1.0)) == (3, 0.0, 1.0)
    clock.set(10.0)
    assert len(w) == 0 and w.p99() is None  # every sample expired, none stuck
    w.add(INF)  # infinities sort fine and are kept
    assert w.p99() == INF


@pytest.mark.parametrize("window", [0.0, -1.0, NAN, "10"])
def test_exact_window_must_be_a_positive_number(window) -> None:
    with pytest.raises(ValueError, match="window"):
        ExactSlidingPercentile(window=window, clock=FakeClock())


def test_an_infinite_window_never_expires() -> None:
    clock = FakeClock()
    w = ExactSlidingPercentile(window=INF, clock=clock)
    w.add(3.0)
    clock.set(1e300)
    assert len(w) == 1 and w.p99() == 3.0


def test_a_clock_that_steps_back_records_the_sample_at_the_newest_time() -> None:
    clock = FakeClock(10.0)
    w = ExactSlidingPercentile(window=10.0, clock=clock)
    w.add(5.0)  # t = 10
    clock.set(0.0)
    w.add(1.0)  # read as t = 0, recorded as t = 10: arrival order is time order
    clock.set(19.5)
    assert len(w) == 2
    clock.set(20.0)
    assert len(w) == 0


def test_the_window_edge_is_compared_in_floating_point_as_stated() -> None:
    # The page's rule: in the window iff t > now - window, computed in binary floating point.
    # 0.3 - 0.2 is 0.09999999999999998, so a sample at t = 0.1 is still in at now = 0.3.
    clock = FakeClock(0.1)
    w = ExactSlidingPercentile(window=0.2, clock=clock)
    w.add(1.0)
    clock.set(0.3)
    assert 0.3 - 0.2 < 0.1 and len(w) == 1


def _expiry_moves(n: int, expire_fraction: float) -> int:
    """List element moves spent expiring ``expire_fraction`` of ``n`` random samples in one call."""
    clock = FakeClock()
    w = ExactSlidingPercentile(window=100.0, clock=clock)
    w._sorted = CountingList()  # white-box: count the moves of the sorted list
    rnd = random.Random(n)
    for i in range(n):
        clock.set(i / n)  # n samples spread over [0, 1)
        w.add(rnd.random())
    CountingList.moves = 0
    clock.set(100.0 + expire_fraction)  # everything older than expire_fraction goes in one call
    cutoff = (100.0 + expire_fraction) - 100.0
    assert len(w) == sum(i / n > cutoff for i in range(n))
    return CountingList.moves


@pytest.mark.parametrize("fraction", [1.0, 0.5])
def test_expiring_much_of_the_window_at_once_is_linear(fraction: float) -> None:
    small, large = _expiry_moves(2_000, fraction), _expiry_moves(8_000, fraction)
    # One-by-one deletion moves ~n/2 elements per expired sample: ~n^2 in total, ratio ~16 here.
    assert large <= 3 * 8_000, f"{large} moves to expire part of an 8,000-sample window"
    assert large / small < 6, f"moves grew {large / small:.1f}x for 4x the samples"


class CountingFloat(float):
    compares = 0

    def __lt__(self, other):
        CountingFloat.compares += 1
        return float.__lt__(self, other)


@pytest.mark.parametrize("n", [1_000, 16_000])
def test_add_does_a_binary_search_and_one_shift(n: int) -> None:
    """The page's cost of add: O(log n) comparisons to find the place, at most n moves to shift."""
    w = ExactSlidingPercentile(window=INF, clock=FakeClock())
    w._sorted = CountingList()
    rnd = random.Random(n)
    for _ in range(n):
        w.add(CountingFloat(rnd.random()))
    CountingFloat.compares = CountingList.moves = 0
    for _ in range(100):
        w.add(CountingFloat(rnd.random()))
    assert CountingFloat.compares <= 100 * (math.log2(n + 100) + 2)
    assert CountingList.moves <= 100 * (n + 100)


@pytest.mark.parametrize("value", [NAN, "1"])
def test_bucketed_refuses_nan_samples(value) -> None:
    b = BucketedSlidingPercentile(min_value=1, max_value=100, ratio=2, slot_width=1, slots=1, clock=FakeClock())
    with pytest.raises(ValueError):
        b.add(value)
    assert len(b) == 0


@pytest.mark.parametrize(
    "bad",
    [dict(max_value=INF), dict(min_value=NAN), dict(ratio=NAN), dict(ratio=INF), dict(slot_width=NAN),
     dict(slot_width=INF), dict(slots=2.5), dict(slots=0)],
)
def test_bucketed_configuration_is_finite_and_checked(bad) -> None:
    args = dict(min_value=1.0, max_value=100.0, ratio=2.0, slot_width=1.0, slots=5) | bad
    with pytest.raises(ValueError):
        BucketedSlidingPercentile(**args, clock=FakeClock())


def test_bucketed_clock_stepping_back_counts_in_the_newest_slot() -> None:
    clock = FakeClock(10.0)
    b = BucketedSlidingPercentile(min_value=1, max_value=100, ratio=2, slot_width=1, slots=5, clock=clock)
    b.add(3)  # slot 10
    clock.set(2.0)
    b.add(30)  # read as slot 2, counted in slot 10
    clock.set(14.5)
    assert len(b) == 2
    clock.set(15.0)
    assert len(b) == 0
