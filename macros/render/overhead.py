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
from .blocks import fmt_name, GIVEN, Example, _flink, _glink, _i, _mlink, _n
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
    ex = Example(f"launch overhead of a {m.name} ({fmt_name(f, fe)}) decode step on {g.name} "
                 f"at {_i(ctx)} tokens")
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
    ex.input(f"dense peak ({label})", inputs.fmt_peak(f, peak), _glink(g))
    ex.input("model / weight format", f"{m.name} / {f.name}", f"{_mlink(m)}, {_flink(f)}")
    ex.input("KV-cache format / context per sequence", f"{kv.name} / {_i(ctx)} tokens", f"{_flink(kv)}; {GIVEN}")
    ex.step(f"KV capacity at {_i(ctx)} tokens: {_i(kv_limit)} sequences (memory budget at the default "
            f"--gpu-memory-utilization {_n(F.DEFAULT_GPU_UTILIZATION)})")
    ex.step(f"compute ceiling: {inputs.fmt_peak(f, peak)} / {_n(flops_tok / 1e9)} G{inputs.op_unit(f)} per token = "
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
