"""Decode overheads and the benchmark curve: kernel-launch share of a decode step with and without CUDA
graphs, and the throughput-versus-concurrency roofline drawn as an inline SVG
(formulas: :mod:`macros.formulas.overhead`)."""

from __future__ import annotations

import math
import re

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from ..formulas import overhead as O
from . import inputs
from .blocks import GIVEN, Example, _flink, _glink, _i, _mlink, _n
from .budget import _budget
from .registry import COUNT, Arg, _each, macro
from .speed import _decode

_BATCHES = Arg(_each(inputs.count, "batches"), "list of batch sizes", "e.g. [1, 8, 64]")
_NUMBER = Arg(inputs.number, "a number", "> 0")
_ARGS = {"batches": _BATCHES, "kernels_per_layer": COUNT, "launch_us": _NUMBER, "graph_launch_us": _NUMBER,
         "bw_efficiency": _NUMBER, "max_batch": COUNT}


def _efficiency(value: float) -> float:
    if not 0 < value <= 1:
        raise MacroInputError(f"bw_efficiency must be in (0, 1], the share of peak bandwidth the kernels "
                              f"reach; got {value!r}")
    return value


def _point(m: Model, g: Gpu, f: Format, fe: Format | None, kv: Format, batch: int, ctx: int, eff: float):
    """Roofline of one decode step on one GPU at ``eff`` of the peak bandwidth."""
    bound = _decode(m, g, f, fe, kv, 1, batch, ctx)[0]
    peak = inputs.peak_flops(g, f)[0]
    flops_per_token = 2 * F.param_breakdown(m).compute_active
    return O.decode_roofline_point(batch, bound.bytes_per_step, flops_per_token,
                                   g.memory_bandwidth_bytes_per_s * eff, peak), bound


def _kv_capacity(m: Model, g: Gpu, f: Format, fe: Format | None, kv: Format, ctx: int) -> int:
    """Sequences of ``ctx`` tokens whose paged KV fits one GPU's budget (default utilization)."""
    _, shard, budget = _budget(m, g, f, kv, 1, F.DEFAULT_GPU_UTILIZATION, 2.0, 1.0, fe)
    if budget <= 0:
        raise MacroInputError(f"{m.name} in {f.name} leaves no KV-cache memory on one {g.name}")
    per_seq = F.kv_bytes_per_sequence_paged(m, ctx, kv, F.DEFAULT_BLOCK_SIZE, shard.kv_fraction)
    cap = F.max_concurrent_sequences(budget, per_seq)
    if cap < 1:
        raise MacroInputError(f"not one {_i(ctx)}-token sequence fits in the KV budget of {m.name} on {g.name}")
    return cap


@macro("block", example='launch_share("llama-3.1-8b", "h100-sxm", batches=[1, 16, 64], context="4K")',
       args=_ARGS)
