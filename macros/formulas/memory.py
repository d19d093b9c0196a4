"""Memory: weight bytes per format, KV-cache bytes, and the GPU memory budget that is left for KV.

Units: bytes throughout (GB = 1e9, GiB = 2**30 only when formatting). ``bits`` arguments accept a
catalog :class:`~macros.catalog.Format` or a plain number of bits per element.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..facts import defaults as _engine_defaults
from . import _checks as chk
from .params import ParamBreakdown, param_breakdown

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "DEFAULT_GPU_UTILIZATION",
    "DEFAULT_ACTIVATION_BYTES",
    "DEFAULT_RUNTIME_RESERVE_BYTES",
    "bits_of",
    "kv_element_bytes",
    "embedding_format_bits",
    "effective_bits_per_weight",
    "bytes_for_params",
    "WeightBytes",
    "weight_bytes_breakdown",
    "weight_bytes",
    "kv_bytes_per_token_mha",
    "kv_bytes_per_token_mla",
    "kv_bytes_per_token_per_layer",
    "kv_layer_counts",
    "kv_bytes_per_token",
    "kv_bytes_per_sequence",
    "kv_cache_bytes",
    "naive_kv_cache_bytes",
    "DEFAULT_MAX_NUM_BATCHED_TOKENS",
]

# vLLM's defaults at the reference release, read from its facts snapshot (macros/facts/defaults.py,
# which cites the source line of each): --gpu-memory-utilization, the KV block size when --block-size
# is unset, and --max-num-batched-tokens for `vllm serve` on an H100-class GPU (>= 70 GiB, not A100;
# other tiers: macros.facts.defaults.batch_defaults).
DEFAULT_BLOCK_SIZE = _engine_defaults.block_size().value
DEFAULT_GPU_UTILIZATION = _engine_defaults.gpu_memory_utilization().value
# Illustrative per-GPU allowances, not engine constants: vLLM measures the activation peak with a
# profiling forward pass at start-up and CUDA graphs take their own pool. The worked examples state
# these assumptions wherever they use them.
DEFAULT_ACTIVATION_BYTES = 2 * 2**30
DEFAULT_RUNTIME_RESERVE_BYTES = 1 * 2**30
DEFAULT_MAX_NUM_BATCHED_TOKENS = _engine_defaults.batch_defaults(80 * 2**30,
                                                                 "NVIDIA H100 80GB HBM3").max_num_batched_tokens


# --------------------------------------------------------------------------------------------------
# formats
# --------------------------------------------------------------------------------------------------

def bits_of(fmt) -> float:
    """Bits per element of ``fmt``: a catalog ``Format`` (its effective ``bits_per_weight``) or a number."""
    bits = getattr(fmt, "bits_per_weight", fmt)
    return chk.positive("bits per element", bits)


def kv_element_bytes(kv_dtype) -> float:
    """Bytes per cached K or V element for a KV dtype.

    A catalog ``Format`` must be marked ``kv_cache: true`` (mainstream engines cache KV in BF16/FP16,
    FP8 and, in some, INT8; not in weight-only formats such as INT4-g128 or NF4); a plain number is
    taken as bits.
    """
    if hasattr(kv_dtype, "kv_cache") and not kv_dtype.kv_cache:
        raise ValueError(f"format {kv_dtype.key!r} is not usable as a KV-cache dtype "
                         "(formats.yaml marks it kv_cache: false)")
    return bits_of(kv_dtype) / 8


def embedding_format_bits(fmt) -> float:
    """Bits at which ``fmt`` stores the token embedding and lm_head: the format's
    ``embedding_bits_per_weight`` rule when the catalog sets one, else its own bits."""
    rule = getattr(fmt, "embedding_bits_per_weight", None)
    return bits_of(rule if rule is not None else fmt)


def effective_bits_per_weight(bits: float, group_size: int | None = None, scale_bits: float = 0.0,
                              zero_bits: float = 0.0) -> float:
    """Effective storage bits per weight of a block/group-quantized format.

    ``bits + (scale_bits + zero_bits) / group_size``: each group of ``group_size`` weights shares one
    scale (and, for asymmetric schemes, one zero point). Example: INT4 with one FP16 scale per 128
    weights = 4 + 16/128 = 4.125 bits; OCP MXFP4 = 4 + 8/32 = 4.25 bits.
    """
    chk.positive("bits", bits)
    chk.non_negative("scale_bits", scale_bits)
    chk.non_negative("zero_bits", zero_bits)
    if group_size is None:
        return float(bits)
    chk.positive_int("group_size", group_size)
    return bits + (scale_bits + zero_bits) / group_size


def bytes_for_params(params: float, bits) -> float:
    """Bytes to store ``params`` weights at ``bits`` effective bits each: ``params x bits / 8``."""
    chk.non_negative("params", params)
    return params * bits_of(bits) / 8


@dataclass(frozen=True)
class WeightBytes:
    """Weight bytes by part. ``routed_experts`` may use a different format from the rest."""

    embeddings: float     # embedding + untied lm_head
    routed_experts: float
    rest: float           # attention, dense MLPs, shared experts, router, norms
    active_routed: float  # routed-expert bytes one token reads (top-k experts per MoE layer)

    @property
    def total(self) -> float:
        return self.embeddings + self.routed_experts + self.rest

    @property
    def non_expert(self) -> float:
        return self.embeddings + self.rest

    @property
    def active(self) -> float:
        """Bytes a single token's forward pass touches (all non-expert weights + its top-k experts)."""
        return self.non_expert + self.active_routed


