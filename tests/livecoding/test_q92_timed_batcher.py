"""Q92: TimedBatcher (worker thread, FakeClock) and AsyncTimedBatcher (virtual-time event loop)."""

from __future__ import annotations

import asyncio
import random
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lc_support import (BAD_COUNTS, BAD_SECONDS, DETERMINISTIC, INF, FakeClock, best_seconds_per_op, gil_pressure,
                        join_all, run_virtual)

from livecoding.timed_batcher import AsyncTimedBatcher, TimedBatcher

# Fake-clock units. The worker's real wait is at most MAX_WAIT seconds, so it re-reads the frozen
# fake clock every few tens of milliseconds; the outcome never depends on that real interval.
MAX_WAIT = 0.0625  # 1/16: exact in binary, so sums of fake times compare exactly


class Recorder:
    def __init__(self, clock=None) -> None:
        self.batches: list[list[int]] = []
        self.times: list[float] = []
        self.clock = clock
        self.lock = threading.Lock()

    def __call__(self, items: list[int]) -> list[int]:
        with self.lock:
            self.batches.append(list(items))
            if self.clock is not None:
                self.times.append(self.clock())
        return [x * 10 for x in items]


# ----- threaded --------------------------------------------------------------------------------


def test_threaded_flushes_when_full() -> None:
    clock = FakeClock()
    rec = Recorder()
    with TimedBatcher(rec, max_batch_size=3, max_wait=MAX_WAIT, clock=clock) as b:
        futures = [b.submit(x) for x in (1, 2, 3)]
        assert [f.result(timeout=5) for f in futures] == [10, 20, 30]  # fake time never moved
    assert rec.batches == [[1, 2, 3]]


def test_threaded_deadline_counts_from_first_request() -> None:
    clock = FakeClock()
    rec = Recorder(clock)
    with TimedBatcher(rec, max_batch_size=100, max_wait=MAX_WAIT, clock=clock) as b:
        fa = b.submit(1)  # t = 0: deadline MAX_WAIT
        clock.wait_for_reads(3)
        clock.set(MAX_WAIT / 2)
        fb = b.submit(2)  # must not push the deadline to 1.5 * MAX_WAIT
        clock.wait_for_reads(3)  # the worker has looked at the clock since: still early
        assert not fa.done() and not fb.done() and rec.batches == []
        clock.set(MAX_WAIT)
        assert (fa.result(timeout=5), fb.result(timeout=5)) == (10, 20)
    assert rec.batches == [[1, 2]] and rec.times == [MAX_WAIT]


def test_threaded_request_during_flush_goes_to_next_batch() -> None:
    clock = FakeClock()
    entered, release = threading.Event(), threading.Event()
    batches: list[list[int]] = []

    def slow(items: list[int]) -> list[int]:
        batches.append(list(items))
        if len(batches) == 1:
            entered.set()
            assert release.wait(5)
        return [x * 10 for x in items]

    with TimedBatcher(slow, max_batch_size=2, max_wait=MAX_WAIT, clock=clock) as b:
        first = [b.submit(1), b.submit(2)]
        assert entered.wait(5)  # the worker is inside batch_fn with [1, 2]
        late: list = []
        submitter = threading.Thread(daemon=True, target=lambda: late.extend(b.submit(x) for x in (3, 4, 5)))
        submitter.start()
        submitter.join(5)
        assert not submitter.is_alive(), "submit() waited for the running batch"
        assert batches == [[1, 2]] and not any(f.done() for f in late)
        # Time passes during the flush: request 5 (arrived at t=0) is overdue when the flush ends,
        # so it must go right after [3, 4] without a fresh max_wait.
        clock.set(10.0)
        release.set()
        assert [f.result(timeout=5) for f in first + late] == [10, 20, 30, 40, 50]
    assert batches == [[1, 2], [3, 4], [5]]


