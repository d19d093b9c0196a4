"""Long-context serving: one very long sequence (formulas: :mod:`macros.formulas.longctx`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _bits, _flink, _glink, _i, _mlink, _n
from .registry import macro


@macro("block", example='long_context_memory("qwen2.5-7b-instruct-1m", "h100-sxm", n_gpus=4, '
                        'context=1010000, tokens=131072, published_gb=120)')
def long_context_memory(model: Model, gpu: Gpu, n_gpus: int = 4, context: int = 1010000, tokens: int = 131072,
                        fmt: Format = "bf16", kv_dtype: Format = "bf16",
                        gpu_util: float = F.DEFAULT_GPU_UTILIZATION, published_gb: float | None = None) -> str:
    """Worked example: memory to serve one sequence of ``context`` tokens with ``tokens``-token prefill chunks.

    Weights + that sequence's KV cache + the MLP activation of one prefill chunk
    (`tokens × 2 × intermediate_size × 2 bytes`), against `n_gpus × memory × gpu_util`; the unchunked
    activation for contrast; with `published_gb`, the vendor's published minimum (GB) beside the sum.
    Dense models only.
    """
    m, g, n, ctx, chunk, f, kv = model, gpu, n_gpus, context, tokens, fmt, kv_dtype
    inputs.check_tp(m, n)
    if m.moe is not None:
        raise MacroInputError(f"long_context_memory covers dense models only; {m.name} is an MoE")
    fp = F.long_context_footprint(m, f, kv, ctx, chunk)
    have = n * g.engine_memory_bytes * gpu_util
    ex = Example(f"one {_i(ctx)}-token sequence of {m.name} on {n} × {g.name}")
    ex.formula("memory = weights + KV of the sequence + MLP activation of one prefill chunk")
    ex.formula("MLP activation = chunk tokens × 2 × intermediate_size × 2 bytes (fused gate/up output)")
    ex.input("weights", U.fmt_gb(fp.weights), f"{_mlink(m)}, {_flink(f)}")
    ex.input("KV bytes per token", _i(F.kv_bytes_per_token(m, kv)), f"{_mlink(m)}, {_flink(kv)}")
    ex.input("intermediate_size", _i(m.intermediate_size), _mlink(m))
    ex.input("context / prefill chunk (`--max-num-batched-tokens`)", f"{_i(ctx)} / {_i(chunk)} tokens", GIVEN)
    ex.input("GPUs × memory (CUDA total) × `--gpu-memory-utilization`",
             f"{n} × {U.fmt_gb(g.engine_memory_bytes)} × {_bits(gpu_util)}", _glink(g))
    ex.step(f"KV: {_i(F.kv_bytes_per_token(m, kv))} × {_i(ctx)} = {U.fmt_gb(fp.kv)}")
    ex.step(f"activation, unchunked: {_i(ctx)} × 2 × {_i(m.intermediate_size)} × 2 = "
            f"{U.fmt_gb(fp.activation_unchunked)}")
    ex.step(f"activation, one chunk: {_i(min(chunk, ctx))} × 2 × {_i(m.intermediate_size)} × 2 = "
            f"{U.fmt_gb(fp.activation_chunk)} ({_i(F.prefill_chunks(ctx, chunk))} chunks)")
    ex.step(f"total: {U.fmt_gb(fp.weights)} + {U.fmt_gb(fp.kv)} + {U.fmt_gb(fp.activation_chunk)} = "
            f"{U.fmt_gb(fp.total)}")
    ex.result(f"{U.fmt_gb(fp.total)} needed; the KV cache is {_n(fp.kv / fp.weights)} × the weights")
    verdict = "fits" if fp.total <= have else "does not fit"
    ex.result(f"{verdict} in {n} × {g.name} at utilization {_bits(gpu_util)} ({U.fmt_gb(have)} usable)")
    if published_gb is not None:
        pub = inputs.number("published_gb", published_gb) * U.GB
        ex.result(f"vendor's published minimum: {U.fmt_gb(pub)} in total; this sum is {_n(fp.total / pub)} of it")
        ex.note("The sum is a floor: it leaves out CUDA context and NCCL buffers on each GPU, attention and "
                "sampler workspaces, and the headroom below full memory, which a published minimum must cover.")
    ex.note("Per GPU under tensor parallelism: weights, KV heads and the MLP activation each divide by the TP "
            "degree (KV heads while TP ≤ num_key_value_heads).")
    return ex.render()
