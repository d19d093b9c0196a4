"""Attention-FFN disaggregation (Part D, Q157): attention time against expert work per decode layer and the
ratio of attention to FFN GPUs it implies, and the bytes a token moves across the split with the micro-batches
a ping-pong needs (formulas: :mod:`macros.formulas.afd`)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from ..formulas import afd as AFD
from . import inputs
from .blocks import GIVEN, Example, _glink, _i, _mlink, _n
from .registry import ARGS, Arg, macro

SCALE_GROUP = 128  # FP8 hidden states with one float32 scale per 128 channels (DeepEP v1's dispatch format)
_ARGS = {"attn_gpu": ARGS["gpu"], "ffn_gpu": ARGS["gpu"], "weight_fmt": ARGS["fmt"],
         "attn_gpus": Arg(lambda name, vs: [inputs.count(name, v) for v in vs], "list of attention-GPU counts",
                          "e.g. `[8, 32, 128]`"),
         "ffn_gpus": ARGS["sequences"],
         "links_gb_per_s": Arg(lambda name, vs: [inputs.number(name, v) for v in vs], "list of link rates in GB/s",
                               "e.g. `[40, 100]`")}


@dataclass(frozen=True)
class _Sides:
    attn: AFD.AttentionLayer
    per_expert_bytes: float
    attn_weight_bytes: float
    pair_flops: int
    kv_token_layer: float


def _pair_flops(m: Model) -> int:
    if m.mla is not None:
        return AFD.decode_attention_pair_flops(m.num_attention_heads, m.mla.kv_lora_rank + m.mla.qk_rope_head_dim,
                                               m.mla.kv_lora_rank)
    return AFD.decode_attention_pair_flops(m.num_attention_heads, m.head_dim, m.head_dim)


def _sides(m: Model, ag: Gpu, batch: int, context: int, kv: Format, wf: Format) -> _Sides:
    if not m.is_moe:
        raise MacroInputError(f"{m.key!r} is a dense model; attention-FFN disaggregation here splits off routed "
                              "experts, so it needs an MoE model")
    if m.linear_attention is not None or m.sliding_window is not None:
        raise MacroInputError(f"{m.key!r} mixes layer types (sliding or linear attention); this example models "
                              "a model whose every layer is full attention")
    pair = _pair_flops(m)
    params = F.attention_params_per_layer(m)
    wbytes = F.bytes_for_params(params, F.bits_of(wf))
    kvl = F.kv_bytes_per_token_per_layer(m, kv)
    attn = AFD.attention_layer(batch, context, wbytes, kvl, params, pair, ag.memory_bandwidth_bytes_per_s,
                               inputs.peak_flops(ag, wf)[0], ag.bf16_dense_flops)
    b = F.param_breakdown(m)
    per_expert = F.bytes_for_params(b.params_per_expert, F.bits_of(wf))
    return _Sides(attn, per_expert, wbytes, pair, kvl)


def _work(m: Model, fg: Gpu, wf: Format, tokens: int, per_expert: float) -> AFD.ExpertWork:
    b = F.param_breakdown(m)
    return AFD.expert_work(tokens, m.moe.experts_per_token, m.moe.num_experts, per_expert, b.params_per_expert,
                           fg.memory_bandwidth_bytes_per_s, inputs.peak_flops(fg, wf)[0])


@macro("block", example='afd_ratio("deepseek-v3", "h200-sxm", "h200-sxm", batch=64, context=4096, '
       'attn_gpus=[8, 32, 128])', args=_ARGS)
def afd_ratio(model: Model, attn_gpu: Gpu, ffn_gpu: Gpu, batch: int, context: int, attn_gpus: list[int],
              kv_dtype: Format = "bf16", weight_fmt: Format = "fp8") -> str:
    """Worked example: one decode MoE layer split into an attention pool and an FFN pool.

    Attention per GPU and micro-batch: `max(weights + batch × context × KV per token, batch × 2 × attention
    params + batch × context × 2 × heads × (qk + v))`, projections at the weight format's peak and scores at
    BF16. FFN work for `attention GPUs × batch` tokens: `max(experts × bytes per expert / HBM, tokens × top-k ×
    2 × params per expert / peak)` GPU-seconds; FFN GPUs that match the attention time = work / attention time.
    Every attention GPU runs all heads for its own sequences (data-parallel attention, no tensor parallelism).
    The shared expert and the router are left out of both sides' times (either side can run them).
    """
    m = model
    if not attn_gpus:
        raise MacroInputError("attn_gpus must list at least one attention-GPU count")
    s = _sides(m, attn_gpu, batch, context, kv_dtype, weight_fmt)
    a = s.attn
    ex = Example(f"{m.name}, one decode MoE layer: attention on {attn_gpu.name}, routed experts on {ffn_gpu.name}")
    ex.formula("attention = max(weight + KV reads, projection + score FLOPs) per GPU and micro-batch")
    ex.formula("FFN work = max(all experts read once, tokens × top-k × 2 × params per expert / peak) GPU-s; "
               "FFN GPUs = FFN work / attention time")
    ex.input("attention params per layer / heads", f"{U.fmt_params(F.attention_params_per_layer(m))} / "
             f"{m.num_attention_heads}", _mlink(m))
    ex.input("KV per token per layer", f"{U.fmt_bytes(s.kv_token_layer)} ({kv_dtype.name})", _mlink(m))
    ex.input("score FLOPs per cached token per layer", _i(s.pair_flops),
             "MLA absorbed: 2 × heads × (latent + rope + latent)" if m.mla else "2 × heads × 2 × head_dim")
    ex.input("routed experts / top-k / bytes per expert",
             f"{m.moe.num_experts} / {m.moe.experts_per_token} / {U.fmt_bytes(s.per_expert_bytes)} "
             f"({weight_fmt.name})", _mlink(m))
    ex.input("sequences per micro-batch on each attention GPU / context", f"{_i(batch)} / {_i(context)} tokens",
             GIVEN)
    ex.input(f"{attn_gpu.name}: HBM / {inputs.peak_flops(attn_gpu, weight_fmt)[1]} / dense BF16",
             f"{U.fmt_bandwidth(attn_gpu.memory_bandwidth_bytes_per_s)} / "
             f"{U.fmt_flops(inputs.peak_flops(attn_gpu, weight_fmt)[0])} / {U.fmt_flops(attn_gpu.bf16_dense_flops)}",
             _glink(attn_gpu))
    if ffn_gpu.key != attn_gpu.key:
        ex.input(f"{ffn_gpu.name}: HBM / {inputs.peak_flops(ffn_gpu, weight_fmt)[1]}",
                 f"{U.fmt_bandwidth(ffn_gpu.memory_bandwidth_bytes_per_s)} / "
                 f"{U.fmt_flops(inputs.peak_flops(ffn_gpu, weight_fmt)[0])}", _glink(ffn_gpu))
    ex.step(f"attention per GPU: reads {U.fmt_seconds(a.weight_read_s)} (weights {U.fmt_bytes(s.attn_weight_bytes)})"
            f" + {U.fmt_seconds(a.kv_read_s)} (KV) = {U.fmt_seconds(a.read_s)}; FLOPs {U.fmt_seconds(a.compute_s)}"
            f" → {U.fmt_seconds(a.time_s)}, {'compute' if a.compute_bound else 'memory'}-bound")
    rows = ["| Attention GPUs | Tokens per micro-batch | Expert reads | Expert FLOPs | FFN work | "
            "FFN GPUs to match | Attention : FFN |", "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for n in attn_gpus:
        w = _work(m, ffn_gpu, weight_fmt, n * batch, s.per_expert_bytes)
        nf = AFD.balanced_ffn_gpus(w.gpu_s, a.time_s)
        rows.append(f"| {n} | {_i(n * batch)} | {U.fmt_seconds(w.read_gpu_s)} | {U.fmt_seconds(w.compute_gpu_s)} | "
                    f"{U.fmt_seconds(w.gpu_s)} ({'FLOPs' if w.compute_bound else 'reads'}) | {_n(nf)} | "
                    f"{_n(n / nf)} : 1 |")
    ex.table("\n".join(rows))
    first = _work(m, ffn_gpu, weight_fmt, attn_gpus[0] * batch, s.per_expert_bytes)
    last = _work(m, ffn_gpu, weight_fmt, attn_gpus[-1] * batch, s.per_expert_bytes)
    ex.result(f"each attention GPU spends {U.fmt_seconds(a.time_s)} per layer and micro-batch; with "
              f"{attn_gpus[0]} attention GPUs the FFN pool needs {_n(AFD.balanced_ffn_gpus(first.gpu_s, a.time_s))} "
              f"GPUs to keep pace, with {attn_gpus[-1]} it needs "
              f"{_n(AFD.balanced_ffn_gpus(last.gpu_s, a.time_s))}")
    ex.note(f"Expert work is in GPU-seconds: spread evenly over n FFN GPUs each takes work ÷ n. While the experts "
            "are bound by their reads the work does not grow with tokens, so more attention GPUs per FFN GPU are "
            "nearly free; once bound by FLOPs the ratio stops moving. Each attention GPU runs every head for its own "
            "sequences (data-parallel attention). Uniform routing, every expert touched, peak rates, no kernel "
            f"overheads; the shared expert, the router (either side can run them) and the "
            f"{m.moe.first_dense_layers} dense layers left out.")
    return ex.render()


@macro("block", example='afd_traffic("deepseek-v3", "h200-sxm", "h200-sxm", batch=128, context=4096, attn_gpus=16, '
       'ffn_gpus=16, links_gb_per_s=[40, 100])', args={**_ARGS, "attn_gpus": ARGS["sequences"]})
def afd_traffic(model: Model, attn_gpu: Gpu, ffn_gpu: Gpu, batch: int, context: int, attn_gpus: int,
                ffn_gpus: int, links_gb_per_s: list[float], kv_dtype: Format = "bf16",
                weight_fmt: Format = "fp8") -> str:
    """Worked example: what crosses the attention-FFN split per token and layer, and the ping-pong it needs.

    With a de-duplicating dispatch a token goes once to each FFN GPU holding one of its experts
    (`n × (1 − C(E − E/n, k) / C(E, k))` of them on average) as FP8 with a float32 scale per 128 channels, and gets
    one BF16 vector back from each; a per-expert dispatch sends `k`. Per micro-batch and layer on one attention
    GPU: `batch ×` those bytes over each link rate (and over the attention GPU's NVLink, per direction, from the
    catalog), out and back separately. Micro-batches needed `m ≥ (attention + experts + out + back) / the slowest
    of the four`; the attention GPU's busy share at that `m`; the KV of `m` micro-batches plus the attention
    weights of every layer against the attention GPU's memory.
    """
    m = model
    if not links_gb_per_s:
        raise MacroInputError("links_gb_per_s must list at least one link rate")
    s = _sides(m, attn_gpu, batch, context, kv_dtype, weight_fmt)
    copies = AFD.distinct_ffn_gpus(m.moe.num_experts, m.moe.experts_per_token, ffn_gpus)
    out1 = AFD.split_bytes_per_token(m.hidden_size, 1, 1, SCALE_GROUP)
    back1 = AFD.split_bytes_per_token(m.hidden_size, 2, 1)
    out = AFD.split_bytes_per_token(m.hidden_size, 1, copies, SCALE_GROUP)
    back = AFD.split_bytes_per_token(m.hidden_size, 2, copies)
    work = _work(m, ffn_gpu, weight_fmt, attn_gpus * batch, s.per_expert_bytes)
    t_a, t_f = s.attn.time_s, work.gpu_s / ffn_gpus
    layers = F.param_breakdown(m).moe_layers
    links = [(f"{_n(x)} GB/s (given)", x * 1e9) for x in links_gb_per_s]
    if attn_gpu.interconnect_bytes_per_s_per_direction:
        links.append((f"{U.fmt_bandwidth(attn_gpu.interconnect_bytes_per_s_per_direction)} (NVLink, one node)",
                      attn_gpu.interconnect_bytes_per_s_per_direction))
    ex = Example(f"{m.name}: bytes across the split, {attn_gpus} attention and {ffn_gpus} FFN GPUs")
    ex.formula("to FFN = copies × (hidden × 1 + hidden / 128 × 4) bytes; back = copies × hidden × 2 bytes")
    ex.formula("micro-batches m ≥ (attention + experts + link out + link back) / the slowest of the four; only "
               "that slowest stage is kept busy")
    ex.formula("attention busy share = min(m × attention / round, attention / slowest stage)")
    ex.input("hidden / routed experts / top-k / MoE layers",
             f"{_i(m.hidden_size)} / {m.moe.num_experts} / {m.moe.experts_per_token} / {layers}", _mlink(m))
    ex.input("experts per FFN GPU", _i(m.moe.num_experts // ffn_gpus), f"{m.moe.num_experts} ÷ {ffn_gpus}")
    ex.input("sequences per micro-batch on each attention GPU / context", f"{_i(batch)} / {_i(context)} tokens",
             GIVEN)
    ex.input(f"{attn_gpu.name} memory", U.fmt_gb(attn_gpu.memory_bytes), _glink(attn_gpu))
    ex.step(f"one copy: {U.fmt_bytes(out1)} out (FP8 + scales), {U.fmt_bytes(back1)} back (BF16)")
    ex.step(f"FFN GPUs a token reaches: {_n(copies)} of {ffn_gpus} (top-{m.moe.experts_per_token}); a "
            f"de-duplicating dispatch sends that many copies, a per-expert one {m.moe.experts_per_token} "
            f"({U.fmt_bytes(out1 * m.moe.experts_per_token)} out, {U.fmt_bytes(back1 * m.moe.experts_per_token)} "
            "back, before message headers)")
    ex.step(f"per token per MoE layer: {U.fmt_bytes(out)} out, {U.fmt_bytes(back)} back; per token per step "
            f"({layers} MoE layers): {U.fmt_bytes(out * layers)} out, {U.fmt_bytes(back * layers)} back")
    kv_seq = F.kv_bytes_per_sequence(m, context, kv_dtype)
    attn_weights = s.attn_weight_bytes * m.num_hidden_layers
    ex.step(f"per layer and micro-batch ({_i(batch)} sequences on each attention GPU): attention "
            f"{U.fmt_seconds(t_a)}, experts {U.fmt_seconds(t_f)} per FFN GPU ({_i(attn_gpus * batch)} tokens over "
            f"{ffn_gpus} GPUs)")
    ex.step(f"an attention GPU holds m micro-batches: KV {U.fmt_bytes(kv_seq)} per sequence ({m.num_hidden_layers} "
            f"layers), so m × {U.fmt_gb(batch * kv_seq)}, plus {U.fmt_gb(attn_weights)} of attention weights "
            f"({weight_fmt.name}, every layer)")
    rows = ["| Link per attention GPU, each direction | Out / back per micro-batch and layer | Slowest stage | "
            "Micro-batches m | Attention busy | KV + attention weights at m |",
            "| --- | ---: | --- | ---: | ---: | ---: |"]
    slowest_link = None
    for label, bw in links:
        c_out, c_back = out * batch / bw, back * batch / bw
        stages = (("attention", t_a), ("experts", t_f), ("link out", c_out), ("link back", c_back))
        name = max(stages, key=lambda st: st[1])[0]
        slowest_link = slowest_link or (c_back, name)
        mb = AFD.ping_pong_micro_batches(t_a, t_f, c_out, c_back)
        busy = AFD.attention_busy_share(t_a, t_f, c_out, c_back, mb)
        held = mb * batch * kv_seq + attn_weights
        fits = "fits" if held <= attn_gpu.memory_bytes else "does not fit"
        rows.append(f"| {label} | {U.fmt_seconds(c_out)} / {U.fmt_seconds(c_back)} | {name} | {mb} | "
                    f"{U.fmt_pct(busy)} | {U.fmt_gb(held)} ({fits}) |")
    ex.table("\n".join(rows))
    ex.result(f"each token sends {U.fmt_bytes(out)} and receives {U.fmt_bytes(back)} per MoE layer; at the "
              f"slowest link the return alone takes {U.fmt_seconds(slowest_link[0])} per micro-batch and layer "
              f"against {U.fmt_seconds(max(t_a, t_f))} of compute"
              + (", so the link sets the pace whatever m is" if slowest_link[1].startswith("link") else ""))
    ex.note("Copies per token assume uniform routing, experts spread evenly and a dispatch that sends a token once "
            "per FFN GPU, which sums its own experts' outputs before returning one vector. Out and back use "
            "separate directions of a full-duplex link, each a stage of its own. Steady state of a fixed cycle: "
            "no per-message latency, no jitter, every attention GPU equally loaded. The memory column counts "
            "KV and attention weights, not the shared expert, dense layers, embeddings or activations.")
    return ex.render()


@macro("inline", example='afd_attention_intensity("deepseek-v3", "bf16")')
def afd_attention_intensity(model: Model, kv_dtype: Format = "bf16") -> str:
    """Decode-attention FLOPs per byte of KV read, e.g. '241.8 FLOP/byte': score FLOPs per cached token per layer
    over that layer's KV bytes per token (the projections left out)."""
    return f"{_n(_pair_flops(model) / F.kv_bytes_per_token_per_layer(model, kv_dtype))} FLOP/byte"


@macro("inline", example='afd_pair_flops("deepseek-v3")')
def afd_pair_flops(model: Model) -> str:
    """Decode-attention FLOPs one query spends per cached token per layer, e.g. '278,528'.

    `2 × heads × (qk + v)`: MLA absorbed scores over `kv_lora_rank + qk_rope_head_dim` and values over
    `kv_lora_rank`; MHA/GQA over `head_dim` both.
    """
    return _i(_pair_flops(model))
