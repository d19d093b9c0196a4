"""What an engine plans per request when it sizes its KV pool: vLLM 0.11's per-request reservation,
with the hybrid KV-cache manager on or off (sliding-window and linear-attention layers).

Pure Python, like the rest of :mod:`macros.formulas`; the page that explains it is Q121.
"""

from __future__ import annotations

from . import _checks as chk
from .kvbudget import blocks_per_sequence
from .memory import DEFAULT_BLOCK_SIZE, DEFAULT_MAX_NUM_BATCHED_TOKENS, kv_bytes_per_token_per_layer, kv_layer_counts

__all__ = ["kv_bytes_per_request_reserved"]


def kv_bytes_per_request_reserved(model, context: int, kv_dtype, block_size: int = DEFAULT_BLOCK_SIZE,
                                  max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
                                  hybrid: bool = True, kv_fraction: float = 1.0) -> float:
    """KV bytes vLLM 0.11 plans per request of ``context`` tokens (its "Maximum concurrency" log line).

    Full layers ``ceil(ctx/bs)`` blocks; sliding layers, hybrid manager on, ``ceil(min(window - 1 +
    max_num_batched_tokens, ctx)/bs) + 1`` (``SlidingWindowSpec.max_memory_usage_bytes``), off: as full;
    linear layers one state each. x per-layer bytes x ``block_size`` x ``kv_fraction`` (TP share).
    """
    chk.positive_int("max_num_batched_tokens", max_num_batched_tokens)
    chk.fraction("kv_fraction", kv_fraction)
    full, sliding, linear = kv_layer_counts(model)
    full_blocks = blocks_per_sequence(context, block_size)
    sliding_blocks = (blocks_per_sequence(min(model.sliding_window.size - 1 + max_num_batched_tokens, context),
                                          block_size) + 1) if sliding and hybrid else full_blocks
    per_layer = kv_bytes_per_token_per_layer(model, kv_dtype)
    state = model.linear_attention.state_bytes_per_layer * linear if model.linear_attention else 0.0
    return (per_layer * block_size * (full * full_blocks + sliding * sliding_blocks) + state) * kv_fraction
