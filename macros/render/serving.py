"""Serving: the latency a batching queue delay adds against the throughput it buys, and the GPU memory
of several model instances (formulas: :mod:`macros.formulas.serving`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from . import inputs
from .blocks import GIVEN, Example, _flink, _glink, _mlink, _n
from .registry import COUNT, Arg, macro

_POS = Arg(inputs.number, "a number", "> 0")
_NONNEG = Arg(lambda name, v: inputs.number(name, v, positive=False), "a number", ">= 0")


def _ms(seconds: float) -> str:
    return U.fmt_seconds(seconds)


@macro("block", example='batch_delay(arrival_rate=400, delay_ms=5, max_batch=8, latency_1_ms=4, latency_max_ms=6)',
       args={"arrival_rate": _NONNEG, "delay_ms": _NONNEG, "max_batch": COUNT, "latency_1_ms": _POS,
             "latency_max_ms": _POS})
def batch_delay(arrival_rate: float, delay_ms: float, max_batch: int, latency_1_ms: float,
                latency_max_ms: float) -> str:
    """Worked example: a batching queue delay, latency added (the window, at most the delay) against throughput.

    Batch = min(max_batch, 1 + arrival rate × delay); execution time interpolated between the measured
    latency at batch 1 and at `max_batch`; capacity = batch / t(batch) against 1 / t(1). Arrival rate in
    requests/s, times in milliseconds.
    """
    d, t1, tmax = delay_ms / 1e3, latency_1_ms / 1e3, latency_max_ms / 1e3
    r = F.delayed_batching(arrival_rate, d, max_batch, t1, tmax)
    per_req = (tmax - t1) / (max_batch - 1) if max_batch > 1 else 0.0
    ex = Example(f"queue delay of {_ms(d)} at {_n(arrival_rate)} requests/s")
    ex.formula("batch b = min(max batch, 1 + arrival rate × delay)")
    ex.formula("t(b) = t(1) + (b − 1) × (t(max) − t(1)) / (max − 1)")
    ex.formula("window = delay, or (max − 1) / arrival rate if the batch fills first")
    ex.formula("first request's latency = window + t(b); capacity = b / t(b) against 1 / t(1)")
    ex.input("arrival rate", f"{_n(arrival_rate)} requests/s", GIVEN)
    ex.input("queue delay (`max_queue_delay_microseconds`)", _ms(d), "setting")
    ex.input("max batch size", str(max_batch), "setting")
    ex.input("latency at batch 1 / at max batch", f"{_ms(t1)} / {_ms(tmax)}", "measured (given)")
    ex.step(f"b = min({max_batch}, 1 + {_n(arrival_rate)} × {_n(d)} s) = {_n(r.batch)}")
    ex.step(f"t(b) = {_ms(t1)} + {_n(r.batch - 1)} × {_ms(per_req)} = {_ms(r.exec_time)}")
    if r.wait < d:
        ex.step(f"the batch fills first: window = {max_batch - 1} / {_n(arrival_rate)} requests/s = {_ms(r.wait)}")
    ex.step(f"first request: {_ms(r.wait)} + {_ms(r.exec_time)} = {_ms(r.first_latency)}, "
            f"against {_ms(t1)} unbatched")
    ex.step(f"capacity: {_n(r.batch)} / {_ms(r.exec_time)} = {_n(r.capacity)} requests/s, against "
            f"1 / {_ms(t1)} = {_n(r.capacity_unbatched)} requests/s")
    ex.result(f"up to {_ms(r.first_latency - t1)} more latency for {_n(r.gain)}× the capacity of an instance "
              "running batches of this size")
    if arrival_rate > r.capacity_unbatched:
        ex.result(f"unbatched, {_n(arrival_rate)} requests/s exceeds the instance's "
                  f"{_n(r.capacity_unbatched)} requests/s: the queue would grow without bound")
    ex.note("Average arrivals (Poisson); the request that opens a batch waits the whole delay unless the "
            "batch fills first. Ignores requests queued while the instance is busy: under heavy load batches "
            "fill from that backlog even with no delay, so the delay is not what rescues an overloaded "
            "instance. Linear batch latency holds while the model is memory-bound; measure beyond that.")
    return ex.render()


@macro("block", example='instance_memory("qwen2.5-7b", "l40s", fmt="fp8", count=3, overhead_gib=2)',
       args={"count": COUNT, "overhead_gib": _NONNEG})
def instance_memory(model: Model, gpu: Gpu, fmt: Format = "bf16", count: int = 2, overhead_gib: float = 1.0,
                    gpu_util: float = 0.9) -> str:
    """Worked example: GPU memory of ``count`` model instances that each hold their own weights.

    Per instance = weights + measured overhead (activations at the maximum batch, workspace, a CUDA
    context for a process-per-instance backend); total = count × per instance, against the GPU's
    memory × `gpu_util`; and the most instances that fit.
    """
    m, g, f = model, gpu, fmt
    w = F.weight_bytes(m, f)
    over = U.gib_to_bytes(overhead_gib)
    usable = g.engine_memory_bytes * gpu_util
    r = F.instance_memory(w, over, count, usable)
    ex = Example(f"{count} instances of {m.name} ({f.name}) on one {g.name}")
    ex.formula("per instance = weights + overhead; total = count × per instance")
    ex.formula("fits if total ≤ GPU memory × usable share; max count = floor(usable / per instance)")
    ex.input("weights", U.fmt_gb(w), f"{_mlink(m)}, {_flink(f)}")
    ex.input("overhead per instance", U.fmt_gb(over), "measured (given)")
    ex.input("GPU memory (CUDA total)", U.fmt_gb(g.engine_memory_bytes), _glink(g))
    ex.input("usable share", _n(gpu_util), "assumption")
    ex.input("instances", str(count), "`instance_group { count }`")
    ex.step(f"per instance: {U.fmt_gb(w)} + {U.fmt_gb(over)} = {U.fmt_gb(r.per_instance)}")
    ex.step(f"total: {count} × {U.fmt_gb(r.per_instance)} = {U.fmt_gb(r.total)}")
    ex.step(f"usable: {U.fmt_gb(g.engine_memory_bytes)} × {_n(gpu_util)} = {U.fmt_gb(usable)}")
    verdict = "fits" if r.fits else "does not fit"
    ex.result(f"{count} instances need {U.fmt_gb(r.total)}: {verdict}; at most {r.max_count} fit")
    ex.note("Upper bound: assumes every instance loads its own copy of the weights, as separate processes "
            "do; backends that share weights between instances on one GPU need less. Measure the overhead "
            "at the largest batch the instance will run.")
    return ex.render()
