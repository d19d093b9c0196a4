"""Q115: find the replica that is slower than its siblings, and say whether it was given different work.

Input: one row per replica over the same window, from the engine's Prometheus metrics (vLLM 0.11 names in
the comments). Each value is divided by the fleet median of that column, so the comparison needs no
absolute threshold: identical replicas serving identical traffic sit near 1.0 on every column.

A replica is slow when its decode latency ratio exceeds ``slow``. It is then attributed: if any workload
column (prompt length, concurrency, prefix-cache hit rate) is off the median by more than ``skew``, the
traffic differs and the router is the first suspect; if all workload columns are near the median, the
replica itself (GPU clocks, host, configuration) is.
"""

from __future__ import annotations

from statistics import median

LATENCY = "itl_s"                # vllm:inter_token_latency_seconds (vLLM 0.11), mean gap over the window: _sum / _count
WORKLOAD = {
    "prompt_tokens": "mean prompt length (vllm:request_prompt_tokens)",
    "running": "mean running requests (vllm:num_requests_running)",
    "cache_hit_rate": "prefix-cache hit rate (vllm:prefix_cache_hits / vllm:prefix_cache_queries)",
}


# --8<-- [start:classify]
def classify(replicas: dict[str, dict[str, float]], slow: float = 1.2, skew: float = 0.25) -> dict[str, str]:
    """{replica: verdict} for every replica whose latency ratio to the fleet median exceeds ``slow``."""
    if len(replicas) < 3:
        raise ValueError("need at least three replicas: a median of two cannot single one out")
    for name, row in replicas.items():
        missing = [k for k in (LATENCY, *WORKLOAD) if k not in row]
        if missing:
            raise ValueError(f"replica {name!r}: missing {missing}")
    med = {k: median(r[k] for r in replicas.values()) for k in (LATENCY, *WORKLOAD)}
    verdicts = {}
    for name, row in sorted(replicas.items()):
        ratio = row[LATENCY] / med[LATENCY]
        if ratio <= slow:
            continue
        off = [f"{WORKLOAD[k]} x{row[k] / med[k]:.2f}" for k in WORKLOAD
               if med[k] and abs(row[k] / med[k] - 1) > skew]
        verdicts[name] = (f"latency x{ratio:.2f} of median; traffic differs: " + "; ".join(off) if off else
                          f"latency x{ratio:.2f} of median with median traffic: the replica itself")
    return verdicts
# --8<-- [end:classify]
