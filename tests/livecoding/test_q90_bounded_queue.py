"""Q90: BoundedQueue (ring buffer on threading.Condition)."""

from __future__ import annotations

import threading
import time
from collections import deque

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lc_support import BAD_COUNTS, BAD_SECONDS, INF, best_seconds_per_op, gil_pressure, join_all, DETERMINISTIC

from livecoding.bounded_queue import BoundedQueue, QueueEmpty, QueueFull


def test_fifo_capacity_and_wraparound() -> None:
    q: BoundedQueue[int] = BoundedQueue(3)
    assert [q.try_put(x) for x in (1, 2, 3, 4)] == [True, True, True, False]
    assert len(q) == 3
    assert q.get() == 1
    assert q.try_put(4)  # written into the slot freed at the front: the ring wraps
    assert [q.get(), q.get(), q.get()] == [2, 3, 4]
    assert q.try_get() == (False, None) and len(q) == 0


def test_non_blocking_forms_raise() -> None:
    q: BoundedQueue[str] = BoundedQueue(1)
    with pytest.raises(QueueEmpty):
        q.get(block=False)
    q.put("a", block=False)
    with pytest.raises(QueueFull):
        q.put("b", block=False)
    assert q.get(block=False) == "a"


def _call_in_thread(fn, *args, **kwargs) -> dict:
    """Run fn in a thread; return {'value': ...} or {'error': ...} and how long it took."""
    out: dict = {}

    def run() -> None:
        start = time.monotonic()
        try:
            out["value"] = fn(*args, **kwargs)
        except BaseException as exc:
            out["error"] = exc
        out["elapsed"] = time.monotonic() - start

    t = threading.Thread(daemon=True, target=run, name=getattr(fn, "__name__", "call"))
    t.start()
    out["thread"] = t
    return out


@pytest.mark.parametrize("timeout", [0.0, 0.02])
def test_timeouts_expire_and_raise(timeout: float) -> None:
    full: BoundedQueue[int] = BoundedQueue(1)
    full.put(1)
    empty: BoundedQueue[int] = BoundedQueue(1)
    put_call = _call_in_thread(full.put, 2, timeout=timeout)
    get_call = _call_in_thread(empty.get, timeout=timeout)
    join_all([put_call["thread"], get_call["thread"]], timeout=5)  # a timeout must not block forever
    assert isinstance(put_call["error"], QueueFull)
    assert isinstance(get_call["error"], QueueEmpty)
    # The wait lasts at least the timeout (a lower bound always holds; no upper bound is asserted).
    assert put_call["elapsed"] >= timeout and get_call["elapsed"] >= timeout
    assert len(full) == 1 and full.get() == 1  # a timed-out put stored nothing


def test_blocking_get_waits_for_a_put() -> None:
    q: BoundedQueue[int] = BoundedQueue(2)
    call = _call_in_thread(q.get)
    call["thread"].join(0.05)
    assert call["thread"].is_alive() and "value" not in call  # nothing to get yet: still blocked
    q.put(42)
    join_all([call["thread"]], timeout=5)
    assert call["value"] == 42


def test_blocking_put_waits_for_a_get() -> None:
    q: BoundedQueue[int] = BoundedQueue(1)
    q.put(1)
    call = _call_in_thread(q.put, 2)
    call["thread"].join(0.05)
    assert call["thread"].is_alive() and len(q) == 1  # full: the put is parked
    assert q.get() == 1
    join_all([call["thread"]], timeout=5)
    assert "error" not in call and q.get(timeout=5) == 2


def test_timed_get_returns_an_item_that_arrives_in_time() -> None:
    q: BoundedQueue[int] = BoundedQueue(1)
    call = _call_in_thread(q.get, timeout=10)
    q.put(5)
    join_all([call["thread"]], timeout=5)
    assert call["value"] == 5


@DETERMINISTIC
@given(
    capacity=st.integers(1, 5),
    ops=st.lists(st.one_of(st.integers(0, 99), st.none()), max_size=80),  # int: put, None: get
)
def test_matches_a_deque_model(capacity: int, ops: list[int | None]) -> None:
    q: BoundedQueue[int] = BoundedQueue(capacity)
    model: deque[int] = deque()
    for op in ops:
        if op is None:
            expected = (True, model.popleft()) if model else (False, None)
            assert q.try_get() == expected
        else:
            fits = len(model) < capacity
            if fits:
                model.append(op)
            assert q.try_put(op) is fits
        assert len(q) == len(model)


