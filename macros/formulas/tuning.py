"""Tuning against latency and throughput targets: the concurrency a target implies, and the largest
batch a step-time bound allows.

Steady-state decode obeys Little's law over the sequences being decoded: aggregate output tokens/s =
concurrency / time per output token (TPOT). So a throughput target at a TPOT target fixes the
concurrency the server must hold; if the bandwidth bound of a decode step at that concurrency is
already slower than the TPOT target, or the KV cache cannot hold that many sequences, no scheduler
setting meets both targets and tuning flags stops being the answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from . import _checks as chk

__all__ = ["concurrency_for_target", "largest_batch_within", "dense_batch_ceiling"]


def concurrency_for_target(throughput_tokens_per_s: float, tpot_s: float) -> int:
    """Sequences that must decode at once: ``ceil(throughput × TPOT)`` (Little's law, decode only)."""
    x = chk.positive("throughput_tokens_per_s", throughput_tokens_per_s)
    t = chk.positive("tpot_s", tpot_s)
    # round before the ceiling so that 1000 tok/s x 0.05 s is 50, not 51 from float noise
    return math.ceil(round(x * t, 9))


def largest_batch_within(step_time_s: Callable[[int], float], target_s: float, limit: int) -> int:
    """Largest batch ``b`` in ``1..limit`` with ``step_time_s(b) <= target_s``; 0 when even batch 1 is slower.

    ``step_time_s`` must not decrease with the batch (a decode step reads at least as many bytes for
    a larger batch); binary search relies on it.
    """
    t = chk.positive("target_s", target_s)
    hi = chk.positive_int("limit", limit)
    if step_time_s(1) > t:
        return 0
    lo = 1  # invariant: step_time_s(lo) <= t
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if step_time_s(mid) <= t:
            lo = mid
        else:
            hi = mid - 1
    return lo


def dense_batch_ceiling(weight_bytes: float, kv_bytes_per_sequence: float, bandwidth_bytes_per_s: float,
                        tpot_s: float) -> int:
    """Closed form for a dense model: largest ``b`` with ``(W + b × KV) / bandwidth <= TPOT``.

    ``floor((TPOT × bandwidth − W) / KV)``, or 0 when the weights alone take longer than TPOT.
    """
    w = chk.positive("weight_bytes", weight_bytes)
    kv = chk.positive("kv_bytes_per_sequence", kv_bytes_per_sequence)
    bw = chk.positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    t = chk.positive("tpot_s", tpot_s)
    room = t * bw - w
    return max(0, math.floor(room / kv)) if room > 0 else 0
