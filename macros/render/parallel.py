"""Tensor and expert parallelism: shards, all-reduce and all-to-all traffic
(formulas: :mod:`macros.formulas.parallel`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _bytes_el, _flink, _frac, _glink, _i, _mlink, _n
from .registry import macro


@macro("block", example='tp_shards("llama-3.1-70b", n_gpus=16, batch=8, context="32K")')
def tp_shards(model: Model, n_gpus: int = 8, fmt: Format = "bf16", kv_dtype: Format = "bf16", batch: int = 1,
              context: int = 8192, expert_fmt: Format | None = None) -> str:
    """Worked example: valid TP degrees and what each of ``n_gpus`` GPUs holds (weights, KV heads, KV bytes).

    The valid tensor-parallel degrees (vLLM rule) and what each GPU holds at `n_gpus`: query heads, KV
    heads (split or replicated), weights, KV for `batch × context`. Weights per GPU = weights / TP plus
    the tensors every GPU holds whole (RMSNorms; a whole K/V head when TP exceeds the KV heads; MLA's
    q_a/kv_a projections; the MoE router), listed with their extra parameters.
    """
    m, f, kv, fe, n, ctx = model, fmt, kv_dtype, expert_fmt, n_gpus, context
    valid = F.valid_tp_degrees(m)
    ex = Example(f"tensor parallelism for {m.name} on {n} GPUs")
    ex.formula("TP valid if heads % TP == 0 and (kv_heads % TP == 0 when TP ≤ kv_heads, else TP % kv_heads == 0)")
    ex.formula("weights per GPU = weights / TP + replicated tensors' extra copies; "
               "KV heads per GPU = max(1, kv_heads / TP)")
    src = _mlink(m)
    ex.input("`num_attention_heads`", _i(m.num_attention_heads), src)
    ex.input("`num_key_value_heads`", _i(m.num_key_value_heads) + (" (MLA: latent is shared)" if m.mla else ""), src)
    ex.input("TP degree", str(n), GIVEN)
    ex.step(f"valid TP degrees up to 16: {', '.join(map(str, valid))}")
    if n not in valid:
        inputs.check_tp(m, n)  # raises with the reason
    shard = F.tp_shard(m, n, f, fe)
    wtotal = shard.weights_total
    ex.input("weights", U.fmt_gb(wtotal), f"{src}, {_flink(f)}")
    ex.step(f"query heads per GPU: {m.num_attention_heads} / {n} = {m.num_attention_heads // n}")
    if m.mla is not None:
        ex.step("MLA latent cache: replicated on every GPU (each GPU's heads need the whole latent)")
    elif n <= m.num_key_value_heads:
        ex.step(f"KV heads per GPU: {m.num_key_value_heads} / {n} = {shard.kv_heads_per_gpu}")
    else:
        ex.step(f"KV heads per GPU: 1, each KV head replicated on {n} / {m.num_key_value_heads} = "
                f"{shard.kv_head_replicas} GPUs")
    extra = F.tp_replicated_extra_params(m, n)
    parts = [("norms", "RMSNorm weights"), ("router", "MoE router"), ("mla_down_proj", "MLA q_a/kv_a projections"),
             ("kv_heads", "one whole K/V head per GPU"), ("latent_moe_proj", "latent MoE projections"),
             ("kda_decay_gate_a", "KDA decay-gate f_a projections")]
    listed = ", ".join(f"{label} {U.fmt_params(extra[k])}" for k, label in parts if extra[k] >= 1)
    if listed:
        ex.step(f"replicated tensors, extra parameters per GPU over an even split: {listed}")
    ex.step(f"weights per GPU: {U.fmt_gb(wtotal)} / {n} + {U.fmt_bytes(shard.replicated_extra_bytes)} replicated = "
            f"{U.fmt_gb(shard.weights_per_gpu)} (+{U.fmt_pct(shard.weights_per_gpu / shard.even_split - 1)} over "
            f"{U.fmt_gb(shard.even_split)})")
    kv_total = F.kv_cache_bytes(m, batch, ctx, kv)
    kv_gpu = kv_total * shard.kv_fraction
    ex.step(f"KV for {batch} × {_i(ctx)} tokens: {U.fmt_gb(kv_total)} in total, × {_frac(shard.kv_fraction)} "
            f"= {U.fmt_gb(kv_gpu)} per GPU")
    ex.result(f"TP {n}: {U.fmt_gb(shard.weights_per_gpu)} of weights and {U.fmt_gb(kv_gpu)} of KV per GPU")
    if shard.kv_fraction * n > 1 + 1e-9:
        ex.note(f"Replication means the GPUs together hold {_n(shard.kv_fraction * n)}× the model's KV cache.")
    ex.note("Rule as implemented by vLLM's QKVParallelLinear. Replicated on every GPU: RMSNorm weights, a whole "
            "K/V head when TP exceeds the KV heads, MLA's q_a/kv_a projections and the MoE router "
            "(vLLM ReplicatedLinear); embedding and lm_head are split by vocabulary rows.")
    return ex.render()


def _link_time(ex: Example, g: Gpu, n_bytes: float, what: str) -> None:
    """Add the GPU's per-direction link bandwidth as an input and the time to move ``n_bytes`` as a result."""
    bw = g.interconnect_bytes_per_s_per_direction
    if not bw:
        raise MacroInputError(f"{g.name} has no interconnect bandwidth in gpus.yaml")
    ex.input("link bandwidth per direction", U.fmt_bandwidth(bw), _glink(g))
    ex.result(f"{U.fmt_seconds(F.transfer_time(n_bytes, bw))} {what}")


