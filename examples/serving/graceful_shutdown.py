"""Q40: drain an asyncio inference server on SIGTERM without cutting running requests.

The order Kubernetes gives us (pod-lifecycle docs, "Termination of Pods"): the Pod is marked
terminating, the preStop hook runs, then SIGTERM; endpoint removal happens in parallel and reaches
load balancers some time later. So the server must keep serving for a while after it is told to
stop. This module is the in-process half:

- ``Drainer.track()`` wraps each request: it counts requests in flight and refuses new ones once
  draining has begun (the caller answers 503 with ``Connection: close``).
- ``Drainer.ready()`` backs the readiness probe: false from the moment draining begins.
- ``Drainer.drain(budget)`` waits until nothing is in flight or ``budget`` seconds have passed, then
  cancels what is left and returns how many requests were cut off.
- ``install_sigterm(loop, drainer, budget, on_done)`` runs the drain when SIGTERM arrives.
- ``drain_budget(...)`` is the time the drain may take inside ``terminationGracePeriodSeconds``.

Only the standard library is used, so the code runs under any ASGI server or none.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Callable

__all__ = ["Draining", "Drainer", "drain_budget", "install_sigterm"]


# --8<-- [start:budget]
def drain_budget(grace_period_s: float, prestop_sleep_s: float, margin_s: float = 5.0) -> float:
    """Seconds the in-process drain may take after SIGTERM.

    The grace period counts from the start of the preStop hook, so the sleep is spent before
    SIGTERM arrives; ``margin_s`` leaves time to flush logs and exit before SIGKILL.
    """
    if min(grace_period_s, prestop_sleep_s, margin_s) < 0:
        raise ValueError("grace period, preStop sleep and margin must be >= 0")
    budget = grace_period_s - prestop_sleep_s - margin_s
    if budget <= 0:
        raise ValueError(
            f"terminationGracePeriodSeconds={grace_period_s:g} leaves no time to drain after a "
            f"{prestop_sleep_s:g} s preStop sleep and a {margin_s:g} s margin; raise the grace period")
    return budget
# --8<-- [end:budget]


class Draining(Exception):
    """Raised by ``Drainer.track()`` for a request that arrives after draining began (answer 503)."""


# --8<-- [start:drainer]
class Drainer:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task] = set()
        self._draining = False
        self._idle = asyncio.Event()
        self._idle.set()

    def ready(self) -> bool:
        """Readiness probe: false once draining begins, so no new traffic is routed here."""
        return not self._draining

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    @contextlib.asynccontextmanager
    async def track(self) -> AsyncIterator[None]:
        """Wrap one request. Refuses new work while draining; counts the request until it ends."""
        if self._draining:
            raise Draining("server is shutting down")
        task = asyncio.current_task()
        self._tasks.add(task)
        self._idle.clear()
        try:
            yield
        finally:
            self._tasks.discard(task)
            if not self._tasks:
                self._idle.set()

    async def drain(self, budget_s: float) -> int:
        """Stop admitting, wait up to ``budget_s`` for running requests, cancel the rest.

        Returns the number of requests that were cancelled (0 means a clean drain).
        """
        self._draining = True
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._idle.wait(), budget_s)
        left = list(self._tasks)
        for task in left:
            task.cancel()  # a streaming handler sees CancelledError and can send a final error event
        if left:
            await asyncio.gather(*left, return_exceptions=True)
        return len(left)
# --8<-- [end:drainer]


# --8<-- [start:signal]
def install_sigterm(loop: asyncio.AbstractEventLoop, drainer: Drainer, budget_s: float,
                    on_done: Callable[[int], None]) -> None:
    """On SIGTERM: drain within ``budget_s``, then call ``on_done(cut_off)`` (e.g. stop the server)."""
    started: list[asyncio.Task] = []

    def handler() -> None:
        if started:  # a repeated SIGTERM does not start a second drain or shorten the first
            return

        async def run() -> None:
            on_done(await drainer.drain(budget_s))

        started.append(loop.create_task(run()))

    loop.add_signal_handler(signal.SIGTERM, handler)
# --8<-- [end:signal]
