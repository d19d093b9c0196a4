"""The numbers-to-know sheet (docs/reference/numbers.md): per GPU, per model, and the rules of thumb the
question pages derive, compact enough to print on two A4 pages.

:func:`gpu_figures` is the one source of the per-GPU figures: the sheet's table and the roofline
figures (:mod:`.figures`) both read it, so a figure cannot disagree with the table.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import formulas as F
from .. import units as U
from ..catalog import Gpu, Model
from . import inputs
from .blocks import _frac, _i, _k, catalog_href, catalog_link
from .registry import ARGS, macro


@dataclass(frozen=True)
class GpuFigures:
    gpu: Gpu
    memory_bytes: float
    bandwidth: float              # bytes/s
    bf16: float                   # dense FLOP/s
    fp8: float | None
    int8: float | None            # dense OP/s
    ridge_bf16: float             # FLOP/byte
    ridge_fp8: float | None


def gpu_figures(gpu: Gpu) -> GpuFigures:
    bw = gpu.memory_bandwidth_bytes_per_s
    return GpuFigures(gpu, gpu.memory_bytes, bw, gpu.bf16_dense_flops, gpu.fp8_dense_flops, gpu.int8_dense_ops,
                      F.ridge_point(gpu.bf16_dense_flops, bw),
                      F.ridge_point(gpu.fp8_dense_flops, bw) if gpu.fp8_dense_flops else None)


def _gb(n_bytes: float) -> str:
    return f"{n_bytes / U.GB:,.1f}"


def _tflops(x: float | None) -> str:
    return "—" if x is None else f"{x / 1e12:,.1f}"


@macro("page", example='numbers_gpus()')
def numbers_gpus() -> str:
    """Numbers to know: one row per catalog GPU, memory, bandwidth, dense BF16 / FP8 / INT8, ridge points.

    Rates in TFLOPS (INT8 in TOPS), dense (without sparsity); ridge point = dense peak / bandwidth in
    FLOP per byte, for BF16 and FP8.
    """
    rows = ["| GPU | Memory (GB) | Bandwidth | BF16 | FP8 | INT8 (TOPS) | Ridge BF16 | Ridge FP8 |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for g in inputs.cat().gpus.values():
        f = gpu_figures(g)
        rows.append(f"| {catalog_link('gpu', g.key, g.name)} | {_gb(f.memory_bytes)} "
                    f"| {U.fmt_bandwidth(f.bandwidth)} | {_tflops(f.bf16)} | {_tflops(f.fp8)} | {_tflops(f.int8)} "
                    f"| {_i(round(f.ridge_bf16))} | {'—' if f.ridge_fp8 is None else _i(round(f.ridge_fp8))} |")
    return "\n".join(rows)


@macro("page", example='numbers_models()')
def numbers_models() -> str:
    """Numbers to know: one row per catalog model, parameters, weights per format, KV bytes per token.

    Parameters computed from the config (total, and active per token for MoE); weights in BF16, FP8 and
    INT4-g128 with every tensor in that format; KV bytes per token in BF16 over the layers that keep a
    KV cache.
    """
    cat = inputs.cat()
    bf16, fp8, int4 = cat.format("bf16"), cat.format("fp8"), cat.format("int4-g128")
    rows = ["| Model | Params | Active | BF16 (GB) | FP8 (GB) | INT4 g128 (GB) | KV/token BF16 (KiB) |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for m in cat.models.values():
        b = F.param_breakdown(m)
        rows.append(f"| [{m.name}]({catalog_href('model', m.key)}) | {U.fmt_params(b.total)} "
                    f"| {U.fmt_params(b.active) if m.is_moe else 'all'} | {_gb(F.weight_bytes(m, bf16))} "
                    f"| {_gb(F.weight_bytes(m, fp8))} | {_gb(F.weight_bytes(m, int4))} "
                    f"| {F.kv_bytes_per_token(m, bf16) / U.KiB:,.1f} |")
    return "\n".join(rows)


@macro("page", example='numbers_rules()', args={"small": ARGS["model"], "long_context": ARGS["context"],
                                               "prefill_tokens": ARGS["tokens"]})
def numbers_rules(model: Model = "llama-3.1-70b", small: Model = "llama-3.1-8b", gpu: Gpu = "h100-sxm",
                  context: int = 8192, long_context: int = 131072, prefill_tokens: int = 8192,
                  mfu: float = 0.5) -> str:
    """Numbers to know: the rules of thumb (weights, decode bound, ridge batch, prefill, KV per sequence).

    Each rule as its formula and one evaluated case from the catalog (defaults: Llama 3.1 8B and 70B on
    H100 SXM), computed by the same formulas as the worked examples on the question pages.
    """
    cat = inputs.cat()
    m, s, g = model, small, gpu
    bf16, fp8 = cat.format("bf16"), cat.format("fp8")
    bw = g.memory_bandwidth_bytes_per_s
    ridge = F.ridge_point(g.bf16_dense_flops, bw)
    read = F.weight_bytes_read_per_step(s, bf16, 1)
    bound = F.decode_bound(read, F.kv_bytes_per_sequence(s, context, bf16), 1, bw)
    dense = F.prefill_matmul_flops(m, prefill_tokens, 1)
    attn = F.prefill_attention_flops(m, prefill_tokens)
    peak, label = inputs.peak_flops(g, fp8)
    t_prefill = F.prefill_time(dense + attn, peak, mfu)
    kv_tok = F.kv_bytes_per_token(m, bf16)
    rules = [
        ("Weights", "parameters × bytes per weight",
         f"{U.fmt_gb(F.bytes_for_params(1e9, bf16))} per billion parameters in BF16, "
         f"{U.fmt_gb(F.bytes_for_params(1e9, fp8))} in FP8; {m.name}: {U.fmt_gb(F.weight_bytes(m, bf16))} in BF16"),
        ("Decode bound", "tokens/s per sequence ≤ bandwidth / (weight bytes + KV bytes read per step)",
         f"{s.name}, BF16, batch 1 at {_k(context)} tokens on {g.name}: "
         f"{U.fmt_rate(bound.tokens_per_s_per_sequence)}"),
        ("Decode turns compute-bound", "batch ≥ ridge × bytes per weight / 2",
         f"{g.name}, BF16 weights: ridge {_i(round(ridge))} FLOP/byte, so a batch of about "
         f"{_i(F.batch_to_reach_ridge(ridge, bf16.bits_per_weight / 8))}"),
        ("Prefill bound", "time ≈ (2 × active parameters × tokens + attention FLOPs) / (peak × MFU)",
         f"{m.name}, {_k(prefill_tokens)} tokens on one {g.name} at the {label} rate, MFU {_frac(mfu)}: "
         f"{U.fmt_seconds(t_prefill)}"),
        ("KV per sequence", "KV bytes per token × context; KV bytes per token = 2 × layers × KV heads × "
         "head_dim × bytes",
         f"{m.name}, BF16: {U.fmt_bytes(kv_tok)} per token, {U.fmt_gb(F.kv_bytes_per_sequence(m, context, bf16))} "
         f"at {_k(context)}, {U.fmt_gb(F.kv_bytes_per_sequence(m, long_context, bf16))} at {_k(long_context)}"),
    ]
    rows = ["| Rule | Formula | Example |", "| --- | --- | --- |"]
    rows += [f"| {name} | {formula} | {example} |" for name, formula, example in rules]
    return "\n".join(rows)
