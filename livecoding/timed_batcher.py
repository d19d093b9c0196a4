"""Q92: time-boxed batching, as a worker thread and as an asyncio task.

Both versions follow the same rules:

* a batch is sent when it holds ``max_batch_size`` requests, or when its *first* request has
  waited ``max_wait`` seconds (the deadline is ``first.arrived + max_wait``, fixed when that
  request arrives; later arrivals do not push it back);
* one worker sends one batch at a time; the batch is cut from the queue before ``batch_fn``
  runs, so a request that arrives during a flush waits in the queue for the next batch;
* if more than ``max_batch_size`` requests are queued, the oldest ``max_batch_size`` go first
  and the next batch's deadline is measured from its own first request, which may already be
  due;
* every caller gets its own result, and an exception from ``batch_fn`` reaches every caller
  of that batch;
* if the worker stops (``batch_fn`` raises a ``BaseException`` such as ``KeyboardInterrupt``, an
  async ``batch_fn`` raises ``CancelledError``, or a deadline cancels ``aclose()``), every caller
  not yet answered gets :class:`WorkerDied`, and so does every later ``submit()``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._checks import WorkerDied, check_count, check_real, wait_slice

__all__ = ["AsyncTimedBatcher", "TimedBatcher", "WorkerDied"]

T = TypeVar("T")
R = TypeVar("R")


@dataclass(slots=True)
class _Request(Generic[T]):
    item: T
    arrived: float
    future: Any  # concurrent.futures.Future (threads) or asyncio.Future (asyncio)


# --8<-- [start:threaded-head]
class TimedBatcher(Generic[T, R]):
    """Threaded time-boxed batcher: ``submit()`` from any thread, one worker runs ``batch_fn``."""

    # --8<-- [end:threaded-head]
    def __init__(
        self,
        batch_fn: Callable[[list[T]], Sequence[R]],
        *,
        max_batch_size: int,
        max_wait: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._batch_fn = batch_fn
        self._max_batch_size = check_count("max_batch_size", max_batch_size)
        self._max_wait = check_real("max_wait", max_wait)  # inf: flush on size or close only
        self._clock = clock
        self._cond = threading.Condition()  # guards _queue, _closed and _dead
        self._queue: deque[_Request[T]] = deque()
        self._closed = False
        self._dead: BaseException | None = None  # what stopped the worker, if anything
        self._worker = threading.Thread(target=self._work, name="timed-batcher", daemon=True)
        self._worker.start()

    # --8<-- [start:threaded]
    def submit(self, item: T) -> Future[R]:
        future: Future[R] = Future()
        with self._cond:
            if self._dead is not None:
                raise WorkerDied("timed-batcher worker stopped") from self._dead
            if self._closed:
                raise RuntimeError("batcher is closed")
            self._queue.append(_Request(item, self._clock(), future))
            # Wake the worker only when its decision can change: a first request starts a
            # deadline, a full batch is ready. A worker busy in batch_fn misses the notify,
            # which is fine: it re-checks the queue before it waits again.
            if len(self._queue) == 1 or len(self._queue) == self._max_batch_size:
                self._cond.notify()
        return future

    def _next_batch(self) -> list[_Request[T]] | None:
        """Block until a batch is due and cut it; ``None`` once closed and drained."""
        with self._cond:
            while True:
                if self._queue:
                    deadline = self._queue[0].arrived + self._max_wait
                    remaining = deadline - self._clock()
                    if len(self._queue) >= self._max_batch_size or remaining <= 0 or self._closed:
                        n = min(len(self._queue), self._max_batch_size)
                        return [self._queue.popleft() for _ in range(n)]
                    self._cond.wait(wait_slice(remaining))  # woken early by submit(); re-check
                elif self._closed:
                    return None
                else:
                    self._cond.wait()

    def _work(self) -> None:
        try:
            while (batch := self._next_batch()) is not None:
                self._run(batch)  # lock not held: submit() keeps filling the next batch
        except BaseException as exc:  # nobody is left to answer: fail the queue, refuse submits
            with self._cond:
                self._dead = exc
                queued, self._queue = list(self._queue), deque()
            _fail(queued, exc)
    # --8<-- [end:threaded]

    def _run(self, batch: list[_Request[T]]) -> None:
        live = [r for r in batch if r.future.set_running_or_notify_cancel()]
        if not live:
            return
        try:
            results = list(self._batch_fn([r.item for r in live]))
            if len(results) != len(live):
                raise ValueError(f"batch_fn returned {len(results)} results for {len(live)} items")
        except Exception as exc:
            for r in live:
                r.future.set_exception(exc)
        except BaseException as exc:  # answer this batch, then let it stop the worker
            _fail(live, exc)
            raise
        else:
            for r, result in zip(live, results):
                r.future.set_result(result)

    def close(self) -> None:
        """Flush everything queued, then stop the worker."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._worker.join()

    def __enter__(self) -> TimedBatcher[T, R]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# --8<-- [start:async-head]
