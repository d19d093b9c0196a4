"""Q94: LimitedGenerator on a virtual-time event loop, ThreadedLimitedGenerator with events."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import random
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lc_support import DETERMINISTIC, INF, NAN, join_all, run_virtual

from livecoding.generate_wrapper import (
    GenerateTimeout,
    LimitedGenerator,
    Overloaded,
    ThreadedLimitedGenerator,
    error_response,
)


class FakeEngine:
    """An instrumented async generate: tracks concurrency, start times and clean-up."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0
        self.starts: dict[str, float] = {}
        self.cleaned: list[str] = []

    async def generate(self, name: str, seconds: float = 1.0, fail: bool = False) -> str:
        loop = asyncio.get_running_loop()
        self.running += 1
        self.peak = max(self.peak, self.running)
        self.starts[name] = loop.time()
        try:
            await asyncio.sleep(seconds)
            if fail:
                raise ValueError(f"{name} failed")
            return f"out:{name}"
        finally:
            self.running -= 1
            self.cleaned.append(name)


async def all_slots_free(limited: LimitedGenerator, engine: FakeEngine, cap: int) -> bool:
    """Probe: ``cap`` fresh calls must all start at once if no slot leaked."""
    loop = asyncio.get_running_loop()
    now = loop.time()
    names = [f"probe{now}-{i}" for i in range(cap)]
    await asyncio.gather(*(limited(n, 0.5) for n in names))
    return all(engine.starts[n] == now for n in names)


def test_concurrency_never_exceeds_the_cap() -> None:
    async def main():
        engine = FakeEngine()
        limited = LimitedGenerator(engine.generate, max_concurrency=5, queue_timeout=1e6)
        rnd = random.Random(7)
        calls = [limited(f"r{i}", rnd.uniform(0.1, 3.0)) for i in range(200)]
        results = await asyncio.gather(*calls)
        return engine, results, limited

    engine, results, limited = run_virtual(main())
    assert results == [f"out:r{i}" for i in range(200)]
    assert engine.peak == 5  # reached, never passed
    assert limited.in_flight == 0 and limited.waiting == 0


def test_queue_wait_is_bounded_and_maps_to_503() -> None:
    async def main():
        loop = asyncio.get_running_loop()
        engine = FakeEngine()
        limited = LimitedGenerator(engine.generate, max_concurrency=1, queue_timeout=2.0, retry_after=3)
        hog = asyncio.create_task(limited("hog", 100.0))
        await asyncio.sleep(0)
        with pytest.raises(Overloaded) as info:
            await limited("late", 1.0)
        failed_at = loop.time()
        hog.cancel()
        return failed_at, info.value, engine

    failed_at, exc, engine = run_virtual(main())
    assert failed_at == 2.0  # waited exactly queue_timeout, not until the hog finished
    assert "late" not in engine.starts
    assert error_response(exc) == (503, {"Retry-After": "3"})


def test_retry_after_rounds_up_to_whole_seconds():
    # RFC 9110 §10.2.3: whole seconds. Rounding down (or half-to-even: round(2.5) == 2) would tell a
    # client to come back before a slot can be free.
    assert error_response(Overloaded("busy", retry_after=1.4)) == (503, {"Retry-After": "2"})
    assert error_response(Overloaded("busy", retry_after=2.5)) == (503, {"Retry-After": "3"})
    assert error_response(Overloaded("busy", retry_after=0.2)) == (503, {"Retry-After": "1"})


def test_max_waiting_rejects_at_once() -> None:
    async def main():
        loop = asyncio.get_running_loop()
        engine = FakeEngine()
        limited = LimitedGenerator(engine.generate, max_concurrency=1, queue_timeout=50, max_waiting=2)
        tasks = [asyncio.create_task(limited(f"t{i}", 10.0)) for i in range(3)]  # 1 runs, 2 wait
        await asyncio.sleep(0)
        with pytest.raises(Overloaded, match="already queued"):
            await limited("one-too-many")
        rejected_at = loop.time()
        return rejected_at, await asyncio.gather(*tasks)

    rejected_at, results = run_virtual(main())
    assert rejected_at == 0.0
    assert results == ["out:t0", "out:t1", "out:t2"]


def test_call_timeout_releases_the_slot_after_cleanup() -> None:
    async def main():
        engine = FakeEngine()
        limited = LimitedGenerator(engine.generate, max_concurrency=1, queue_timeout=50, call_timeout=1.0)
        slow = asyncio.create_task(limited("slow", 100.0))
        nxt = asyncio.create_task(limited("next", 0.5))
        with pytest.raises(GenerateTimeout):
            await slow
        assert await nxt == "out:next"
        return engine, limited

    engine, limited = run_virtual(main())
    assert engine.starts == {"slow": 0.0, "next": 1.0}  # the slot came back at the timeout
    assert engine.cleaned[:1] == ["slow"] and engine.peak == 1  # ... after the call unwound
    assert error_response(GenerateTimeout()) == (504, {})


