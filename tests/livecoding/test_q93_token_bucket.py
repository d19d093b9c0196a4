"""Q93: TokenBucket with an injected clock; expected values are hand arithmetic or an exact model."""

from __future__ import annotations

import random
import threading
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lc_support import DETERMINISTIC, INF, NAN, FakeClock, gil_pressure, join_all

from livecoding.token_bucket import TokenBucket, rate_limited_response, retry_after_header


def test_burst_then_rate() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate=2, burst=4, clock=clock)  # 2 tokens/s, up to 4 banked, starts full
    assert [bucket.try_acquire().allowed for _ in range(5)] == [True, True, True, True, False]
    denied = bucket.try_acquire()
    assert not denied.allowed and denied.retry_after == 0.5  # 1 token at 2 tokens/s
    clock.advance(0.5)
    assert bucket.try_acquire().allowed
    assert not bucket.try_acquire().allowed
    clock.advance(100)  # a long idle period banks at most `burst` tokens, not 200
    assert bucket.available() == 4
    assert [bucket.try_acquire().allowed for _ in range(5)] == [True, True, True, True, False]


def test_cost_and_retry_after() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate=2, burst=4, clock=clock, initial=1)
    d = bucket.try_acquire(3)  # 1 token there, 2 missing at 2/s: 1.0 s
    assert (d.allowed, d.retry_after) == (False, 1.0)
    assert bucket.available() == 1  # a refused request takes nothing
    clock.advance(0.5)
    assert bucket.try_acquire(2).allowed  # 1 + 0.5 * 2 = 2 tokens
    d = bucket.try_acquire(3)  # 0 tokens, 3 missing: 1.5 s
    assert d.retry_after == 1.5
    clock.advance(1.5)
    assert bucket.try_acquire(3).allowed
    with pytest.raises(ValueError):
        bucket.try_acquire(5)  # more than the burst can ever hold
    with pytest.raises(ValueError):
        bucket.try_acquire(0)


def test_clock_stepping_back_adds_nothing() -> None:
    clock = FakeClock(100.0)
    bucket = TokenBucket(rate=1, burst=2, clock=clock)
    bucket.try_acquire(2)
    clock.set(50.0)
    assert bucket.available() == 0
    clock.set(51.0)  # one second after the step back
    assert bucket.available() == 1


def test_http_429_with_retry_after_in_whole_seconds() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate=0.5, burst=2, clock=clock)  # one request every 2 s, burst of 2
    assert rate_limited_response(bucket) == (200, {})
    assert rate_limited_response(bucket) == (200, {})
    assert rate_limited_response(bucket) == (429, {"Retry-After": "2"})  # exactly 2.0 s
    clock.advance(0.5)
    assert rate_limited_response(bucket) == (429, {"Retry-After": "2"})  # 1.5 s rounds up
    clock.advance(1.25)
    assert rate_limited_response(bucket) == (429, {"Retry-After": "1"})  # 0.25 s rounds up to 1
    clock.advance(0.25)
    assert rate_limited_response(bucket) == (200, {})


@pytest.mark.parametrize(
    ("seconds", "header"),
    [(0.001, "1"), (0.999, "1"), (1.0, "1"), (1.001, "2"), (2.0, "2"), (2.0000000000000004, "3"), (2.01, "3")],
)
def test_retry_after_rounds_up(seconds: float, header: str) -> None:
    assert retry_after_header(seconds) == header


# Dyadic values (multiples of 1/8, rates that are powers of two) are exact in binary floating
# point, so the float bucket must agree exactly with this Fraction model.
rates = st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(2), Fraction(4)])
steps = st.lists(
    st.tuples(st.integers(0, 32).map(lambda k: Fraction(k, 8)), st.integers(1, 8)), max_size=60
)


@DETERMINISTIC
@given(rate=rates, burst=st.integers(1, 8), steps=steps)
def test_matches_exact_model_and_never_exceeds_burst_plus_rate(rate, burst, steps) -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate=float(rate), burst=float(burst), clock=clock)
    tokens, now, granted = Fraction(burst), Fraction(0), Fraction(0)
    for dt, cost in steps:
        cost = min(cost, burst)
        now += dt
        clock.set(float(now))
        tokens = min(Fraction(burst), tokens + dt * rate)
        d = bucket.try_acquire(cost)
        if tokens >= cost:
            tokens -= cost
            granted += cost
            assert d.allowed and d.retry_after == 0
        else:
            assert not d.allowed and d.retry_after == float((cost - tokens) / rate)
        assert granted <= burst + rate * now


@DETERMINISTIC
@given(rate=st.floats(0.01, 1000), burst=st.integers(1, 100), gaps=st.lists(st.floats(0, 10), max_size=30))
def test_obeying_retry_after_succeeds(rate: float, burst: int, gaps: list[float]) -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate=rate, burst=burst, clock=clock)
    for gap in gaps:
        clock.advance(gap)
        d = bucket.try_acquire(burst)
        if not d.allowed:
            header = int(retry_after_header(d.retry_after))
            assert header - 1 < d.retry_after <= header + 1e-9
            clock.advance(d.retry_after * (1 + 1e-9) + 1e-9)  # a client that waits as told
            assert bucket.try_acquire(burst).allowed


