"""KV caches below FP8 (Q156): effective bits with the scales counted, bytes per token and tokens per GB
per scheme for a catalog model (formulas: :mod:`macros.formulas.kv_lowbit`)."""

from __future__ import annotations

from .. import units as U
from ..catalog import Model
from ..errors import MacroInputError
from ..formulas import kv_lowbit as Q
from .blocks import Example, _bits, _i, _mlink, _n
from .registry import Arg, macro


def _schemes(name: str, keys) -> list[Q.KvScheme]:
    if not keys:
        raise MacroInputError(f"{name} must list at least one scheme; valid: {', '.join(Q.KV_SCHEMES)}")
    return [Q.kv_scheme(str(k)) for k in keys]


_ARGS = {"schemes": Arg(_schemes, "KV scheme keys", ", ".join(Q.KV_SCHEMES)),
         "scheme": Arg(lambda name, v: Q.kv_scheme(str(v)), "KV scheme key", ", ".join(Q.KV_SCHEMES))}


def _gqa(m: Model) -> None:
    if m.mla is not None:
        raise MacroInputError(f"{m.name} uses MLA: its cache is one latent per token and layer, not per-head K "
                              "and V, so these per-head schemes do not apply (see dsa_cache_bytes for MLA layouts)")


def _side(s: Q.KvSide, head_dim: int) -> str:
    g = head_dim if s.group is None else s.group
    if not s.overhead_bits:
        return _bits(s.element_bits)
    return f"{_bits(s.element_bits)} + {_bits(s.overhead_bits)}/{_i(g)}"


@macro("inline", example='kv_scheme_bits("kivi-2", "llama-3.1-70b")', args=_ARGS)
def kv_scheme_bits(scheme: str, model: Model) -> str:
    """Effective bits per cached element of a KV scheme for `model`'s head_dim, scales counted, e.g. '3'."""
    return _bits(round(Q.scheme_bits(scheme, model.head_dim), 4))


@macro("block", example='kv_lowbit_table("llama-3.1-70b", schemes=["bf16", "fp8", "nvfp4", "kivi-2"])', args=_ARGS)
def kv_lowbit_table(model: Model, schemes: list[str]) -> str:
    """Worked example: effective bits (codes + scales), bytes per token and tokens per GB of `model`'s KV cache
    under each KV scheme, against BF16 and against the nominal bit width.

    Effective bits per side = element bits + overhead bits / group (group = head_dim for per-token-head
    schemes); K and V averaged. Bytes per token = 2 × layers × kv_heads × head_dim × bits / 8.
    """
    m = model
    _gqa(m)
    if m.sliding_window is not None or m.linear_attention is not None:
        raise MacroInputError(f"{m.name} has sliding-window or linear layers; pick a model whose every layer "
                              "keeps full KV so tokens per GB is one number")
    el = Q.kv_elements_per_token(m.num_hidden_layers, m.num_key_value_heads, m.head_dim)
    bf16 = Q.lowbit_bytes_per_token(el, 16)
    ex = Example(f"tokens per GB of {m.name}'s KV cache, scales counted")
    ex.formula("bits per element = element bits + overhead bits / group   (K and V averaged)")
    ex.formula("bytes per token = 2 × layers × kv_heads × head_dim × bits / 8;  tokens per GB = 10^9 / bytes per token")
    ex.input("layers / KV heads / head_dim",
             f"{_i(m.num_hidden_layers)} / {_i(m.num_key_value_heads)} / {_i(m.head_dim)}", _mlink(m))
    ex.input("scheme layouts", "codes + scale, zero point or norm per group (table)",
             "macros/formulas/kv_lowbit.py, each row's source")
    ex.step(f"KV elements per token: 2 × {_i(m.num_hidden_layers)} × {_i(m.num_key_value_heads)} × {_i(m.head_dim)} = "
            f"{_i(el)}; at BF16 {U.fmt_bytes(bf16)}")
    rows = ["| Scheme | Where | K bits | V bits | Effective bits | Bytes per token | Tokens per GB | vs BF16 | "
            "Scale share | Source |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in schemes:
        bits = Q.scheme_bits(s, m.head_dim)
        nominal = (s.k.element_bits + s.v.element_bits) / 2
        bpt = Q.lowbit_bytes_per_token(el, bits)
        src = f"[{'arXiv' if 'arxiv' in s.source else 'source'}]({s.source})"
        note = f" ({s.note})" if s.note else ""
        rows.append(f"| {s.label}{note} | {s.where} | {_side(s.k, m.head_dim)} | {_side(s.v, m.head_dim)} | "
                    f"{_bits(round(bits, 4))} | {U.fmt_bytes(bpt)} | {_i(Q.tokens_per_gb(bpt))} | "
                    f"{_n(round(16 / bits, 2))}× | {U.fmt_pct((bits - nominal) / bits)} | {src} |")
    ex.table("\n".join(rows))
    low = min(schemes, key=lambda s: Q.scheme_bits(s, m.head_dim))
    lb = Q.scheme_bits(low, m.head_dim)
    nom = (low.k.element_bits + low.v.element_bits) / 2
    ex.result(f"the smallest scheme here, {low.label}, stores {_bits(round(lb, 4))} bits per element, "
              f"{_n(round(16 / lb, 2))}× the tokens of BF16 rather than the {_n(round(16 / nom, 2))}× its nominal "
              f"{_bits(nom)} bits suggest: at low bit widths the scales are a large share of the cache")
    ex.note("Per-layer and per-tensor scales, slot alignment, paging and layers kept unquantized are left out.")
    return ex.render()
