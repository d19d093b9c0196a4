"""Q40: examples/serving/graceful_shutdown.py. Timing runs on the virtual-time loop of the live-coding
tests (no real sleeps); the signal test sends a real SIGTERM to this process."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from examples.serving.graceful_shutdown import Drainer, Draining, drain_budget, install_sigterm
from tests.livecoding.lc_support import VirtualTimeLoop


def run(coro):
    loop = VirtualTimeLoop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()


def test_drain_budget_subtracts_prestop_and_margin() -> None:
    assert drain_budget(120, 10, 5) == 105
    assert drain_budget(30, 0, 0) == 30
    with pytest.raises(ValueError, match="terminationGracePeriodSeconds=30 leaves no time"):
        drain_budget(30, 25, 5)
    with pytest.raises(ValueError, match=">= 0"):
        drain_budget(30, -1)


def test_clean_drain_waits_for_running_requests_and_refuses_new_ones() -> None:
    async def main():
        d = Drainer()
        loop = asyncio.get_running_loop()
        finished = []

        async def request(name, seconds):
            async with d.track():
                await asyncio.sleep(seconds)
                finished.append((name, loop.time()))

        start = loop.time()
        tasks = [asyncio.create_task(request("a", 3)), asyncio.create_task(request("b", 7))]
        await asyncio.sleep(0)
        assert d.in_flight == 2 and d.ready()
        drain = asyncio.create_task(d.drain(budget_s=30))
        await asyncio.sleep(1)
        assert not d.ready()                      # readiness fails as soon as draining begins
        with pytest.raises(Draining):             # a late request is refused, not started
            async with d.track():
                pass
        cut = await drain
        await asyncio.gather(*tasks)
        assert cut == 0
        assert [n for n, _ in finished] == ["a", "b"]
        assert loop.time() - start == pytest.approx(7)  # drain ended when the last request did, not at 30 s
    run(main())


def test_budget_expiry_cancels_what_is_left() -> None:
    async def main():
        d = Drainer()
        loop = asyncio.get_running_loop()
        outcome = {}

        async def stream(name, seconds):
            try:
                async with d.track():
                    await asyncio.sleep(seconds)
                outcome[name] = "done"
            except asyncio.CancelledError:
                outcome[name] = "cancelled"
                raise

        start = loop.time()
        tasks = [asyncio.create_task(stream("short", 2)), asyncio.create_task(stream("long", 600))]
        await asyncio.sleep(0)
        cut = await d.drain(budget_s=20)
        assert cut == 1
        assert loop.time() - start == pytest.approx(20)
        assert outcome == {"short": "done", "long": "cancelled"}
        assert d.in_flight == 0
        await asyncio.gather(*tasks, return_exceptions=True)
    run(main())


def test_real_sigterm_starts_one_drain() -> None:
    async def main():
        loop = asyncio.get_running_loop()
        d = Drainer()
        results = []
        done = asyncio.Event()

        def on_done(cut):
            results.append(cut)
            done.set()

        async def request():
            async with d.track():
                await asyncio.sleep(0.2)

        install_sigterm(loop, d, budget_s=5, on_done=on_done)
        try:
            task = asyncio.create_task(request())
            await asyncio.sleep(0)
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)   # the second one is ignored, the process survives
            await asyncio.wait_for(done.wait(), 5)
            await task
        finally:
            loop.remove_signal_handler(signal.SIGTERM)
        assert results == [0] and not d.ready()
    asyncio.run(main())
