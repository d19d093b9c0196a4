"""Sparsity: the 2:4 structured-sparsity storage and decode-bound worked example (Q29)
(formulas: :func:`macros.formulas.sparse_24_bits_per_weight`, :func:`macros.formulas.decode_speedup_bound`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _bits, _flink, _glink, _i, _mlink, _n
from .registry import macro


@macro("block", example='sparse_24_example("llama-3.1-8b", "a100-80gb-sxm", fmt="bf16", batch=1, context="4K")')
def sparse_24_example(model: Model, gpu: Gpu, fmt: Format = "bf16", batch: int = 1, context: int = 4096) -> str:
    """Worked example: 2:4 semi-structured sparsity on the linear layers of a dense model.

    Storage bits per weight `(2 × element bits + 2 × 2-bit index) / 4`, the weight bytes with
    embeddings and lm_head kept dense in BF16, the bandwidth-bound decode speed-up bound from the
    fewer bytes, and the compute ceiling (sparse tensor rate = twice the dense rate).
    """
    m, g, f = model, gpu, fmt
    if f.key not in _SAME_WIDTH_SPARSE:
        raise MacroInputError(f"sparse_24_example: fmt {f.key!r} has no 2:4 sparse tensor-core path here; "
                              f"use one of {', '.join(_SAME_WIDTH_SPARSE)}")
    bf16 = inputs.fmt("bf16")
    sbits = F.sparse_24_bits_per_weight(f.bits_per_weight)
    emb = bf16
    dense_w = F.dense_weight_bytes_read(m, f, emb, batch)
    sparse_w = F.dense_weight_bytes_read(m, sbits, emb, batch)
    kv = F.kv_bytes_per_sequence(m, context, bf16) * batch
    bound = F.decode_speedup_bound(dense_w, sparse_w, kv)
    peak, label = inputs.peak_flops(g, f)
    ex = Example(f"2:4 sparsity on the linear layers of {m.name} ({f.name}) on {g.name}")
    ex.formula("bits per weight (2:4) = (2 × element bits + 2 × 2-bit index) / 4")
    ex.formula("decode speed-up bound = (W_dense + KV) / (W_sparse + KV); compute ceiling = sparse rate / dense rate")
    ex.input("model", m.name, _mlink(m))
    ex.input(f"element bits ({f.key})", _bits(f.bits_per_weight), _flink(f))
    ex.input("metadata", "2-bit position index per kept value", "A100 whitepaper; Mishra et al. 2021")
    ex.input("batch / context (BF16 KV)", f"{batch} / {_i(context)}", GIVEN)
    ex.input(f"peak ({label})", inputs.fmt_peak(f, peak), _glink(g))
    ex.step(f"2:4 storage: (2 × {_bits(f.bits_per_weight)} + 2 × 2) / 4 = {_bits(sbits)} bits per weight")
    ex.table("\n".join([
        "| Linear layers | Bits per weight | Weight bytes read per step | KV read per step | Decode bound vs dense |",
        "| --- | --- | --- | --- | --- |",
        f"| dense {f.key} | {_bits(f.bits_per_weight)} | {U.fmt_gb(dense_w)} | {U.fmt_bytes(kv)} | 1× |",
        f"| 2:4 sparse {f.key} | {_bits(sbits)} | {U.fmt_gb(sparse_w)} | {U.fmt_bytes(kv)} | {_n(round(bound, 2))}× |",
    ]))
    ex.result(f"bandwidth-bound decode: at most {_n(round(bound, 2))}× from the fewer bytes "
              f"(the limit, with no KV, is {_n(round(f.bits_per_weight / sbits, 2))}× on the linear layers)")
    ex.result(f"compute-bound GEMMs: at most 2× ({inputs.fmt_peak(f, 2 * peak)} sparse vs "
              f"{inputs.fmt_peak(f, peak)} dense)")
    ex.note("Embeddings and lm_head stay dense in BF16. Bounds only: sparse kernels must exist for the shapes and "
            "the engine, attention and non-GEMM work are not sparsified, and accuracy needs checking after pruning.")
    return ex.render()


#: Formats with a 2:4 sparse tensor-core rate equal to twice the dense rate in this catalog's reading.
_SAME_WIDTH_SPARSE = ("bf16", "fp8", "int8")
