"""Q89: a simple batch aggregator.

Callers submit single requests and get a :class:`concurrent.futures.Future` back. Pending requests
are handed to ``batch_fn`` as one list when either ``max_batch_size`` requests are pending (the
submitting thread runs the batch) or the oldest pending request has waited ``max_wait`` seconds
(a background timer thread, or an explicit :meth:`BatchAggregator.poll`, runs it).

The one rule that makes it correct: the pending list is cut (swapped for a fresh one) while holding
the lock, and ``batch_fn`` runs after the lock is released. A request that arrives while a batch is
running therefore lands in the next batch, and no request is in two batches.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Generic, TypeVar

from ._checks import WorkerDied, check_count, check_real, wait_slice

__all__ = ["BatchAggregator", "WorkerDied"]

T = TypeVar("T")
R = TypeVar("R")


# --8<-- [start:core]
@dataclass(slots=True)
class _Pending(Generic[T, R]):
    item: T
    future: Future[R]


class BatchAggregator(Generic[T, R]):
    """Batch single requests for ``batch_fn``, which returns one result per item, in order."""

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
        self._cond = threading.Condition()  # guards everything below
        self._pending: list[_Pending[T, R]] = []
        self._first_at: float | None = None  # arrival time of the oldest pending request
        self._closed = False
        self._dead: BaseException | None = None  # what stopped the timer thread, if anything
        self._timer: threading.Thread | None = None

    def submit(self, item: T) -> Future[R]:
        """Queue one request; runs the batch in this thread if it fills the batch."""
        future: Future[R] = Future()
        with self._cond:
            if self._dead is not None:
                raise WorkerDied("batch timer worker stopped") from self._dead
            if self._closed:
                raise RuntimeError("aggregator is closed")
            self._pending.append(_Pending(item, future))
            if self._first_at is None:
                self._first_at = self._clock()
                self._cond.notify()  # the timer has a new deadline to wait for
            batch = self._cut() if len(self._pending) >= self._max_batch_size else []
        self._run(batch)  # outside the lock: other callers keep submitting meanwhile
        return future

    def poll(self) -> int:
        """Flush if the oldest pending request has waited ``max_wait``; return the batch size."""
        with self._cond:
            batch = self._cut() if self._is_due() else []
        return self._run(batch)

    def _is_due(self) -> bool:  # caller holds the lock
        return self._first_at is not None and self._clock() - self._first_at >= self._max_wait

    def _cut(self) -> list[_Pending[T, R]]:  # caller holds the lock
        batch, self._pending, self._first_at = self._pending, [], None
        return batch

    def _run(self, batch: list[_Pending[T, R]]) -> int:
        # Skip callers that cancelled; claim the rest so nobody can cancel them mid-batch.
        live = [p for p in batch if p.future.set_running_or_notify_cancel()]
        if not live:
            return 0
        try:
            results = list(self._batch_fn([p.item for p in live]))
            if len(results) != len(live):
                raise ValueError(f"batch_fn returned {len(results)} results for {len(live)} items")
        except Exception as exc:  # every caller in the batch sees the failure
            for p in live:
                p.future.set_exception(exc)
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: answer, then let it stop us
            _fail(live, exc)
            raise
        else:
            for p, result in zip(live, results):
                p.future.set_result(result)
        return len(live)
    # --8<-- [end:core]

    def flush(self) -> int:
        """Flush whatever is pending now, regardless of size or age."""
        with self._cond:
            batch = self._cut()
        return self._run(batch)

    def start(self) -> BatchAggregator[T, R]:
        """Start the background thread that flushes batches whose ``max_wait`` has passed."""
        with self._cond:
            if self._timer is None:
                self._timer = threading.Thread(
                    target=self._timer_loop, name="batch-timer", daemon=True
                )
                self._timer.start()
        return self

    # --8<-- [start:timer]
    def _timer_loop(self) -> None:
        try:
            while True:
                with self._cond:
                    while not self._closed and not self._is_due():
                        timeout = None  # nothing pending: sleep until submit() notifies
                        if self._first_at is not None:  # an inf max_wait waits in slices
                            timeout = wait_slice(self._first_at + self._max_wait - self._clock())
                        self._cond.wait(timeout)
                    if self._closed:
                        return
                    batch = self._cut()
                self._run(batch)
        except BaseException as exc:  # the timer is gone: fail what waits, refuse what comes
            with self._cond:
                self._dead = exc
                batch = self._cut()
            _fail(batch, exc)

    def close(self) -> None:
        """Stop the timer, then flush what is left so that no caller waits forever."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            timer = self._timer
        if timer is not None and timer is not threading.current_thread():
            timer.join()
        self.flush()
    # --8<-- [end:timer]

    def __enter__(self) -> BatchAggregator[T, R]:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _fail(batch: list[_Pending[T, R]], exc: BaseException) -> None:
    """Answer every request that is not done yet with :class:`WorkerDied`, caused by ``exc``."""
    for p in batch:
        if not p.future.done() and (p.future.running() or p.future.set_running_or_notify_cancel()):
            died = WorkerDied(f"batch timer worker stopped: {exc!r}")
            died.__cause__ = exc
            p.future.set_exception(died)