@macro("block", example='allreduce_volume("llama-3.1-70b", n_gpus=8, tokens=64, gpu="h100-sxm")')
def allreduce_volume(model: Model, n_gpus: int = 8, tokens: int = 1, dtype: Format = "bf16",
                     gpu: Gpu | None = None) -> str:
    """Worked example: TP all-reduce bytes per token (2 per layer, ring 2(p−1)/p), optionally time on ``gpu``'s link.

    Two all-reduces per layer of `hidden_size × bytes`, ring factor 2(p−1)/p, for `tokens` tokens; with
    `gpu`, the link time at its per-direction interconnect bandwidth, and the step time with the per-call
    latency (`allreduce_latency_s` in gpus.yaml) added for the 2 × layers calls.
    """
    m, f, n, toks = model, dtype, n_gpus, tokens
    eb = f.bits_per_weight / 8
    per_layer = F.tp_allreduce_bytes_per_token_per_layer(m.hidden_size, eb, n)
    per_token = F.tp_allreduce_bytes_per_token(m, eb, n)
    total = per_token * toks
    ex = Example(f"TP all-reduce traffic of {m.name} on {n} GPUs")
    ex.formula("bytes sent per GPU per token = layers × 2 all-reduces × 2(p − 1)/p × hidden_size × bytes")
    ex.input("`hidden_size`", _i(m.hidden_size), _mlink(m))
    ex.input("`num_hidden_layers`", _i(m.num_hidden_layers), _mlink(m))
    ex.input(f"activation bytes ({f.key})", _bytes_el(eb), _flink(f))
    ex.input("GPUs p / tokens", f"{n} / {_i(toks)}", GIVEN)
    ex.step(f"per layer: 2 × 2 × ({n} − 1)/{n} × {_i(m.hidden_size)} × {_bytes_el(eb)} = {_i(per_layer)} bytes")
    ex.step(f"× {m.num_hidden_layers} layers = {_i(per_token)} bytes per token")
    ex.step(f"× {_i(toks)} tokens = {_i(total)} bytes")
    ex.result(f"{U.fmt_bytes(total)} sent by each GPU")
    if gpu is not None:
        _link_time(ex, gpu, total, "of link time at full bandwidth")
        if n > 1 and gpu.allreduce_latency_s:
            calls = 2 * m.num_hidden_layers
            t = F.tp_decode_allreduce_time(m, toks, eb, n, gpu.allreduce_latency_s,
                                           gpu.interconnect_bytes_per_s_per_direction)
            ex.input("all-reduce latency per call", U.fmt_seconds(gpu.allreduce_latency_s), _glink(gpu))
            ex.step(f"latency: {calls} calls (one step over all {_i(toks)} tokens) × "
                    f"{U.fmt_seconds(gpu.allreduce_latency_s)} = {U.fmt_seconds(calls * gpu.allreduce_latency_s)}")
            ex.result(f"{U.fmt_seconds(t)} per step with the per-call latency added")
    ex.note("Megatron-style TP: one all-reduce after attention, one after the MLP. Each call also pays a fixed "
            "latency; at small batch (decode) it outweighs the bandwidth term.")
    return ex.render()


