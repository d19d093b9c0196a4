"""Tuning against latency and throughput targets: the concurrency a target implies, and the batch the
bandwidth bound allows (the largest batch within a step-time target is ``engineconf.tpot_batch_limit``).

Steady-state decode obeys Little's law over the sequences being decoded: aggregate output tokens/s =
concurrency / time per output token (TPOT). So a throughput target at a TPOT target fixes the
concurrency the server must hold; if the bandwidth bound of a decode step at that concurrency is
already slower than the TPOT target, or the KV cache cannot hold that many sequences, no scheduler
setting meets both targets and tuning flags stops being the answer.
"""

from __future__ import annotations

import math

from . import _checks as chk

__all__ = ["concurrency_for_target", "dense_batch_ceiling"]


def concurrency_for_target(throughput_tokens_per_s: float, tpot_s: float) -> int:
    """Sequences that must decode at once: ``ceil(throughput × TPOT)`` (Little's law, decode only)."""
    x = chk.positive("throughput_tokens_per_s", throughput_tokens_per_s)
    t = chk.positive("tpot_s", tpot_s)
    # round before the ceiling so that 1000 tok/s x 0.05 s is 50, not 51 from float noise
    return math.ceil(round(x * t, 9))


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