def test_exception_propagates_and_releases_the_slot() -> None:
    async def main():
        engine = FakeEngine()
        limited = LimitedGenerator(engine.generate, max_concurrency=2, queue_timeout=50)
        outcomes = await asyncio.gather(
            limited("bad1", 1.0, fail=True), limited("bad2", 1.0, fail=True), return_exceptions=True
        )
        return outcomes, await all_slots_free(limited, engine, 2)

    outcomes, free = run_virtual(main())
    assert [str(e) for e in outcomes] == ["bad1 failed", "bad2 failed"]
    assert all(isinstance(e, ValueError) for e in outcomes)
    assert free


def test_cancelling_a_running_call_releases_the_slot() -> None:
    async def main():
        engine = FakeEngine()
        limited = LimitedGenerator(engine.generate, max_concurrency=1, queue_timeout=50)
        running = asyncio.create_task(limited("running", 100.0))
        waiting = asyncio.create_task(limited("waiting", 1.0))
        await asyncio.sleep(3)
        running.cancel()  # e.g. the client disconnected
        result = await waiting
        return engine, running, result

    engine, running, result = run_virtual(main())
    assert running.cancelled() and result == "out:waiting"
    assert engine.starts["waiting"] == 3.0


def test_cancelling_a_queued_call_takes_no_slot() -> None:
    async def main():
        engine = FakeEngine()
        limited = LimitedGenerator(engine.generate, max_concurrency=1, queue_timeout=50)
        holder = asyncio.create_task(limited("holder", 5.0))
        queued = asyncio.create_task(limited("queued", 1.0))
        await asyncio.sleep(1)
        queued.cancel()
        await asyncio.sleep(0.001)  # let the cancellation unwind (virtual time)
        waiting_after_cancel = limited.waiting
        await holder
        return engine, queued, waiting_after_cancel, await all_slots_free(limited, engine, 1)

    engine, queued, waiting_after_cancel, free = run_virtual(main())
    assert queued.cancelled() and "queued" not in engine.starts
    assert waiting_after_cancel == 0 and free


def test_release_and_cancel_of_the_next_waiter_in_the_same_tick() -> None:
    """The holder finishes at t=5 and the woken waiter is cancelled in that same loop iteration."""

    async def main():
        loop = asyncio.get_running_loop()
        engine = FakeEngine()
        limited = LimitedGenerator(engine.generate, max_concurrency=1, queue_timeout=50)
        holder = asyncio.create_task(limited("holder", 5.0))
        await asyncio.sleep(0)
        victim = asyncio.create_task(limited("victim", 1.0))
        loop.call_at(5.0, victim.cancel)
        await holder
        await asyncio.gather(victim, return_exceptions=True)
        return await all_slots_free(limited, engine, 1)

    assert run_virtual(main())


calls = st.lists(
    st.tuples(
        st.sampled_from([0.0, 0.5, 1.0, 2.0]),  # start time
        st.sampled_from([0.25, 1.0, 3.0, 10.0]),  # generate duration
        st.sampled_from(["ok", "fail", "cancel"]),
        st.sampled_from([None, 0.5, 2.0]),  # when to cancel, if cancelling
    ),
    min_size=1,
    max_size=25,
)


@settings(DETERMINISTIC, max_examples=60)
@given(calls=calls, cap=st.integers(1, 4), call_timeout=st.sampled_from([None, 2.5]))
def test_no_slot_leaks_whatever_happens(calls, cap: int, call_timeout) -> None:
    async def main():
        loop = asyncio.get_running_loop()
        engine = FakeEngine()
        limited = LimitedGenerator(
            engine.generate, max_concurrency=cap, queue_timeout=4.0, call_timeout=call_timeout
        )

        async def one(i: int, start: float, seconds: float, mode: str) -> None:
            await asyncio.sleep(start)
            await limited(f"c{i}", seconds, fail=(mode == "fail"))

        tasks = []
        for i, (start, seconds, mode, cancel_at) in enumerate(calls):
            task = asyncio.create_task(one(i, start, seconds, mode))
            if mode == "cancel" and cancel_at is not None:
                loop.call_at(cancel_at, task.cancel)
            tasks.append(task)
        await asyncio.gather(*tasks, return_exceptions=True)
        assert engine.peak <= cap and engine.running == 0
        assert limited.in_flight == 0 and limited.waiting == 0
        return await all_slots_free(limited, engine, cap)

    assert run_virtual(main())


# ----- threaded variant ----------------------------------------------------------------------------


