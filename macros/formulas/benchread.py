"""Reading a throughput-vs-interactivity benchmark for a buying decision (Q148).

Public LLM benchmarks (SemiAnalysis InferenceX, MLPerf Inference's Server and Interactive scenarios)
report throughput per GPU at a given per-user speed. This module models one serving system's Pareto
curve from a decode step that costs a fixed part plus a part per sequence in the batch:

    step time           t(b) = t0 + c × b            (seconds per decode step)
    interactivity       i = 1 / t(b)                 (tokens/s per user; InferenceX: 1000 / TPOT in ms)
    throughput per GPU  T = b / t(b) / G             (output tokens/s per GPU, G GPUs per instance)

Asked for an interactivity target i, the system runs the largest batch that still meets it,
``b(i) = min(b_max, (1/i − t0) / c)``, and is infeasible when that is below one sequence. In the
unsaturated range, ``T(i) = (1 − i × t0) / (c × G)``: a straight line falling with i, which is why a
system with a small fixed cost (t0) and a system with a small per-sequence cost (c) swap places as the
target moves. The dollar cost per million output tokens is ``$/GPU-hour × 10^6 / (T × 3600)``.

The curves a page draws from this are illustrative (stated parameters), not any vendor's measurement.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._checks import positive

__all__ = ["DecodeSystem", "batch_at", "throughput_per_gpu_at", "usd_per_million_at", "throughput_crossing",
           "cost_crossing", "output_share", "interactivity_from_tpot_ms"]


@dataclass(frozen=True)
class DecodeSystem:
    name: str
    gpus: int                 # GPUs in one serving instance (G)
    fixed_step_s: float       # t0: step time at batch → 0 (weights read, launch and sync overheads)
    per_seq_step_s: float     # c: added step time per sequence in the batch (KV reads, compute)
    max_batch: int            # b_max: sequences that fit (KV memory, engine limit)

    def __post_init__(self) -> None:
        if not isinstance(self.gpus, int) or self.gpus < 1:
            raise ValueError(f"{self.name}: gpus must be a whole number >= 1, got {self.gpus!r}")
        positive(f"{self.name}: fixed_step_s", self.fixed_step_s)
        positive(f"{self.name}: per_seq_step_s", self.per_seq_step_s)
        if not isinstance(self.max_batch, int) or self.max_batch < 1:
            raise ValueError(f"{self.name}: max_batch must be a whole number >= 1, got {self.max_batch!r}")

    @property
    def max_interactivity(self) -> float:
        """Fastest per-user speed: one sequence alone, 1 / (t0 + c)."""
        return 1.0 / (self.fixed_step_s + self.per_seq_step_s)

    @property
    def knee_interactivity(self) -> float:
        """Below this per-user speed the batch is capped at max_batch: 1 / (t0 + c × b_max)."""
        return 1.0 / (self.fixed_step_s + self.per_seq_step_s * self.max_batch)


def batch_at(s: DecodeSystem, interactivity: float) -> float | None:
    """Largest (fractional) batch meeting ``interactivity`` tokens/s per user, or None if even one
    sequence is too slow: ``min(b_max, (1/i − t0) / c)``."""
    positive("interactivity", interactivity)
    b = (1.0 / interactivity - s.fixed_step_s) / s.per_seq_step_s
    if b < 1.0 - 1e-9:  # (tolerance: exactly one sequence at max_interactivity despite rounding)
        return None
    return min(float(s.max_batch), max(1.0, b))


def throughput_per_gpu_at(s: DecodeSystem, interactivity: float) -> float | None:
    """Output tokens/s per GPU at the interactivity target: ``b / (t0 + c × b) / G``; None if infeasible."""
    b = batch_at(s, interactivity)
    if b is None:
        return None
    return b / (s.fixed_step_s + s.per_seq_step_s * b) / s.gpus


def usd_per_million_at(s: DecodeSystem, usd_per_gpu_hour: float, interactivity: float) -> float | None:
    """$ per million output tokens at the target, every paid GPU-hour busy:
    ``$/GPU-hour × 10^6 / (T × 3600)``; None if infeasible."""
    positive("usd_per_gpu_hour", usd_per_gpu_hour)
    t = throughput_per_gpu_at(s, interactivity)
    if t is None:
        return None
    return usd_per_gpu_hour * 1e6 / (t * 3600.0)


def _in_line_range(s: DecodeSystem, i: float) -> bool:
    return s.knee_interactivity <= i <= s.max_interactivity


def throughput_crossing(a: DecodeSystem, b: DecodeSystem) -> float | None:
    """Interactivity where the two throughput-per-GPU lines cross (both unsaturated):
    ``(1 − i t0a) / (ca Ga) = (1 − i t0b) / (cb Gb)`` gives
    ``i* = (cb Gb − ca Ga) / (t0a cb Gb − t0b ca Ga)``. None if parallel or outside either line's range."""
    ka, kb = a.per_seq_step_s * a.gpus, b.per_seq_step_s * b.gpus
    den = a.fixed_step_s * kb - b.fixed_step_s * ka
    if den == 0:
        return None
    i = (kb - ka) / den
    return i if i > 0 and _in_line_range(a, i) and _in_line_range(b, i) else None


def cost_crossing(a: DecodeSystem, price_a: float, b: DecodeSystem, price_b: float) -> float | None:
    """Interactivity where the two $/M curves cross (both unsaturated). $/M ∝ p c G / (1 − i t0), so
    ``pa ca Ga (1 − i t0b) = pb cb Gb (1 − i t0a)`` gives
    ``i* = (pb cb Gb − pa ca Ga) / (pb cb Gb t0a − pa ca Ga t0b)``."""
    positive("price_a", price_a)
    positive("price_b", price_b)
    ka, kb = price_a * a.per_seq_step_s * a.gpus, price_b * b.per_seq_step_s * b.gpus
    den = kb * a.fixed_step_s - ka * b.fixed_step_s
    if den == 0:
        return None
    i = (kb - ka) / den
    return i if i > 0 and _in_line_range(a, i) and _in_line_range(b, i) else None


def output_share(input_tokens: int, output_tokens: int) -> float:
    """Share of output tokens in a fixed-length request's total: ``osl / (isl + osl)``. A headline
    throughput that counts input + output tokens (InferenceX's ``tput_per_gpu``) times this share is the
    output-token throughput."""
    positive("input_tokens", input_tokens)
    positive("output_tokens", output_tokens)
    return output_tokens / (input_tokens + output_tokens)


def interactivity_from_tpot_ms(tpot_ms: float) -> float:
    """Per-user speed of a TPOT bound: ``1000 / TPOT[ms]`` tokens/s (InferenceX derives ``intvty`` so)."""
    positive("tpot_ms", tpot_ms)
    return 1000.0 / tpot_ms