def weight_bytes_breakdown(model, fmt, expert_fmt=None, embed_fmt=None,
                           breakdown: ParamBreakdown | None = None) -> WeightBytes:
    """Weight bytes of ``model`` stored in ``fmt``, optionally with mixed formats.

    ``bytes = routed_expert_params x bits(expert_fmt) / 8 + embedding_params x bits(embed_fmt) / 8
    + other_params x bits(fmt) / 8``. ``expert_fmt`` and ``embed_fmt`` default to ``fmt``.

    Examples of mixed formats: gpt-oss ships MXFP4 routed experts and BF16 for everything else
    (``fmt=bf16, expert_fmt=mxfp4``); Kimi-K2-Thinking ships INT4 routed experts; AWQ/GPTQ INT4
    checkpoints keep embedding and lm_head in 16-bit. Without ``embed_fmt`` the embeddings follow
    ``fmt``'s own rule: a catalog format with ``embedding_bits_per_weight`` (the weight-only INT4
    and NF4 formats, whose tools quantize only the decoder's linear layers) stores the embedding and
    lm_head at those bits; otherwise at ``fmt``'s bits. Effective bits include the format's scale
    overhead. Assumes every other tensor (norms included) is in ``fmt``.
    """
    b = breakdown or param_breakdown(model)
    rest_bits = bits_of(fmt)
    exp_bits = bits_of(expert_fmt) if expert_fmt is not None else rest_bits
    emb_bits = bits_of(embed_fmt if embed_fmt is not None else embedding_format_bits(fmt))
    active_routed_params = b.routed_experts - b.inactive_experts_per_token * b.params_per_expert * b.moe_layers
    return WeightBytes(
        embeddings=b.embeddings * emb_bits / 8,
        routed_experts=b.routed_experts * exp_bits / 8,
        rest=(b.total - b.embeddings - b.routed_experts) * rest_bits / 8,
        active_routed=active_routed_params * exp_bits / 8,
    )


def weight_bytes(model, fmt, expert_fmt=None, embed_fmt=None) -> float:
    """Total weight bytes of ``model`` in ``fmt`` (see :func:`weight_bytes_breakdown`)."""
    return weight_bytes_breakdown(model, fmt, expert_fmt, embed_fmt).total


# --------------------------------------------------------------------------------------------------
# KV cache
# --------------------------------------------------------------------------------------------------

def kv_bytes_per_token_mha(num_layers: int, num_kv_heads: int, head_dim: int, element_bytes: float) -> float:
    """KV bytes per token for MHA / GQA / MQA: ``2 x layers x kv_heads x head_dim x bytes``.

    The 2 is one K and one V vector per KV head per layer. MHA has kv_heads = heads, MQA has 1,
    GQA sits in between (Llama-3.1-70B: 2 x 80 x 8 x 128 x 2 = 327,680 bytes in BF16).
    """
    chk.positive_int("num_layers", num_layers)
    chk.positive_int("num_kv_heads", num_kv_heads)
    chk.positive_int("head_dim", head_dim)
    chk.positive("element_bytes", element_bytes)
    return 2 * num_layers * num_kv_heads * head_dim * element_bytes


