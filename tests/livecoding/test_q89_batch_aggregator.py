"""Q89: BatchAggregator. Timing is driven by a FakeClock; threads only for concurrency checks."""

from __future__ import annotations

import threading
from concurrent.futures import CancelledError

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lc_support import (BAD_COUNTS, BAD_SECONDS, DETERMINISTIC, INF, FakeClock, best_seconds_per_op, gil_pressure,
                        join_all)

from livecoding.batch_aggregator import BatchAggregator


class Recorder:
    """batch_fn that records each batch and answers ``item * 10``."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.lock = threading.Lock()

    def __call__(self, items: list[int]) -> list[int]:
        with self.lock:
            self.batches.append(list(items))
        return [x * 10 for x in items]


def test_flushes_when_batch_is_full() -> None:
    rec = Recorder()
    agg = BatchAggregator(rec, max_batch_size=3, max_wait=100.0, clock=FakeClock())
    f1, f2 = agg.submit(1), agg.submit(2)
    assert rec.batches == [] and not f1.done() and not f2.done()
    f3 = agg.submit(3)  # the third request fills the batch: flushed in this thread
    assert rec.batches == [[1, 2, 3]]
    assert [f.result(timeout=0) for f in (f1, f2, f3)] == [10, 20, 30]
    f4 = agg.submit(4)  # the next batch starts empty
    assert rec.batches == [[1, 2, 3]] and not f4.done()


def test_flushes_when_first_request_has_waited_max_wait() -> None:
    clock = FakeClock()
    rec = Recorder()
    agg = BatchAggregator(rec, max_batch_size=100, max_wait=1.0, clock=clock)
    fa = agg.submit(1)  # t = 0.0: the deadline is 1.0
    clock.set(0.5)
    fb = agg.submit(2)  # a later request does not move the deadline
    clock.set(0.875)
    assert agg.poll() == 0 and rec.batches == []
    clock.set(1.0)  # exactly max_wait after the first request
    assert agg.poll() == 2
    assert rec.batches == [[1, 2]]
    assert (fa.result(timeout=0), fb.result(timeout=0)) == (10, 20)
    assert agg.poll() == 0  # nothing pending, nothing flushed
    fc = agg.submit(3)  # t = 1.0: new batch, new deadline 2.0
    clock.set(1.5)
    assert agg.poll() == 0
    clock.set(2.0)
    assert agg.poll() == 1 and fc.result(timeout=0) == 30


def test_timer_thread_flushes_on_deadline_and_not_before() -> None:
    clock = FakeClock()
    rec = Recorder()
    with BatchAggregator(rec, max_batch_size=100, max_wait=0.0625, clock=clock) as agg:
        fut = agg.submit(7)
        clock.wait_for_reads(3)  # the timer thread has re-checked the clock several times
        assert not fut.done() and rec.batches == []  # fake time has not moved: no flush
        clock.advance(0.0625)
        assert fut.result(timeout=5) == 70
    assert rec.batches == [[7]]


def test_request_arriving_during_flush_goes_to_next_batch() -> None:
    entered, release = threading.Event(), threading.Event()
    batches: list[list[int]] = []

    def slow_batch(items: list[int]) -> list[int]:
        batches.append(list(items))
        if len(batches) == 1:
            entered.set()
            assert release.wait(5)
        return [x * 10 for x in items]

    agg = BatchAggregator(slow_batch, max_batch_size=2, max_wait=100.0, clock=FakeClock())
    first = agg.submit(1)
    flusher = threading.Thread(daemon=True, target=lambda: agg.submit(2), name="flusher")
    flusher.start()  # fills the batch and runs it, blocked inside batch_fn
    assert entered.wait(5)

    late: list = []
    submitter = threading.Thread(daemon=True, target=lambda: late.append(agg.submit(3)), name="late")
    submitter.start()
    submitter.join(5)
    assert not submitter.is_alive(), "submit() blocked while another batch was running"
    assert batches == [[1, 2]] and not late[0].done()

    release.set()
    join_all([flusher])
    assert first.result(timeout=5) == 10
    f4 = agg.submit(4)
    assert batches == [[1, 2], [3, 4]]
    assert (late[0].result(timeout=0), f4.result(timeout=0)) == (30, 40)


def test_exception_reaches_every_caller_in_the_batch_only() -> None:
    calls = []

    def fail_on_bad(items: list[int]) -> list[int]:
        calls.append(list(items))
        if -1 in items:
            raise RuntimeError("model crashed")
        return [x * 10 for x in items]

    agg = BatchAggregator(fail_on_bad, max_batch_size=3, max_wait=100.0, clock=FakeClock())
    bad = [agg.submit(x) for x in (1, -1, 3)]
    good = [agg.submit(x) for x in (4, 5, 6)]
    for f in bad:
        with pytest.raises(RuntimeError, match="model crashed"):
            f.result(timeout=0)
    assert [f.result(timeout=0) for f in good] == [40, 50, 60]
    assert calls == [[1, -1, 3], [4, 5, 6]]


def test_wrong_number_of_results_fails_every_caller() -> None:
    agg = BatchAggregator(lambda items: items[:-1], max_batch_size=2, max_wait=1.0, clock=FakeClock())
    futures = [agg.submit(1), agg.submit(2)]
    for f in futures:
        with pytest.raises(ValueError, match="1 results for 2 items"):
            f.result(timeout=0)


def test_cancelled_request_is_not_sent() -> None:
    rec = Recorder()
    agg = BatchAggregator(rec, max_batch_size=3, max_wait=100.0, clock=FakeClock())
    gone = agg.submit(1)
    assert gone.cancel()
    kept = [agg.submit(2), agg.submit(3)]
    assert rec.batches == [[2, 3]]
    assert [f.result(timeout=0) for f in kept] == [20, 30]
    with pytest.raises(CancelledError):
        gone.result(timeout=0)


def test_close_flushes_what_is_pending() -> None:
    rec = Recorder()
    agg = BatchAggregator(rec, max_batch_size=10, max_wait=100.0, clock=FakeClock()).start()
    futures = [agg.submit(x) for x in (1, 2)]
    agg.close()
    assert [f.result(timeout=0) for f in futures] == [10, 20]
    with pytest.raises(RuntimeError):
        agg.submit(3)


ops = st.lists(
    st.one_of(
        st.tuples(st.just("submit"), st.integers(0, 10**6)),
        st.tuples(st.just("advance"), st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.5])),
        st.tuples(st.just("poll"), st.none()),
    ),
    max_size=60,
)


@DETERMINISTIC
@given(ops=ops, max_batch_size=st.integers(1, 5), max_wait=st.sampled_from([0.0, 0.5, 1.0, 2.0]))
def test_matches_a_simple_model(ops, max_batch_size: int, max_wait: float) -> None:
    """Any single-threaded sequence of submit/advance/poll gives the batches a model predicts."""
    clock = FakeClock()
    rec = Recorder()
    agg = BatchAggregator(rec, max_batch_size=max_batch_size, max_wait=max_wait, clock=clock)
    expected: list[list[int]] = []
    pending: list[int] = []
    first_at = 0.0
    now = 0.0
    for op, arg in ops:
        if op == "submit":
            if not pending:
                first_at = now
            pending.append(arg)
            agg.submit(arg)
            if len(pending) == max_batch_size:
                expected.append(pending)
                pending = []
        elif op == "advance":
            now += arg
            clock.set(now)
        else:
            agg.poll()
            if pending and now - first_at >= max_wait:
                expected.append(pending)
                pending = []
        assert rec.batches == expected


def test_concurrent_producers_lose_and_duplicate_nothing() -> None:
    n_threads, per_thread, max_batch = 16, 250, 7
    rec = Recorder()
    results: dict[int, object] = {}
    errors: list[BaseException] = []

    def producer(tid: int) -> None:
        try:
            futures = [(tid * per_thread + i, agg.submit(tid * per_thread + i)) for i in range(per_thread)]
            for item, fut in futures:
                results[item] = fut.result(timeout=30)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    with gil_pressure(), BatchAggregator(rec, max_batch_size=max_batch, max_wait=0.001) as agg:
        threads = [threading.Thread(daemon=True, target=producer, args=(t,), name=f"p{t}") for t in range(n_threads)]
        for t in threads:
            t.start()
        join_all(threads)
    assert not errors
    everything = list(range(n_threads * per_thread))
    sent = sorted(x for batch in rec.batches for x in batch)
    assert sent == everything  # each request in exactly one batch
    assert results == {x: x * 10 for x in everything}  # and each caller got its own answer
    assert all(1 <= len(b) <= max_batch for b in rec.batches)


# ----- arguments, a dying timer, cost at two sizes (issue 28) -------------------------------------


class Fatal(BaseException):
    """Stands for KeyboardInterrupt/SystemExit raised inside batch_fn: not an Exception."""


@pytest.mark.parametrize("size", BAD_COUNTS)
def test_max_batch_size_must_be_an_int_of_at_least_one(size) -> None:
    with pytest.raises(ValueError, match="max_batch_size"):
        BatchAggregator(Recorder(), max_batch_size=size, max_wait=1.0)


@pytest.mark.parametrize("wait", BAD_SECONDS)
def test_max_wait_must_be_a_non_negative_number(wait) -> None:
    with pytest.raises(ValueError, match="max_wait"):
        BatchAggregator(Recorder(), max_batch_size=2, max_wait=wait)


@pytest.mark.parametrize("wait", [INF, 1e300])
def test_infinite_max_wait_means_size_or_close_only_and_the_timer_survives(wait) -> None:
    clock = FakeClock()
    rec = Recorder()
    agg = BatchAggregator(rec, max_batch_size=3, max_wait=wait, clock=clock).start()
    f1 = agg.submit(1)
    clock.wait_for_reads(2)  # the timer has computed its (huge) timeout ...
    agg._timer.join(0.5)  # ... and is waiting on it (a timer that chokes on it dies here)
    assert agg._timer.is_alive(), "the timer thread died on the huge timeout"
    clock.set(1e12)
    assert agg.poll() == 0 and not f1.done()  # never due by time
    assert agg._timer.is_alive(), "the timer thread died on the huge timeout"
    agg.close()  # close still flushes
    assert f1.result(timeout=5) == 10 and rec.batches == [[1]]


def test_a_base_exception_in_the_timer_fails_every_caller_and_later_submits() -> None:
    clock = FakeClock()

    def batch_fn(items: list[int]) -> list[int]:
        raise Fatal("stop")

    agg = BatchAggregator(batch_fn, max_batch_size=10, max_wait=1.0, clock=clock).start()
    futures = [agg.submit(x) for x in (1, 2)]
    clock.set(1.0)  # the timer thread runs the batch, and batch_fn kills it
    for f in futures:
        with pytest.raises(RuntimeError, match="worker stopped") as info:
            f.result(timeout=5)  # an exception, not a hang
        assert isinstance(info.value.__cause__, Fatal)
    agg._timer.join(5)
    assert not agg._timer.is_alive()
    with pytest.raises(RuntimeError, match="worker stopped"):
        agg.submit(3)  # submission fails fast once the timer is gone


def test_submit_costs_the_same_with_100_or_10000_pending() -> None:
    """The page claims submit() is O(1) under the lock: time it at two queue sizes."""

    def setup(pending: int):
        agg = BatchAggregator(lambda xs: xs, max_batch_size=10**9, max_wait=INF, clock=FakeClock())
        for x in range(pending):
            agg.submit(x)
        return agg.submit  # timed: 2,000 more submits on top of `pending`

    small, large = best_seconds_per_op(setup, 100), best_seconds_per_op(setup, 10_000)
    assert large / small < 3, f"per-submit time grew {large / small:.1f}x for 100x more pending"