def test_threaded_error_reaches_every_caller_of_that_batch() -> None:
    def fail_on_negative(items: list[int]) -> list[int]:
        if any(x < 0 for x in items):
            raise RuntimeError("bad batch")
        return [x * 10 for x in items]

    with TimedBatcher(fail_on_negative, max_batch_size=2, max_wait=MAX_WAIT, clock=FakeClock()) as b:
        bad = [b.submit(1), b.submit(-1)]
        good = [b.submit(3), b.submit(4)]
        for f in bad:
            with pytest.raises(RuntimeError, match="bad batch"):
                f.result(timeout=5)
        assert [f.result(timeout=5) for f in good] == [30, 40]


def test_threaded_close_drains_queue() -> None:
    rec = Recorder()
    b = TimedBatcher(rec, max_batch_size=10, max_wait=1e6, clock=FakeClock())
    futures = [b.submit(x) for x in range(3)]
    b.close()
    assert [f.result(timeout=0) for f in futures] == [0, 10, 20]
    with pytest.raises(RuntimeError):
        b.submit(9)


def test_threaded_many_producers_with_failures() -> None:
    n_threads, per_thread, max_batch = 16, 250, 8
    rec_lock = threading.Lock()
    batches: list[list[int]] = []

    def batch_fn(items: list[int]) -> list[int]:
        with rec_lock:
            batches.append(list(items))
        if any(x % 97 == 0 for x in items):
            raise RuntimeError("poisoned")
        return [x * 10 for x in items]

    outcome: dict[int, object] = {}

    def producer(tid: int) -> None:
        futures = [(x, b.submit(x)) for x in range(tid * per_thread, (tid + 1) * per_thread)]
        for x, f in futures:
            try:
                outcome[x] = f.result(timeout=30)
            except RuntimeError as exc:
                outcome[x] = exc

    with gil_pressure(), TimedBatcher(batch_fn, max_batch_size=max_batch, max_wait=0.002) as b:
        threads = [threading.Thread(daemon=True, target=producer, args=(t,), name=f"p{t}") for t in range(n_threads)]
        for t in threads:
            t.start()
        join_all(threads)

    total = n_threads * per_thread
    assert sorted(x for batch in batches for x in batch) == list(range(total))
    assert all(1 <= len(batch) <= max_batch for batch in batches)
    for batch in batches:
        poisoned = any(x % 97 == 0 for x in batch)
        for x in batch:
            if poisoned:
                assert isinstance(outcome[x], RuntimeError)  # every caller of a failed batch
            else:
                assert outcome[x] == x * 10  # and only those; the rest get their own result


# ----- asyncio -----------------------------------------------------------------------------------


class AsyncRecorder:
    def __init__(self, hold: asyncio.Event | None = None) -> None:
        self.batches: list[list[int]] = []
        self.times: list[float] = []
        self.hold = hold

    async def __call__(self, items: list[int]) -> list[int]:
        self.batches.append(list(items))
        self.times.append(asyncio.get_running_loop().time())
        if self.hold is not None and len(self.batches) == 1:
            await self.hold.wait()
        await asyncio.sleep(0.01)  # the model takes time
        return [x * 10 for x in items]


async def submit_at(b: AsyncTimedBatcher, t: float, item: int):
    loop = asyncio.get_running_loop()
    await asyncio.sleep(t - loop.time())
    return await b.submit(item)


def test_async_flush_on_size_and_on_deadline_from_first_request() -> None:
    async def main():
        rec = AsyncRecorder()
        async with AsyncTimedBatcher(rec, max_batch_size=3, max_wait=1.0) as b:
            results = await asyncio.gather(
                submit_at(b, 0.0, 1), submit_at(b, 0.25, 2), submit_at(b, 0.5, 3),  # full at 0.5
                submit_at(b, 2.0, 4), submit_at(b, 2.5, 5),  # deadline 3.0, set by item 4
                submit_at(b, 5.0, 6),  # alone: deadline 6.0
            )
        return rec, results

    rec, results = run_virtual(main())
    assert results == [10, 20, 30, 40, 50, 60]
    assert rec.batches == [[1, 2, 3], [4, 5], [6]]
    assert rec.times == [0.5, 3.0, 6.0]