def kv_bytes_per_token_mla(num_layers: int, kv_lora_rank: int, qk_rope_head_dim: int,
                           element_bytes: float) -> float:
    """KV bytes per token for multi-head latent attention: ``layers x (kv_lora_rank + rope_dim) x bytes``.

    MLA caches one compressed latent (``kv_lora_rank``) plus the shared decoupled RoPE key
    (``qk_rope_head_dim``) per layer, not per-head K and V (DeepSeek-V3: 61 x (512 + 64) x 2 bytes).
    """
    chk.positive_int("num_layers", num_layers)
    chk.positive_int("kv_lora_rank", kv_lora_rank)
    chk.positive_int("qk_rope_head_dim", qk_rope_head_dim)
    chk.positive("element_bytes", element_bytes)
    return num_layers * (kv_lora_rank + qk_rope_head_dim) * element_bytes


def kv_bytes_per_token_per_layer(model, kv_dtype) -> float:
    """One attention layer's KV bytes per token for ``model`` at ``kv_dtype``."""
    eb = kv_element_bytes(kv_dtype)
    if model.mla is not None:
        return kv_bytes_per_token_mla(1, model.mla.kv_lora_rank, model.mla.qk_rope_head_dim, eb)
    return kv_bytes_per_token_mha(1, model.num_key_value_heads, model.head_dim, eb)


def kv_layer_counts(model) -> tuple[int, int, int]:
    """``(full_layers, sliding_layers, linear_layers)``: how each layer keeps its context.

    Full-attention layers cache every token; sliding-window layers at most ``window`` tokens; linear
    (constant-state) layers a fixed state per sequence.
    """
    sliding = model.sliding_window.num_sliding_layers if model.sliding_window else 0
    linear = model.linear_attention.num_linear_layers if model.linear_attention else 0
    return model.num_hidden_layers - sliding - linear, sliding, linear


def kv_bytes_per_token(model, kv_dtype) -> float:
    """KV bytes each new token adds while the context is shorter than any sliding window.

    ``per-layer bytes x (layers that keep a KV cache)``; linear-attention layers keep a constant state
    instead and are excluded. For sliding-window models this is the uncapped figure; use
    :func:`kv_bytes_per_sequence` for the capped one.
    """
    full, sliding, _ = kv_layer_counts(model)
    return kv_bytes_per_token_per_layer(model, kv_dtype) * (full + sliding)


def kv_bytes_per_sequence(model, context: int, kv_dtype) -> float:
    """KV bytes one sequence of ``context`` tokens holds, with windows and constant states applied.

    ``per_layer x (full_layers x ctx + sliding_layers x min(ctx, window)) + linear_layers x state``.
    """
    chk.non_negative_int("context", context)
    full, sliding, linear = kv_layer_counts(model)
    per_layer = kv_bytes_per_token_per_layer(model, kv_dtype)
    window = model.sliding_window.size if model.sliding_window else 0
    state = model.linear_attention.state_bytes_per_layer * linear if model.linear_attention else 0.0
    return per_layer * (full * context + sliding * min(context, window)) + state


def kv_cache_bytes(model, batch: int, context: int, kv_dtype) -> float:
    """KV bytes for ``batch`` sequences of ``context`` tokens: ``batch x per-sequence bytes``."""
    chk.positive_int("batch", batch)
    return batch * kv_bytes_per_sequence(model, context, kv_dtype)


def naive_kv_cache_bytes(num_layers: int, hidden_size: int, batch: int, context: int,
                         element_bytes: float) -> float:
    """The popular but MHA-only formula ``2 x layers x hidden_size x batch x context x bytes``.

    It assumes every query head has its own K and V (kv_heads x head_dim = hidden_size), so it
    overstates GQA models by heads / kv_heads (8x for Llama-2-70B) and ignores MLA, windows and
    linear layers. Kept only to show the contrast.
    """
    chk.positive_int("num_layers", num_layers)
    chk.positive_int("hidden_size", hidden_size)
    chk.positive_int("batch", batch)
    chk.non_negative_int("context", context)
    chk.positive("element_bytes", element_bytes)
    return 2 * num_layers * hidden_size * batch * context * element_bytes
