"""Quantization: integer quantization worked examples, float-format limits, tensor-core rate ratios,
the decode speed-up bound, the bit-width fit and SmoothQuant (formulas: :mod:`macros.formulas.quant`)."""

from __future__ import annotations

import math

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _bits, _flink, _glink, _i, _mlink, _n
from .registry import Arg, macro

_MATRIX = Arg(lambda _name, v: [list(r) for r in v], "matrix", "list of rows of numbers")
_VECTOR = Arg(lambda _name, v: list(v), "vector", "list of numbers")


def _signed_gb(n_bytes: float) -> str:
    """A byte figure that may be negative: 'short by 1.61 GB (1.50 GiB)' instead of a minus sign."""
    return U.fmt_gb(n_bytes) if n_bytes >= 0 else f"short by {U.fmt_gb(-n_bytes)}"


def _g(x: float) -> str:
    """A small real value at four significant digits, without exponent noise: 0.01429, -3, 1.43."""
    s = f"{x:.4g}"
    return "0" if s in ("0", "-0") else s


def _row(vals) -> str:
    return "[" + ", ".join(_g(v) for v in vals) + "]"


def _ints(vals) -> str:
    return "[" + ", ".join(str(v) for v in vals) + "]"


def _db(x: float) -> str:
    # Above 120 dB the only error left is binary floating-point rounding of the reconstruction.
    return "exact" if x > 120 else f"{x:.1f} dB"


def _err(x: float, scale: float) -> str:
    return "0" if x < 1e-9 * scale else _g(x)


@macro("block", example='quant_example([[0.12, -0.05, 0.03, 0.07], [2.0, -0.6, 0.2, 0.1]], bits=4)',
       args={"rows": _MATRIX, "bits": Arg(inputs.count, "integer bits", "2 to 16")})
