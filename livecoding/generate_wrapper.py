"""Q94: a ``generate`` wrapper with concurrency control.

At most ``max_concurrency`` calls run at once; the rest wait for a slot, but only for
``queue_timeout`` seconds (and, optionally, only ``max_waiting`` of them may wait at all), after
which they fail fast with :class:`Overloaded` (HTTP 503 with Retry-After). A call that holds a
slot gets ``call_timeout`` seconds before :class:`GenerateTimeout` (HTTP 504). The slot is
released on every way out: result, exception, timeout and cancellation of the caller.

Contracts: ``queue_timeout=0`` means "do not wait" in both variants; ``inf`` (or ``None`` for
``call_timeout``) means no limit; NaN, negative or non-numeric settings raise ``ValueError``.
Exceptions from ``generate`` reach the caller unchanged, ``TimeoutError`` included.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Generic, ParamSpec, TypeVar

from ._checks import check_count, check_real
from .token_bucket import retry_after_header

__all__ = [
    "GenerateTimeout",
    "LimitedGenerator",
    "Overloaded",
    "ThreadedLimitedGenerator",
    "error_response",
]

P = ParamSpec("P")
R = TypeVar("R")


# --8<-- [start:errors]
class Overloaded(Exception):
    """No slot within the queue timeout, or too many waiting: shed load, ask to retry later."""

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class GenerateTimeout(Exception):
    """The generate call itself exceeded ``call_timeout``."""


def error_response(exc: Exception) -> tuple[int, dict[str, str]]:
    """HTTP status and headers for the wrapper's errors."""
    if isinstance(exc, Overloaded):
        return 503, {"Retry-After": retry_after_header(exc.retry_after)}
    if isinstance(exc, GenerateTimeout):
        return 504, {}
    return 500, {}
# --8<-- [end:errors]


def _timeout(name: str, value: float | None, *, allow_zero: bool = True) -> float | None:
    """Seconds, or ``None`` for no limit: ``None``, ``inf``, or more than ``threading.TIMEOUT_MAX``."""
    if value is None:
        return None
    seconds = check_real(name, value, allow_zero=allow_zero)
    return None if seconds > threading.TIMEOUT_MAX else seconds


# --8<-- [start:async-head]
class LimitedGenerator(Generic[P, R]):
    """asyncio wrapper: ``await limited(prompt, ...)`` runs ``generate`` under a concurrency cap."""

    # --8<-- [end:async-head]
    def __init__(
        self,
        generate: Callable[P, Awaitable[R]],
        *,
        max_concurrency: int,
        queue_timeout: float,
        call_timeout: float | None = None,
        max_waiting: int | None = None,
        retry_after: float = 1.0,
    ) -> None:
        self._generate = generate
        self._free = check_count("max_concurrency", max_concurrency)  # slots nobody holds
        self._queue_timeout = _timeout("queue_timeout", queue_timeout)
        self._call_timeout = _timeout("call_timeout", call_timeout, allow_zero=False)
        self._max_waiting = math.inf  # None: no cap on waiters
        if max_waiting is not None:
            self._max_waiting = check_count("max_waiting", max_waiting, minimum=0)
        self._retry_after = check_real("retry_after", retry_after, allow_inf=False)
        self._waiters: OrderedDict[asyncio.Future[None], None] = OrderedDict()  # FIFO
        self.in_flight = 0  # callers holding a slot

    @property
    def waiting(self) -> int:
        """Callers waiting for a slot."""
        return len(self._waiters)

    # --8<-- [start:async]
    async def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        await self._acquire()
        self.in_flight += 1
        try:  # from here on the slot is ours, and every exit path gives it back
            return await self._run(self._generate(*args, **kwargs))
        finally:
            self.in_flight -= 1
            self._release()

    async def _run(self, call: Awaitable[R]) -> R:  # at most call_timeout; exceptions unchanged
        if self._call_timeout is None:
            return await call
        task = asyncio.ensure_future(call)
        try:
            done, _ = await asyncio.wait({task}, timeout=self._call_timeout)
        finally:
            if not task.done():  # timed out or cancelled: stop generate, let it unwind
                task.cancel()
                await asyncio.wait({task})
        if not done:
            raise GenerateTimeout(f"generate exceeded {self._call_timeout}s")
        return task.result()  # not wait_for: generate's own TimeoutError is not ours to relabel

    async def _acquire(self) -> None:  # a slot within queue_timeout, or Overloaded
        if self._free:  # non-zero only while nobody waits: no barging past the queue
            self._free -= 1
            return
        if self._queue_timeout == 0 or len(self._waiters) >= self._max_waiting:
            raise Overloaded(f"no free slot; {len(self._waiters)} requests already queued", self._retry_after)
        loop = asyncio.get_running_loop()
        slot = loop.create_future()  # _release() hands a slot over by setting its result
        self._waiters[slot] = None
        qt = self._queue_timeout
        timer = loop.call_later(qt, self._expire, slot) if qt is not None else None
        try:
            await slot
        except BaseException:
            if slot.done() and not slot.cancelled() and slot.exception() is None:
                self._release()  # handed a slot, then cancelled before we ran: pass it on
            raise
        finally:
            self._waiters.pop(slot, None)  # O(1), so mass timeouts cost O(n), not O(n^2)
            if timer:
                timer.cancel()

    def _release(self) -> None:
        while self._waiters:  # straight to the oldest waiter still waiting
            slot, _ = self._waiters.popitem(last=False)
            if not slot.done():
                slot.set_result(None)
                return
        self._free += 1
    # --8<-- [end:async]

    def _expire(self, slot: asyncio.Future[None]) -> None:
        """The queue timeout of one waiter (a loop timer): drop it and fail it with Overloaded."""
        if not slot.done():
            del self._waiters[slot]
            slot.set_exception(Overloaded(f"no slot within {self._queue_timeout}s", self._retry_after))


# --8<-- [start:threaded-head]
class ThreadedLimitedGenerator(Generic[P, R]):
    """Blocking ``generate``; a timed-out call keeps its slot until its thread really ends."""

    # --8<-- [end:threaded-head]
    def __init__(
        self,
        generate: Callable[P, R],
        *,
        max_concurrency: int,
        queue_timeout: float,
        call_timeout: float | None = None,
        retry_after: float = 1.0,
    ) -> None:
        self._generate = generate
        check_count("max_concurrency", max_concurrency)
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=max_concurrency)
        self._queue_timeout = _timeout("queue_timeout", queue_timeout)
        self._call_timeout = _timeout("call_timeout", call_timeout, allow_zero=False)
        self._retry_after = check_real("retry_after", retry_after, allow_inf=False)

    # --8<-- [start:threaded]
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if not self._slots.acquire(timeout=self._queue_timeout):  # None: no limit; 0: no wait
            raise Overloaded(f"no slot within {self._queue_timeout}s", self._retry_after)
        try:
            future = self._pool.submit(self._generate, *args, **kwargs)
        except BaseException:
            self._slots.release()
            raise
        future.add_done_callback(lambda _: self._slots.release())  # when the work ends
        done, _ = concurrent.futures.wait([future], timeout=self._call_timeout)
        if not done:
            raise GenerateTimeout(f"generate exceeded {self._call_timeout}s")
        return future.result()  # generate's own exceptions, TimeoutError included, unchanged

    # --8<-- [end:threaded]
    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)
