"""Serving: dynamic batching with a queue delay (the batch a delay window collects, the latency it adds, the
throughput it buys) and the GPU memory of several model instances.

Units: seconds, requests per second, bytes. The batch latency is a straight line through two measured
points, ``t(b) = t(1) + (b - 1) x (t(B) - t(1)) / (B - 1)``: a fixed cost per batch (weights read once,
launches) plus a cost per request. That is the shape a memory-bound model has below its compute
limit; past it, measure more points.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _checks as chk

__all__ = ["BatchDelay", "InstanceMemory", "batch_latency", "delayed_batching", "instance_memory"]


def batch_latency(batch: float, latency_1: float, latency_max: float, max_batch: int) -> float:
    """Execution time of a batch of ``batch`` requests, by linear interpolation between the measured
    latency at batch 1 (``latency_1``) and at ``max_batch`` (``latency_max``), in seconds."""
    chk.positive("latency_1", latency_1)
    chk.positive("latency_max", latency_max)
    max_batch = chk.positive_int("max_batch", max_batch)
    chk.positive("batch", batch)
    if batch > max_batch:
        raise ValueError(f"batch {batch} exceeds max_batch {max_batch}")
    if latency_max < latency_1:
        raise ValueError(f"latency_max ({latency_max}) must be >= latency_1 ({latency_1}): a larger batch "
                         "does not run faster")
    if max_batch == 1:
        return latency_1
    return latency_1 + (batch - 1) * (latency_max - latency_1) / (max_batch - 1)


@dataclass(frozen=True)
class BatchDelay:
    batch: float              # expected requests per batch: 1 + arrival_rate x delay, capped at max_batch
    exec_time: float          # t(batch), seconds
    wait: float               # how long the window stays open: the delay, or less if the batch fills first
    first_latency: float      # wait + t(batch): the request that opened the window waits all of it
    capacity: float           # batch / t(batch): requests/s of an instance that runs batches of that size
    capacity_unbatched: float  # 1 / t(1)
    gain: float               # capacity / capacity_unbatched


def delayed_batching(arrival_rate: float, delay: float, max_batch: int, latency_1: float,
                     latency_max: float) -> BatchDelay:
    """What a queue delay of ``delay`` seconds buys at ``arrival_rate`` requests per second.

    The first request opens the window; on average ``arrival_rate x delay`` more arrive before it
    closes (Poisson arrivals), so a batch holds ``min(max_batch, 1 + arrival_rate x delay)``
    requests. If the batch fills before the window ends it goes at once (Triton's rule for a
    full or preferred batch): the window then closes after the ``max_batch - 1`` arrivals it
    needs, ``(max_batch - 1) / arrival_rate`` on average, instead of after the full delay. The
    request that opened the window waits ``wait`` and then the batch's execution time. Ignores
    requests that queue while the instance is busy: under heavy load batches fill from the
    backlog without waiting for the delay.
    """
    chk.non_negative("arrival_rate", arrival_rate)
    chk.non_negative("delay", delay)
    max_batch = chk.positive_int("max_batch", max_batch)
    filled = 1.0 + arrival_rate * delay >= max_batch
    b = float(max_batch) if filled else 1.0 + arrival_rate * delay
    # a full batch goes at once; max_batch > 1 and filled imply arrival_rate > 0
    wait = 0.0 if max_batch == 1 else (max_batch - 1) / arrival_rate if filled else delay
    t_b = batch_latency(b, latency_1, latency_max, max_batch)
    capacity = b / t_b
    unbatched = 1.0 / latency_1
    return BatchDelay(batch=b, exec_time=t_b, wait=wait, first_latency=wait + t_b, capacity=capacity,
                      capacity_unbatched=unbatched, gain=capacity / unbatched)


@dataclass(frozen=True)
class InstanceMemory:
    per_instance: float   # bytes: weights + per-instance overhead
    total: float          # bytes: count x per_instance
    fits: bool            # total <= usable GPU memory
    max_count: int        # most instances whose total fits


def instance_memory(weight_bytes: float, overhead_bytes: float, count: int, usable_bytes: float) -> InstanceMemory:
    """GPU memory of ``count`` instances of a model that each hold their own copy of the weights.

    ``per_instance = weight_bytes + overhead_bytes`` (activations at the maximum batch, workspace,
    and for a process-per-instance backend its own CUDA context), ``total = count x per_instance``,
    ``max_count = floor(usable / per_instance)``. Backends that share weights between instances on
    one GPU need less; this is the upper bound to check first.
    """
    chk.positive("weight_bytes", weight_bytes)
    chk.non_negative("overhead_bytes", overhead_bytes)
    count = chk.positive_int("count", count)
    chk.positive("usable_bytes", usable_bytes)
    per = weight_bytes + overhead_bytes
    total = count * per
    return InstanceMemory(per_instance=per, total=total, fits=total <= usable_bytes,
                          max_count=int(usable_bytes // per))
