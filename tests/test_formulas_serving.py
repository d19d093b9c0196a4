"""Dynamic batching with a queue delay (macros/formulas/serving.py). Expected values are hand arithmetic
written out in each test, never the function's own output."""

from __future__ import annotations

import pytest

from macros import formulas as F
from macros.errors import MacroInputError
from macros.render import MACROS


def test_batch_latency_is_the_line_through_the_two_measurements() -> None:
    # 4 ms at batch 1, 6 ms at batch 8: 2 ms over 7 steps, 2/7 ms per extra request
    assert F.batch_latency(1, 0.004, 0.006, 8) == pytest.approx(0.004)
    assert F.batch_latency(8, 0.004, 0.006, 8) == pytest.approx(0.006)
    assert F.batch_latency(3, 0.004, 0.006, 8) == pytest.approx(0.004 + 2 * 0.002 / 7)
    assert F.batch_latency(1, 0.004, 0.004, 1) == 0.004


def test_delay_window_collects_arrivals_and_trades_latency_for_capacity() -> None:
    # 400 req/s for 5 ms: 2 more arrivals, batch 3; t(3) = 4 + 4/7 ms = 32/7 ms
    r = F.delayed_batching(400, 0.005, 8, 0.004, 0.006)
    assert r.batch == pytest.approx(3)
    assert r.exec_time == pytest.approx(0.032 / 7)
    assert r.wait == pytest.approx(0.005)                        # 3 < 8: the window runs its full 5 ms
    assert r.first_latency == pytest.approx(0.005 + 0.032 / 7)
    assert r.capacity == pytest.approx(3 / (0.032 / 7))        # 656.25 req/s
    assert r.capacity == pytest.approx(656.25)
    assert r.capacity_unbatched == pytest.approx(250)
    assert r.gain == pytest.approx(656.25 / 250)


def test_batch_is_capped_at_max_batch_and_leaves_when_full() -> None:
    # 10,000 req/s for 10 ms would collect 101; capped at 8, which runs in t(8) = 6 ms. The 7 arrivals
    # that fill it take 7 / 10,000 s = 0.7 ms, so the opener waits 0.7 ms, not the 10 ms delay.
    r = F.delayed_batching(10_000, 0.010, 8, 0.004, 0.006)
    assert r.batch == 8
    assert r.capacity == pytest.approx(8 / 0.006)
    assert r.wait == pytest.approx(0.0007)
    assert r.first_latency == pytest.approx(0.0007 + 0.006)
    # exactly full at the deadline: 1 + 700 x 0.010 = 8, window 7 / 700 s = the whole 10 ms
    assert F.delayed_batching(700, 0.010, 8, 0.004, 0.006).wait == pytest.approx(0.010)
    # max_batch 1: every request is a full batch and goes at once, whatever the delay
    assert F.delayed_batching(0, 0.010, 1, 0.004, 0.004).wait == 0


def test_zero_delay_or_no_traffic_means_batch_one_and_no_gain() -> None:
    for rate, delay in ((0, 0.005), (1_000, 0)):
        r = F.delayed_batching(rate, delay, 8, 0.004, 0.006)
        assert (r.batch, r.gain) == (1, 1)
        assert r.first_latency == pytest.approx(0.004 + delay)


@pytest.mark.parametrize("kwargs, message", [
    (dict(latency_1=0.006, latency_max=0.004), "latency_max"),
    (dict(latency_1=-1, latency_max=0.004), "latency_1"),
    (dict(max_batch=0), "max_batch"),
])
def test_bad_input_names_the_field(kwargs, message) -> None:
    args = dict(arrival_rate=100, delay=0.001, max_batch=8, latency_1=0.004, latency_max=0.006) | kwargs
    with pytest.raises(ValueError, match=message):
        F.delayed_batching(**args)


def test_macro_shows_the_overload_warning_only_when_unbatched_capacity_is_exceeded() -> None:
    over = MACROS["batch_delay"](arrival_rate=400, delay_ms=5, max_batch=8, latency_1_ms=4, latency_max_ms=6)
    assert "656.2 requests/s" in over and "250 requests/s" in over and "grow without bound" in over
    under = MACROS["batch_delay"](arrival_rate=50, delay_ms=2, max_batch=16, latency_1_ms=10, latency_max_ms=18)
    assert "grow without bound" not in under
    full = MACROS["batch_delay"](arrival_rate=10_000, delay_ms=10, max_batch=8, latency_1_ms=4, latency_max_ms=6)
    assert "the batch fills first: window = 7 / 10,000 requests/s = 700.0 µs" in full
    with pytest.raises(MacroInputError, match="delay_ms"):
        MACROS["batch_delay"](arrival_rate=400, delay_ms=-1, max_batch=8, latency_1_ms=4, latency_max_ms=6)


def test_instance_memory_counts_a_weight_copy_per_instance() -> None:
    gib = 2**30
    # 7 GiB of weights + 2 GiB overhead = 9 GiB each; 3 of them = 27 GiB; 40.5 GiB usable holds 4 (36 GiB)
    r = F.instance_memory(7 * gib, 2 * gib, 3, 40.5 * gib)
    assert r.per_instance == 9 * gib and r.total == 27 * gib
    assert r.fits and r.max_count == 4
    r = F.instance_memory(7 * gib, 2 * gib, 5, 40.5 * gib)  # 45 GiB > 40.5 GiB
    assert not r.fits and r.max_count == 4
    with pytest.raises(ValueError, match="count"):
        F.instance_memory(7 * gib, 0, 0, 40.5 * gib)


def test_instance_memory_macro_reports_the_fit() -> None:
    # L40S: budgets start from the total CUDA reports, 44.42 GiB (47,695,527,936 bytes, catalog's
    # cuda_total_bytes); usable 47,695,527,936 x 0.9 = 42,925,975,142 bytes = 39.98 GiB. 30 GiB overhead
    # per instance plus the weights makes two instances exceed it.
    out = MACROS["instance_memory"]("qwen2.5-7b", "l40s", fmt="fp8", count=2, overhead_gib=30)
    assert "does not fit; at most 1 fit" in out
    assert "GPU memory (CUDA total) | 47.7 GB (44.4 GiB)" in out
    assert "= 42.9 GB (40.0 GiB)" in out
    with pytest.raises(MacroInputError, match="count"):
        MACROS["instance_memory"]("qwen2.5-7b", "l40s", count=0)