class GatedWork:
    """A blocking generate that runs until the gate opens; tracks concurrency."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.lock = threading.Lock()
        self.running = 0
        self.peak = 0

    def __call__(self, name: str) -> str:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            assert self.gate.wait(10)
            return f"out:{name}"
        finally:
            with self.lock:
                self.running -= 1


def test_threaded_call_timeout_keeps_the_slot_until_the_work_ends() -> None:
    work = GatedWork()
    limited = ThreadedLimitedGenerator(work, max_concurrency=2, queue_timeout=0.0, call_timeout=0.05)
    # Two calls time out for their callers, but their work is still running: the slots stay taken.
    for name in ("a", "b"):
        with pytest.raises(GenerateTimeout):
            limited(name)
    with pytest.raises(Overloaded):
        limited("c")  # no slot: the timed-out calls still hold theirs
    assert work.running == 2
    work.gate.set()
    limited.shutdown()  # joins the workers, so every done-callback (slot release) has run
    assert work.running == 0 and work.peak == 2
    # Both slots are back, and only two (a double release would raise or leave three).
    slots = limited._slots
    assert [slots.acquire(blocking=False) for _ in range(3)] == [True, True, False]


def test_threaded_queue_wait_is_bounded() -> None:
    work = GatedWork()
    limited = ThreadedLimitedGenerator(work, max_concurrency=1, queue_timeout=0.05)
    holder = threading.Thread(daemon=True, target=limited, args=("holder",), name="holder")
    holder.start()
    deadline = time.monotonic() + 5
    while work.running == 0 and time.monotonic() < deadline:  # wait until the holder has the slot
        time.sleep(0.001)
    started = time.monotonic()
    with pytest.raises(Overloaded):
        limited("late")
    assert time.monotonic() - started >= 0.05  # it did wait for the queue timeout first
    work.gate.set()
    join_all([holder])
    limited.shutdown()


def test_threaded_many_callers_never_exceed_cap() -> None:
    lock = threading.Lock()
    state = {"running": 0, "peak": 0}

    def generate(i: int) -> int:
        with lock:
            state["running"] += 1
            state["peak"] = max(state["peak"], state["running"])
        with lock:
            state["running"] -= 1
        return i * 2

    limited = ThreadedLimitedGenerator(generate, max_concurrency=3, queue_timeout=30, call_timeout=30)
    out: dict[int, int] = {}

    def caller(base: int) -> None:
        for i in range(base, base + 100):
            out[i] = limited(i)

    threads = [threading.Thread(daemon=True, target=caller, args=(b * 100,), name=f"c{b}") for b in range(12)]
    for t in threads:
        t.start()
    join_all(threads)
    limited.shutdown()
    assert out == {i: i * 2 for i in range(1200)}
    assert state["peak"] <= 3


# ----- issue 28: exceptions unchanged, same-tick cancellation, configuration, many waiters ---------


@pytest.mark.parametrize("call_timeout", [None, 30.0])
def test_generates_own_timeout_error_propagates_unchanged(call_timeout) -> None:
    async def generate(prompt: str) -> str:
        raise asyncio.TimeoutError("engine timed out")  # on 3.11+ this is the builtin TimeoutError

    async def main():
        limited = LimitedGenerator(generate, max_concurrency=1, queue_timeout=1.0, call_timeout=call_timeout)
        with pytest.raises(asyncio.TimeoutError) as info:
            await limited("p")
        return info.value

    exc = run_virtual(main())
    assert not isinstance(exc, GenerateTimeout) and str(exc) == "engine timed out"


def test_threaded_generates_own_timeout_error_propagates_unchanged() -> None:
    def generate(prompt: str) -> str:
        raise concurrent.futures.TimeoutError("engine timed out")

    limited = ThreadedLimitedGenerator(generate, max_concurrency=1, queue_timeout=1.0, call_timeout=5.0)
    with pytest.raises(concurrent.futures.TimeoutError) as info:
        limited("p")
    limited.shutdown()
    assert not isinstance(info.value, GenerateTimeout) and str(info.value) == "engine timed out"


def test_a_waiter_woken_and_cancelled_in_the_same_tick_never_generates() -> None:
    """The holder releases its slot and, in that same step, the woken waiter's client goes away."""

    async def main():
        engine = FakeEngine()
        limited = LimitedGenerator(engine.generate, max_concurrency=1, queue_timeout=50)
        victim: asyncio.Task | None = None

        async def holder_then_cancel() -> str:
            result = await limited("holder", 5.0)  # the slot is released inside this step ...
            victim.cancel()  # ... and the waiter it woke is cancelled before it runs again
            return result

        holder = asyncio.create_task(holder_then_cancel())
        await asyncio.sleep(0)
        victim = asyncio.create_task(limited("victim", 1.0))
        after = asyncio.create_task(limited("after", 1.0))
        await holder
        await asyncio.gather(victim, return_exceptions=True)
        return engine, victim, await after

    engine, victim, after = run_virtual(main())
    assert victim.cancelled()
    assert "victim" not in engine.starts, "a cancelled caller ran a full generation"
    assert after == "out:after" and engine.starts["after"] == 5.0  # the slot went straight on


