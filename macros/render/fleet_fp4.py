"""FP4 on Blackwell (Q144): effective bits of NVFP4 and MXFP4, and weight memory, batch-1 decode bound
and prefill time per GEMM path (BF16, FP8 W8A8, 4-bit weight-only, NVFP4 W4A4)
(formulas: :mod:`macros.formulas.fleet_fp4`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import Example, _bits, _flink, _glink, _i, _mlink, _n
from .registry import macro

_NVFP4_SRC = ("[NVIDIA, Introducing NVFP4 (2025-06-24)](https://developer.nvidia.com/blog/"
              "introducing-nvfp4-for-efficient-and-accurate-low-precision-inference/)")
_MX_SRC = ("[OCP Microscaling Formats v1.0](https://www.opencompute.org/documents/"
           "ocp-microscaling-formats-mx-v1-0-spec-final-pdf)")


@macro("block", example="fp4_block_bits()")
def fp4_block_bits() -> str:
    """Worked example: effective bits per element of NVFP4 and MXFP4 from their block layouts.

    `element bits + scale bits / block size (+ per-tensor scale / tensor elements)`: NVFP4 = E2M1 in
    blocks of 16 with an E4M3 scale and one FP32 scale per tensor; MXFP4 = E2M1 in blocks of 32 with
    an E8M0 scale. Checked against the catalog's `nvfp4` and `mxfp4` entries.
    """
    # A Llama 3.1 70B MLP down-projection, to show the per-tensor scale's share.
    tensor = 8192 * 28672
    nv = F.block_format_bits(4, 16, 8, tensor_scale_bits=32, tensor_elements=tensor)
    nv_blocks = F.block_format_bits(4, 16, 8)
    mx = F.block_format_bits(4, 32, 8)
    c = inputs.cat()
    for key, v in (("nvfp4", nv_blocks), ("mxfp4", mx)):
        if abs(c.format(key).bits_per_weight - v) > 1e-9:
            raise MacroInputError(f"formats.yaml {key} bits_per_weight {c.format(key).bits_per_weight} "
                                  f"disagrees with its block layout ({v})")
    ex = Example("effective bits of NVFP4 and MXFP4")
    ex.formula("bits per element = element bits + scale bits / block size (+ tensor scale bits / tensor elements)")
    ex.input("NVFP4", "E2M1 elements (4 bits), blocks of 16, E4M3 scale (8 bits), FP32 per-tensor scale",
             _NVFP4_SRC)
    ex.input("MXFP4", "E2M1 elements (4 bits), blocks of 32, E8M0 scale (8 bits), no tensor scale", _MX_SRC)
    ex.input("example tensor", f"{_i(8192)} × {_i(28672)} (a Llama 3.1 70B down-projection)", "config.json")
    ex.step(f"NVFP4: 4 + 8 / 16 + 32 / {_i(tensor)} = {_bits(round(nv, 9))} bits, i.e. {_bits(nv_blocks)} "
            "for any tensor of realistic size")
    ex.step(f"MXFP4: 4 + 8 / 32 = {_bits(mx)} bits")
    ex.step(f"against BF16: 16 / {_bits(nv_blocks)} = {_n(round(16 / nv_blocks, 2))}× smaller (NVFP4), "
            f"16 / {_bits(mx)} = {_n(round(16 / mx, 2))}× (MXFP4); against FP8: 8 / {_bits(nv_blocks)} = "
            f"{_n(round(8 / nv_blocks, 2))}×")
    ex.result(f"NVFP4 {_bits(nv_blocks)} bits, MXFP4 {_bits(mx)} bits per element: NVFP4 spends a quarter-bit "
              "more on scales, twice as many and each a real FP8 number rather than a power of two")
    return ex.render()


def _fp4_rate(g: Gpu) -> float:
    try:
        return F.FP4_DENSE_FLOPS[g.key]
    except KeyError:
        raise MacroInputError(f"{g.name} has no FP4 tensor rate (macros/formulas/fleet_fp4.py FP4_DENSE_FLOPS); "
                              f"GPUs with one: {', '.join(sorted(F.FP4_DENSE_FLOPS))}") from None


@macro("block", example='fp4_tradeoff("llama-3.1-70b", "b200", tokens="8K", mfu=0.5)')
def fp4_tradeoff(model: Model, gpu: Gpu, tokens: int = 8192, mfu: float = 0.5) -> str:
    """Worked example: weight memory, batch-1 decode bound and prefill time of ``model`` on ``gpu`` per
    GEMM path: BF16, FP8 W8A8, MXFP4 and NVFP4 weight-only (W4A16), NVFP4 W4A4.

    Weights: parameters × bits / 8 with the embedding and lm_head kept in BF16 for the quantized rows
    (ModelOpt excludes `lm_head`; the embedding is no Linear). Decode bound: bandwidth / weight bytes.
    Prefill: 2 × matmul parameters × tokens / (rate × MFU), the rate of the precision both operands
    reach the tensor core in (FP4 for W4A4, FP8 for W8A8, BF16 for weight-only). No attention FLOPs.
    """
    m, g = model, gpu
    fp4 = _fp4_rate(g)
    if m.moe is not None:
        raise MacroInputError(f"fp4_tradeoff takes a dense model; {m.name} is MoE (its decode reads depend on "
                              "routing: use decode_speed)")
    c = inputs.cat()
    bf16 = c.format("bf16")
    b = F.param_breakdown(m)
    matmul = b.total - b.embeddings
    rates = {"bf16": (g.bf16_dense_flops, "dense BF16"), "fp8": (g.fp8_dense_flops, "dense FP8"),
             "fp4": (fp4, "dense FP4")}
    ex = Example(f"{m.name} on one {g.name}: BF16 vs FP8 vs FP4")
    ex.formula("weight bytes = (parameters − embeddings) × bits / 8 + embeddings × 16 / 8")
    ex.formula("decode bound (batch 1) = memory bandwidth / weight bytes")
    ex.formula("prefill time = 2 × matmul parameters × prompt tokens / (dense rate of the GEMM path × MFU)")
    ex.input("parameters (computed from config)", f"{_i(b.total)}, of which embedding + lm_head {_i(b.embeddings)}",
             _mlink(m))
    ex.input("matmul parameters (all but embedding and lm_head)", _i(matmul), _mlink(m))
    ex.input("memory bandwidth", U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s), _glink(g))
    ex.input("dense BF16 / FP8 rate", f"{U.fmt_flops(g.bf16_dense_flops)} / {U.fmt_flops(g.fp8_dense_flops)}",
             _glink(g))
    ex.input("dense FP4 rate", U.fmt_flops(fp4), "HGX table and NVIDIA's NVFP4 blog, figure 1 "
             "(`FP4_DENSE_FLOPS` in macros/formulas/fleet_fp4.py)")
    ex.input("prompt", f"{_i(tokens)} tokens", "given")
    ex.input("MFU", _n(mfu), "assumed")
    rows = ["| GEMM path | Bits per weight | Weights | Fits one GPU | Decode bound, batch 1 | Tensor rate | "
            "Prefill time |", "| --- | --- | --- | --- | --- | --- | --- |"]
    results = {}
    for p in F.GEMM_PATHS:
        f = c.format(p.weight_fmt)
        wb = F.weight_bytes(m, f, embed_fmt=None if f.key == "bf16" else bf16)
        rate, label = rates[p.rate]
        if rate is None:
            raise MacroInputError(f"{g.name} has no {label} rate in gpus.yaml")
        dec = F.decode_bound_tokens_per_s(wb, g.memory_bandwidth_bytes_per_s)
        pre = F.prefill_seconds(matmul, tokens, rate, mfu)
        results[p.key] = (wb, dec, pre)
        fits = "yes" if wb < g.engine_memory_bytes else "no"
        rows.append(f"| {p.label} | {_bits(f.bits_per_weight)} ({_flink(f)}) | {U.fmt_gb(wb)} | {fits} | "
                    f"{U.fmt_rate(dec)} | {U.fmt_flops(rate)} ({label}) | {U.fmt_seconds(pre)} |")
    w8, d8, p8 = results["fp8"]
    w4, d4, p4 = results["nvfp4-w4a4"]
    _, _, p4w = results["nvfp4-w4a16"]
    nv_bits = _bits(c.format('nvfp4').bits_per_weight)
    ex.step(f"NVFP4 W4A4 weights: {_i(matmul)} × {nv_bits} / 8 + {_i(b.embeddings)} × 2 = {_i(w4)} bytes")
    ex.step(f"NVFP4 W4A4 prefill: 2 × {_i(matmul)} × {_i(tokens)} / ({U.fmt_flops(fp4)} × {_n(mfu)}) = "
            f"{U.fmt_seconds(p4)}")
    ex.table("\n".join(rows))
    ex.result(f"against FP8, NVFP4 W4A4 cuts the weights {_n(round(w8 / w4, 2))}×, raises the batch-1 decode "
              f"bound {_n(round(d4 / d8, 2))}× and shortens prefill {_n(round(p8 / p4, 2))}×; NVFP4 weight-only "
              f"decodes as fast but prefills {_n(round(p4w / p8, 2))}× slower than FP8, at the BF16 rate")
    ex.note("Bounds, not measurements: decode ignores KV reads (which FP4 weights do not shrink) and kernel "
            "overheads; prefill ignores attention, which the engines keep in BF16 or FP8. The weight-only rows "
            "are the path on GPUs without FP4 tensor cores (vLLM 0.11 runs compressed-tensors NVFP4 as W4A16 "
            "through Marlin there, on compute capability 8.0 and up). The MXFP4 row shows the format's size only: "
            "vLLM 0.11 applies MXFP4 to MoE expert layers alone, so a dense model has no MXFP4 path there.")
    return ex.render()