def test_async_request_during_flush_goes_to_next_batch() -> None:
    async def main():
        hold = asyncio.Event()
        rec = AsyncRecorder(hold)
        async with AsyncTimedBatcher(rec, max_batch_size=2, max_wait=1.0) as b:
            first = [asyncio.create_task(b.submit(x)) for x in (1, 2)]
            await asyncio.sleep(0.1)  # batch [1, 2] is running and held
            late = [asyncio.create_task(b.submit(x)) for x in (3, 4, 5)]  # t = 0.1
            await asyncio.sleep(5)  # the flush takes a long time; 5's deadline (1.1) passes
            assert rec.batches == [[1, 2]]
            hold.set()
            results = await asyncio.gather(*first, *late)
        return rec, results

    rec, results = run_virtual(main())
    assert results == [10, 20, 30, 40, 50]
    assert rec.batches == [[1, 2], [3, 4], [5]]
    # [3, 4] goes as soon as the worker is free (5.1, plus the 0.01 s model time); [5] is overdue,
    # so it follows right after [3, 4] instead of waiting a fresh max_wait.
    assert rec.times[1] == pytest.approx(5.11) and rec.times[2] == pytest.approx(5.12)


def test_async_error_reaches_every_caller_and_cancelled_callers_are_skipped() -> None:
    seen: list[list[int]] = []

    async def batch_fn(items: list[int]) -> list[int]:
        seen.append(list(items))
        if -1 in items:
            raise RuntimeError("bad batch")
        return [x * 10 for x in items]

    async def main():
        async with AsyncTimedBatcher(batch_fn, max_batch_size=3, max_wait=1.0) as b:
            bad = [asyncio.create_task(b.submit(x)) for x in (1, -1, 2)]
            gone = asyncio.create_task(b.submit(7))
            kept = asyncio.create_task(b.submit(8))
            await asyncio.sleep(0.5)
            gone.cancel()  # its caller gave up before the deadline at 1.0
            bad_out = await asyncio.gather(*bad, return_exceptions=True)
            return bad_out, await kept, gone

    bad_out, kept, gone = run_virtual(main())
    assert all(isinstance(e, RuntimeError) and str(e) == "bad batch" for e in bad_out)
    assert kept == 80 and gone.cancelled()
    assert seen == [[1, -1, 2], [8]]


@settings(DETERMINISTIC, max_examples=12)
@given(seed=st.integers(0, 2**32 - 1), max_batch=st.integers(1, 9))
def test_async_many_tasks_no_loss_no_duplicates(seed: int, max_batch: int) -> None:
    rnd = random.Random(seed)
    arrivals = sorted((rnd.uniform(0, 50), i) for i in range(1500))

    async def main():
        rec = AsyncRecorder()
        async with AsyncTimedBatcher(rec, max_batch_size=max_batch, max_wait=0.05) as b:
            results = await asyncio.gather(*(submit_at(b, t, i) for t, i in arrivals))
        return rec, results

    rec, results = run_virtual(main())
    assert results == [i * 10 for _, i in arrivals]
    assert sorted(x for batch in rec.batches for x in batch) == list(range(1500))
    assert all(1 <= len(batch) <= max_batch for batch in rec.batches)


# ----- arguments, a dying worker, shutdown deadlines, cost at two sizes (issue 28) -----------------


class Fatal(BaseException):
    """Stands for KeyboardInterrupt/SystemExit raised inside batch_fn."""


@pytest.mark.parametrize("cls", [TimedBatcher, AsyncTimedBatcher])
@pytest.mark.parametrize("size", BAD_COUNTS)
def test_max_batch_size_is_checked(cls, size) -> None:
    with pytest.raises(ValueError, match="max_batch_size"):
        cls(Recorder(), max_batch_size=size, max_wait=1.0)


@pytest.mark.parametrize("cls", [TimedBatcher, AsyncTimedBatcher])
@pytest.mark.parametrize("wait", BAD_SECONDS)
def test_max_wait_is_checked(cls, wait) -> None:
    with pytest.raises(ValueError, match="max_wait"):
        cls(Recorder(), max_batch_size=2, max_wait=wait)


