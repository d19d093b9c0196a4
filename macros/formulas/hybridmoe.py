"""Shapes that hybrid linear-attention and latent-MoE models add to the parameter count and the
per-sequence state: Kimi Delta Attention (KDA) layers, latent-MoE projections, MLA output gates.

Layouts follow the Kimi K3 text model (``KimiK3ForConditionalGeneration``) as vLLM 0.33 builds it
(``vllm/models/kimi_k3/nvidia/{kda,mla,model}.py``) and its config.json field names:

- a KDA layer with ``num_heads`` heads of ``head_dim`` (``P = num_heads x head_dim``) has one fused
  input projection ``hidden -> 4P + head_dim + num_heads`` (q, k, v, the full-rank output gate g,
  the decay gate's low-rank first factor f_a, and beta b), the decay gate's second factor
  ``head_dim -> P`` (f_b), a per-channel ``dt_bias`` of ``P``, a depthwise causal convolution of
  ``kernel`` taps on each of q, k and v (``3P x kernel``), ``A_log`` (one per head), a gated RMSNorm of
  ``head_dim``, and ``o_proj`` ``P -> hidden``; no biases;
- its state per sequence: the recurrent matrix ``num_heads x head_dim x head_dim`` plus the
  convolution's last ``kernel - 1`` inputs on ``3P`` channels;
- a latent MoE projects the hidden state ``hidden -> latent`` before the routed experts and
  ``latent -> hidden`` after them (plus an RMSNorm of ``latent`` when ``latent_moe_use_norm``); the
  router and the shared experts stay at ``hidden``;
- an MLA output gate is a ``hidden -> heads x v_head_dim`` projection before ``o_proj``.

Pure Python; nothing here imports MkDocs.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _checks as chk

__all__ = [
    "kda_attention_params",
    "kda_state_values",
    "kda_state_bytes",
    "latent_moe_projection_params",
    "mla_output_gate_params",
    "HybridSequenceBytes",
    "hybrid_sequence_bytes_per_gpu",
]


def kda_attention_params(hidden_size: int, num_heads: int, head_dim: int, conv_kernel_size: int) -> int:
    """Parameters of one Kimi Delta Attention layer with a full-rank output gate.

    With ``P = num_heads x head_dim``:
    ``hidden x (4P + head_dim + num_heads)`` (fused q, k, v, g, f_a, b) ``+ head_dim x P`` (f_b)
    ``+ P`` (dt_bias) ``+ 3P x kernel`` (q/k/v short convolutions) ``+ num_heads`` (A_log)
    ``+ head_dim`` (gated output norm) ``+ P x hidden`` (o_proj).
    """
    for n, v in (("hidden_size", hidden_size), ("num_heads", num_heads), ("head_dim", head_dim),
                 ("conv_kernel_size", conv_kernel_size)):
        chk.positive_int(n, v)
    p = num_heads * head_dim
    fused_in = hidden_size * (4 * p + head_dim + num_heads)
    return (fused_in + head_dim * p + p + 3 * p * conv_kernel_size + num_heads + head_dim
            + p * hidden_size)


def kda_state_values(num_heads: int, head_dim: int, conv_kernel_size: int) -> tuple[int, int]:
    """``(recurrent, conv)`` state values one sequence holds in one KDA layer.

    recurrent = ``num_heads x head_dim x head_dim``; conv = ``3 x num_heads x head_dim x (kernel - 1)``
    (the last ``kernel - 1`` inputs of the q, k and v convolutions).
    """
    for n, v in (("num_heads", num_heads), ("head_dim", head_dim), ("conv_kernel_size", conv_kernel_size)):
        chk.positive_int(n, v)
    return num_heads * head_dim * head_dim, 3 * num_heads * head_dim * (conv_kernel_size - 1)


def kda_state_bytes(num_heads: int, head_dim: int, conv_kernel_size: int, recurrent_bytes: float,
                    conv_bytes: float) -> float:
    """Bytes of one sequence's state in one KDA layer: ``recurrent x recurrent_bytes + conv x conv_bytes``.

    vLLM 0.33 keeps the recurrent state in FP32 by default (``--mamba-ssm-cache-dtype auto``; ``bfloat16``
    halves it) and the convolution state in the model dtype.
    """
    chk.positive("recurrent_bytes", recurrent_bytes)
    chk.positive("conv_bytes", conv_bytes)
    recurrent, conv = kda_state_values(num_heads, head_dim, conv_kernel_size)
    return recurrent * recurrent_bytes + conv * conv_bytes


def latent_moe_projection_params(hidden_size: int, latent_size: int, use_norm: bool) -> int:
    """Parameters of one MoE layer's latent projections: ``2 x hidden x latent`` (+ ``latent`` norm)."""
    chk.positive_int("hidden_size", hidden_size)
    chk.positive_int("latent_size", latent_size)
    return 2 * hidden_size * latent_size + (latent_size if use_norm else 0)


def mla_output_gate_params(hidden_size: int, num_heads: int, v_head_dim: int) -> int:
    """Parameters of an MLA layer's sigmoid output gate: ``hidden x heads x v_head_dim``."""
    for n, v in (("hidden_size", hidden_size), ("num_heads", num_heads), ("v_head_dim", v_head_dim)):
        chk.positive_int(n, v)
    return hidden_size * num_heads * v_head_dim


@dataclass(frozen=True)
class HybridSequenceBytes:
    """What one sequence occupies on one GPU of a hybrid model under tensor parallelism."""

    cache_bytes: float   # the growing cache of the full-attention layers, in whole blocks
    state_bytes: float   # the constant states of the linear-attention layers

    @property
    def total(self) -> float:
        return self.cache_bytes + self.state_bytes


def hybrid_sequence_bytes_per_gpu(model, context: int, kv_dtype, tp: int,
                                  block_size: int = 16) -> HybridSequenceBytes:
    """One sequence of ``context`` tokens on one GPU of ``model`` at TP ``tp``, cache and state apart.

    cache = ``per-layer KV bytes x full layers x ceil(context / block_size) x block_size x share``,
    where the share is 1 for MLA (vLLM keeps the whole latent on every GPU) and the KV-head share
    otherwise; state = ``linear layers x state_bytes_per_layer / tp`` for KDA layers (vLLM 0.33's
    ``kda_state_shape`` divides heads and convolution channels by the TP size), else the KV share.
    Sliding-window layers are not handled here: a model with them is refused.
    """
    from .kvbudget import blocks_per_sequence
    from .memory import kv_bytes_per_token_per_layer, kv_layer_counts
    from .parallel import kv_fraction_per_gpu

    chk.non_negative_int("context", context)
    chk.positive_int("tp", tp)
    la = model.linear_attention
    if la is None:
        raise ValueError(f"{model.key} has no linear-attention layers: use kv_bytes_per_sequence_paged")
    full, sliding, linear = kv_layer_counts(model)
    if sliding:
        raise ValueError(f"{model.key} has sliding-window layers, which this formula does not cover")
    share = kv_fraction_per_gpu(model, tp)
    slots = blocks_per_sequence(context, block_size) * block_size
    cache = kv_bytes_per_token_per_layer(model, kv_dtype) * full * slots * share
    state_share = 1 / tp if la.kda is not None else share
    return HybridSequenceBytes(cache_bytes=cache, state_bytes=la.state_bytes_per_layer * linear * state_share)
