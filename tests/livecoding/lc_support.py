"""Test helpers for the live-coding tests: a fake clock, a virtual-time event loop, GIL pressure.

Nothing here sleeps to make time pass. Threaded code gets a :class:`FakeClock` that the test moves
by hand; asyncio code runs on :class:`VirtualTimeLoop`, whose clock jumps straight to the next
timer whenever every task is blocked, so ``await asyncio.sleep(100)`` costs no real time and
timeouts fire at exact, reproducible instants.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import selectors
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings

T = TypeVar("T")

# Deterministic hypothesis runs: fixed example sequence, no example database written to the repo,
# no per-example deadline (thread start-up time is not what these tests measure).
DETERMINISTIC = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


class FakeClock:
    """A thread-safe manual clock in seconds. Counts reads so a test can wait for a poller.

    With ``yield_gil=True`` every read releases the GIL (``time.sleep(0)``), which makes
    unsynchronised read-modify-write code interleave between threads far more often.
    """

    def __init__(self, start: float = 0.0, *, yield_gil: bool = False) -> None:
        self._now = start
        self._cond = threading.Condition()
        self._yield = yield_gil
        self.reads = 0

    def __call__(self) -> float:
        with self._cond:
            self.reads += 1
            self._cond.notify_all()
            now = self._now
        if self._yield:
            time.sleep(0)
        return now

    def advance(self, dt: float) -> None:
        with self._cond:
            self._now += dt

    def set(self, t: float) -> None:
        with self._cond:
            self._now = t

    def wait_for_reads(self, extra: int, timeout: float = 5.0) -> None:
        """Block until the clock has been read ``extra`` more times (e.g. by a worker thread)."""
        with self._cond:
            target = self.reads + extra
            if not self._cond.wait_for(lambda: self.reads >= target, timeout):
                raise AssertionError(f"clock was not read {extra} more times within {timeout}s")


class _VirtualSelector(selectors.DefaultSelector):
    loop: VirtualTimeLoop

    def select(self, timeout: float | None = None) -> list:
        events = super().select(0)  # real I/O (the loop's self-pipe) is polled, never waited for
        if events:
            return events
        if timeout is None:
            raise RuntimeError("virtual-time loop deadlocked: no ready callbacks, timers or I/O")
        self.loop.virtual_now += timeout  # jump to the next timer
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop whose ``time()`` only moves when every task is waiting on a timer."""

    def __init__(self) -> None:
        self.virtual_now = 0.0
        selector = _VirtualSelector()
        selector.loop = self
        super().__init__(selector)

    def time(self) -> float:
        return self.virtual_now