def launch_share(model: Model, gpu: Gpu, fmt: Format = "bf16", batches: list = (1, 8, 32),
                 context: int = 4096, kv_dtype: Format = "bf16", expert_fmt: Format | None = None,
                 kernels_per_layer: int = 10, extra_kernels: int = 8, launch_us: float = 5.0,
                 graph_launch_us: float = 10.0, bw_efficiency: float = 0.8) -> str:
    """Worked example: kernel-launch share of a decode step, eager against a CUDA graph, at several batches.

    GPU time per step = roofline of the step (bytes read / (bandwidth × `bw_efficiency`), or FLOPs /
    dense peak if larger); host issue time = (layers × `kernels_per_layer` + `extra_kernels`) ×
    `launch_us`. Eager step between `max(GPU, host)` (launches overlap execution) and `GPU + host`
    (no overlap); graph step = GPU + `graph_launch_us`. One GPU. The kernel count and launch cost are
    assumptions to replace with a profile.
    """
    m, g, f, fe, kv, ctx = model, gpu, fmt, expert_fmt, kv_dtype, context
    eff = _efficiency(bw_efficiency)
    if not batches:
        raise MacroInputError("batches must list at least one batch size")
    cap = _kv_capacity(m, g, f, fe, kv, ctx)
    too_big = [b for b in batches if b > cap]
    if too_big:
        raise MacroInputError(f"batch {too_big[0]} does not fit: the KV cache of {m.name} ({kv.key}) on one "
                              f"{g.name} holds {cap} sequences of {ctx} tokens")
    n_k = O.kernels_per_step(m.num_hidden_layers, kernels_per_layer, extra_kernels)
    launch, glaunch = launch_us * 1e-6, graph_launch_us * 1e-6
    ex = Example(f"launch overhead of a {m.name} ({f.name}) decode step on {g.name} at {_i(ctx)} tokens")
    ex.formula("GPU time = max(bytes read / (bandwidth × efficiency), 2 × active params × batch / peak)")
    ex.formula("host time = (layers × kernels per layer + other kernels) × launch cost")
    ex.formula("eager step between max(GPU, host) and GPU + host; graph step = GPU + one graph launch")
    ex.input("memory bandwidth / share reached", f"{U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s)} / "
             f"{_n(eff)}", f"{_glink(g)}; share: assumption")
    ex.input("layers", _i(m.num_hidden_layers), _mlink(m))
    ex.input("weight format", f.name, _flink(f))
    ex.input("KV-cache format / context", f"{kv.name} / {_i(ctx)} tokens", _flink(kv))
    ex.input("kernels per layer / other kernels per step", f"{kernels_per_layer} / {extra_kernels}",
             "assumption: count them in a profile")
    ex.input("host cost per eager launch / per graph launch",
             f"{U.fmt_seconds(launch)} / {U.fmt_seconds(glaunch)}", "assumption: measure with Nsight Systems")
    ex.step(f"kernels per step: {m.num_hidden_layers} × {kernels_per_layer} + {extra_kernels} = {_i(n_k)}; "
            f"host time {_i(n_k)} × {U.fmt_seconds(launch)} = {U.fmt_seconds(n_k * launch)}")
    rows = ["| Batch | Bytes read per step | GPU time | Eager step (overlap … none) | Graph step "
            "| Launch-bound? | Share a graph removes |", "| ---: | ---: | ---: | ---: | ---: | :---: | ---: |"]
    results = []
    for b in batches:
        pt, bound = _point(m, g, f, fe, kv, b, ctx, eff)
        lo = O.launch_overhead(pt.step_s, n_k, launch, glaunch)
        results.append((b, lo))
        rows.append(f"| {_i(b)} | {U.fmt_gb(bound.bytes_per_step)} | {U.fmt_seconds(lo.gpu_time_s)}"
                    + (" (compute)" if pt.compute_bound else "")
                    + f" | {U.fmt_seconds(lo.eager_best_s)} … {U.fmt_seconds(lo.eager_worst_s)} | "
                    f"{U.fmt_seconds(lo.graph_s)} | {'yes' if lo.launch_bound else 'no'} | "
                    f"{U.fmt_pct(lo.saved_best)} … {U.fmt_pct(lo.saved_worst)} |")
    ex.table("\n".join(rows))
    for b, lo in results:
        ex.result(f"batch {_i(b)}: " + (
            f"launch-bound: issuing the step ({U.fmt_seconds(lo.host_time_s)}) takes longer than running it "
            f"({U.fmt_seconds(lo.gpu_time_s)}), so an eager step waits on the CPU"
            if lo.launch_bound else
            f"GPU-bound: launches can hide behind {U.fmt_seconds(lo.gpu_time_s)} of kernels if they overlap, "
            f"and cost up to {U.fmt_pct(lo.saved_worst)} of the step if they do not"))
    if len(results) > 1:
        ex.result("the host cost of issuing a step is fixed while its GPU time grows with the batch's KV "
                  "and expert bytes, so the share a graph removes falls as the batch grows")
    ex.note("GPU time is a roofline at a fixed share of peak bandwidth; short kernels reach less, so small "
            "batches are slower than shown. The kernel count is engine- and fusion-specific.")
    if m.is_moe:
        ex.note("Expert bytes assume uniform, independent routing.")
    return ex.render()


# ---------------------------------------------------------------- the throughput-vs-concurrency figure

_W, _H = 640, 360
_L, _R, _T, _B = 78, 20, 20, 52  # plot margins: left, right, top, bottom


def _nice_max(v: float) -> float:
    """A round axis maximum at or above ``v``: a whole multiple (1 to 10) of the power of ten below it."""
    exp = 10 ** math.floor(math.log10(v))
    return math.ceil(round(v / exp, 9)) * exp


