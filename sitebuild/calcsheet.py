"""The sizing calculator's sheet in Python: every figure the calculator page shows, composed from
:mod:`macros.formulas` exactly as the worked examples compose them (``memory_budget``, ``max_seqs``,
``max_context``, ``decode_speed``, ``prefill_time`` in :mod:`macros.render`).

This is the reference the browser engine (``docs/assets/javascripts/calc-engine.js``) is tested
against, case by case, in ``tests/test_calculator_parity.py``: the JavaScript ``evaluate`` must return
the same keys with the same values (numbers to a relative 1e-9).
"""

from __future__ import annotations

from macros import formulas as F
from macros.catalog import Format, Gpu, Model
from macros.formulas.parallel import _kv_heads_for_tp, _model_widths

from .calculator import DEFAULTS


def custom_gpu(memory_bytes: float, bandwidth_bytes_per_s: float, bf16_flops: float,
               fp8_flops: float | None = None) -> Gpu:
    """A GPU the reader typed in: memory, bandwidth and dense rates, no interconnect figures."""
    return Gpu(key="custom", name="Custom GPU", vendor="", source="", memory_bytes=memory_bytes,
               memory_label="", memory_note=None, memory_bandwidth_bytes_per_s=bandwidth_bytes_per_s,
               bf16_dense_flops=bf16_flops, fp8_dense_flops=fp8_flops, int8_dense_ops=None, interconnect=None,
               interconnect_bytes_per_s_per_direction=None, interconnect_note=None, tdp_watts=None)


def peak_flops(g: Gpu, f: Format) -> tuple[float | None, str]:
    """The dense rate a prefill in ``f`` runs at (the rule of ``macros.render.inputs.peak_flops``), or
    ``None`` and the reason when the GPU has no such rate."""
    if f.key == "fp8":
        return (g.fp8_dense_flops, "dense FP8") if g.fp8_dense_flops else (None, "no FP8 tensor rate")
    if f.key == "int8":
        return (g.int8_dense_ops, "dense INT8") if g.int8_dense_ops else (None, "no INT8 tensor rate")
    return g.bf16_dense_flops, "dense BF16"


def _split_states(m: Model) -> bool:
    """Whether the model's constant states split by TP apart from its cache (the rule of
    ``macros.render.speed._decode``): KDA layers, no sliding-window layers."""
    return m.linear_attention is not None and m.linear_attention.kda is not None and not m.sliding_window


def evaluate(m: Model, g: Gpu, f: Format, kv: Format, expert: Format | None, n_gpus: int, context: int,
             concurrency: int, gpu_util: float, mfu: float = DEFAULTS["mfu"]) -> dict:
    """Every output of the calculator for one set of inputs (bytes, seconds, tokens/s, counts)."""
    d = DEFAULTS
    b = F.param_breakdown(m)
    out: dict = {
        "params_total": b.total, "params_active": b.active,
        "weights_total": F.weight_bytes(m, f, expert),
        "kv_per_token": F.kv_bytes_per_token(m, kv),
        "kv_per_sequence": F.kv_bytes_per_sequence(m, context, kv),
        "valid_tp": F.valid_tp_degrees(m, d["max_tp"]),
    }
    problem = F.tp_problem(m.num_attention_heads, _kv_heads_for_tp(m), n_gpus, _model_widths(m))
    out["tp_problem"] = problem
    if problem:
        return out
    shard = F.tp_shard(m, n_gpus, f, expert)
    frac = shard.kv_fraction
    budget = F.kv_budget_bytes(g.engine_memory_bytes, shard.weights_per_gpu, gpu_util, d["activation_bytes"],
                               d["reserve_bytes"])
    per_seq = F.kv_bytes_per_sequence_paged(m, context, kv, d["block_size"], frac)
    hybrid = None
    if _split_states(m):  # as node_fit and decode_speed: KDA states split by TP, an MLA latent does not
        def hybrid(ctx, bs=d["block_size"]):
            return F.hybrid_sequence_bytes_per_gpu(m, ctx, kv, n_gpus, bs).total
        per_seq = hybrid(context)
    max_ctx, limit = F.max_context_one_sequence(m, budget / concurrency, kv, d["block_size"], frac, hybrid)
    out.update({
        "weights_per_gpu": shard.weights_per_gpu, "replicated_extra": shard.replicated_extra_bytes,
        "kv_fraction": frac, "kv_per_token_gpu": out["kv_per_token"] * frac,
        "usable_per_gpu": g.engine_memory_bytes * gpu_util,
        "kv_budget": budget, "fits": budget > 0,
        "kv_per_sequence_gpu": per_seq, "blocks_per_sequence": F.blocks_per_sequence(context, d["block_size"]),
        "kv_load_gpu": concurrency * per_seq, "headroom": budget - concurrency * per_seq,
        "kv_tokens": F.kv_tokens_in_budget(budget, out["kv_per_token"] * frac),
        "max_sequences": F.max_concurrent_sequences(budget, per_seq),
        "max_context": max_ctx, "max_context_limit": limit,
    })
    # decode: the composition of macros.render.speed._decode
    read = F.weight_bytes_read_per_step(m, f, concurrency, expert)
    kv_seq = hybrid(context, 1) if hybrid else F.kv_bytes_per_sequence(m, context, kv) * frac
    per_gpu = read / n_gpus + shard.replicated_extra_bytes
    comm, with_comm = 0.0, n_gpus == 1
    if n_gpus > 1 and g.allreduce_latency_s and g.interconnect_bytes_per_s_per_direction:
        comm = F.tp_decode_allreduce_time(m, concurrency, d["activation_element_bytes"], n_gpus,
                                          g.allreduce_latency_s, g.interconnect_bytes_per_s_per_direction)
        with_comm = True
    bound = F.decode_bound(per_gpu, kv_seq, concurrency, g.memory_bandwidth_bytes_per_s, comm)
    out.update({
        "decode_weight_read": read, "decode_weight_read_gpu": per_gpu, "decode_kv_read_gpu": bound.kv_bytes_read,
        "decode_memory_s": bound.memory_time_s, "decode_comm_s": comm, "decode_comm_included": with_comm,
        "decode_step_s": bound.step_time_s, "decode_per_sequence": bound.tokens_per_s_per_sequence,
        "decode_aggregate": bound.tokens_per_s_aggregate,
    })
    if m.moe is not None and b.moe_layers:
        out["experts_touched"] = F.expected_experts_touched(m.moe.num_experts, m.moe.experts_per_token,
                                                            concurrency)
    # prefill: the composition of macros.render.speed.prefill_time, over `context` prompt tokens
    peak, label = peak_flops(g, f)
    out["prefill_peak_label"] = label
    dense = F.prefill_matmul_flops(m, context, min(1, context))
    attn = F.prefill_attention_flops(m, context)
    out["prefill_flops"] = dense + attn
    if peak is not None:
        out["prefill_peak"] = peak
        out["prefill_s"] = F.prefill_time(dense + attn, peak * n_gpus, mfu)
    return out