BAD_CONFIG = [
    dict(max_concurrency=0), dict(max_concurrency=2.5), dict(max_concurrency=NAN),
    dict(queue_timeout=NAN), dict(queue_timeout=-1.0), dict(queue_timeout="1"),
    dict(call_timeout=NAN), dict(call_timeout=0.0), dict(call_timeout=-1.0),
    dict(retry_after=NAN), dict(retry_after=-1.0), dict(retry_after=INF),
]


@pytest.mark.parametrize("cls", [LimitedGenerator, ThreadedLimitedGenerator])
@pytest.mark.parametrize("bad", BAD_CONFIG)
def test_configuration_is_checked(cls, bad) -> None:
    args = dict(max_concurrency=2, queue_timeout=1.0) | bad
    with pytest.raises(ValueError, match=next(iter(bad))):
        cls(lambda p: p, **args)


@pytest.mark.parametrize("waiting", [-1, 2.5, NAN])
def test_max_waiting_is_checked(waiting) -> None:
    with pytest.raises(ValueError, match="max_waiting"):
        LimitedGenerator(FakeEngine().generate, max_concurrency=1, queue_timeout=1.0, max_waiting=waiting)


def test_queue_timeout_zero_means_do_not_wait_in_both_variants() -> None:
    async def main():
        loop = asyncio.get_running_loop()
        engine = FakeEngine()
        limited = LimitedGenerator(engine.generate, max_concurrency=1, queue_timeout=0)
        first = asyncio.create_task(limited("first", 5.0))
        await asyncio.sleep(0)
        with pytest.raises(Overloaded):
            await limited("second")
        return loop.time(), await first

    failed_at, first = run_virtual(main())
    assert failed_at == 0.0 and first == "out:first"

    work = GatedWork()
    threaded = ThreadedLimitedGenerator(work, max_concurrency=1, queue_timeout=0)
    holder = threading.Thread(daemon=True, target=threaded, args=("holder",))
    holder.start()
    deadline = time.monotonic() + 5
    while work.running == 0 and time.monotonic() < deadline:
        time.sleep(0.001)
    with pytest.raises(Overloaded):
        threaded("late")
    work.gate.set()
    join_all([holder])
    threaded.shutdown()


def test_infinite_timeouts_mean_no_limit_in_both_variants() -> None:
    async def main():
        engine = FakeEngine()
        limited = LimitedGenerator(engine.generate, max_concurrency=1, queue_timeout=INF, call_timeout=INF)
        return await asyncio.gather(limited("a", 1e6), limited("b", 1.0))

    assert run_virtual(main()) == ["out:a", "out:b"]

    work = GatedWork()
    threaded = ThreadedLimitedGenerator(work, max_concurrency=1, queue_timeout=INF, call_timeout=INF)
    out: list = []
    callers = [threading.Thread(daemon=True, target=lambda n=n: out.append(threaded(n))) for n in "ab"]
    for t in callers:
        t.start()
    time.sleep(0.2)
    work.gate.set()
    join_all(callers, timeout=10)
    threaded.shutdown()
    assert sorted(out) == ["out:a", "out:b"]


def _seconds_for_waiters_to_time_out(n: int) -> float:
    async def main():
        engine = FakeEngine()
        limited = LimitedGenerator(engine.generate, max_concurrency=1, queue_timeout=1.0)
        holder = asyncio.create_task(limited("holder", 100.0))
        await asyncio.sleep(0)
        waiters = [asyncio.create_task(limited(f"w{i}")) for i in range(n)]
        await asyncio.sleep(0.5)  # all n are queued
        gc.disable()  # time the algorithm, not collector passes over a heap that grows with n
        try:
            started = time.thread_time()  # CPU time of the loop's thread, not other processes'
            await asyncio.gather(*waiters, return_exceptions=True)  # all time out at t = 1.0
            elapsed = time.thread_time() - started
        finally:
            gc.enable()
        holder.cancel()
        return elapsed

    return min(run_virtual(main()) for _ in range(2))


def test_many_waiters_timing_out_together_cost_linear_time() -> None:
    """Thousands of waiters timing out at one instant: the cost per waiter must not grow with n."""
    small, large = _seconds_for_waiters_to_time_out(2_000), _seconds_for_waiters_to_time_out(8_000)
    assert large / small < 8, f"{large:.2f}s for 8,000 vs {small:.2f}s for 2,000 (quadratic: 16x)"