def run_virtual(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on a :class:`VirtualTimeLoop` (time starts at 0.0)."""
    loop = VirtualTimeLoop()
    try:
        return loop.run_until_complete(coro)
    finally:
        try:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


@contextlib.contextmanager
def gil_pressure(interval: float = 1e-6) -> Iterator[None]:
    """Switch threads every ``interval`` seconds of bytecode so races show up, then restore."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def join_all(threads: list[threading.Thread], timeout: float = 30.0) -> None:
    """Join threads; fail (instead of hanging the suite) if any is still running."""
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    alive = [t.name for t in threads if t.is_alive()]
    assert not alive, f"threads still running (deadlock or lost wake-up?): {alive}"


NAN, INF = float("nan"), float("inf")
BAD_COUNTS = [0, -1, 2.5, NAN, INF, True, "3"]  # not an int >= 1
BAD_SECONDS = [-1.0, NAN, "1"]  # negative, NaN, not a number


def best_seconds_per_op(setup: Callable[[int], Callable[[int], object]], size: int, ops: int = 2000,
                        limit: float = math.inf) -> float:
    """Fastest of 5 timings of ``ops`` calls of ``setup(size)``'s operation, per call.

    Only the calls are timed, on this thread's CPU clock (``time.thread_time``: time other processes
    take on a loaded machine is not counted, which wall-clock timing under a parallel build made
    flaky), with the cyclic garbage collector paused (its passes grow with the heap, not with the
    algorithm), and the minimum of five filters out the rest of the noise. A claim of O(1) per
    operation is then checked as a ratio between two sizes with a generous bound: an O(n)
    operation would give a ratio near the ratio of the sizes. With ``limit`` (seconds per call), a
    run that has already spent three times ``limit x ops`` stops and returns its rate so far (over
    ``limit`` by construction; noise does not triple a run), so a test that fails anyway does not
    spend minutes timing an O(n) operation at the large size five times.
    """
    best = math.inf
    for _ in range(5):
        op = setup(size)
        gc.disable()
        try:
            started = time.thread_time()
            for i in range(ops):
                op(i)
                if i % 64 == 63 and time.thread_time() - started > 3 * limit * ops:
                    return (time.thread_time() - started) / (i + 1)
            best = min(best, (time.thread_time() - started) / ops)
        finally:
            gc.enable()
    return best


class CountingList(list):
    """A list that counts element moves, the cost model of ``list.insert``/``del``/slice writes.

    ``insert(i, x)`` moves ``len - i`` elements, ``del l[i]`` moves ``len - i - 1``, and a slice
    assignment writes every element of the old and the new contents. ``bisect.insort`` calls the
    ``insert`` method of a list subclass, so every insertion is counted.
    """

    moves = 0

    def insert(self, i, x):  # noqa: D401 - list API
        i = len(self) if i > len(self) else i
        CountingList.moves += len(self) - i
        super().insert(i, x)

    def __delitem__(self, i):
        if isinstance(i, slice):
            CountingList.moves += len(self)
        else:
            CountingList.moves += len(self) - (i % len(self)) - 1
        super().__delitem__(i)

    def __setitem__(self, i, value):
        if isinstance(i, slice):
            value = list(value)
            CountingList.moves += len(self) + len(value)
        else:
            CountingList.moves += 1
        super().__setitem__(i, value)


class SlowKey:
    """A dict key whose ``__hash__`` and ``__eq__`` sleep: every lookup or store in a dict hands the CPU
    to the other threads for ``pause`` seconds, in the middle of whatever the caller was doing.

    Code that does check-then-act on shared state (look a key up, decide, then write) without a lock
    is then interleaved with a racing thread at each of those steps on every run, not once in a while
    when the interpreter happens to switch threads there. With the lock held across the steps, the
    other thread waits and the result is exact. Equal keys with equal ``value`` are interchangeable.
    """

    def __init__(self, value: object, pause: float = 0.002) -> None:
        self.value, self.pause = value, pause

    def __hash__(self) -> int:
        time.sleep(self.pause)
        return hash(self.value)

    def __eq__(self, other: object) -> bool:
        time.sleep(self.pause)
        return isinstance(other, SlowKey) and other.value == self.value

    def __repr__(self) -> str:
        return f"SlowKey({self.value!r})"


class SlowStr(str):
    """A ``str`` (so it passes an ``isinstance(name, str)`` check) whose hashing and comparison sleep,
    like :class:`SlowKey`: a thread switch inside every dict operation keyed by it."""

    pause = 0.002

    def __hash__(self) -> int:
        time.sleep(self.pause)
        return str.__hash__(self)

    def __eq__(self, other: object) -> bool:
        time.sleep(self.pause)
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)


def run_threads(worker: Callable[[int], object], n: int, *, pressure: bool = True) -> list[BaseException]:
    """Run ``worker(0..n-1)`` on ``n`` threads (with :func:`gil_pressure` unless told not to) and return
    what they raised, so an error on a thread fails the test instead of vanishing."""
    errors: list[BaseException] = []

    def guarded(w: int) -> None:
        try:
            worker(w)
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(w,)) for w in range(n)]
    with gil_pressure() if pressure else contextlib.nullcontext():
        for t in threads:
            t.start()
        join_all(threads)
    return errors


def traced_growth(setup: Callable[[], Callable[[int], object]], warm: int, more: int) -> int:
    """Bytes still allocated after ``more`` further calls of ``setup()``'s operation, compared with after
    ``warm`` calls (``tracemalloc``, after a full garbage collection each time): a structure that is
    bounded stays near 0 however large ``more`` is; one that leaks grows in proportion to it."""
    import tracemalloc

    op = setup()
    tracemalloc.start()
    try:
        for i in range(warm):
            op(i)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(warm, warm + more):
            op(i)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
