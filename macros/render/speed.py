"""Speed: the decode bandwidth bound, prefill compute time, arithmetic intensity and the roofline
(formulas: :mod:`macros.formulas.speed`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import fmt_name, GIVEN, Example, _bits, _bytes_el, _flink, _glink, _i, _mlink, _n, _sci
from .registry import COUNT, TOKENS, macro

ACTIVATION_BYTES = 2  # BF16/FP16 activations: the all-reduced hidden states


def _decode(m: Model, g: Gpu, f: Format, fe: Format | None, kv: Format, n: int, batch: int, ctx: int):
    inputs.check_tp(m, n)
    wb = F.weight_bytes_breakdown(m, f, fe)
    read = F.weight_bytes_read_per_step(m, f, batch, fe)
    touched = (F.expected_experts_touched(m.moe.num_experts, m.moe.experts_per_token, batch)
               if m.is_moe else None)
    frac = F.kv_fraction_per_gpu(m, n)
    kv_seq = F.kv_bytes_per_sequence(m, ctx, kv) * frac
    if m.linear_attention is not None and m.linear_attention.kda is not None and not m.sliding_window:
        # KDA states split by TP while an MLA latent stays whole on every GPU
        kv_seq = F.hybrid_sequence_bytes_per_gpu(m, ctx, kv, n, block_size=1).total
    shard = F.tp_shard(m, n, f, fe)
    # per GPU: the even share of the bytes read plus the replicated copies (read by every GPU)
    per_gpu = read / n + shard.replicated_extra_bytes
    comm = 0.0
    if n > 1:
        if not g.allreduce_latency_s or not g.interconnect_bytes_per_s_per_direction:
            raise MacroInputError(f"{g.name} has no all-reduce latency or link bandwidth in gpus.yaml, "
                                  f"so a TP {n} decode bound cannot include communication")
        comm = F.tp_decode_allreduce_time(m, batch, ACTIVATION_BYTES, n, g.allreduce_latency_s,
                                          g.interconnect_bytes_per_s_per_direction)
    bound = F.decode_bound(per_gpu, kv_seq, batch, g.memory_bandwidth_bytes_per_s, comm)
    return bound, wb, touched, kv_seq, read


@macro("block", example='decode_speed("llama-3.1-8b", "h100-sxm", batch=16, context="4K")')
def decode_speed(model: Model, gpu: Gpu, fmt: Format = "bf16", n_gpus: int = 1, batch: int = 1,
                 context: int = 8192, kv_dtype: Format = "bf16", expert_fmt: Format | None = None) -> str:
    """Worked example: memory-bandwidth bound of decode (tokens/s per sequence and aggregate).

    (Weights read per GPU + batch × KV per sequence per GPU) / bandwidth → step time, tokens/s per
    sequence and aggregate. For MoE, counts the experts a batch is expected to touch,
    `E × (1 − (1 − k/E)^batch)`. With `n_gpus > 1` the step adds the TP all-reduces:
    `layers × 2 × (latency + 2(p−1)/p × batch × hidden × 2 bytes / link per direction)`, from the GPU's
    `allreduce_latency_s` and `interconnect_bytes_per_s_per_direction` (error if either is missing).
    """
    m, g, f, kv, fe, n, ctx = model, gpu, fmt, kv_dtype, expert_fmt, n_gpus, context
    bound, wb, touched, kv_seq, read = _decode(m, g, f, fe, kv, n, batch, ctx)
    ex = Example(f"decode bound of {m.name} ({fmt_name(f, fe)}) on {n} × {g.name}, batch {batch} at {_i(ctx)} tokens")
    ex.formula("step time = (weight bytes read per GPU + batch × KV bytes per sequence per GPU) / bandwidth"
               + (" + all-reduce time" if n > 1 else ""))
    ex.formula("tokens/s per sequence = 1 / step time; aggregate = batch / step time")
    ex.input("memory bandwidth per GPU", U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s), _glink(g))
    ex.input("weights", U.fmt_gb(wb.total), f"{_mlink(m)}, {_flink(f)}")
    ex.input(f"KV dtype ({kv.key})", _bytes_el(kv.bits_per_weight / 8) + " bytes", _flink(kv))
    ex.input("GPUs (TP) / batch / context", f"{n} / {batch} / {_i(ctx)}", GIVEN)
    if m.is_moe:
        mo = m.moe
        ex.formula("experts read per MoE layer = E × (1 − (1 − k/E)^batch)")
        ex.input("experts E / top-k", f"{mo.num_experts} / {mo.experts_per_token}", _mlink(m))
        ex.step(f"experts touched per layer at batch {batch}: {mo.num_experts} × (1 − (1 − {mo.experts_per_token}/"
                f"{mo.num_experts})^{batch}) = {_n(touched)}")
        ex.step(f"weight bytes read: non-expert {U.fmt_gb(wb.non_expert)} + touched experts = {U.fmt_gb(read)}")
    elif read < wb.total:
        ex.step(f"weight bytes read: {U.fmt_gb(wb.total)} less the untied input-embedding table, of which a step "
                f"reads only {_i(min(batch, m.vocab_size))} row(s) = {U.fmt_gb(read)}")
    if n > 1:
        extra = bound.weight_bytes_read - read / n
        ex.step(f"per GPU: {U.fmt_gb(read)} / {n}" + (f" + {U.fmt_bytes(extra)} replicated" if extra else "")
                + f" = {U.fmt_gb(bound.weight_bytes_read)}")
    ex.step(f"KV read per sequence per GPU at {_i(ctx)} tokens: {U.fmt_bytes(kv_seq)}; × {batch} = "
            f"{U.fmt_bytes(bound.kv_bytes_read)}")
    ex.step(f"memory time: ({U.fmt_gb(bound.weight_bytes_read)} + {U.fmt_gb(bound.kv_bytes_read)}) / "
            f"{U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s)} = {U.fmt_seconds(bound.memory_time_s)}")
    if n > 1:
        lat, bw = g.allreduce_latency_s, g.interconnect_bytes_per_s_per_direction
        buf = batch * m.hidden_size * ACTIVATION_BYTES
        ex.formula("all-reduce time per step = layers × 2 × (latency + 2(p − 1)/p × batch × hidden_size × "
                   "2 bytes / link bandwidth per direction)")
        ex.input("all-reduce latency per call / link per direction",
                 f"{U.fmt_seconds(lat)} / {U.fmt_bandwidth(bw)}", _glink(g))
        ex.step(f"all-reduces: {m.num_hidden_layers} × 2 × ({U.fmt_seconds(lat)} + 2 × ({n} − 1)/{n} × "
                f"{_i(buf)} bytes / {U.fmt_bandwidth(bw)}) = {U.fmt_seconds(bound.comm_time_s)} "
                f"({U.fmt_pct(bound.comm_time_s / bound.step_time_s)} of the step)")
    ex.step(f"step: {U.fmt_seconds(bound.memory_time_s)}"
            + (f" + {U.fmt_seconds(bound.comm_time_s)}" if n > 1 else "")
            + f" = {U.fmt_seconds(bound.step_time_s)}")
    ex.result(f"at most {U.fmt_rate(bound.tokens_per_s_per_sequence)} per sequence, "
              f"{U.fmt_rate(bound.tokens_per_s_aggregate)} aggregate")
    ex.note("An upper bound: real kernels reach a fraction of peak bandwidth, and scheduling and sampling "
            "add time" + ("; the all-reduces are assumed not to overlap the memory reads." if n > 1 else ".")
            + " Weights are read once per step for the whole batch; the input "
            "embedding is a lookup, so only its rows for this step's tokens are read (a tied table is read "
            "in full as the output projection).")
    if m.is_moe:
        ex.note("Expert coverage assumes uniform, independent routing.")
    return ex.render()


@macro("block", example='prefill_time("llama-3.1-70b", "h100-sxm", tokens="32K", fmt="fp8", n_gpus=4)')
def prefill_time(model: Model, gpu: Gpu, tokens: int = 8192, fmt: Format = "bf16", n_gpus: int = 1,
                 mfu: float = 0.5, attention: bool = True) -> str:
    """Worked example: compute-bound prefill time, 2 × active params × tokens (+ attention) / (peak × MFU).

    `(2 × (active_params − lm_head) × tokens + 2 × lm_head × 1 + attention FLOPs) / (GPUs × dense peak ×
    MFU)`: the LM head runs only at the sampled position (vLLM V1 computes logits at `logits_indices`).
    `fmt="fp8"` uses the FP8 peak (error on GPUs without FP8), `int8` the INT8 rate, anything else BF16.
    """
    m, g, f, n, toks = model, gpu, fmt, n_gpus, tokens
    peak, label = inputs.peak_flops(g, f)
    b = F.param_breakdown(m)
    active = b.compute_active
    head = b.lm_head or b.embedding
    sampled = min(1, toks)
    dense = F.prefill_matmul_flops(m, toks, sampled)
    attn = F.prefill_attention_flops(m, toks) if attention else 0.0
    t = F.prefill_time(dense + attn, peak * n, mfu)
    ex = Example(f"prefill of {_i(toks)} tokens on {m.name}, {n} × {g.name}")
    ex.formula("time = (2 × (active_params − lm_head) × tokens + 2 × lm_head × sampled positions "
               "+ attention FLOPs) / (GPUs × peak × MFU)")
    ex.input("active parameters in matmuls (computed)", f"{_i(active)} ({U.fmt_params(active)})", _mlink(m))
    ex.input("of which the LM head" + (" (tied to the embedding)" if not b.lm_head else ""),
             f"{_i(head)} ({U.fmt_params(head)})", _mlink(m))
    ex.input(f"peak per GPU ({label})", inputs.fmt_peak(f, peak), _glink(g))
    ex.input("tokens / GPUs", f"{_i(toks)} / {n}", GIVEN)
    ex.input("MFU", _bits(mfu), "assumption")
    ex.step(f"dense: 2 × {_i(active - head)} × {_i(toks)} + 2 × {_i(head)} × {sampled} = {_sci(dense)} FLOPs")
    if attention:
        ex.step(f"attention scores (causal): {_sci(attn)} FLOPs")
    ex.step(f"time: {_sci(dense + attn)} / ({n} × {inputs.fmt_peak(f, peak)} × {_bits(mfu)}) = {U.fmt_seconds(t)}")
    ex.result(f"about {U.fmt_seconds(t)} of compute (time to first token, ignoring queueing)")
    ex.note("Peak is the dense tensor rate, not the with-sparsity figure. The input embedding is a lookup, "
            "so its parameters are not counted as FLOPs. The LM head runs only at the position that is "
            "sampled (vLLM's V1 model runner computes logits at logits_indices, one per request), not at "
            "every prompt token; prompt log-probabilities would need it at every position.")
    return ex.render()


@macro("block", example='arithmetic_intensity("h100-sxm", batch=32)')
def arithmetic_intensity(gpu: Gpu, batch: int = 1, fmt: Format = "bf16") -> str:
    """Worked example: decode GEMM intensity ≈ 2 × batch / bytes per weight against the GPU's ridge point.

    Against the ridge point `peak / bandwidth`, and the batch at which the weight GEMMs turn
    compute-bound.
    """
    g, f = gpu, fmt
    peak, label = inputs.peak_flops(g, f)
    ridge = F.ridge_point(peak, g.memory_bandwidth_bytes_per_s)
    bpw = f.bits_per_weight / 8
    ai = F.decode_arithmetic_intensity(batch, bpw)
    needed = F.batch_to_reach_ridge(ridge, bpw)
    op, rate = inputs.op_unit(f), inputs.fmt_peak(f, peak)
    ex = Example(f"arithmetic intensity at batch {batch} ({f.name}) on {g.name}")
    ex.formula(f"decode GEMM intensity ≈ 2 × batch / bytes_per_weight {op}/byte (weight reads dominate)")
    ex.formula(f"ridge point = peak {op}/s / memory bandwidth")
    ex.input(f"peak ({label})", rate, _glink(g))
    ex.input("memory bandwidth", U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s), _glink(g))
    ex.input(f"bytes per weight ({f.key})", _bytes_el(bpw), _flink(f))
    ex.input("batch", str(batch), GIVEN)
    ex.step(f"intensity: 2 × {batch} / {_bytes_el(bpw)} = {_n(ai)} {op}/byte")
    ex.step(f"ridge: {rate} / {U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s)} = {_n(ridge)} {op}/byte")
    verdict = "memory-bound" if ai < ridge else "compute-bound"
    ex.result(f"{verdict}: {_n(ai)} vs a ridge of {_n(ridge)} {op}/byte")
    ex.result(f"the batch would need to reach about {_i(needed)} before the weight GEMMs become compute-bound")
    ex.note("KV reads add bytes without adding weight FLOPs, so long contexts lower decode intensity further.")
    return ex.render()


#: Formats whose matmuls run with activations in the same dtype as the weights (W16A16, W8A8).


#: Formats whose matmuls run with activations in the same dtype as the weights (W16A16, W8A8).
_SAME_DTYPE_GEMM = ("bf16", "fp8", "int8")


@macro("block", example='gemm_intensity("h100-sxm", m=4096, k=8192, n=8192)',
       args={"m": TOKENS, "k": COUNT, "n": COUNT})
def gemm_intensity(gpu: Gpu, m: int, k: int, n: int, fmt: Format = "bf16") -> str:
    """Worked example: roofline of one (m × k) @ (k × n) GEMM, 2mkn / bytes moved, against the ridge point.

    `I = 2mkn / (a(mk + mn) + w·kn)` FLOP/byte against the ridge point, the time bound
    `max(FLOPs / peak, bytes / bandwidth)`, and the `m` at which the shape turns compute-bound. `m` is the
    tokens in the step (a prefill chunk, or the decode batch), `k` and `n` the layer's widths. Byte
    assumption: each input read once and the output written once, the output in the activation dtype.
    `bf16`: a = w = 2 bytes; `fp8` / `int8`: W8A8, a = w = 1 byte, at the FP8 / INT8 rate; a weight-only
    format (`int4-g128`, `mxfp4`, ...): w from the format, BF16 activations and output, BF16 rate. `fp32`
    is refused (no tensor rate in the catalog).
    """
    g, f = gpu, fmt
    if f.key == "fp32":
        raise MacroInputError("fmt 'fp32' has no tensor-core rate in gpus.yaml; use one of "
                              + ", ".join(_SAME_DTYPE_GEMM) + " or a weight-only format such as int4-g128")
    peak, label = inputs.peak_flops(g, f)
    bw = g.memory_bandwidth_bytes_per_s
    w = f.bits_per_weight / 8
    if f.key in _SAME_DTYPE_GEMM:
        act, a = f, w
    else:  # weight-only: dequantized to BF16, activations and output in BF16
        act = inputs.fmt("bf16")
        a = act.bits_per_weight / 8
    flops = 2 * m * k * n
    moved = a * (m * k + m * n) + w * k * n
    ai = F.gemm_arithmetic_intensity(m, k, n, a, w)
    ridge = F.ridge_point(peak, bw)
    t = F.roofline_time(flops, moved, peak, bw)
    m_star = F.gemm_m_to_reach_ridge(ridge, k, n, a, w)
    op, rate = inputs.op_unit(f), inputs.fmt_peak(f, peak)
    ex = Example(f"roofline of a {_i(m)} × {_i(k)} by {_i(k)} × {_i(n)} GEMM ({f.name}) on {g.name}")
    ex.formula(f"I = 2 × m × k × n / (a × (m × k + m × n) + w × k × n) {op}/byte "
               "(a: activation and output bytes, w: weight bytes per element)")
    ex.formula(f"ridge = peak / bandwidth; time ≥ max({op}s / peak, bytes / bandwidth)")
    ex.input("m (tokens in the step) / k / n", f"{_i(m)} / {_i(k)} / {_i(n)}", GIVEN)
    ex.input(f"activation and output bytes a ({act.key})", _bytes_el(a), _flink(act))
    ex.input(f"weight bytes w ({f.key})", _bytes_el(w), _flink(f))
    ex.input(f"peak ({label})", rate, _glink(g))
    ex.input("memory bandwidth", U.fmt_bandwidth(bw), _glink(g))
    ex.step(f"{op}s: 2 × {_i(m)} × {_i(k)} × {_i(n)} = {_sci(flops)}")
    ex.step(f"bytes: {_bytes_el(a)} × ({_i(m)} × {_i(k)} + {_i(m)} × {_i(n)}) + {_bytes_el(w)} × {_i(k)} × "
            f"{_i(n)} = {_i(moved)} bytes = {U.fmt_bytes(moved)}")
    ex.step(f"I = {_sci(flops)} / {_i(moved)} = {_n(ai)} {op}/byte")
    ex.step(f"ridge: {rate} / {U.fmt_bandwidth(bw)} = {_n(ridge)} {op}/byte")
    ex.step(f"time: max(compute {U.fmt_seconds(flops / peak)}, memory {U.fmt_seconds(moved / bw)}) "
            f"= {U.fmt_seconds(t)}")
    if ai < ridge:
        ex.result(f"memory-bound: {_n(ai)} vs a ridge of {_n(ridge)} {op}/byte; at most I × bandwidth = "
                  f"{inputs.fmt_peak(f, flops / t)} of the {rate} peak, at least {U.fmt_seconds(t)} per GEMM")
    else:
        ex.result(f"compute-bound: {_n(ai)} vs a ridge of {_n(ridge)} {op}/byte; it can run at the "
                  f"{rate} roof, at least {U.fmt_seconds(t)} per GEMM")
    if m_star is None:
        ex.result(f"no m makes this {_i(k)} × {_i(n)} shape compute-bound on {g.name}: its intensity "
                  f"stays below the ridge however many tokens share the weight read")
    else:
        ex.result(f"this shape reaches the ridge at m ≈ {_i(m_star)} tokens per step")
    ex.note("Best case: each input read once and the output written once (perfect on-chip reuse); "
            "real kernels move more bytes and reach a fraction of both peaks.")
    if f.key == "bf16":
        ex.note("Activations, weights and output all in BF16 (2 bytes).")
    elif f.key in _SAME_DTYPE_GEMM:
        ex.note(f"W8A8: activations, weights and output all at 1 byte ({f.name}); a kernel that writes a "
                "16-bit output moves m × n more bytes.")
    else:
        ex.note(f"Weight-only {f.name}: weights at {_bytes_el(w)} bytes per element (scales included), "
                "activations and output in BF16, arithmetic at the BF16 rate after dequantization.")
    ex.note("Peak is the dense tensor rate, not the with-sparsity figure.")
    return ex.render()


@macro("inline", example='decode_tps("llama-3.1-8b", "h100-sxm", context=1)')
def decode_tps(model: Model, gpu: Gpu, fmt: Format = "bf16", n_gpus: int = 1, batch: int = 1, context: int = 8192,
               kv_dtype: Format = "bf16", expert_fmt: Format | None = None, aggregate: bool = False) -> str:
    """Decode bound in tokens/s per sequence (or aggregate), e.g. '41.0 tokens/s'."""
    bound = _decode(model, gpu, fmt, expert_fmt, kv_dtype, n_gpus, batch, context)[0]
    return U.fmt_rate(bound.tokens_per_s_aggregate if aggregate else bound.tokens_per_s_per_sequence)


@macro("inline", example='gpu_flops("h100-sxm", "fp8")')
def gpu_flops(gpu: Gpu, fmt: Format = "bf16") -> str:
    """Dense tensor peak for fmt's compute precision, e.g. '989.5 TFLOPS' (INT8: TOPS)."""
    return inputs.fmt_peak(fmt, inputs.peak_flops(gpu, fmt)[0])


@macro("inline", example='ridge_point("h100-sxm")')
def ridge_point(gpu: Gpu, fmt: Format = "bf16") -> str:
    """Ridge point, e.g. '295.4 FLOP/byte' (INT8: op/byte)."""
    peak = inputs.peak_flops(gpu, fmt)[0]
    return f"{_n(F.ridge_point(peak, gpu.memory_bandwidth_bytes_per_s))} {inputs.op_unit(fmt)}/byte"