@pytest.mark.parametrize("wait", [INF, 1e300])
def test_threaded_infinite_max_wait_flushes_on_size_or_close_and_the_worker_survives(wait) -> None:
    clock = FakeClock()
    rec = Recorder()
    b = TimedBatcher(rec, max_batch_size=2, max_wait=wait, clock=clock)
    f1 = b.submit(1)
    clock.wait_for_reads(1)  # the worker computed its (huge) remaining time ...
    b._worker.join(0.5)  # ... and waits on it; a worker that chokes on it dies here
    assert b._worker.is_alive(), "the worker died on the huge timeout"
    f2, f3 = b.submit(2), b.submit(3)
    assert (f1.result(timeout=5), f2.result(timeout=5)) == (10, 20)  # size still works
    b.close()
    assert f3.result(timeout=5) == 30 and rec.batches == [[1, 2], [3]]


def test_threaded_dead_worker_fails_callers_and_refuses_submits() -> None:
    def batch_fn(items: list[int]) -> list[int]:
        if 2 in items:
            raise Fatal("stop")
        return [x * 10 for x in items]

    entered, release = threading.Event(), threading.Event()

    def gated(items: list[int]) -> list[int]:
        entered.set()
        assert release.wait(5)
        return batch_fn(items)

    b = TimedBatcher(gated, max_batch_size=2, max_wait=MAX_WAIT, clock=FakeClock())
    doomed = [b.submit(1), b.submit(2)]
    assert entered.wait(5)
    queued = b.submit(3)  # waits in the queue behind the batch that will kill the worker
    release.set()
    for f in [*doomed, queued]:
        with pytest.raises(RuntimeError, match="worker stopped"):
            f.result(timeout=5)  # an exception, not a hang
    b._worker.join(5)
    with pytest.raises(RuntimeError, match="worker stopped"):
        b.submit(4)
    b.close()  # still returns


def test_async_batch_fn_raising_cancelled_error_fails_callers_and_later_submits() -> None:
    async def batch_fn(items: list[int]) -> list[int]:
        raise asyncio.CancelledError()

    async def main():
        b = AsyncTimedBatcher(batch_fn, max_batch_size=1, max_wait=1.0)
        first = await asyncio.gather(b.submit(1), return_exceptions=True)
        await asyncio.sleep(0)
        try:
            second = await asyncio.wait_for(b.submit(2), 10)  # used to hang forever
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            second = exc
        return first[0], second

    first, second = run_virtual(main())
    assert isinstance(first, BaseException)  # the caller of that batch got an answer
    assert isinstance(second, RuntimeError) and "worker stopped" in str(second), repr(second)


def test_async_aclose_cut_short_by_a_deadline_answers_every_caller() -> None:
    async def slow(items: list[int]) -> list[int]:
        await asyncio.sleep(100)
        return [x * 10 for x in items]

    async def main():
        b = AsyncTimedBatcher(slow, max_batch_size=2, max_wait=1.0)
        callers = [asyncio.create_task(b.submit(x)) for x in range(5)]
        await asyncio.sleep(0.5)  # [0, 1] is running; 2, 3, 4 are queued
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(b.aclose(), 5)  # the shutdown deadline cancels aclose()
        done, pending = await asyncio.wait(callers, timeout=10)
        with pytest.raises(RuntimeError):
            await b.submit(9)
        return callers, pending

    callers, pending = run_virtual(main())
    assert not pending, "callers left waiting after the shutdown deadline"
    for task in callers:
        assert not task.cancelled()  # the callers were not cancelled: they get an error
        assert isinstance(task.exception(), RuntimeError) and "worker stopped" in str(task.exception())


def test_threaded_submit_costs_the_same_with_100_or_10000_queued() -> None:
    """The page claims submit is O(1): time it at two queue lengths, with the worker waiting."""

    batchers: list[TimedBatcher] = []

    def setup(queued: int):
        b = TimedBatcher(lambda xs: xs, max_batch_size=10**9, max_wait=1e6, clock=FakeClock())
        batchers.append(b)
        for x in range(queued):
            b.submit(x)
        return b.submit

    small, large = best_seconds_per_op(setup, 100), best_seconds_per_op(setup, 10_000)
    for b in batchers:
        b.close()
    assert large / small < 3, f"per-submit time grew {large / small:.1f}x for 100x more queued"
