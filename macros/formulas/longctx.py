"""Long-context serving: the memory one very long sequence needs, beyond the weights and its KV cache.

A prefill runs every token of a step through the MLP at once, so the MLP's intermediate activation
grows with the tokens in the step. Unchunked, a million-token prompt needs that activation for all
million tokens; chunked prefill (vLLM's ``--max-num-batched-tokens``, SGLang's
``--chunked-prefill-size``) bounds it by the chunk. Units: bytes, tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import _checks as chk
from .memory import kv_bytes_per_sequence, weight_bytes

__all__ = ["prefill_mlp_activation_bytes", "prefill_chunks", "LongContextFootprint", "long_context_footprint"]


def prefill_mlp_activation_bytes(model, tokens: int, element_bytes: float = 2.0) -> float:
    """Bytes of the fused gate/up projection output for ``tokens`` tokens in one step (dense models).

    ``tokens x 2 x intermediate_size x element_bytes``: the SwiGLU MLP computes the gate and up
    projections together (vLLM's ``MergedColumnParallelLinear``), and that output is the widest
    activation of a layer. It is live for one layer at a time, so it does not multiply by the layer
    count. Under tensor parallelism each GPU holds ``1 / TP`` of it. Qwen's figure for Qwen2.5-7B at
    one million tokens (71 GB, cut by 96.7% with 32,768-token chunks) is this quantity. MoE models
    raise: their routed tokens spread over experts of another width.
    """
    chk.non_negative_int("tokens", tokens)
    chk.positive("element_bytes", element_bytes)
    if model.moe is not None:
        raise ValueError(f"{model.key}: prefill_mlp_activation_bytes covers dense MLPs only (this is an MoE)")
    if model.intermediate_size is None:
        raise ValueError(f"{model.key}: intermediate_size is not set in the catalog")
    return tokens * 2 * model.intermediate_size * element_bytes


def prefill_chunks(tokens: int, chunk: int) -> int:
    """Steps a chunked prefill of ``tokens`` tokens takes with ``chunk`` tokens per step: ``ceil(tokens / chunk)``."""
    chk.positive_int("tokens", tokens)
    chk.positive_int("chunk", chunk)
    return math.ceil(tokens / chunk)


@dataclass(frozen=True)
class LongContextFootprint:
    weights: float           # all GPUs together
    kv: float                # one sequence of ``context`` tokens, all GPUs together
    activation_unchunked: float
    activation_chunk: float  # one prefill step of ``chunk`` tokens

    @property
    def total(self) -> float:
        """Weights + KV of the one sequence + the activation of one prefill chunk (all GPUs together)."""
        return self.weights + self.kv + self.activation_chunk


def long_context_footprint(model, fmt, kv_dtype, context: int, chunk: int,
                           activation_bytes: float = 2.0) -> LongContextFootprint:
    """Memory for serving a single sequence of ``context`` tokens with ``chunk``-token prefill steps.

    Counts weights, that sequence's KV cache (windows and linear layers as in
    :func:`~macros.formulas.memory.kv_bytes_per_sequence`) and the MLP activation of one step; leaves
    out CUDA context, the engine's sampler and attention workspaces, which are engine-specific.
    """
    chk.positive_int("context", context)
    chk.positive_int("chunk", chunk)
    return LongContextFootprint(
        weights=weight_bytes(model, fmt),
        kv=kv_bytes_per_sequence(model, context, kv_dtype),
        activation_unchunked=prefill_mlp_activation_bytes(model, context, activation_bytes),
        activation_chunk=prefill_mlp_activation_bytes(model, min(chunk, context), activation_bytes),
    )
