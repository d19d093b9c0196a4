"""Paged KV blocks and the GPU memory budget left for KV: blocks per sequence, the tail a block size
wastes, the KV budget of one GPU, and the sequences or context it holds (split from :mod:`.memory`).

Units: bytes throughout.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _checks as chk
from .memory import (DEFAULT_ACTIVATION_BYTES, DEFAULT_BLOCK_SIZE, DEFAULT_GPU_UTILIZATION,
                     DEFAULT_RUNTIME_RESERVE_BYTES, kv_bytes_per_token, kv_bytes_per_token_per_layer, kv_layer_counts)

__all__ = [
    "blocks_per_sequence",
    "kv_bytes_per_sequence_paged",
    "PagedTailWaste",
    "paged_tail_waste",
    "kv_budget_bytes",
    "kv_tokens_in_budget",
    "max_concurrent_sequences",
    "SequenceCapacity",
    "sequence_capacity",
    "max_context_one_sequence",
]


# --------------------------------------------------------------------------------------------------
# paged KV and the memory budget
# --------------------------------------------------------------------------------------------------

def blocks_per_sequence(context: int, block_size: int = DEFAULT_BLOCK_SIZE) -> int:
    """Paged-attention blocks one sequence needs: ``ceil(context / block_size)``."""
    chk.non_negative_int("context", context)
    chk.positive_int("block_size", block_size)
    return -(-context // block_size)


def kv_bytes_per_sequence_paged(model, context: int, kv_dtype, block_size: int = DEFAULT_BLOCK_SIZE,
                                kv_fraction: float = 1.0) -> float:
    """KV bytes one sequence occupies when the cache is allocated in blocks of ``block_size`` tokens.

    Each layer group rounds its token count up to whole blocks:
    ``per_layer x block_size x (full x ceil(ctx/bs) + sliding x ceil(min(ctx, window)/bs))
    + linear x state``, all multiplied by ``kv_fraction`` (the share one GPU holds under tensor
    parallelism, see :func:`macros.formulas.parallel.kv_fraction_per_gpu`).
    """
    chk.fraction("kv_fraction", kv_fraction)
    full, sliding, linear = kv_layer_counts(model)
    per_layer = kv_bytes_per_token_per_layer(model, kv_dtype)
    window = model.sliding_window.size if model.sliding_window else 0
    slots = (full * blocks_per_sequence(context, block_size)
             + sliding * blocks_per_sequence(min(context, window), block_size)) * block_size
    state = model.linear_attention.state_bytes_per_layer * linear if model.linear_attention else 0.0
    return (per_layer * slots + state) * kv_fraction


@dataclass(frozen=True)
class PagedTailWaste:
    bytes_per_token: float        # KV bytes one token occupies (all layers that cache KV)
    worst_tokens_per_sequence: int    # block_size - 1
    mean_tokens_per_sequence: float   # (block_size - 1) / 2
    worst_bytes: float            # all sequences, each with block_size - 1 empty slots
    mean_bytes: float             # all sequences, lengths spread evenly over the block


def paged_tail_waste(model, block_size: int, kv_dtype, sequences: int = 1) -> PagedTailWaste:
    """Internal fragmentation of a paged KV cache: the unfilled slots of each sequence's last block.

    A sequence of ``n`` tokens occupies ``ceil(n / block_size)`` blocks, so its last block has
    ``(block_size - n mod block_size) mod block_size`` empty slots: at most ``block_size - 1``, and
    ``(block_size - 1) / 2`` on average when lengths fall evenly across a block (Kwon et al. 2023,
    section 4.2: waste is bounded by one block per sequence). In bytes, multiply by the KV bytes per
    token (:func:`kv_bytes_per_token`) and by the number of ``sequences``. Sliding-window layers are
    counted like full layers (their last block is just as partly empty); linear-attention layers keep a
    constant state and waste nothing.
    """
    chk.positive_int("block_size", block_size)
    chk.positive_int("sequences", sequences)
    per_token = kv_bytes_per_token(model, kv_dtype)
    worst = block_size - 1
    mean = (block_size - 1) / 2
    return PagedTailWaste(per_token, worst, mean, per_token * worst * sequences, per_token * mean * sequences)


def kv_budget_bytes(gpu_memory_bytes: float, weights_per_gpu: float,
                    utilization: float = DEFAULT_GPU_UTILIZATION,
                    activation_bytes: float = DEFAULT_ACTIVATION_BYTES,
                    reserve_bytes: float = DEFAULT_RUNTIME_RESERVE_BYTES) -> float:
    """Bytes left for KV on one GPU: ``memory x utilization - weights - activations - reserve``.

    Mirrors how vLLM sizes its cache: the engine may use ``--gpu-memory-utilization`` of the device;
    the weights, the activation peak of a profiling pass and the CUDA-graph/runtime pool come off
    the top; the rest becomes KV blocks. A negative result means the model does not fit.
    """
    chk.positive("gpu_memory_bytes", gpu_memory_bytes)
    chk.fraction("utilization", utilization)
    chk.non_negative("weights_per_gpu", weights_per_gpu)
    chk.non_negative("activation_bytes", activation_bytes)
    chk.non_negative("reserve_bytes", reserve_bytes)
    return gpu_memory_bytes * utilization - weights_per_gpu - activation_bytes - reserve_bytes


def kv_tokens_in_budget(kv_budget: float, kv_bytes_per_token: float) -> int:
    """Tokens of KV cache a budget holds: ``floor(kv_budget / KV bytes per token)`` (0 if negative).

    Pass the per-GPU budget with the per-GPU share of the per-token bytes under TP. For sliding-window
    or linear-attention models this is the uncapped figure (a lower bound on what fits).
    """
    chk.positive("kv_bytes_per_token", kv_bytes_per_token)
    if kv_budget <= 0:
        return 0
    return int(kv_budget // kv_bytes_per_token)


def max_concurrent_sequences(kv_budget: float, bytes_per_sequence: float) -> int:
    """Sequences that fit at once: ``floor(kv_budget / bytes_per_sequence)`` (0 if the budget is negative).

    With paged allocation pass :func:`kv_bytes_per_sequence_paged`; for a uniform model this equals
    vLLM's ``floor(num_blocks / ceil(ctx / block_size))``.
    """
    chk.positive("bytes_per_sequence", bytes_per_sequence)
    if kv_budget <= 0:
        return 0
    return int(kv_budget // bytes_per_sequence)


@dataclass(frozen=True)
class SequenceCapacity:
    """How many sequences fit, and when none do, why.

    ``limit`` is ``"fits"`` (at least one sequence), ``"weights"`` (the weights and the engine's own
    allowances leave no KV budget: the engine does not start) or ``"one_sequence"`` (a KV budget is
    left but one sequence at this length needs more; vLLM refuses to start when that length is
    ``--max-model-len``).
    """

    sequences: int
    limit: str
    weights_per_gpu: float
    usable_per_gpu: float      # memory x utilization: what the engine may use
    overhead_per_gpu: float    # activation peak + runtime reserve
    kv_budget: float
    bytes_per_sequence: float

    @property
    def loads(self) -> bool:
        return self.limit != "weights"


def sequence_capacity(gpu_memory_bytes: float, weights_per_gpu: float, bytes_per_sequence: float,
                      utilization: float = DEFAULT_GPU_UTILIZATION,
                      activation_bytes: float = DEFAULT_ACTIVATION_BYTES,
                      reserve_bytes: float = DEFAULT_RUNTIME_RESERVE_BYTES) -> SequenceCapacity:
    """:func:`max_concurrent_sequences` on the budget of :func:`kv_budget_bytes`, with the reason
    when the answer is zero, so that a caller never shows a bare 0."""
    budget = kv_budget_bytes(gpu_memory_bytes, weights_per_gpu, utilization, activation_bytes, reserve_bytes)
    seqs = max_concurrent_sequences(budget, bytes_per_sequence)
    limit = "weights" if budget <= 0 else ("one_sequence" if seqs == 0 else "fits")
    return SequenceCapacity(seqs, limit, weights_per_gpu, gpu_memory_bytes * utilization,
                            activation_bytes + reserve_bytes, budget, bytes_per_sequence)


def max_context_one_sequence(model, kv_budget: float, kv_dtype, block_size: int = DEFAULT_BLOCK_SIZE,
                             kv_fraction: float = 1.0, per_sequence=None) -> tuple[int, str]:
    """Longest context one sequence can hold in ``kv_budget`` bytes, and what limits it.

    Returns ``(tokens, limit)`` with ``limit`` either ``"memory"`` (the KV budget; tokens are whole
    blocks) or ``"max_position_embeddings"`` (the model's trained context, reached first).
    Monotone search over the paged per-sequence size, so windows and constant states are honoured;
    ``per_sequence(ctx)`` replaces that size when given (a hybrid model's cache plus TP-split states).
    """
    cap = model.max_position_embeddings
    if kv_budget <= 0:
        return 0, "memory"

    def fits(ctx: int) -> bool:
        if per_sequence is not None:
            return per_sequence(ctx) <= kv_budget
        return kv_bytes_per_sequence_paged(model, ctx, kv_dtype, block_size, kv_fraction) <= kv_budget

    if fits(cap):
        return cap, "max_position_embeddings"
    lo, hi = 0, cap  # fits(lo) is true for lo = 0 unless the constant state alone exceeds the budget
    if not fits(0):
        return 0, "memory"
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo, "memory"

