"""Q94: a ``generate`` wrapper with concurrency control.

At most ``max_concurrency`` calls run at once; the rest wait for a slot, but only for
``queue_timeout`` seconds (and, optionally, only ``max_waiting`` of them may wait at all), after
which they fail fast with :class:`Overloaded` (HTTP 503 with Retry-After). A call that holds a
slot gets ``call_timeout`` seconds before :class:`GenerateTimeout` (HTTP 504). The slot is
released on every way out: result, exception, timeout and cancellation of the caller.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable
from typing import Generic, ParamSpec, TypeVar

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
        if max_concurrency < 1 or queue_timeout <= 0:
            raise ValueError("need max_concurrency >= 1 and queue_timeout > 0")
        self._generate = generate
        self._slots = asyncio.Semaphore(max_concurrency)
        self._queue_timeout = queue_timeout
        self._call_timeout = call_timeout
        self._max_waiting = max_waiting
        self._retry_after = retry_after
        self.waiting = 0  # callers waiting for a slot
        self.in_flight = 0  # callers holding a slot

    # --8<-- [start:async]
    async def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        await self._acquire()
        self.in_flight += 1
        try:  # from here on the slot is ours, and every exit path gives it back
            return await asyncio.wait_for(self._generate(*args, **kwargs), self._call_timeout)
        except asyncio.TimeoutError:
            raise GenerateTimeout(f"generate exceeded {self._call_timeout}s") from None
        finally:
            self.in_flight -= 1
            self._slots.release()

    async def _acquire(self) -> None:
        """Take a slot, waiting at most ``queue_timeout``; raise :class:`Overloaded` otherwise."""
        if not self._slots.locked():
            await self._slots.acquire()  # a slot is free: returns without suspending
            return
        if self._max_waiting is not None and self.waiting >= self._max_waiting:
            raise Overloaded(f"{self.waiting} requests already queued", self._retry_after)
        self.waiting += 1
        try:
            # Timed out or cancelled here means no slot was taken: nothing to release.
            await asyncio.wait_for(self._slots.acquire(), self._queue_timeout)
        except asyncio.TimeoutError:
            raise Overloaded(f"no slot within {self._queue_timeout}s", self._retry_after) from None
        finally:
            self.waiting -= 1
# --8<-- [end:async]


# --8<-- [start:threaded-head]
class ThreadedLimitedGenerator(Generic[P, R]):
    """Thread version for a blocking ``generate``: same cap, queue timeout and call timeout.

    A thread cannot be cancelled, so on a call timeout the caller gets :class:`GenerateTimeout`
    but the slot stays taken until the call really ends; the cap counts work, not waiters.
    """

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
        if max_concurrency < 1 or queue_timeout < 0:
            raise ValueError("need max_concurrency >= 1 and queue_timeout >= 0")
        self._generate = generate
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=max_concurrency)
        self._queue_timeout = queue_timeout
        self._call_timeout = call_timeout
        self._retry_after = retry_after

    # --8<-- [start:threaded]
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if not self._slots.acquire(timeout=self._queue_timeout):
            raise Overloaded(f"no slot within {self._queue_timeout}s", self._retry_after)
        try:
            future = self._pool.submit(self._generate, *args, **kwargs)
        except BaseException:
            self._slots.release()
            raise
        future.add_done_callback(lambda _: self._slots.release())  # when the work ends
        try:
            return future.result(timeout=self._call_timeout)
        except concurrent.futures.TimeoutError:
            raise GenerateTimeout(f"generate exceeded {self._call_timeout}s") from None

    # --8<-- [end:threaded]
    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)
