"""Q90: a fixed-capacity FIFO queue on a ring buffer, built on :class:`threading.Condition`.

Storage is a preallocated list used as a ring: ``head`` is the index of the oldest item and
``count`` the number of items; the tail is ``(head + count) % capacity``. One lock protects the
ring and two conditions share it: producers wait on ``not_full``, consumers on ``not_empty``.
Every wait sits in a ``while`` loop that re-checks its predicate, because a woken thread can find
the slot already taken by another thread (and because spurious wake-ups are allowed).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from ._checks import check_count, check_real, wait_slice

__all__ = ["BoundedQueue", "QueueEmpty", "QueueFull"]

T = TypeVar("T")


class QueueFull(Exception):
    """Raised by a non-blocking or timed-out ``put`` on a full queue."""


class QueueEmpty(Exception):
    """Raised by a non-blocking or timed-out ``get`` on an empty queue."""


# --8<-- [start:core]
class BoundedQueue(Generic[T]):
    """A thread-safe FIFO queue holding at most ``capacity`` items.

    ``put``/``get`` block by default; ``block=False`` fails at once, ``timeout`` bounds the wait
    (``None`` or ``inf``: no bound; NaN or negative: ``ValueError``).
    ``try_put``/``try_get`` are the non-raising, non-blocking forms.
    """

    def __init__(self, capacity: int) -> None:
        check_count("capacity", capacity)
        self._buf: list[T | None] = [None] * capacity
        self._capacity = capacity
        self._head = 0  # index of the oldest item
        self._count = 0
        lock = threading.Lock()
        self._not_empty = threading.Condition(lock)
        self._not_full = threading.Condition(lock)

    @property
    def capacity(self) -> int:
        return self._capacity

    def __len__(self) -> int:
        with self._not_empty:
            return self._count

    def put(self, item: T, block: bool = True, timeout: float | None = None) -> None:
        """Append ``item``; wait for space if full (forever, or up to ``timeout`` seconds)."""
        with self._not_full:
            if not _wait_until(self._not_full, self._has_room, block, timeout):
                raise QueueFull(f"queue full (capacity {self._capacity})")
            self._buf[(self._head + self._count) % self._capacity] = item
            self._count += 1
            self._not_empty.notify()  # exactly one consumer can use exactly one new item

    def get(self, block: bool = True, timeout: float | None = None) -> T:
        """Remove and return the oldest item; wait for one if empty."""
        with self._not_empty:
            if not _wait_until(self._not_empty, self._has_item, block, timeout):
                raise QueueEmpty("queue empty")
            item = self._buf[self._head]
            self._buf[self._head] = None  # drop the reference so the item can be freed
            self._head = (self._head + 1) % self._capacity
            self._count -= 1
            self._not_full.notify()
            return item  # type: ignore[return-value]

    def _has_room(self) -> bool:  # predicates are evaluated with the lock held
        return self._count < self._capacity

    def _has_item(self) -> bool:
        return self._count > 0

    def try_put(self, item: T) -> bool:
        """Non-blocking put: ``True`` if stored, ``False`` if the queue was full."""
        try:
            self.put(item, block=False)
        except QueueFull:
            return False
        return True

    def try_get(self) -> tuple[bool, T | None]:
        """Non-blocking get: ``(True, item)``, or ``(False, None)`` if the queue was empty."""
        try:
            return True, self.get(block=False)
        except QueueEmpty:
            return False, None


def _wait_until(
    cond: threading.Condition,
    predicate: Callable[[], bool],
    block: bool,
    timeout: float | None,
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Wait on ``cond`` (held by the caller) until ``predicate()``; ``False`` on timeout."""
    if timeout is not None:
        timeout = check_real("timeout", timeout)  # NaN would never expire: refuse it
    if not block:
        return predicate()
    if timeout is None or timeout == math.inf:
        while not predicate():
            cond.wait()
        return True
    deadline = clock() + timeout
    while not predicate():
        remaining = deadline - clock()  # recomputed: a wake-up may not be for us
        if remaining <= 0:
            return False
        cond.wait(wait_slice(remaining))  # a huge timeout is waited in slices, never overflows
    return True
# --8<-- [end:core]
