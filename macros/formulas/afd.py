"""Attention-FFN disaggregation (Part D, Q157): one decode layer split between an attention pool (weights of
the attention block, the KV cache) and an FFN pool (the routed experts), with micro-batches ping-ponged
between them (MegaScale-Infer, arXiv 2504.02263; Step-3's AFD, arXiv 2507.19427).

Per layer and per micro-batch: the attention GPU's time from its weight and KV reads against its FLOPs; the
FFN pool's work (expert reads against expert FLOPs, in GPU-seconds) and the FFN GPUs that match the attention
time; the bytes one token sends across the split and gets back; and the micro-batches a ping-pong needs so
that its slowest stage never waits.

Units: tokens, bytes, seconds, FLOPs. Pure functions; nothing here formats numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import _checks as chk
from .wideep import ep_dispatch_bytes

__all__ = ["decode_attention_pair_flops", "AttentionLayer", "attention_layer", "ExpertWork", "expert_work",
           "balanced_ffn_gpus", "distinct_ffn_gpus", "split_bytes_per_token", "ping_pong_micro_batches",
           "attention_busy_share"]


def decode_attention_pair_flops(num_heads: int, qk_dim: int, v_dim: int) -> int:
    """FLOPs one decode query spends on one cached token in one layer: ``2 x heads x (qk_dim + v_dim)``.

    QK^T and the weighted sum of V, a multiply-add each. For MLA run in its absorbed form (FlashMLA), every
    head scores against the shared latent: ``qk_dim = kv_lora_rank + qk_rope_head_dim`` and
    ``v_dim = kv_lora_rank``; for MHA/GQA both are ``head_dim``, whatever the number of KV heads.
    """
    for name, v in (("num_heads", num_heads), ("qk_dim", qk_dim), ("v_dim", v_dim)):
        chk.positive_int(name, v)
    return 2 * num_heads * (qk_dim + v_dim)


@dataclass(frozen=True)
class AttentionLayer:
    """One attention layer of one decode micro-batch on one attention GPU (seconds)."""

    weight_read_s: float   # the attention block's weights read once
    kv_read_s: float       # every sequence's cached KV of this layer read once
    compute_s: float       # projections (2 x params per token) plus scores over the context

    @property
    def read_s(self) -> float:
        return self.weight_read_s + self.kv_read_s

    @property
    def time_s(self) -> float:
        """Roofline: the longer of the memory reads and the FLOPs."""
        return max(self.read_s, self.compute_s)

    @property
    def compute_bound(self) -> bool:
        return self.compute_s > self.read_s


def attention_layer(batch: int, context: int, weight_bytes: float, kv_bytes_per_token: float, params: float,
                    pair_flops: float, hbm_bytes_per_s: float, proj_flops_per_s: float,
                    attn_flops_per_s: float) -> AttentionLayer:
    """Decode attention of ``batch`` sequences of ``context`` cached tokens, one layer, one GPU.

    Reads: ``weight_bytes`` (the layer's attention weights) + ``batch x context x kv_bytes_per_token`` (that
    layer's KV per token). FLOPs: ``batch x 2 x params`` for the projections at ``proj_flops_per_s`` plus
    ``batch x context x pair_flops`` (:func:`decode_attention_pair_flops`) at ``attn_flops_per_s`` (the
    attention kernel's rate: BF16 on Hopper even over an FP8 cache).
    """
    chk.positive_int("batch", batch)
    chk.positive_int("context", context)
    for name, v in (("weight_bytes", weight_bytes), ("kv_bytes_per_token", kv_bytes_per_token),
                    ("params", params), ("pair_flops", pair_flops), ("hbm_bytes_per_s", hbm_bytes_per_s),
                    ("proj_flops_per_s", proj_flops_per_s), ("attn_flops_per_s", attn_flops_per_s)):
        chk.positive(name, v)
    compute = batch * 2 * params / proj_flops_per_s + batch * context * pair_flops / attn_flops_per_s
    return AttentionLayer(weight_bytes / hbm_bytes_per_s, batch * context * kv_bytes_per_token / hbm_bytes_per_s,
                          compute)


@dataclass(frozen=True)
class ExpertWork:
    """One MoE layer's routed-expert work for one micro-batch, in GPU-seconds (divide by the FFN GPUs)."""

    read_gpu_s: float      # every expert's weights read once (all are touched at these batch sizes)
    compute_gpu_s: float   # token-expert pairs x 2 x params per expert

    @property
    def gpu_s(self) -> float:
        """GPU-seconds of the layer: both terms split evenly over the FFN GPUs, so the larger one holds."""
        return max(self.read_gpu_s, self.compute_gpu_s)

    @property
    def compute_bound(self) -> bool:
        return self.compute_gpu_s > self.read_gpu_s


def expert_work(tokens: int, top_k: int, num_experts: int, bytes_per_expert: float, params_per_expert: float,
                hbm_bytes_per_s: float, peak_flops: float) -> ExpertWork:
    """The FFN pool's work for ``tokens`` tokens (every attention GPU's micro-batch together), one MoE layer.

    ``num_experts x bytes_per_expert / HBM`` against ``tokens x top_k x 2 x params_per_expert / peak``. Spread
    evenly over ``n`` FFN GPUs, both terms divide by ``n``: the layer takes ``gpu_s / n`` seconds on each
    (uniform routing; hot experts make it longer, see :mod:`macros.formulas.wideep`).
    """
    chk.positive_int("tokens", tokens)
    chk.positive_int("top_k", top_k)
    chk.positive_int("num_experts", num_experts)
    if top_k > num_experts:
        raise ValueError(f"top_k {top_k} exceeds num_experts {num_experts}")
    for name, v in (("bytes_per_expert", bytes_per_expert), ("params_per_expert", params_per_expert),
                    ("hbm_bytes_per_s", hbm_bytes_per_s), ("peak_flops", peak_flops)):
        chk.positive(name, v)
    return ExpertWork(num_experts * bytes_per_expert / hbm_bytes_per_s,
                      tokens * top_k * 2 * params_per_expert / peak_flops)


def balanced_ffn_gpus(expert_gpu_s: float, attention_s: float) -> float:
    """FFN GPUs whose layer time equals the attention GPUs' layer time: ``expert GPU-seconds / attention time``.

    Fractional; a deployment rounds up to a divisor that places the experts evenly.
    """
    chk.positive("expert_gpu_s", expert_gpu_s)
    chk.positive("attention_s", attention_s)
    return expert_gpu_s / attention_s


def distinct_ffn_gpus(num_experts: int, top_k: int, ffn_gpus: int) -> float:
    """Expected FFN GPUs one token's ``top_k`` experts sit on, experts spread evenly and routing uniform.

    Each GPU holds ``E / n`` experts; a GPU is missed when all ``k`` choices fall among the other ``E - E/n``:
    ``n x (1 - C(E - E/n, k) / C(E, k))``. That is the copies a de-duplicating dispatch sends (once per GPU, which
    sums its own experts' weighted outputs before sending one vector back); a per-expert dispatch such as DeepEP's
    low-latency kernels sends ``k``.
    """
    chk.positive_int("num_experts", num_experts)
    chk.positive_int("top_k", top_k)
    chk.positive_int("ffn_gpus", ffn_gpus)
    if top_k > num_experts:
        raise ValueError(f"top_k {top_k} exceeds num_experts {num_experts}")
    if num_experts % ffn_gpus:
        raise ValueError(f"{num_experts} experts do not divide evenly over {ffn_gpus} FFN GPUs")
    others = num_experts - num_experts // ffn_gpus
    return ffn_gpus * (1 - math.comb(others, top_k) / math.comb(num_experts, top_k))


def split_bytes_per_token(hidden_size: int, element_bytes: float, copies: float = 1.0,
                          scale_group: int | None = None, scale_bytes: float = 4.0) -> float:
    """Bytes one token moves across the split in one direction of one layer.

    ``copies x (hidden x element_bytes + ceil(hidden / scale_group) x scale_bytes)``: the hidden state (FP8
    with a float32 scale per ``scale_group`` channels, or BF16 with none) once per FFN GPU it is sent to.
    """
    chk.positive("copies", copies)
    # one vector per token and destination: wide EP's dispatch formula with one token and one expert
    return copies * ep_dispatch_bytes(1, 1, hidden_size, element_bytes, scale_group, scale_bytes)


def ping_pong_micro_batches(attention_s: float, ffn_s: float, out_s: float, back_s: float) -> int:
    """Fewest micro-batches that keep the slowest stage of a ping-pong over one layer busy all the time.

    One micro-batch goes round four stages in turn, each one at a time: attention, the link out, the experts, the
    link back. With ``m`` in flight the round takes ``attention + out + ffn + back`` and the slowest stage can
    take a new micro-batch every ``max(...)`` of them, so it never waits once
    ``m >= (attention + ffn + out + back) / max(attention, ffn, out, back)``. Only the slowest stage can be kept
    busy; the faster ones idle whatever ``m`` is. Balanced compute (``attention = ffn = T``) and a link time
    ``c < T`` each way give MegaScale-Infer's ``m >= 2 x (1 + c / T)`` (arXiv 2504.02263, section 4.1). At least 2.
    """
    chk.positive("attention_s", attention_s)
    chk.positive("ffn_s", ffn_s)
    chk.non_negative("out_s", out_s)
    chk.non_negative("back_s", back_s)
    cycle = attention_s + ffn_s + out_s + back_s
    return max(2, math.ceil(cycle / max(attention_s, ffn_s, out_s, back_s) - 1e-9))


def attention_busy_share(attention_s: float, ffn_s: float, out_s: float, back_s: float, micro_batches: int) -> float:
    """Share of the time an attention GPU computes in a steady ping-pong of ``micro_batches`` (a fixed cycle).

    ``min(m x attention / round, attention / slowest stage)``: too few micro-batches and the round is the limit;
    enough of them and the slowest stage is. 1 only when attention is the slowest stage and ``m`` is at least
    :func:`ping_pong_micro_batches`.
    """
    chk.positive("attention_s", attention_s)
    chk.positive("ffn_s", ffn_s)
    chk.non_negative("out_s", out_s)
    chk.non_negative("back_s", back_s)
    chk.positive_int("micro_batches", micro_batches)
    cycle = attention_s + ffn_s + out_s + back_s
    return min(micro_batches * attention_s / cycle, attention_s / max(attention_s, ffn_s, out_s, back_s))