class AsyncTimedBatcher(Generic[T, R]):
    """asyncio time-boxed batcher: ``await submit(x)`` from any task on one event loop.

    No lock: only code on the loop touches the queue, and there is no ``await`` between
    checking the queue and cutting the batch. The clock defaults to the loop's clock.
    """

    # --8<-- [end:async-head]
    def __init__(
        self,
        batch_fn: Callable[[list[T]], Awaitable[Sequence[R]]],
        *,
        max_batch_size: int,
        max_wait: float,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._batch_fn = batch_fn
        self._max_batch_size = check_count("max_batch_size", max_batch_size)
        self._max_wait = check_real("max_wait", max_wait)
        self._clock = clock
        self._queue: deque[_Request[T]] = deque()
        self._wakeup = asyncio.Event()
        self._closed = False
        self._dead: BaseException | None = None
        self._worker: asyncio.Task[None] | None = None

    def _now(self) -> float:
        return self._clock() if self._clock else asyncio.get_running_loop().time()

    # --8<-- [start:async]
    async def submit(self, item: T) -> R:
        if self._dead is not None:
            raise WorkerDied("async-timed-batcher worker stopped") from self._dead
        if self._closed:
            raise RuntimeError("batcher is closed")
        if self._worker is None:
            self._worker = asyncio.create_task(self._work(), name="async-timed-batcher")
            self._worker.add_done_callback(self._worker_done)
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._queue.append(_Request(item, self._now(), future))
        if len(self._queue) == 1 or len(self._queue) == self._max_batch_size:
            self._wakeup.set()
        return await future  # a cancelled caller cancels its future; the worker skips it

    async def _work(self) -> None:
        while True:
            while not self._queue:
                if self._closed:
                    return
                self._wakeup.clear()
                await self._wakeup.wait()
            deadline = self._queue[0].arrived + self._max_wait
            while len(self._queue) < self._max_batch_size and not self._closed:
                remaining = deadline - self._now()
                if remaining <= 0:
                    break
                self._wakeup.clear()
                try:
                    await asyncio.wait_for(self._wakeup.wait(), wait_slice(remaining))
                except asyncio.TimeoutError:
                    pass
            n = min(len(self._queue), self._max_batch_size)
            batch = [self._queue.popleft() for _ in range(n)]  # no await since the check
            await self._run(batch)

    def _worker_done(self, task: asyncio.Task[None]) -> None:
        """Runs when the worker ends; unless it drained the queue after close, it died."""
        if task.cancelled() or task.exception() is not None or self._queue:
            self._dead = task.exception() if not task.cancelled() else asyncio.CancelledError()
            queued, self._queue = list(self._queue), deque()
            _fail(queued, self._dead)
    # --8<-- [end:async]

    async def _run(self, batch: list[_Request[T]]) -> None:
        live = [r for r in batch if not r.future.done()]
        if not live:
            return
        try:
            results = list(await self._batch_fn([r.item for r in live]))
            if len(results) != len(live):
                raise ValueError(f"batch_fn returned {len(results)} results for {len(live)} items")
        except Exception as exc:
            for r in live:
                if not r.future.done():
                    r.future.set_exception(exc)
        except BaseException as exc:  # CancelledError: the worker is being stopped
            _fail(live, exc)
            raise
        else:
            for r, result in zip(live, results):
                if not r.future.done():  # the caller may have been cancelled meanwhile
                    r.future.set_result(result)

    async def aclose(self) -> None:
        """Flush everything queued, then stop the worker.

        Cancelling this (a shutdown deadline) cancels the worker: every caller not yet answered
        then gets :class:`WorkerDied` instead of waiting forever.
        """
        self._closed = True
        self._wakeup.set()
        if self._worker is not None:
            await self._worker

    async def __aenter__(self) -> AsyncTimedBatcher[T, R]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _fail(requests: list[_Request[Any]], exc: BaseException) -> None:
    """Answer every request that is not done with :class:`WorkerDied`, caused by ``exc``."""
    for r in requests:
        future = r.future
        if isinstance(future, Future):  # threads: claim it first unless the caller cancelled
            if future.done() or not (future.running() or future.set_running_or_notify_cancel()):
                continue
        elif future.done():
            continue
        died = WorkerDied(f"batcher worker stopped: {exc!r}")
        died.__cause__ = exc
        future.set_exception(died)