def _svg(points, title: str, desc: str, kv_limit: int, ceiling: float | None, uid: str) -> str:
    pw, ph = _W - _L - _R, _H - _T - _B
    xmax = max(p.batch for p in points)
    lx = math.log2(xmax) or 1.0
    ymax = _nice_max(max(p.tokens_per_s for p in points) * 1.08)

    def x(b: float) -> float:
        return _L + pw * (math.log2(b) / lx)

    def y(v: float) -> float:
        return _T + ph * (1 - v / ymax)

    out = [f'<svg class="bench-curve" viewBox="0 0 {_W} {_H}" role="img" aria-labelledby="{uid}-t {uid}-d" '
           f'xmlns="http://www.w3.org/2000/svg" style="max-width:100%;height:auto;font-size:12px">',
           f'<title id="{uid}-t">{title}</title><desc id="{uid}-d">{desc}</desc>',
           '<g fill="none" stroke="currentColor" stroke-opacity="0.55">'
           f'<path d="M{_L},{_T} V{_T + ph} H{_L + pw}"/></g>']
    ticks = []
    for i in range(6):
        v = ymax * i / 5
        ticks.append(f'<line x1="{_L}" x2="{_L + pw}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="currentColor" '
                     f'stroke-opacity="0.15"/><text x="{_L - 6}" y="{y(v) + 4:.1f}" text-anchor="end" '
                     f'fill="currentColor">{_i(v)}</text>')
    b = 1
    while b <= xmax:
        ticks.append(f'<text x="{x(b):.1f}" y="{_T + ph + 16}" text-anchor="middle" fill="currentColor">{_i(b)}'
                     '</text>')
        b *= 2
    out += ticks
    out.append(f'<text x="{_L + pw / 2}" y="{_H - 12}" text-anchor="middle" fill="currentColor">'
               'concurrent sequences (log scale)</text>')
    out.append(f'<text transform="translate(16 {_T + ph / 2}) rotate(-90)" text-anchor="middle" '
               'fill="currentColor">aggregate output tokens/s</text>')
    if ceiling is not None and ceiling <= ymax:
        out.append(f'<line x1="{_L}" x2="{_L + pw}" y1="{y(ceiling):.1f}" y2="{y(ceiling):.1f}" '
                   'stroke="currentColor" stroke-dasharray="2 4"/>'
                   f'<text x="{_L + 6}" y="{y(ceiling) - 6:.1f}" fill="currentColor">compute ceiling</text>')
    if kv_limit <= xmax:
        out.append(f'<line x1="{x(kv_limit):.1f}" x2="{x(kv_limit):.1f}" y1="{_T}" y2="{_T + ph}" '
                   'stroke="currentColor" stroke-dasharray="6 4" stroke-opacity="0.7"/>'
                   f'<text x="{x(kv_limit) - 6:.1f}" y="{_T + 14}" text-anchor="end" fill="currentColor">'
                   f'KV cache full at {_i(kv_limit)}</text>')
    path = " ".join(f"{'M' if i == 0 else 'L'}{x(p.batch):.1f},{y(p.tokens_per_s):.1f}"
                    for i, p in enumerate(points))
    out.append(f'<path d="{path}" fill="none" stroke-width="2.5" '
               'style="stroke:var(--md-accent-fg-color, #526cfe)"/>')
    mid = points[len(points) // 2]
    out.append(f'<text x="{x(mid.batch) + 10:.1f}" y="{y(mid.tokens_per_s) + 20:.1f}" text-anchor="start" '
               'fill="currentColor">bandwidth bound</text>')
    out += [f'<circle cx="{x(p.batch):.1f}" cy="{y(p.tokens_per_s):.1f}" r="3" '
            'style="fill:var(--md-accent-fg-color, #526cfe)"/>' for p in points]
    out.append("</svg>")
    return "".join(out)


@macro("block", example='throughput_curve("llama-3.1-8b", "h100-sxm", context="4K")', args=_ARGS)
def throughput_curve(model: Model, gpu: Gpu, fmt: Format = "bf16", context: int = 4096,
                     kv_dtype: Format = "bf16", expert_fmt: Format | None = None, bw_efficiency: float = 1.0,
                     max_batch: int | None = None) -> str:
    """Worked example and figure: the decode throughput bound against concurrency, drawn as an inline SVG.

    For batch 1, 2, 4, ... up to the KV-cache capacity at `context` (the memory budget with the
    default `--gpu-memory-utilization`, or `max_batch`): step = max(bytes read / (bandwidth ×
    `bw_efficiency`), 2 × active params × batch / dense peak), aggregate tokens/s = batch / step. The
    line a measured throughput-vs-concurrency curve is read against. One GPU.
    """
    m, g, f, fe, kv, ctx = model, gpu, fmt, expert_fmt, kv_dtype, context
    eff = _efficiency(bw_efficiency)
    kv_limit = _kv_capacity(m, g, f, fe, kv, ctx)
    top = min(kv_limit, max_batch) if max_batch else kv_limit
    batches, b = [], 1
    while b < top:
        batches.append(b)
        b *= 2
    batches.append(top)
    pts = [_point(m, g, f, fe, kv, b, ctx, eff)[0] for b in batches]
    peak, label = inputs.peak_flops(g, f)
    flops_tok = 2 * F.param_breakdown(m).compute_active
    ceiling = peak / flops_tok
    first, last = pts[0], pts[-1]
    title = f"Decode throughput bound of {m.name} ({f.name}) on one {g.name} at {_i(ctx)} tokens of context"
    desc = (f"Aggregate tokens per second rises from {_n(first.tokens_per_s)} at one sequence to "
            f"{_n(last.tokens_per_s)} at {_i(last.batch)} sequences, where the KV cache is full.")
    ex = Example(title[0].lower() + title[1:])
    ex.formula("step = max(bytes read / (bandwidth × efficiency), batch × 2 × active params / peak)")
    ex.formula("bytes read = weights touched + batch × KV bytes per sequence; aggregate tokens/s = batch / step")
    ex.input("memory bandwidth / share reached", f"{U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s)} / {_n(eff)}",
             _glink(g) + ("" if eff == 1 else "; share: assumption"))
    ex.input(f"dense peak ({label})", U.fmt_flops(peak), _glink(g))
    ex.input("model / weight format", f"{m.name} / {f.name}", f"{_mlink(m)}, {_flink(f)}")
    ex.input("KV-cache format / context per sequence", f"{kv.name} / {_i(ctx)} tokens", f"{_flink(kv)}; {GIVEN}")
    ex.step(f"KV capacity at {_i(ctx)} tokens: {_i(kv_limit)} sequences (memory budget at the default "
            f"--gpu-memory-utilization {_n(F.DEFAULT_GPU_UTILIZATION)})")
    ex.step(f"compute ceiling: {U.fmt_flops(peak)} / {_n(flops_tok / 1e9)} GFLOP per token = "
            f"{U.fmt_rate(ceiling)}")
    rows = ["| Concurrency | Memory time | Compute time | Bound, aggregate | Bound, per sequence |",
            "| ---: | ---: | ---: | ---: | ---: |"]
    rows += [f"| {_i(p.batch)} | {U.fmt_seconds(p.memory_s)} | {U.fmt_seconds(p.compute_s)} | "
             f"{U.fmt_rate(p.tokens_per_s)} | {U.fmt_rate(p.tokens_per_s / p.batch)} |" for p in pts]
    uid = re.sub(r"[^a-z0-9]+", "-", f"bc-{m.key}-{g.key}-{f.key}-{kv.key}-{ctx}-{top}")
    ex.table(_svg(pts, title, desc, kv_limit, ceiling, uid) + "\n\n" + "\n".join(rows))
    ex.result(f"the bound rises from {U.fmt_rate(first.tokens_per_s)} at one sequence to "
              f"{U.fmt_rate(last.tokens_per_s)} at {_i(last.batch)}; "
              + ("the step turns compute-bound before the KV cache fills"
                 if any(p.compute_bound for p in pts) else
                 "every point is memory-bound, so the curve bends because KV reads grow with the batch"))
    ex.note("A bound, not a prediction: measured points sit below it, and the distance at each concurrency "
            "is the diagnosis. Decode steps only (no prefill in the step); attention FLOPs left out of the "
            "compute time. Memory budget: default utilization, 2 GiB activations, 1 GiB reserve.")
    if m.is_moe:
        ex.note("Expert bytes assume uniform, independent routing.")
    return ex.render()


# ---------------------------------------------------------------- expert parallelism: reads against all-to-all

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
    ex = Example(f"expert parallelism for {m.name} ({f.name}) over EP {ep} × {g.name}, {_i(toks)} tokens per step")
    ex.formula("read per rank = experts touched / EP × bytes per expert; experts touched = E × (1 − (1 − k/E)^tokens)")
    ex.formula("all-to-all per rank = 2 × tokens × top_k × hidden × bytes × (EP − 1) / EP / EP")
    ex.formula("layer = max(read / HBM, imbalance × expert FLOPs per rank / peak) + imbalance × all-to-all / link "
               "+ 2 × latency")
    ex.input("experts E / top-k / hidden / MoE layers",
             f"{mo.num_experts} / {mo.experts_per_token} / {_i(m.hidden_size)} / {layers}", _mlink(m))
    ex.input("bytes per routed expert", U.fmt_bytes(per_expert), f"{_mlink(m)}, {_flink(expert_fmt or f)}")
    ex.input("HBM bandwidth / dense peak" + f" ({label})", f"{U.fmt_bandwidth(hbm)} / {U.fmt_flops(peak)}", _glink(g))
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
    ex.input(f"peak per GPU ({label}) / GPUs / MFU", f"{U.fmt_flops(peak)} / {n} / {_n(mfu)}",
             f"{_glink(g)}; MFU: assumption")
    ex.input("KV bytes per token", U.fmt_bytes(F.kv_bytes_per_token(m, kv)), f"{_mlink(m)}, {_flink(kv)}")
    ex.input(bw_name, U.fmt_bandwidth(bw), bw_src)
    ex.step(f"prefill: {_n(flops / 1e12)} TFLOP / ({n} × {U.fmt_flops(peak)} × {_n(mfu)}) = {U.fmt_seconds(t_pre)}")
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
    ex = Example(f"speculative decoding on {m.name} ({f.name}), {g.name}, batch {batch}, "
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