@macro("block", example='ep_all_to_all("deepseek-v3", tokens=512, n_gpus=8, gpu="h200-sxm")')
def ep_all_to_all(model: Model, tokens: int = 256, n_gpus: int = 8, dtype: Format = "bf16",
                  gpu: Gpu | None = None) -> str:
    """Worked example: expert-parallel dispatch + combine bytes per step for ``tokens`` tokens.

    `2 × tokens × top_k × hidden × bytes` per MoE layer, the share that crosses GPUs, and (with `gpu`) the
    link time. MoE models only.
    """
    m, f, toks, ep = model, dtype, tokens, n_gpus
    if not m.is_moe:
        moe = ", ".join(k for k, v in inputs.cat().models.items() if v.is_moe)
        raise MacroInputError(f"{m.key!r} is a dense model; expert parallelism needs an MoE model: {moe}")
    eb = f.bits_per_weight / 8
    k = m.moe.experts_per_token
    per_layer = F.ep_all_to_all_bytes(toks, k, m.hidden_size, eb)
    layers = m.num_hidden_layers - m.moe.first_dense_layers
    total = per_layer * layers
    remote = total * (ep - 1) / ep
    ex = Example(f"expert-parallel all-to-all of {m.name}, {_i(toks)} tokens over EP {ep}")
    ex.formula("bytes per MoE layer = 2 (dispatch + combine) × tokens × top_k × hidden_size × bytes")
    ex.input("`experts_per_token` (top-k)", str(k), _mlink(m))
    ex.input("`hidden_size`", _i(m.hidden_size), _mlink(m))
    ex.input("MoE layers", str(layers), _mlink(m))
    ex.input(f"activation bytes ({f.key})", _bytes_el(eb), _flink(f))
    ex.input("tokens in the step / EP ranks", f"{_i(toks)} / {ep}", GIVEN)
    ex.step(f"per MoE layer: 2 × {_i(toks)} × {k} × {_i(m.hidden_size)} × {_bytes_el(eb)} = {_i(per_layer)} bytes")
    ex.step(f"× {layers} MoE layers = {_i(total)} bytes per step")
    ex.step(f"crossing GPUs under uniform routing: × ({ep} − 1)/{ep} = {_i(remote)} bytes")
    ex.result(f"{U.fmt_bytes(remote)} over the interconnect per step; each GPU sends {U.fmt_bytes(remote / ep)}")
    if gpu is not None:
        _link_time(ex, gpu, remote / ep, "of link time per step at full bandwidth")
    ex.note("Skewed routing concentrates traffic on hot experts' GPUs; FP8 dispatch halves the dispatch bytes.")
    return ex.render()


@macro("inline", example='valid_tp("qwen2.5-7b")')
def valid_tp(model: Model) -> str:
    """Valid tensor-parallel degrees up to 16, e.g. '1, 2, 4, 8'."""
    return ", ".join(map(str, F.valid_tp_degrees(model)))
