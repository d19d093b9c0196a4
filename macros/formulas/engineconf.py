"""Engine configuration: where start-up memory goes, the concurrency an SLO allows, the GPUs a format needs.

Three pieces behind the "memory and engine configuration" pages:

- :func:`profile_peak_tensors`: the two largest transient tensors of vLLM's start-up profiling pass,
  one moved by ``--max-num-batched-tokens`` (the MLP activation) and one by ``--max-num-seqs`` (the
  sampler's FP32 logits). A floor under the activation peak the engine measures, not the peak itself.
- :func:`startup_ledger`: the per-GPU memory ledger of start-up, with CUDA graphs either outside the
  ``--gpu-memory-utilization`` share (vLLM 0.11: captured after the KV cache is allocated) or inside it
  (vLLM 0.33: estimated during profiling and taken from the KV cache).
- :func:`tpot_batch_limit`: the largest batch whose step time stays within a time-per-output-token target.
- :func:`smallest_fitting_tp`: the smallest valid tensor-parallel degree that holds the weights and
  ``sequences`` sequences of ``context`` tokens.

Pure functions; sizes in bytes, times in seconds. Nothing here imports MkDocs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import _checks as chk
from .longctx import prefill_mlp_activation_bytes
from .kvbudget import kv_budget_bytes, kv_bytes_per_sequence_paged, max_concurrent_sequences
from .memory import DEFAULT_BLOCK_SIZE
from .parallel import kv_fraction_per_gpu, tp_shard, valid_tp_degrees

__all__ = ["LOGITS_BYTES", "ProfilePeak", "profile_peak_tensors", "StartupLedger", "startup_ledger",
           "tpot_batch_limit", "smallest_fitting_tp"]

#: The V1 sampler casts logits to float32 before sampling (vLLM 0.11, v1/sample/sampler.py).
LOGITS_BYTES = 4


@dataclass(frozen=True)
class ProfilePeak:
    tokens: int           # --max-num-batched-tokens: tokens in the profiling forward pass
    rows: int             # sampled rows: min(--max-num-seqs, tokens)
    mlp_bytes: float      # fused gate/up output of one layer, per GPU
    logits_bytes: float   # FP32 logits of every sampled row, full vocabulary, per GPU

    @property
    def floor(self) -> float:
        """The larger of the two: the activation peak is at least this."""
        return max(self.mlp_bytes, self.logits_bytes)


def profile_peak_tensors(model, max_num_batched_tokens: int, max_num_seqs: int, tp: int = 1,
                         element_bytes: float = 2.0) -> ProfilePeak:
    """The two largest transient tensors of vLLM's start-up profiling pass, per GPU (dense models).

    vLLM 0.11 (``GPUModelRunner.profile_run``) runs one forward pass of ``max_num_batched_tokens``
    tokens spread over ``min(max_num_seqs, tokens)`` dummy requests, then the sampler on one row per
    request. The widest forward activation of a SwiGLU layer is the fused gate/up output,
    ``tokens x 2 x intermediate_size / tp x element_bytes`` (column-parallel, so split by TP). The
    sampler holds ``rows x vocab_size x 4`` bytes of FP32 logits; V1 all-gathers the vocabulary shards,
    so every TP rank holds whole rows. The measured peak includes more (the layer input and residual,
    attention workspaces, the sampler's sort), so the larger of the two is a floor under it.
    """
    chk.positive_int("max_num_batched_tokens", max_num_batched_tokens)
    chk.positive_int("max_num_seqs", max_num_seqs)
    chk.positive_int("tp", tp)
    rows = min(max_num_seqs, max_num_batched_tokens)
    # dense only: raises for an MoE, whose routed tokens spread over experts of another width
    mlp = prefill_mlp_activation_bytes(model, max_num_batched_tokens, element_bytes) / tp
    logits = rows * model.vocab_size * LOGITS_BYTES
    return ProfilePeak(max_num_batched_tokens, rows, mlp, logits)


@dataclass(frozen=True)
class StartupLedger:
    total: float              # the GPU's memory
    requested: float          # total x --gpu-memory-utilization
    weights: float
    activation: float         # torch peak increase during the profiling pass
    non_torch: float          # NCCL buffers, attention workspaces grown after the baseline snapshot
    cudagraph: float          # the CUDA graph pool
    graphs_in_budget: bool    # True: graphs come out of the requested share (taken from the KV cache)
    kv_pool: float            # what becomes KV blocks; <= 0 means the engine refuses to start
    outside_left: float       # total - requested - memory in use before start-up - graphs (if outside)

    @property
    def non_kv(self) -> float:
        return self.weights + self.activation + self.non_torch + (self.cudagraph if self.graphs_in_budget else 0.0)


def startup_ledger(total_bytes: float, utilization: float, weights: float, activation: float,
                   non_torch: float, cudagraph: float, in_use_before: float = 0.0,
                   graphs_in_budget: bool = False) -> StartupLedger:
    """vLLM's start-up memory ledger on one GPU.

    ``requested = total x utilization``; ``KV pool = requested - weights - activation peak - non-torch
    memory`` (vLLM 0.11 ``Worker.determine_available_memory``), minus the CUDA graph pool as well when
    ``graphs_in_budget`` (vLLM 0.33 estimates it during profiling). Everything else must fit in what
    the share leaves: ``total - requested`` holds the memory in use before the baseline snapshot (CUDA
    context, NCCL initialisation, other processes) and, when graphs are outside the budget, the graph
    pool captured after the KV cache is allocated. ``outside_left < 0`` is an out-of-memory error at
    capture; ``kv_pool <= 0`` is the engine's "No available memory for the cache blocks".
    """
    chk.positive("total_bytes", total_bytes)
    chk.fraction("utilization", utilization)
    for name, v in (("weights", weights), ("activation", activation), ("non_torch", non_torch),
                    ("cudagraph", cudagraph), ("in_use_before", in_use_before)):
        chk.non_negative(name, v)
    requested = total_bytes * utilization
    graphs_inside = cudagraph if graphs_in_budget else 0.0
    kv = requested - weights - activation - non_torch - graphs_inside
    left = total_bytes - requested - in_use_before - (0.0 if graphs_in_budget else cudagraph)
    return StartupLedger(total_bytes, requested, weights, activation, non_torch, cudagraph, graphs_in_budget,
                         kv, left)


def tpot_batch_limit(step_time: Callable[[int], float], target_s: float, cap: int) -> int:
    """Largest batch in ``1..cap`` whose decode step time is within ``target_s``; 0 if batch 1 misses it.

    Each sequence gains one token per step, so time per output token = step time. ``step_time`` must
    not decrease with the batch (more sequences read more KV); binary search.
    """
    chk.positive("target_s", target_s)
    chk.positive_int("cap", cap)
    if step_time(1) > target_s:
        return 0
    lo, hi = 1, cap
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if step_time(mid) <= target_s:
            lo = mid
        else:
            hi = mid - 1
    return lo


def smallest_fitting_tp(model, fmt, kv_dtype, gpu_memory_bytes: float, sequences: int, context: int,
                        utilization: float, activation_bytes: float, reserve_bytes: float,
                        expert_fmt=None, block_size: int = DEFAULT_BLOCK_SIZE,
                        max_tp: int = 8) -> int | None:
    """Smallest valid TP degree (<= ``max_tp``) whose per-GPU KV budget holds ``sequences`` x ``context``.

    Per GPU: ``memory x utilization - (weights / TP + replicated tensors) - activations - reserve``
    (:func:`macros.formulas.kvbudget.kv_budget_bytes`), against the paged KV of one sequence times the
    share of the KV heads one GPU holds. ``None`` when no degree up to ``max_tp`` fits.
    """
    chk.positive_int("sequences", sequences)
    chk.positive_int("context", context)
    for tp in valid_tp_degrees(model, max_tp):
        shard = tp_shard(model, tp, fmt, expert_fmt)
        budget = kv_budget_bytes(gpu_memory_bytes, shard.weights_per_gpu, utilization, activation_bytes,
                                 reserve_bytes)
        per_seq = kv_bytes_per_sequence_paged(model, context, kv_dtype, block_size, kv_fraction_per_gpu(model, tp))
        if budget > 0 and max_concurrent_sequences(budget, per_seq) >= sequences:
            return tp
    return None
