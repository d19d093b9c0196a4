"""KV-cache tiers below GPU memory (Part C, Q139): how long reloading a cached prefix takes from CPU
memory, local SSD or a remote pool, against recomputing it; how many tokens a tier holds and how long a
prefix survives in it; and the hit rate at which a tier starts to pay.

Units: bytes, bytes/s, seconds, tokens. Pure functions; nothing here formats numbers.
"""

from __future__ import annotations

import math

from . import _checks as chk

__all__ = ["reload_time", "tier_tokens", "retention_s", "break_even_hit_rate"]


def reload_time(tokens: int, kv_bytes_per_token: float, bandwidth_bytes_per_s: float, latency_s: float = 0.0) -> float:
    """Seconds to bring a prefix's KV back to the GPU: ``latency + tokens x bytes per token / bandwidth``.

    ``bandwidth`` is what the transfer reaches end to end (PCIe, SSD reads, the NIC: the slowest hop);
    ``latency`` the fixed cost of one lookup and transfer setup.
    """
    chk.non_negative_int("tokens", tokens)
    chk.positive("kv_bytes_per_token", kv_bytes_per_token)
    chk.positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    chk.non_negative("latency_s", latency_s)
    return latency_s + tokens * kv_bytes_per_token / bandwidth_bytes_per_s


def tier_tokens(capacity_bytes: float, kv_bytes_per_token: float) -> int:
    """Tokens of KV a tier of ``capacity_bytes`` holds: the floor of capacity over bytes per token."""
    chk.non_negative("capacity_bytes", capacity_bytes)
    chk.positive("kv_bytes_per_token", kv_bytes_per_token)
    ratio = capacity_bytes / kv_bytes_per_token
    if not math.isfinite(ratio):  # e.g. a tiny bytes-per-token typo: say so instead of an OverflowError
        raise ValueError(f"capacity_bytes / kv_bytes_per_token is not finite ({capacity_bytes!r} / "
                         f"{kv_bytes_per_token!r})")
    return math.floor(round(ratio, 9))


def retention_s(capacity_tokens: float, new_tokens_per_s: float) -> float:
    """How long an unused prefix survives in an LRU tier that takes ``new_tokens_per_s`` of new KV:
    ``capacity / rate`` (every stored token pushes the oldest one out once the tier is full)."""
    chk.non_negative("capacity_tokens", capacity_tokens)
    chk.positive("new_tokens_per_s", new_tokens_per_s)
    return capacity_tokens / new_tokens_per_s


def break_even_hit_rate(recompute_s: float, reload_s: float, miss_cost_s: float = 0.0) -> float:
    """Hit rate above which looking prefixes up in a tier saves time on average.

    A hit saves ``recompute - reload``; a miss costs ``miss_cost`` (the lookup round trip, plus any store
    time not hidden behind the prefill). Expected saving ``h (recompute - reload) - (1 - h) miss`` is zero
    at ``h* = miss / (recompute - reload + miss)``. Returns ``inf`` when reloading is not faster than
    recomputing: no hit rate makes the tier pay in time.
    """
    chk.positive("recompute_s", recompute_s)
    chk.non_negative("reload_s", reload_s)
    chk.non_negative("miss_cost_s", miss_cost_s)
    gain = recompute_s - reload_s
    if gain <= 0:
        return math.inf
    return miss_cost_s / (gain + miss_cost_s)
