"""Speed bounds: memory-bandwidth bound for decode, compute bound for prefill, arithmetic intensity.

These are roofline bounds, not predictions: real engines reach a fraction of them (kernel launch
gaps, imperfect bandwidth, scheduling, sampling). Units: bytes, bytes/s, FLOPs, FLOP/s, seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import _checks as chk

__all__ = [
    "expected_experts_touched",
    "weight_bytes_read_per_step",
    "batch_to_reach_ridge",
    "DecodeBound",
    "decode_bound",
    "prefill_flops",
    "prefill_matmul_flops",
    "attention_pairs",
    "prefill_attention_flops",
    "prefill_time",
    "roofline_time",
    "ridge_point",
    "gemm_arithmetic_intensity",
    "gemm_m_to_reach_ridge",
    "decode_arithmetic_intensity",
]


def expected_experts_touched(num_experts: int, top_k: int, batch: int) -> float:
    """Expected distinct experts one MoE layer reads in a decode step of ``batch`` tokens.

    Under uniform, independent routing an expert is missed by one token with probability
    ``1 - k/E``, so ``E x (1 - (1 - k/E)^B)``. Equals ``k`` at batch 1 and approaches ``E`` as the batch
    grows: the weight bytes a step reads grow with batch until every expert is read. Real routers are
    skewed, which touches somewhat fewer distinct experts.
    """
    chk.positive_int("num_experts", num_experts)
    chk.positive_int("top_k", top_k)
    chk.positive_int("batch", batch)
    if top_k > num_experts:
        raise ValueError(f"top_k {top_k} exceeds num_experts {num_experts}")
    return num_experts * (1 - (1 - top_k / num_experts) ** batch)


def weight_bytes_read_per_step(model, fmt, batch: int, expert_fmt=None) -> float:
    """Weight bytes one decode step reads (whole model, all GPUs together).

    Dense: every weight, once per step, whatever the batch, except the input embedding table: a step
    looks up one row per sequence (``batch x hidden_size`` values), not the whole table. A tied table
    is read in full anyway, as the output projection. MoE: every non-expert weight plus, per MoE
    layer, the expected number of distinct routed experts the batch touches
    (:func:`expected_experts_touched`) times one expert's bytes. ``fmt`` / ``expert_fmt`` as in
    :func:`macros.formulas.memory.weight_bytes_breakdown`.
    """
    from .memory import weight_bytes_breakdown  # local import: memory imports nothing from here
    from .params import param_breakdown

    chk.positive_int("batch", batch)
    b = param_breakdown(model)
    wb = weight_bytes_breakdown(model, fmt, expert_fmt, breakdown=b)
    bytes_per_param = wb.embeddings / b.embeddings  # the format's rule may keep embeddings in 16-bit
    lookup_only = 0.0
    if b.lm_head:  # untied: the input table is only indexed
        rows = min(batch, model.vocab_size)
        lookup_only = (b.embedding - rows * model.hidden_size) * bytes_per_param
    if model.moe is None or not b.moe_layers:
        return wb.total - lookup_only
    touched = expected_experts_touched(model.moe.num_experts, model.moe.experts_per_token, batch)
    per_expert = wb.routed_experts / (model.moe.num_experts * b.moe_layers)
    return wb.non_expert - lookup_only + touched * per_expert * b.moe_layers


def batch_to_reach_ridge(ridge_flops_per_byte: float, weight_bytes_per_param: float) -> int:
    """Smallest decode batch whose weight-GEMM intensity ``2B / bytes_per_param`` reaches the ridge point:
    ``ceil(ridge x bytes_per_param / 2)``."""
    chk.positive("ridge_flops_per_byte", ridge_flops_per_byte)
    chk.positive("weight_bytes_per_param", weight_bytes_per_param)
    return math.ceil(round(ridge_flops_per_byte * weight_bytes_per_param / 2, 9))


@dataclass(frozen=True)
class DecodeBound:
    weight_bytes_read: float   # per step, per GPU
    kv_bytes_read: float       # per step, per GPU (all sequences)
    step_time_s: float
    tokens_per_s_per_sequence: float
    tokens_per_s_aggregate: float
    comm_time_s: float = 0.0   # TP all-reduce time inside the step (0 on one GPU)

    @property
    def memory_time_s(self) -> float:
        return self.step_time_s - self.comm_time_s

    @property
    def bytes_per_step(self) -> float:
        return self.weight_bytes_read + self.kv_bytes_read


def decode_bound(weight_bytes_read: float, kv_bytes_per_sequence: float, batch: int,
                 bandwidth_bytes_per_s: float, comm_time_s: float = 0.0) -> DecodeBound:
    """Bandwidth bound of one decode step on one GPU (or one TP shard).

    ``step time = (weight bytes read + batch x KV bytes per sequence) / bandwidth``; each sequence
    gains one token per step, so ``tokens/s per sequence = 1 / step time`` and
    ``aggregate = batch / step time``. Weights are read once per step for the whole batch; for MoE
    pass only the experts the batch touches (:func:`expected_experts_touched`). Under TP pass the
    per-GPU shard bytes and one GPU's bandwidth, and the step's all-reduce time as ``comm_time_s``
    (:func:`macros.formulas.parallel.tp_decode_allreduce_time`), which is added to the memory time:
    ``step = memory time + communication time`` (no overlap assumed; the all-reduces sit between a
    layer's matmuls, which need their results).
    """
    chk.non_negative("comm_time_s", comm_time_s)
    chk.non_negative("weight_bytes_read", weight_bytes_read)
    chk.non_negative("kv_bytes_per_sequence", kv_bytes_per_sequence)
    chk.positive_int("batch", batch)
    chk.positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    kv = batch * kv_bytes_per_sequence
    total = weight_bytes_read + kv
    if total < 1:
        raise ValueError(f"a decode step must read at least one byte (weights or KV), got {total!r}")
    step = total / bandwidth_bytes_per_s + comm_time_s
    return DecodeBound(weight_bytes_read, kv, step, 1 / step, batch / step, comm_time_s)


def prefill_flops(active_params: float, tokens: int) -> float:
    """Dense FLOPs of a prefill over ``tokens``: ``2 x active_params x tokens`` (a multiply-add per weight)."""
    chk.positive("active_params", active_params)
    chk.non_negative_int("tokens", tokens)
    return 2 * active_params * tokens


def prefill_matmul_flops(model, tokens: int, sampled_positions: int | None = None) -> float:
    """Weight-matmul FLOPs of a prefill over ``tokens``, the LM head run only where a token is sampled.

    ``2 x (matmul params - lm_head) x tokens + 2 x lm_head x sampled_positions``. Engines project to
    the vocabulary only at the positions they sample from (vLLM's V1 model runner gathers the
    hidden states at ``logits_indices``, one per request finishing its prompt, before
    ``compute_logits``), so a plain prefill pays the LM head once; pass ``sampled_positions =
    tokens`` for prompt log-probabilities, which need every position. A tied table counts as the
    LM head. The input embedding is a lookup and is never charged. Default: one sampled position
    (none for an empty prompt).
    """
    from .params import param_breakdown  # local: params imports nothing from here

    chk.non_negative_int("tokens", tokens)
    if sampled_positions is None:
        sampled_positions = min(1, tokens)
    chk.non_negative_int("sampled_positions", sampled_positions)
    if sampled_positions > tokens:
        raise ValueError(f"sampled_positions {sampled_positions} exceeds the prompt's {tokens} tokens")
    b = param_breakdown(model)
    head = b.lm_head or b.embedding
    return 2 * (b.compute_active - head) * tokens + 2 * head * sampled_positions


def attention_pairs(tokens: int, window: int | None = None) -> int:
    """(query, key) pairs a causal attention layer scores over ``tokens``, optionally windowed.

    Full causal: ``n(n+1)/2``. Window ``w``: ``sum_i min(i, w)`` = ``w(w+1)/2 + (n-w)w`` when n > w.
    """
    chk.non_negative_int("tokens", tokens)
    n = tokens
    if window is None or n <= window:
        return n * (n + 1) // 2
    chk.positive_int("window", window)
    return window * (window + 1) // 2 + (n - window) * window


def prefill_attention_flops(model, tokens: int) -> float:
    """Attention-score FLOPs of a causal prefill (the part ``2 x params`` leaves out).

    Per layer: ``2 x pairs x heads x (qk_dim + v_dim)`` (QK^T and the weighted sum of V, a
    multiply-add each); ``qk_dim = v_dim = head_dim`` except MLA (``nope + rope`` and ``v_head_dim``).
    Sliding layers use windowed pairs; linear-attention layers are omitted (linear in n).
    """
    chk.non_negative_int("tokens", tokens)
    if model.mla is not None:
        qk = model.mla.qk_nope_head_dim + model.mla.qk_rope_head_dim
        v = model.mla.v_head_dim
    else:
        qk = v = model.head_dim
    sliding = model.sliding_window.num_sliding_layers if model.sliding_window else 0
    linear = model.linear_attention.num_linear_layers if model.linear_attention else 0
    full = model.num_hidden_layers - sliding - linear
    per_pair = 2 * model.num_attention_heads * (qk + v)
    pairs = full * attention_pairs(tokens)
    if sliding:
        pairs += sliding * attention_pairs(tokens, model.sliding_window.size)
    return per_pair * pairs


def prefill_time(flops: float, peak_flops: float, utilization: float) -> float:
    """Compute-bound prefill time: ``flops / (peak x utilization)`` seconds.

    ``utilization`` is the model FLOPs utilization (MFU) the engine reaches, e.g. 0.4 to 0.6 on large
    prefills; ``peak`` is the dense (not with-sparsity) tensor-core rate of the GPUs doing the work.
    """
    chk.non_negative("flops", flops)
    chk.positive("peak_flops", peak_flops)
    chk.fraction("utilization", utilization)
    return flops / (peak_flops * utilization)


def roofline_time(flops: float, bytes_moved: float, peak_flops: float, bandwidth_bytes_per_s: float) -> float:
    """Roofline lower bound on a kernel's time: ``max(flops / peak, bytes / bandwidth)`` seconds.

    Equivalently the kernel runs at most at ``min(peak, intensity x bandwidth)`` FLOP/s (Williams,
    Waterman and Patterson, 2009). Peak is the dense rate of the precision the arithmetic runs in.
    """
    chk.non_negative("flops", flops)
    chk.non_negative("bytes_moved", bytes_moved)
    chk.positive("peak_flops", peak_flops)
    chk.positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    return max(flops / peak_flops, bytes_moved / bandwidth_bytes_per_s)


def ridge_point(peak_flops: float, bandwidth_bytes_per_s: float) -> float:
    """Roofline ridge point (ops:byte ratio): ``peak FLOP/s / bandwidth bytes/s``.

    A kernel with fewer FLOPs per byte than this is memory-bound on that GPU.
    """
    chk.positive("peak_flops", peak_flops)
    chk.positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    return peak_flops / bandwidth_bytes_per_s


def gemm_arithmetic_intensity(m: int, k: int, n: int, element_bytes: float,
                              weight_bytes: float | None = None) -> float:
    """FLOPs per byte of an ``(m x k) @ (k x n)`` GEMM: ``2mkn / (a x mk + w x kn + a x mn)``.

    ``a = element_bytes`` is the activation dtype, used for the ``m x k`` input and for the ``m x n``
    output (the output is written in the activation dtype); ``w = weight_bytes`` is the ``k x n``
    weight's bytes per element, default ``a`` (so ``2mkn / (a x (mk + kn + mn))``). Counts each input
    read once and the output written once, i.e. perfect on-chip reuse: the best case a kernel can
    reach. In decode, ``m`` is the batch: with ``m`` much smaller than k and n the weight read
    ``kn`` dominates and the intensity is about ``2m / w``. As ``m`` grows it approaches
    ``2kn / (a x (k + n))``.
    """
    chk.positive_int("m", m)
    chk.positive_int("k", k)
    chk.positive_int("n", n)
    chk.positive("element_bytes", element_bytes)
    w = element_bytes if weight_bytes is None else weight_bytes
    chk.positive("weight_bytes", w)
    return 2 * m * k * n / (element_bytes * (m * k + m * n) + w * k * n)


def gemm_m_to_reach_ridge(ridge_flops_per_byte: float, k: int, n: int, element_bytes: float,
                          weight_bytes: float | None = None) -> int | None:
    """Smallest ``m`` (tokens in the step) at which :func:`gemm_arithmetic_intensity` reaches the ridge.

    Solving ``2mkn = r x (a x m(k + n) + w x kn)`` for ``m``: ``m* = r w kn / (2kn - r a (k + n))``,
    rounded up. ``None`` when ``2kn <= r a (k + n)``: the shape's limit ``2kn / (a(k + n))`` lies at or
    below the ridge, so no number of tokens makes it compute-bound.
    """
    chk.positive("ridge_flops_per_byte", ridge_flops_per_byte)
    chk.positive_int("k", k)
    chk.positive_int("n", n)
    chk.positive("element_bytes", element_bytes)
    w = element_bytes if weight_bytes is None else weight_bytes
    chk.positive("weight_bytes", w)
    r, a = ridge_flops_per_byte, element_bytes
    denom = 2 * k * n - r * a * (k + n)
    if denom <= 0:
        return None
    return max(1, math.ceil(round(r * w * k * n / denom, 9)))


def decode_arithmetic_intensity(batch: int, weight_bytes_per_param: float,
                                kv_bytes_per_sequence: float = 0.0, params: float | None = None) -> float:
    """FLOPs per byte of a decode step: ``2 x B x params / (params x bytes_per_param + B x kv_bytes)``.

    Without KV (``kv_bytes_per_sequence = 0``) this is ``2B / bytes_per_param``: batch 1 in BF16 does
    1 FLOP per byte, far below any GPU's ridge point. KV reads add bytes without adding weight FLOPs,
    so long contexts push decode further into the memory-bound region.
    """
    chk.positive_int("batch", batch)
    chk.positive("weight_bytes_per_param", weight_bytes_per_param)
    chk.non_negative("kv_bytes_per_sequence", kv_bytes_per_sequence)
    if kv_bytes_per_sequence and params is None:
        raise ValueError("params is needed when kv_bytes_per_sequence is given")
    if params is None:
        return 2 * batch / weight_bytes_per_param
    chk.positive("params", params)
    return 2 * batch * params / (params * weight_bytes_per_param + batch * kv_bytes_per_sequence)