def test_threads_frozen_clock_grant_exactly_the_burst() -> None:
    clock = FakeClock(yield_gil=True)
    bucket = TokenBucket(rate=1, burst=200, clock=clock)
    granted = [0] * 16

    def worker(i: int) -> None:
        for _ in range(100):
            granted[i] += bucket.try_acquire().allowed

    with gil_pressure():
        threads = [threading.Thread(daemon=True, target=worker, args=(i,), name=f"w{i}") for i in range(16)]
        for t in threads:
            t.start()
        join_all(threads)
    assert sum(granted) == 200  # no double grants, no lost tokens


def test_threads_moving_clock_never_exceed_burst_plus_rate_times_elapsed() -> None:
    clock = FakeClock(yield_gil=True)
    rate, burst = 64.0, 10.0
    bucket = TokenBucket(rate=rate, burst=burst, clock=clock)
    granted = [0] * 16

    def worker(i: int) -> None:
        for _ in range(400):
            clock.advance(1 / 1024)  # each attempt moves time a little: refills race with takes
            granted[i] += bucket.try_acquire().allowed

    with gil_pressure():
        threads = [threading.Thread(daemon=True, target=worker, args=(i,), name=f"w{i}") for i in range(16)]
        for t in threads:
            t.start()
        join_all(threads)
    elapsed = 16 * 400 / 1024
    assert sum(granted) <= burst + rate * elapsed
    # Not stingy either. Slack: refill lost to the cap while the bucket is still full at the
    # start (at most 16 advances of 1/16 token) plus a last partial token.
    assert sum(granted) >= burst + rate * elapsed - 2


# ----- arguments, and Retry-After as a promise (issue 28) -----------------------------------------


@pytest.mark.parametrize("rate", [0, -1.0, NAN, INF, "1"])
def test_rate_must_be_a_positive_finite_number(rate) -> None:
    with pytest.raises(ValueError, match="rate"):
        TokenBucket(rate=rate, burst=2, clock=FakeClock())


@pytest.mark.parametrize("burst", [0, -1.0, NAN, INF])
def test_burst_must_be_a_positive_finite_number(burst) -> None:
    with pytest.raises(ValueError, match="burst"):
        TokenBucket(rate=1, burst=burst, clock=FakeClock())


@pytest.mark.parametrize("initial", [-1.0, NAN, INF])
def test_initial_must_be_a_finite_non_negative_number(initial) -> None:
    with pytest.raises(ValueError, match="initial"):
        TokenBucket(rate=1, burst=2, clock=FakeClock(), initial=initial)


@pytest.mark.parametrize("cost", [0, -1.0, NAN, INF, "1"])
def test_cost_must_be_a_positive_finite_number(cost) -> None:
    bucket = TokenBucket(rate=1, burst=2, clock=FakeClock())
    with pytest.raises(ValueError, match="cost"):
        bucket.try_acquire(cost)
    assert bucket.available() == 2  # a refused argument takes nothing


def _obeys_header(rate: float, burst: float, cost: float, start: float, drain: list[float], gap: float) -> bool:
    """Drain the bucket, get a 429, wait exactly the header's whole seconds: is the retry a 200?"""
    clock = FakeClock(start)
    bucket = TokenBucket(rate=rate, burst=burst, clock=clock)
    for step in drain:  # lazy refills at odd instants accumulate float drift
        clock.advance(step)
        bucket.try_acquire(min(1.0, burst))
    clock.advance(gap)
    status, headers = rate_limited_response(bucket, cost)
    if status == 200:
        return True
    clock.advance(int(headers["Retry-After"]))  # an obedient client: not a moment longer
    return rate_limited_response(bucket, cost)[0] == 200


def test_waiting_exactly_the_retry_after_header_always_succeeds() -> None:
    """20,000 seeded scenarios of odd rates, start times and refill instants (11 failed in 2025)."""
    rnd = random.Random(1)
    odd = [0.0, 0.1, 0.2, 0.3, 0.05, 0.7, 0.01, 1 / 3]
    failures = []
    for _ in range(20_000):
        rate = rnd.choice([0.1, 0.3, 0.7, 1 / 3, 1.5, 3.0, 7.0, 10 / 3, 100 / 7, 0.9, 1.1, 2.2, 0.45])
        burst = rnd.choice([1.0, 2.5, 3.0, 10.0, 4.0, 7.0])
        cost = rnd.choice(sorted({1.0, burst / 2, burst}))
        start = rnd.choice([0.0, 0.1, 1234.567, 1e6 + 0.3, 5.0, 0.3])
        drain = [rnd.choice(odd) for _ in range(rnd.randint(0, 12))]
        gap = rnd.choice([0.0, 0.05, 0.37, 0.1, 0.2, 1 / 3])
        if not _obeys_header(rate, burst, cost, start, drain, gap):
            failures.append((rate, burst, cost, start, drain, gap))
    assert not failures, f"{len(failures)} clients got a second 429, e.g. {failures[:2]}"
    # A case found that way: at 0.3 tokens/s the missing 1.0 token is computed as 3.3333333333
    # seconds plus float dust; the old 1e-9 slack rounded that to "3", and 3 s was not enough.
    assert _obeys_header(0.3, 1.0, 1.0, 0.3, [0.2], 1 / 3)


def test_retry_after_is_exact_when_the_arithmetic_is() -> None:
    # No slack, no over-rounding: 1 token missing at 0.5/s is exactly 2 s, sent as "2".
    clock = FakeClock()
    bucket = TokenBucket(rate=0.5, burst=1, clock=clock)
    assert rate_limited_response(bucket) == (200, {})
    assert rate_limited_response(bucket) == (429, {"Retry-After": "2"})
    clock.advance(1.0)
    assert rate_limited_response(bucket) == (429, {"Retry-After": "1"})