def quant_example(rows: list, bits: int = 8) -> str:
    """Worked example: a small weight matrix quantized four ways (symmetric / asymmetric × per tensor / per channel).

    Rows are output channels. For each scheme: scale(s), zero point(s), the integers, the
    reconstruction, the largest absolute error and the SQNR of each row. Conventions as in
    :mod:`macros.formulas.quant` (narrow-range signed symmetric; unsigned affine with the range
    widened to include 0; round half to even).
    """
    schemes = [(True, False, "symmetric, per tensor"), (True, True, "symmetric, per channel"),
               (False, False, "asymmetric, per tensor"), (False, True, "asymmetric, per channel")]
    results = [(label, F.quantize_rows(rows, bits, sym, pc)) for sym, pc, label in schemes]
    ex = Example(f"quantizing a {len(rows)} × {len(rows[0])} matrix to INT{bits}, four ways")
    qmax_s, qmax_a = 2 ** (bits - 1) - 1, 2 ** bits - 1
    ex.formula(f"symmetric: scale = max|x| / {qmax_s}, zero point 0, q = clamp(round(x / scale), −{qmax_s}, {qmax_s})")
    ex.formula(f"asymmetric: scale = (max − min) / {qmax_a}, zero point z = round(−min / scale), "
               f"q = clamp(round(x / scale) + z, 0, {qmax_a})")
    ex.formula("reconstruction x̂ = scale × (q − z); SQNR = 10 log10(Σx² / Σ(x − x̂)²)")
    for i, r in enumerate(rows):
        ex.input(f"row {i} (output channel {i})", _row(r), GIVEN)
    ex.input("bits", str(bits), GIVEN)
    table = ["| Scheme | Row | Scale | Zero point | Integers | Reconstruction | Max abs error | SQNR |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for label, qz in results:
        for i, r in enumerate(qz.rows):
            table.append(f"| {label if i == 0 else ''} | {i} | {_g(r.scale)} | {r.zero_point} | {_ints(r.q)} | "
                         f"{_row(r.dequantized)} | {_err(r.max_abs_error, r.scale)} | {_db(qz.row_sqnr_db(i))} |")
    ex.table("\n".join(table))
    best = max(results, key=lambda t: t[1].sqnr_db)
    worst = min(results, key=lambda t: t[1].sqnr_db)
    ex.result("whole-matrix SQNR: " + "; ".join(f"{label} {_db(q.sqnr_db)}" for label, q in results))
    ex.result(f"best here: {best[0]}; worst: {worst[0]}")
    ex.note("Symmetric leaves the code −2^(b−1) unused; asymmetric widens the range to include 0 so zero is "
            "exact. Rounding is half-to-even, as torch.round does.")
    return ex.render()


def _pow2(x: float) -> str:

    e = math.log2(x)
    if float(e).is_integer():
        return f"2^{int(e)} ≈ {x:.3g}" if abs(e) > 10 else f"2^{int(e)} = {_g(x)}"
    if x < 1e6:
        return f"{x:.5g}"
    exp = int(math.floor(math.log10(x)))
    return f"{x / 10 ** exp:.3f} × 10^{exp}"


@macro("block", example="float_format_table()")
def float_format_table() -> str:
    """Table: bits, exponent / mantissa widths, bias, largest finite, smallest normal and subnormal,
    epsilon, infinities and NaN encodings of FP32, FP16, BF16, FP8 E5M2, FP8 E4M3 and FP4 E2M1, computed
    from the field widths (:func:`macros.formulas.float_limits`)."""
    rows = ["| Format | Bits (S/E/M) | Bias | Largest finite | Smallest normal | Smallest subnormal | "
            "Epsilon | Infinity | NaN encodings | Spec |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for f in F.FLOAT_FORMATS:
        lim = F.float_limits(f)
        rows.append(f"| {f.name} | {f.bits} (1/{f.exponent_bits}/{f.mantissa_bits}) | {lim.bias} | "
                    f"{_pow2(lim.max_finite)} | {_pow2(lim.min_normal)} | {_pow2(lim.min_subnormal)} | "
                    f"{_pow2(lim.epsilon)} | {'yes' if lim.has_infinity else 'no'} | {lim.nan_encodings} | "
                    f"{f.source} |")
    ex = Example("number formats from their exponent and mantissa widths")
    ex.formula("bias B = 2^(e−1) − 1; smallest normal = 2^(1−B); smallest subnormal = 2^(1−B−m); epsilon = 2^−m")
    ex.formula("largest finite: (2 − 2^−m) × 2^(2^e − 2 − B) if the top exponent is reserved (IEEE); "
               "(2 − 2^(1−m)) × 2^(2^e − 1 − B) if only S.1111.111 is NaN (E4M3); "
               "(2 − 2^−m) × 2^(2^e − 1 − B) if nothing is reserved (E2M1)")
    ex.table("\n".join(rows))
    e4 = F.float_limits(F.float_format("fp8-e4m3"))
    e5 = F.float_limits(F.float_format("fp8-e5m2"))
    ex.result(f"E4M3 trades range for precision: largest {_n(e4.max_finite)} and epsilon {_g(e4.epsilon)}, "
              f"against E5M2's {_n(e5.max_finite)} and {_g(e5.epsilon)}")
    ex.note("NaN encodings count both signs. E4M3 has no infinity: overflow must saturate or become NaN, which "
            "is why FP8 kernels clamp to the largest finite value after scaling.")
    return ex.render()


@macro("block", example='tensor_rate_table(["a100-80gb-sxm", "h100-sxm", "l4"])')
def tensor_rate_table(gpus: list | None = None) -> str:
    """Table: dense BF16/FP16, FP8 and INT8 tensor rates per GPU and their ratio to BF16 (no sparsity).

    The compute-bound ceiling on what W8A8 can gain; weight-only formats (W4A16) multiply at the BF16
    rate, ratio 1.
    """
    gs = gpus or list(inputs.cat().gpus.values())
    rows = ["| GPU | BF16 / FP16 dense | FP8 dense | INT8 dense | FP8 ÷ BF16 | INT8 ÷ BF16 | W4A16 ÷ BF16 |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for g in gs:
        bf = g.bf16_dense_flops
        fp8 = U.fmt_flops(g.fp8_dense_flops) if g.fp8_dense_flops else "none"
        i8 = U.fmt_ops(g.int8_dense_ops) if g.int8_dense_ops else "none"
        r8 = f"{_n(round(g.fp8_dense_flops / bf, 2))}×" if g.fp8_dense_flops else "n/a"
        ri = f"{_n(round(g.int8_dense_ops / bf, 2))}×" if g.int8_dense_ops else "n/a"
        rows.append(f"| {_glink(g)} | {U.fmt_flops(bf)} | {fp8} | {i8} | {r8} | {ri} | 1× |")
    ex = Example("dense tensor-core rates by precision, per GPU")
    ex.formula("compute-bound speed-up ≤ (rate at the low precision) / (BF16 rate)")
    ex.table("\n".join(rows))
    ratios = [r / g.bf16_dense_flops for g in gs for r in (g.fp8_dense_flops, g.int8_dense_ops) if r]
    no_fp8 = [g.name for g in gs if not g.fp8_dense_flops]
    if ratios:
        ex.result(f"8-bit matmuls run at most {_n(round(max(ratios), 2))}× the BF16 rate on these GPUs; "
                  "weight-only formats gain nothing when compute-bound")
    else:
        ex.result("no 8-bit tensor rate in the catalog for these GPUs")
    if no_fp8:
        ex.result("no FP8 tensor cores: " + ", ".join(no_fp8))
    ex.note("Dense rates from the catalog (datasheet with-sparsity figures halved where only those are printed). "
            "GeForce rows are FP32-accumulate rates. A ratio is a ceiling: quantize/dequantize work and "
            "non-GEMM time (attention, norms, sampling) are not sped up.")
    return ex.render()


_EMBED_16 = ("bf16", "fp32")


@macro("block",
       example='quant_decode_speedup("llama-3.1-8b", "l4", ["bf16", "fp8", "int4-g128"], batch=1, context="4K")')
def quant_decode_speedup(model: Model, gpu: Gpu, fmts: list, batch: int = 1, context: int = 4096,
                         kv_dtype: Format = "bf16") -> str:
    """Worked example: decode speed-up bound from fewer weight bytes, per format, against BF16.

    Bandwidth-bound step time = (weight bytes read + batch × KV bytes per sequence) / bandwidth.
    Quantized formats keep embedding and lm_head in BF16 (the usual GPTQ/AWQ/FP8 layout). Dense
    models only.
    """
    m, g = model, gpu
    bf16 = inputs.fmt("bf16")
    kv_seq = F.kv_bytes_per_sequence(m, context, kv_dtype)
    kv = kv_seq * batch
    base = F.dense_weight_bytes_read(m, bf16, bf16, batch)
    bw = g.memory_bandwidth_bytes_per_s
    ex = Example(f"decode speed-up bound of {m.name} on {g.name}, batch {batch} at {_i(context)} tokens")
    ex.formula("step time = (weight bytes read + batch × KV bytes per sequence) / bandwidth")
    ex.formula("speed-up bound = (W_bf16 + KV) / (W_quant + KV)")
    ex.input("memory bandwidth", U.fmt_bandwidth(bw), _glink(g))
    ex.input("model", m.name, _mlink(m))
    ex.input(f"KV per sequence ({kv_dtype.key})", U.fmt_bytes(kv_seq), "computed from the model config")
    ex.input("batch / context", f"{batch} / {_i(context)}", GIVEN)
    table = ["| Weights | Bits per weight | Weight bytes read per step | Step time bound | Tokens/s per sequence "
             "| Speed-up vs BF16 |", "| --- | --- | --- | --- | --- | --- |"]
    for f in fmts:
        emb = f if f.key in _EMBED_16 else bf16
        w = F.dense_weight_bytes_read(m, f, emb, batch)
        step = (w + kv) / bw
        table.append(f"| {_flink(f)} | {_bits(f.bits_per_weight)} | {U.fmt_gb(w)} | {U.fmt_seconds(step)} | "
                     f"{U.fmt_rate(1 / step)} | {_n(round(F.decode_speedup_bound(base, w, kv), 2))}× |")
    ex.step(f"KV read per step: {batch} × {U.fmt_bytes(kv_seq)} = {U.fmt_bytes(kv)}")
    ex.table("\n".join(table))
    ex.result(f"the bound approaches the weight-byte ratio only while KV ({U.fmt_bytes(kv)} per step here) is "
              "small next to the weights")
    ex.note("An upper bound for bandwidth-bound decode: kernels reach a fraction of peak bandwidth, and "
            "dequantization work is assumed hidden under memory time, which holds at small batch only.")
    return ex.render()


@macro("block",
       example='bitwidth_fit("mistral-7b-v0.3", ["bf16", "fp8", "int4-g128"], memory_gib=15, context="8K", batch=4)',
       args={"memory_gib": Arg(inputs.number, "card memory in GiB", "> 0")})
def bitwidth_fit(model: Model, fmts: list, memory_gib: float, context: int = 8192, batch: int = 1,
                 kv_dtype: Format = "bf16", gpu_util: float = F.DEFAULT_GPU_UTILIZATION,
                 activation_gib: float = 1.0, reserve_gib: float = 0.5) -> str:
    """Worked example: which weight formats leave room for `batch` sequences of `context` tokens on one card.

    Budget = memory × gpu_util − weights − activations − reserve (as vLLM sizes its cache); KV needed =
    batch × KV bytes per sequence. Quantized formats keep embedding and lm_head in BF16. The widest
    format that fits is marked.
    """
    m = model
    mem = memory_gib * U.GiB
    kv_seq = F.kv_bytes_per_sequence(m, context, kv_dtype)
    need = kv_seq * batch
    bf16 = inputs.fmt("bf16")
    ex = Example(f"{m.name} on a card with {_n(memory_gib)} GiB, {batch} × {_i(context)} tokens "
                       f"of {kv_dtype.key} KV")
    ex.formula("KV budget = memory × gpu_util − weights − activations − reserve")
    ex.formula("KV needed = batch × 2 × layers × kv_heads × head_dim × bytes × context")
    ex.input("card memory (as the driver reports it)", f"{_n(memory_gib)} GiB", GIVEN)
    ex.input("model", m.name, _mlink(m))
    ex.input("`--gpu-memory-utilization`", _bits(gpu_util), "assumption (vLLM default 0.9)")
    ex.input("activations / runtime reserve", f"{_bits(activation_gib)} GiB / {_bits(reserve_gib)} GiB", "assumption")
    ex.input(f"KV per sequence ({kv_dtype.key})", U.fmt_bytes(kv_seq),
             f"{m.num_hidden_layers} layers × {m.num_key_value_heads} KV heads × {m.head_dim} head_dim")
    ex.step(f"KV needed: {batch} × {U.fmt_bytes(kv_seq)} = {U.fmt_bytes(need)}")
    table = ["| Weights | Bits per weight | Weight bytes | KV budget left | Headroom after KV | Fits? |",
             "| --- | --- | --- | --- | --- | --- |"]
    chosen = None
    for f in sorted(fmts, key=lambda f: -f.bits_per_weight):
        emb = f if f.key in _EMBED_16 else bf16
        w = F.weight_bytes(m, f, None, emb)
        r = F.fit(mem, w, need, gpu_util, activation_gib * U.GiB, reserve_gib * U.GiB)
        if r.fits and chosen is None:
            chosen = f
        mark = ("**yes, widest that fits**" if chosen is f else "yes") if r.fits else "no"
        table.append(f"| {_flink(f)} | {_bits(f.bits_per_weight)} | {U.fmt_gb(w)} | {_signed_gb(r.kv_budget)} | "
                     f"{_signed_gb(r.headroom)} | {mark} |")
    ex.table("\n".join(table))
    if chosen is None:
        ex.result("no listed format fits: shorten the context, lower the concurrency or quantize the KV cache")
    else:
        ex.result(f"widest format that fits: {_flink(chosen)} ({_bits(chosen.bits_per_weight)} bits per weight)")
    ex.note("Embedding and lm_head stay in BF16 for quantized formats. Allowances are illustrative: vLLM "
            "measures the activation peak with a profiling pass at start-up.")
    return ex.render()


@macro("block", example='smoothquant_example([40.0, 2.0, 1.0], [0.5, 0.8, 1.2], alpha=0.5)',
       args={"act_absmax": _VECTOR, "weight_absmax": _VECTOR, "alpha": Arg(
           lambda n, v: inputs.number(n, v, positive=False), "migration strength", "0 to 1")})
def smoothquant_example(act_absmax: list, weight_absmax: list, alpha: float = 0.5) -> str:
    """Worked example: SmoothQuant smoothing factors for a few input channels, ranges before and after.

    `s_j = max|X_j|^α / max|W_j|^(1−α)`; activations divided by `s_j`, weight rows multiplied by it.
    """
    try:
        sm = F.smoothquant(act_absmax, weight_absmax, alpha)
    except ValueError as exc:
        raise MacroInputError(f"smoothquant_example: {exc}") from None
    ex = Example(f"SmoothQuant on {len(sm.factors)} channels, α = {_g(alpha)}")
    ex.formula("s_j = max|X_j|^α / max|W_j|^(1−α); X̂_j = X_j / s_j; Ŵ_j = s_j × W_j (product unchanged)")
    ex.input("activation max per input channel, max\\|X_j\\|", _row(sm.act_absmax), "given (calibration)")
    ex.input("weight max per input channel, max\\|W_j\\|", _row(sm.weight_absmax), "given")
    ex.input("migration strength α", _g(alpha), GIVEN)
    table = ["| Channel j | max\\|X_j\\| | max\\|W_j\\| | s_j | max\\|X̂_j\\| after | max\\|Ŵ_j\\| after |",
             "| --- | --- | --- | --- | --- | --- |"]
    for j in range(len(sm.factors)):
        table.append(f"| {j} | {_g(sm.act_absmax[j])} | {_g(sm.weight_absmax[j])} | {_g(sm.factors[j])} | "
                     f"{_g(sm.act_after[j])} | {_g(sm.weight_after[j])} |")
    ex.table("\n".join(table))
    sp = F.Smoothing.spread
    ex.result(f"activation channel spread (largest ÷ smallest max): {_g(sp(sm.act_absmax))} before, "
              f"{_g(sp(sm.act_after))} after")
    ex.result(f"weight channel spread: {_g(sp(sm.weight_absmax))} before, {_g(sp(sm.weight_after))} after")
    ex.note("A per-tensor or per-token activation scale must cover the largest channel, so the activation spread is "
            "what costs the small channels their resolution. The weights take on the spread that leaves the "
            "activations; they start flat, and α sets how much they absorb.")
    return ex.render()


_LIMIT_FIELDS = ("max_finite", "min_normal", "min_subnormal", "epsilon", "bias", "bits", "binades")


@macro("inline", example='float_limit("fp8-e4m3", "max_finite")')
def float_limit(key: str, field: str) -> str:
    """One computed limit of a float format, e.g. float_limit('fp8-e4m3', 'max_finite') -> '448'.

    Fields: `max_finite`, `min_normal`, `min_subnormal`, `epsilon` (shown as a power of two where
    exact), `bias`, `bits`. Keys: `fp32`, `fp16`, `bf16`, `fp8-e5m2`, `fp8-e4m3`, `fp4-e2m1`.
    """
    f = F.float_format(key)
    if field not in _LIMIT_FIELDS:
        raise MacroInputError(f"float_limit: unknown field {field!r}; valid fields: {', '.join(_LIMIT_FIELDS)}")
    if field == "bits":
        return str(f.bits)
    lim = F.float_limits(f)
    if field == "binades":
        return _g(lim.dynamic_range_binades)
    v = getattr(lim, field)
    if field == "bias":
        return str(v)
    return _n(v) if v >= 1 and float(v).is_integer() and v < 1e6 else _pow2(v)


@macro("block", example='quant_sqnr_table([0.8, -0.3, 0.05, 1.9, -1.1, 0.4, -0.02, 0.6], bits=[8, 6, 4, 3])',
       args={"values": _VECTOR, "bits": Arg(lambda n, v: [inputs.count(n, b) for b in v], "bit-widths", "list")})
def quant_sqnr_table(values: list, bits: list) -> str:
    """Worked example: round-to-nearest error of one vector at several bit-widths (symmetric, one scale).

    Largest absolute error and SQNR per bit-width, showing about 6 dB per bit and where the
    error of plain post-training rounding becomes large.
    """
    ex = Example(f"round-to-nearest error of {len(values)} values at {len(bits)} bit-widths")
    ex.formula("scale = max|x| / (2^(b−1) − 1); q = round(x / scale); SQNR = 10 log10(Σx² / Σ(x − x̂)²)")
    ex.input("values", _row(values), GIVEN)
    rows = ["| Bits | Scale | Integers | Max abs error | SQNR |", "| --- | --- | --- | --- | --- |"]
    results = []
    for b in bits:
        q = F.quantize_rows([values], b, symmetric=True, per_channel=True)
        r = q.rows[0]
        results.append((b, q.sqnr_db))
        rows.append(f"| {b} | {_g(r.scale)} | {_ints(r.q)} | {_err(r.max_abs_error, r.scale)} | {_db(q.sqnr_db)} |")
    ex.table("\n".join(rows))
    (b_hi, s_hi), (b_lo, s_lo) = results[0], results[-1]
    if b_hi != b_lo:
        ex.result(f"from {b_hi} to {b_lo} bits the SQNR falls by {s_hi - s_lo:.1f} dB, about "
                  f"{(s_hi - s_lo) / (b_hi - b_lo):.1f} dB per bit")
    else:
        ex.result(f"SQNR at {b_hi} bits: {_db(s_hi)}")
    ex.note("One scale for the whole vector, round to nearest (half to even), narrow signed range.")
    return ex.render()