def test_single_producer_single_consumer_keeps_order() -> None:
    q: BoundedQueue[int] = BoundedQueue(3)
    n = 5000
    got: list[int] = []
    with gil_pressure():
        consumer = threading.Thread(
            daemon=True, target=lambda: got.extend(q.get() for _ in range(n)), name="consumer"
        )
        consumer.start()
        # One deadline for the whole transfer (it takes well under a second): a lost wake-up
        # makes puts wait out their timeouts, and the test then fails instead of crawling.
        deadline = time.monotonic() + 20
        for i in range(n):
            q.put(i, timeout=max(0.0, deadline - time.monotonic()))
        join_all([consumer])
    assert got == list(range(n))


def test_many_producers_many_consumers_no_loss_and_per_producer_order() -> None:
    producers, consumers, per_producer, capacity = 8, 8, 1500, 4
    q: BoundedQueue[tuple[int, int]] = BoundedQueue(capacity)
    seen: list[list[tuple[int, int]]] = [[] for _ in range(consumers)]
    too_big: list[int] = []
    total = producers * per_producer
    share = total // consumers

    def produce(pid: int) -> None:
        for seq in range(per_producer):
            q.put((pid, seq))  # untimed wait path (daemon thread: a broken queue fails, not hangs)

    def consume(cid: int) -> None:
        for _ in range(share):
            seen[cid].append(q.get(timeout=10))
            if len(q) > capacity:
                too_big.append(len(q))

    with gil_pressure():
        threads = [threading.Thread(daemon=True, target=produce, args=(p,), name=f"prod{p}") for p in range(producers)]
        threads += [threading.Thread(daemon=True, target=consume, args=(c,), name=f"cons{c}") for c in range(consumers)]
        for t in threads:
            t.start()
        join_all(threads)

    everything = sorted(x for got in seen for x in got)
    assert everything == sorted((p, s) for p in range(producers) for s in range(per_producer))
    assert not too_big
    # FIFO: each consumer takes items in queue order, so it sees each producer's items in order.
    for got in seen:
        for pid in range(producers):
            seqs = [s for p, s in got if p == pid]
            assert seqs == sorted(seqs)
    assert len(q) == 0


# ----- arguments, infinite timeouts, cost at two sizes (issue 28) ---------------------------------


@pytest.mark.parametrize("capacity", BAD_COUNTS)
def test_capacity_must_be_an_int_of_at_least_one(capacity) -> None:
    with pytest.raises(ValueError, match="capacity"):
        BoundedQueue(capacity)


@pytest.mark.parametrize("timeout", BAD_SECONDS)
def test_a_nan_or_negative_timeout_is_rejected_at_the_call(timeout) -> None:
    q: BoundedQueue[int] = BoundedQueue(1)
    out = _call_in_thread(q.get, timeout=timeout)  # a NaN timeout used to spin here forever
    join_all([out["thread"]], timeout=5)
    assert isinstance(out.get("error"), ValueError) and "timeout" in str(out["error"])
    q.put(1)
    out = _call_in_thread(q.put, 2, timeout=timeout)
    join_all([out["thread"]], timeout=5)
    assert isinstance(out.get("error"), ValueError) and len(q) == 1


@pytest.mark.parametrize("timeout", [INF, 1e300])
def test_an_infinite_or_huge_timeout_waits_like_none(timeout) -> None:
    q: BoundedQueue[int] = BoundedQueue(1)
    got: list = []
    consumer = threading.Thread(daemon=True, target=lambda: got.append(q.get(timeout=timeout)))
    consumer.start()
    consumer.join(0.2)
    assert consumer.is_alive(), "get() returned or died instead of waiting"
    q.put(7)
    join_all([consumer], timeout=5)
    assert got == [7]
    q.put(8)
    out: list = []
    producer = threading.Thread(daemon=True, target=lambda: out.append(q.put(9, timeout=timeout)))
    producer.start()
    producer.join(0.2)
    assert producer.is_alive()
    assert q.get() == 8
    join_all([producer], timeout=5)
    assert q.get() == 9


def test_put_and_get_cost_the_same_at_occupancy_100_and_10000() -> None:
    """The page claims O(1) put and get: time them at two queue sizes."""

    def setup(occupancy: int):
        q: BoundedQueue[int] = BoundedQueue(occupancy + 1)
        for x in range(occupancy):
            q.put(x)

        def put_get(x: int) -> None:  # one item through a queue that holds `occupancy`
            q.put(x)
            q.get()

        return put_get

    small, large = best_seconds_per_op(setup, 100), best_seconds_per_op(setup, 10_000)
    assert large / small < 3, f"per-call time grew {large / small:.1f}x for 100x more items"
