"""Scaling out one model: expert-parallel MoE steps, the KV hand-off between prefill and decode pools,
and speculative decoding with its real verification cost (Q98, Q107, Q110; formulas:
:mod:`macros.formulas.overhead`)."""

from __future__ import annotations


from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from ..formulas import overhead as O
from . import inputs
from .blocks import fmt_name, GIVEN, Example, _flink, _glink, _i, _mlink, _n
from .registry import COUNT, Arg, macro

from .overhead import _ARGS, _NUMBER  # noqa: F401


@macro("block", example='ep_step("deepseek-v3", "h200-sxm", fmt="fp8", n_gpus=8, tokens=256, '
       'link_gbit_per_s=400, imbalance=1.5)',
       args={**_ARGS, "imbalance": _NUMBER, "link_gbit_per_s": _NUMBER, "latency_us": Arg(
           lambda name, v: inputs.number(name, v, positive=False), "a number", ">= 0")})
def ep_step(model: Model, gpu: Gpu, fmt: Format = "bf16", n_gpus: int = 8, tokens: int = 256,
            expert_fmt: Format | None = None, dtype: Format = "bf16", link_gbit_per_s: float | None = None,
            imbalance: float = 1.0, latency_us: float = 0.0) -> str:
    """Worked example: expert bytes read against all-to-all bytes per step, per rank, and the step they set.

    Per MoE layer and rank: routed-expert bytes read (experts touched by the step's `tokens` / EP) over
    HBM bandwidth; expert FLOPs over the dense peak; dispatch + combine bytes crossing the link over the
    GPU's NVLink bandwidth per direction (and a NIC of `link_gbit_per_s`, if given) plus 2 × `latency_us`.
    The layer waits for its busiest rank, which computes and receives `imbalance` (max / mean tokens per
    rank) times the mean. Summed over the MoE layers.
    """
    m, g, f, ep, toks = model, gpu, fmt, n_gpus, tokens
    if not m.is_moe:
        raise MacroInputError(f"{m.key!r} is a dense model; expert parallelism needs an MoE model")
    if imbalance < 1:
        raise MacroInputError(f"imbalance is max / mean tokens per rank and cannot be below 1, got {imbalance!r}")
    mo = m.moe
    if mo.num_experts % ep:
        raise MacroInputError(f"{mo.num_experts} experts do not divide over EP {ep}")
    nv = g.interconnect_bytes_per_s_per_direction
    if not nv:
        raise MacroInputError(f"{g.name} has no interconnect bandwidth in gpus.yaml")
    b = F.param_breakdown(m)
    wb = F.weight_bytes_breakdown(m, f, expert_fmt)
    per_expert = wb.routed_experts / (mo.num_experts * b.moe_layers)
    touched = F.expected_experts_touched(mo.num_experts, mo.experts_per_token, toks)
    flops_tok = mo.experts_per_token * 2 * b.params_per_expert
    eb = dtype.bits_per_weight / 8
    a2a_total = F.ep_all_to_all_bytes(toks, mo.experts_per_token, m.hidden_size, eb)
    peak, label = inputs.peak_flops(g, f)
    hbm = g.memory_bandwidth_bytes_per_s
    links = [("NVLink", nv)] + ([(f"NIC {_n(link_gbit_per_s)} Gbit/s", link_gbit_per_s * 1e9 / 8)]
                                if link_gbit_per_s else [])
    lat = latency_us * 1e-6
    layers = b.moe_layers
    ex = Example(f"expert parallelism for {m.name} ({fmt_name(f, expert_fmt)}) over EP {ep} × {g.name}, "
                 f"{_i(toks)} tokens per step")
    ex.formula("read per rank = experts touched / EP × bytes per expert; experts touched = E × (1 − (1 − k/E)^tokens)")
    ex.formula("all-to-all per rank = 2 × tokens × top_k × hidden × bytes × (EP − 1) / EP / EP")
    ex.formula("layer = max(read / HBM, imbalance × expert FLOPs per rank / peak) + imbalance × all-to-all / link "
               "+ 2 × latency")
    ex.input("experts E / top-k / hidden / MoE layers",
             f"{mo.num_experts} / {mo.experts_per_token} / {_i(m.hidden_size)} / {layers}", _mlink(m))
    ex.input("bytes per routed expert", U.fmt_bytes(per_expert), f"{_mlink(m)}, {_flink(expert_fmt or f)}")
    ex.input("HBM bandwidth / dense peak" + f" ({label})", f"{U.fmt_bandwidth(hbm)} / {inputs.fmt_peak(f, peak)}",
             _glink(g))
    ex.input("NVLink per direction", U.fmt_bandwidth(nv), _glink(g))
    ex.input(f"all-to-all element ({dtype.key}) / per-call latency",
             f"{_n(eb)} bytes / {U.fmt_seconds(lat) if lat else 'none (bandwidth only)'}",
             f"{_flink(dtype)}; latency: assumption")
    ex.input("tokens per step / EP / imbalance (max ÷ mean)", f"{_i(toks)} / {ep} / {_n(imbalance)}", GIVEN)
    ex.step(f"experts touched per layer: {mo.num_experts} × (1 − (1 − {mo.experts_per_token}/{mo.num_experts})"
            f"^{_i(toks)}) = {_n(touched)}; per rank {_n(touched / ep)}")
    rows = ["| Link | Imbalance | Expert read per rank | All-to-all per rank | Expert time (busiest) "
            "| All-to-all time (busiest) | MoE layers per step | Communication share |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    steps = []
    for name, bw in links:
        for beta in sorted({1.0, float(imbalance)}):
            st = O.ep_layer_step(toks, ep, touched, per_expert, flops_tok, a2a_total, hbm, peak, bw, lat, beta)
            steps.append((name, beta, st))
            rows.append(f"| {name} | {_n(beta)} | {U.fmt_bytes(st.expert_bytes_per_rank * layers)} | "
                        f"{U.fmt_bytes(st.a2a_bytes_per_rank * layers)} | {U.fmt_seconds(st.expert_s_hot * layers)} | "
                        f"{U.fmt_seconds(st.a2a_s_hot * layers)} | {U.fmt_seconds(st.layer_s * layers)} | "
                        f"{U.fmt_pct(st.comm_share)} |")
    ex.table("\n".join(rows))
    base = steps[0][2]
    ex.result(f"per step each rank reads {U.fmt_bytes(base.expert_bytes_per_rank * layers)} of expert weights "
              f"and sends {U.fmt_bytes(base.a2a_bytes_per_rank * layers)} across the link")
    worst = steps[-1]
    ex.result(f"the MoE layers take {U.fmt_seconds(base.layer_s * layers)} per step (NVLink, balanced) against "
              f"{U.fmt_seconds(worst[2].layer_s * layers)} ({worst[0]}, imbalance {_n(worst[1])})")
    ex.note("Uniform routing spreads experts and tokens evenly; the imbalance factor scales the busiest rank's "
            "compute and traffic. No overlap of communication with expert work is assumed; attention and the "
            "other layers are left out.")
    return ex.render()


# ---------------------------------------------------------------- disaggregated prefill: the KV coupling

@macro("block", example='pd_coupling("llama-3.1-70b", "h100-sxm", tokens="8K", fmt="fp8", n_gpus=4, '
       'kv_dtype="fp8", link_gbit_per_s=400)',
       args={"link_gbit_per_s": _NUMBER})
def pd_coupling(model: Model, gpu: Gpu, tokens: int = 8192, fmt: Format = "bf16", n_gpus: int = 1,
                kv_dtype: Format = "bf16", mfu: float = 0.5, link_gbit_per_s: float | None = None) -> str:
    """Worked example: the KV hand-off of disaggregated prefill, per prompt and sustained, against the link.

    Prefill time of a `tokens` prompt on the prefill instance (`n_gpus` × `gpu` at `mfu`, as
    `prefill_time`), the prompt's KV bytes, and the transfer time over a NIC of `link_gbit_per_s`
    (default: the GPU's NVLink per direction). Transfer / prefill time is both the TTFT the hand-off
    adds without overlap and the share of the link a back-to-back prefill instance needs.
    """
    m, g, f, n, toks, kv = model, gpu, fmt, n_gpus, tokens, kv_dtype
    inputs.check_tp(m, n)
    if link_gbit_per_s:
        bw, bw_name, bw_src = link_gbit_per_s * 1e9 / 8, f"NIC {_n(link_gbit_per_s)} Gbit/s", GIVEN
    else:
        bw = g.interconnect_bytes_per_s_per_direction
        if not bw:
            raise MacroInputError(f"{g.name} has no interconnect bandwidth in gpus.yaml; give link_gbit_per_s")
        bw_name, bw_src = "NVLink per direction", _glink(g)
    peak, label = inputs.peak_flops(g, f)
    flops = F.prefill_matmul_flops(m, toks) + F.prefill_attention_flops(m, toks)
    t_pre = F.prefill_time(flops, peak * n, mfu)
    kv_b = F.kv_bytes_per_sequence(m, toks, kv)
    c = O.pd_coupling(kv_b, t_pre, bw)
    ex = Example(f"KV hand-off of a {_i(toks)}-token prompt of {m.name}, prefill on {n} × {g.name}")
    ex.formula("prefill time = prefill FLOPs / (GPUs × peak × MFU); transfer time = prompt KV bytes / link")
    ex.formula("transfer / prefill = added TTFT share without overlap = link share a back-to-back prefill "
               "instance needs")
    ex.input(f"peak per GPU ({label}) / GPUs / MFU", f"{inputs.fmt_peak(f, peak)} / {n} / {_n(mfu)}",
             f"{_glink(g)}; MFU: assumption")
    ex.input("KV bytes per token", U.fmt_bytes(F.kv_bytes_per_token(m, kv)), f"{_mlink(m)}, {_flink(kv)}")
    ex.input(bw_name, U.fmt_bandwidth(bw), bw_src)
    ex.step(f"prefill: {_n(flops / 1e12)} T{inputs.op_unit(f)} / ({n} × {inputs.fmt_peak(f, peak)} × {_n(mfu)}) = "
            f"{U.fmt_seconds(t_pre)}")
    ex.step(f"prompt KV: {_i(toks)} tokens → {U.fmt_bytes(kv_b)}; transfer {U.fmt_seconds(c.transfer_s)}")
    ex.step(f"sustained: {U.fmt_bytes(kv_b)} every {U.fmt_seconds(t_pre)} = "
            f"{U.fmt_bandwidth(c.sustained_bytes_per_s)} against {U.fmt_bandwidth(bw)}")
    verdict = ("the link keeps up" if c.link_share <= 1 else
               "the link cannot keep up: it, not the GPUs, limits the prefill pool")
    ex.result(f"transfer / prefill = {U.fmt_pct(c.transfer_to_prefill)}: {verdict}")
    ex.note("Prefill at the assumed MFU, attention included; no overlap of transfer and prefill, and no "
            "per-transfer setup latency. A connector that streams KV layer by layer hides part of the time, "
            "but not the sustained bandwidth.")
    return ex.render()


# ---------------------------------------------------------------- speculative decoding on MoE: the verify cost

def _step_time(m: Model, g: Gpu, f: Format, fe: Format | None, kv: Format, seqs: int, tokens_each: int,
               ctx: int) -> float:
    """Roofline time of a step of ``seqs`` sequences with ``tokens_each`` query tokens each (one GPU)."""
    toks = seqs * tokens_each
    w = F.weight_bytes_read_per_step(m, f, toks, fe)
    kv_b = seqs * F.kv_bytes_per_sequence(m, ctx, kv)
    peak = inputs.peak_flops(g, f)[0]
    return F.roofline_time(toks * 2 * F.param_breakdown(m).compute_active, w + kv_b, peak,
                           g.memory_bandwidth_bytes_per_s)


@macro("block", example='spec_decode_verify("gpt-oss-120b", "h100-sxm", fmt="mxfp4", acceptance_rate=0.7, '
       'draft_length=3, draft_cost=0.05)',
       args={"acceptance_rate": Arg(lambda name, v: inputs.number(name, v, positive=False), "a number", "0 to 1"),
             "draft_length": COUNT, "draft_cost": Arg(
           lambda name, v: inputs.number(name, v, positive=False), "a number", ">= 0"),
             "fixed_us": Arg(lambda name, v: inputs.number(name, v, positive=False), "a number", ">= 0")})
def spec_decode_verify(model: Model, gpu: Gpu, fmt: Format = "bf16", acceptance_rate: float = 0.7,
                       draft_length: int = 3, draft_cost: float = 0.05, batch: int = 1, context: int = 4096,
                       kv_dtype: Format = "bf16", expert_fmt: Format | None = None, fixed_us: float = 0.0) -> str:
    """Worked example: speculative speed-up with the verification step's real cost, dense or MoE.

    Expected tokens per round `E = (1 − a^(γ+1)) / (1 − a)`; verification cost `v` = roofline time of a
    step with `batch` × (γ + 1) query tokens over that of a plain step with `batch` tokens (weights
    touched, KV read once per sequence, one GPU), each plus `fixed_us` of per-step overhead (launches, host
    work; the same for both steps); speed-up `E / (γ·c + v)`, against the textbook `v = 1`.
    For MoE, the expert bytes grow with the tokens in the step: `E × (1 − (1 − k/E)^tokens)` experts.
    """
    m, g, f, fe, kv, ctx, a, gam = model, gpu, fmt, expert_fmt, kv_dtype, context, acceptance_rate, draft_length
    if not 0 <= a <= 1:
        raise MacroInputError(f"acceptance_rate must be between 0 and 1, got {a!r}")
    e_tok = F.expected_tokens_per_step(a, gam)
    fixed = fixed_us * 1e-6
    plain = _step_time(m, g, f, fe, kv, batch, 1, ctx) + fixed
    verify = _step_time(m, g, f, fe, kv, batch, gam + 1, ctx) + fixed
    v = verify / plain
    s_text = O.speedup_with_verify_cost(e_tok, gam, draft_cost, 1.0)
    s_real = O.speedup_with_verify_cost(e_tok, gam, draft_cost, v)
    ex = Example(f"speculative decoding on {m.name} ({fmt_name(f, fe)}), {g.name}, batch {batch}, "
                 f"γ = {gam}, acceptance {_n(a)}")
    ex.formula("E = (1 − a^(γ+1)) / (1 − a) tokens per round; speed-up = E / (γ × c + v)")
    ex.formula("v = step time with batch × (γ + 1) tokens / step time with batch tokens")
    ex.input("acceptance a / draft length γ / draft cost c", f"{_n(a)} / {gam} / {_n(draft_cost)}",
             "assumption: measure a on your traffic")
    ex.input("model / weight format", f"{m.name} / {f.name}", f"{_mlink(m)}, {_flink(f)}")
    ex.input("memory bandwidth", U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s), _glink(g))
    ex.input("batch / context", f"{batch} / {_i(ctx)}", GIVEN)
    ex.input("fixed overhead per step", U.fmt_seconds(fixed) if fixed else "none", "assumption"
             if fixed else GIVEN)
    ex.step(f"E = (1 − {_n(a)}^{gam + 1}) / (1 − {_n(a)}) = {_n(e_tok)} tokens per round")
    if m.is_moe:
        mo = m.moe
        t1 = F.expected_experts_touched(mo.num_experts, mo.experts_per_token, batch)
        tv = F.expected_experts_touched(mo.num_experts, mo.experts_per_token, batch * (gam + 1))
        ex.step(f"experts read per MoE layer: {_n(t1)} for {batch} token(s), {_n(tv)} for "
                f"{batch * (gam + 1)} tokens")
    ex.step(f"plain step {U.fmt_seconds(plain)}, verification step {U.fmt_seconds(verify)}"
            + (f" (each with {U.fmt_seconds(fixed)} fixed)" if fixed else "") + f": v = {_n(v)}")
    ex.step(f"speed-up with v = 1 (textbook): {_n(e_tok)} / ({gam} × {_n(draft_cost)} + 1) = {_n(s_text)}")
    ex.step(f"speed-up with v = {_n(v)}: {_n(e_tok)} / ({gam} × {_n(draft_cost)} + {_n(v)}) = {_n(s_real)}")
    ex.result(f"about {_n(s_real)}× tokens per second per sequence, against {_n(s_text)}× if verifying were free")
    ex.note("Roofline step times at peak bandwidth; uniform, independent routing; the draft cost is relative "
            "to a plain target step. Acceptance is workload-dependent: the figure here is an input, not a result.")
    return ex.render()


@macro("inline", example='spec_speedup_at(0.7, 3, 0.05, 4)',
       args={"acceptance_rate": Arg(lambda name, v: inputs.number(name, v, positive=False), "a number", "0 to 1"),
             "draft_length": COUNT, "draft_cost": Arg(lambda name, v: inputs.number(name, v, positive=False),
                                                       "a number", ">= 0"),
             "verify_cost": _NUMBER})
def spec_speedup_at(acceptance_rate: float, draft_length: int, draft_cost: float, verify_cost: float) -> str:
    """Speculative speed-up E / (γ·c + v) for a given verification cost v, e.g. '0.595×'."""
    if not 0 <= acceptance_rate <= 1:
        raise MacroInputError(f"acceptance_rate must be between 0 and 1, got {acceptance_rate!r}")
    e_tok = F.expected_tokens_per_step(acceptance_rate, draft_length)
    return f"{_n(O.speedup_with_verify_cost(e_tok, draft_length, draft_cost, verify_cost))}×"
