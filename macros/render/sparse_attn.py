"""Sparse attention with an indexer and top-k (Q155, DeepSeek Sparse Attention): the two caches' bytes per
token, one decode step's reads and FLOPs against full attention, and the reload traffic per step when
the main cache lives in host memory (formulas: :mod:`macros.formulas.sparse_attn`)."""

from __future__ import annotations

from .. import units as U
from ..catalog import Model
from ..errors import MacroInputError
from ..formulas import sparse_attn as S
from . import inputs
from .blocks import Example, _i, _k, _mlink, _n
from .registry import ARGS, Arg, macro

_LAYOUT_NAMES = {"bf16": "BF16 (`bfloat16`; vLLM's `auto` on Hopper and SM100)",
                 "fp8_raw": ("FP8, per-tensor scale (vLLM FlashInfer sparse: SM100 with `fp8`, Hopper with "
                             "`fp8_e4m3`; SGLang TRT-LLM, TileLang)"),
                 "fp8_ds_mla": "FP8 + FP32 scales, BF16 RoPE (`fp8_ds_mla`)",
                 "nvfp4_ds_mla": "NVFP4 + FP8 RoPE (`nvfp4_ds_mla`, SM100)"}
_VLLM_FLASHMLA = ("[vLLM 0.33.0 flashmla_sparse.py](https://github.com/vllm-project/vllm/blob/v0.33.0/"
                  "vllm/v1/attention/backends/mla/flashmla_sparse.py)")
_VLLM_INDEXER = ("[vLLM 0.33.0 deepseek_v32/attention.py](https://github.com/vllm-project/vllm/blob/v0.33.0/"
                 "vllm/models/deepseek_v32/attention.py)")


def _fraction(name: str, v) -> float:
    x = inputs.number(name, v, positive=False)
    if x > 1:
        raise MacroInputError(f"{name} must be between 0 and 1, got {v!r}")
    return x


_ARGS = {"dsa": Arg(lambda name, v: _dsa(v), "DSA model key", ", ".join(S.DSA_INDEXERS)),
         "contexts": Arg(lambda name, vs: [inputs.tokens(name, v) for v in vs], "context lengths", "tokens"),
         "miss_fractions": Arg(lambda name, vs: [_fraction(name, v) for v in vs], "miss fractions", "0 to 1"),
         "host_gb_per_s": Arg(inputs.number, "host-to-GPU bandwidth per GPU, GB/s", "> 0"),
         "layout": Arg(lambda name, v: _layout(v), "main-cache layout", ", ".join(S.MLA_LAYOUTS)),
         "context": ARGS["context"], "batch": ARGS["batch"]}


def _dsa(key: str) -> S.DsaIndexer:
    try:
        return S.DSA_INDEXERS[key]
    except KeyError:
        raise MacroInputError(f"unknown DSA model {key!r}; valid: {', '.join(S.DSA_INDEXERS)} "
                              "(macros/formulas/sparse_attn.py DSA_INDEXERS)") from None


def _layout(v: str) -> str:
    if v not in S.MLA_LAYOUTS:
        raise MacroInputError(f"unknown MLA layout {v!r}; valid: {', '.join(S.MLA_LAYOUTS)}")
    return v


def _base(d: S.DsaIndexer) -> Model:
    m = inputs.model(d.base_model)
    if m.mla is None:
        raise MacroInputError(f"{d.key}: base model {m.key} has no MLA block")
    return m


def _row(m: Model, layout: str) -> int:
    return S.mla_row_bytes(m.mla.kv_lora_rank, m.mla.qk_rope_head_dim, layout)


def _cfg(d: S.DsaIndexer) -> str:
    return f"[{d.name} config.json]({d.source})"


def _b(x: float) -> str:
    return U.fmt_bytes(x)


@macro("inline", example='dsa_row_bytes("fp8_ds_mla")', args=_ARGS)
def dsa_row_bytes(layout: str, dsa: str = "deepseek-v3.2") -> str:
    """Bytes one token keeps per layer in the main (MLA) cache of a DSA model in `layout`, e.g. '656 bytes'."""
    return f"{_i(_row(_base(dsa), layout))} bytes"


@macro("inline", example='dsa_index_row_bytes()', args=_ARGS)
def dsa_index_row_bytes(dsa: str = "deepseek-v3.2", index_dtype: str = "fp8") -> str:
    """Bytes one token keeps per layer in a DSA model's indexer key cache, e.g. '132 bytes'."""
    return f"{_i(S.indexer_row_bytes(dsa.index_head_dim, index_dtype))} bytes"


@macro("inline", example='dsa_field("index_topk")', args=_ARGS)
def dsa_field(field: str, dsa: str = "deepseek-v3.2") -> str:
    """One indexer field of a DSA model's config.json (`index_topk`, `index_n_heads`, `index_head_dim`)."""
    if field not in ("index_topk", "index_n_heads", "index_head_dim"):
        raise MacroInputError(f"dsa_field: unknown field {field!r}; valid: index_topk, index_n_heads, index_head_dim")
    return _i(getattr(dsa, field))


@macro("inline", example='dsa_indexer_crossover()', args=_ARGS)
def dsa_indexer_crossover(dsa: str = "deepseek-v3.2", layout: str = "fp8_ds_mla") -> str:
    """Context at which a decode step's indexer reads equal its top-k main-cache reads: top-k × main row /
    indexer row, e.g. '10,178 tokens'."""
    m = _base(dsa)
    return f"{_i(round(dsa.index_topk * _row(m, layout) / S.indexer_row_bytes(dsa.index_head_dim, 'fp8')))} tokens"


@macro("block", example='dsa_cache_bytes(context="128K")', args=_ARGS)
def dsa_cache_bytes(context: int, dsa: str = "deepseek-v3.2") -> str:
    """Worked example: bytes per token in the main MLA cache (each layout the engines use) and the indexer
    cache of a DSA model, per sequence at `context`, and tokens per GB with and without the indexer.

    Main row per layer from kv_lora_rank and qk_rope_head_dim (layouts in macros/formulas/sparse_attn.py);
    indexer row = index_head_dim FP8 bytes + one FP32 scale per 128; both × layers. Every token stays in
    both caches: the indexer may select any of them at a later step.
    """
    d, m = dsa, _base(dsa)
    L = m.num_hidden_layers
    idx = S.indexer_row_bytes(d.index_head_dim, "fp8")
    fp8 = _row(m, "fp8_ds_mla")
    ex = Example(f"{d.name}: main cache and indexer cache per token, and a {_k(context)}-token sequence")
    ex.formula("main row = kv_lora_rank × element bytes + scales + qk_rope_head_dim × RoPE bytes (per layout)")
    ex.formula("indexer row = index_head_dim × 1 byte (FP8) + index_head_dim / 128 × 4 bytes (FP32 scales)")
    ex.formula("per token = (main row + indexer row) × layers; per sequence = per token × context")
    ex.input("layers / kv_lora_rank / qk_rope_head_dim",
             f"{_i(L)} / {_i(m.mla.kv_lora_rank)} / {_i(m.mla.qk_rope_head_dim)}",
             f"{_mlink(m)} (same in {_cfg(d)})")
    ex.input("index_head_dim / index_n_heads / index_topk",
             f"{_i(d.index_head_dim)} / {_i(d.index_n_heads)} / {_i(d.index_topk)}", _cfg(d))
    ex.input("layouts", "as stored by the engines", f"{_VLLM_FLASHMLA}; {_VLLM_INDEXER}")
    ex.input("context", f"{_i(context)} tokens", "given")
    r, p = m.mla.kv_lora_rank, m.mla.qk_rope_head_dim
    ex.step(f"`fp8_ds_mla` row: {_i(r)} + {_i(r)} / 128 × 4 + {_i(p)} × 2 = {_i(fp8)} bytes per layer")
    ex.step(f"indexer row: {_i(d.index_head_dim)} + {_i(d.index_head_dim)} / 128 × 4 = {_i(idx)} bytes per layer")
    rows = ["| Main-cache layout | Main row | + indexer row | Per token, all layers | Indexer share | "
            f"Per {_k(context)} sequence | Tokens per GB |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for lay in S.MLA_LAYOUTS:
        main = _row(m, lay)
        tok = (main + idx) * L
        rows.append(f"| {_LAYOUT_NAMES[lay]} | {_i(main)} bytes | {_i(idx)} bytes | {_b(tok)} | "
                    f"{U.fmt_pct(idx / (main + idx))} | {_b(tok * context)} | {_i(1e9 / tok)} |")
    ex.table("\n".join(rows))
    tok8 = (fp8 + idx) * L
    ex.result(f"with the `fp8_ds_mla` cache a token costs {_b(tok8)} across {_i(L)} layers, of which the indexer "
              f"is {U.fmt_pct(idx / (fp8 + idx))}; a {_k(context)}-token sequence holds {_b(tok8 * context)}. "
              f"Without the indexer the same cache would hold {_i(1e9 / (fp8 * L))} tokens per GB instead of "
              f"{_i(1e9 / tok8)}: sparse attention costs capacity, it does not save it")
    ex.note("The engines allocate pages of whole blocks; the MTP layer (if served) adds one more layer's cache.")
    return ex.render()


@macro("block", example='dsa_decode_step(contexts=["2K", "8K", "32K", "128K"])', args=_ARGS)
def dsa_decode_step(contexts: list[int], dsa: str = "deepseek-v3.2", layout: str = "fp8_ds_mla") -> str:
    """Worked example: bytes read and FLOPs of one decode step (one sequence, one new token) of a DSA model
    with full attention against indexer + top-k, at each of `contexts`.

    Full: every layer reads `context` main rows and attends to all. DSA: every layer reads `context` indexer
    rows (scores: 2 × index_n_heads × index_head_dim FLOPs each) and min(top-k, context) main rows
    (absorbed MLA: 2 × heads × (2 × kv_lora_rank + qk_rope_head_dim) FLOPs each).
    """
    d, m = dsa, _base(dsa)
    L, h, r, p = m.num_hidden_layers, m.num_attention_heads, m.mla.kv_lora_rank, m.mla.qk_rope_head_dim
    main, idx = _row(m, layout), S.indexer_row_bytes(d.index_head_dim, "fp8")
    ex = Example(f"{d.name}: one decode step, full attention vs indexer + top-{_i(d.index_topk)}")
    ex.formula("full: reads = context × main row × layers; FLOPs = context × 2 × heads × (2r + p) × layers")
    ex.formula("DSA: reads = (context × indexer row + min(top-k, context) × main row) × layers")
    ex.formula("DSA: FLOPs = (context × 2 × index_heads × index_dim + min(top-k, context) × 2 × heads × (2r + p))"
               " × layers")
    ex.input("layers / heads / r = kv_lora_rank / p = qk_rope_head_dim",
             f"{_i(L)} / {_i(h)} / {_i(r)} / {_i(p)}", _mlink(m))
    ex.input("index_n_heads / index_head_dim / index_topk",
             f"{_i(d.index_n_heads)} / {_i(d.index_head_dim)} / {_i(d.index_topk)}", _cfg(d))
    ex.input("main row / indexer row", f"{_i(main)} bytes ({_LAYOUT_NAMES[layout]}) / {_i(idx)} bytes",
             f"{_VLLM_FLASHMLA}; {_VLLM_INDEXER}")
    ex.step(f"per earlier token and layer: indexer {_i(2 * d.index_n_heads * d.index_head_dim)} FLOPs against "
            f"{_i(2 * h * (2 * r + p))} for attending to it")
    rows = ["| Context | Full: read | DSA: read (indexer + top-k) | DSA / full, bytes | Full: FLOPs | "
            "DSA: FLOPs | DSA / full, FLOPs |", "| --- | --- | --- | --- | --- | --- | --- |"]
    steps = []
    for n in contexts:
        s = S.dsa_step(n, d.index_topk, L, main, idx, h, r, p, d.index_n_heads, d.index_head_dim)
        steps.append((n, s))
        rows.append(f"| {_k(n)} | {_b(s.full_read)} | {_b(s.dsa_read)} ({_b(s.index_read)} + {_b(s.topk_read)}) | "
                    f"{_n(round(s.dsa_read / s.full_read, 3))} | {_n(round(s.full_flops / 1e9, 2))} GFLOP | "
                    f"{_n(round(s.dsa_flops / 1e9, 2))} GFLOP | {_n(round(s.dsa_flops / s.full_flops, 3))} |")
    ex.table("\n".join(rows))
    n_last, s_last = steps[-1]
    n_first, s_first = steps[0]
    ex.result(f"at {_k(n_last)} tokens a DSA step reads {_n(round(s_last.dsa_read / s_last.full_read, 3))} of "
              f"full attention's bytes and does {_n(round(s_last.dsa_flops / s_last.full_flops, 3))} of its FLOPs; "
              f"at {_k(n_first)} it reads {_n(round(s_first.dsa_read / s_first.full_read, 3))} (the indexer is pure "
              "overhead while the context is within top-k)")
    ex.note("Attention only: the MoE and projection weights a step also reads are not in these figures, and "
            "neither is the top-k selection itself. One query token per step (no speculative tokens).")
    return ex.render()


@macro("block", example='dsa_offload(context="128K", batch=16, host_gb_per_s=50, miss_fractions=[1, 0.25, 0.05])',
       args=_ARGS)
def dsa_offload(context: int, batch: int, host_gb_per_s: float, miss_fractions: list[float],
                dsa: str = "deepseek-v3.2", layout: str = "fp8_ds_mla") -> str:
    """Worked example: the main MLA cache in host memory, the indexer cache and a buffer of selected rows on
    the GPU: host-to-GPU bytes and time per decode step for `batch` sequences at each miss fraction, against
    reloading the whole context (what an offloaded full-attention cache would need).

    Reload per step = batch × layers × top-k × main row × miss fraction; time = bytes / `host_gb_per_s`.
    GPU-resident per sequence = context × indexer row × layers + the buffer's rows.
    """
    d, m = dsa, _base(dsa)
    L = m.num_hidden_layers
    main, idx = _row(m, layout), S.indexer_row_bytes(d.index_head_dim, "fp8")
    bw = host_gb_per_s * 1e9
    full = batch * L * context * main
    host = batch * L * context * main
    gpu_idx = batch * L * context * idx
    buf = batch * L * 2 * d.index_topk * main
    ex = Example(f"{d.name}: main cache in host memory, {_i(batch)} sequences of {_k(context)} tokens")
    ex.formula("reload per step = batch × layers × top-k × main row × miss fraction; time = bytes / host bandwidth")
    ex.formula("GPU-resident = batch × layers × (context × indexer row + buffer rows × main row)")
    ex.input("layers / main row / indexer row", f"{_i(L)} / {_i(main)} bytes / {_i(idx)} bytes",
             f"{_mlink(m)}; {_VLLM_FLASHMLA}")
    ex.input("top-k", _i(d.index_topk), _cfg(d))
    ex.input("buffer rows per sequence and layer", f"2 × top-k = {_i(2 * d.index_topk)}",
             "vLLM 0.33.0 HiSparse default, (decode query length + 1) × top-k, at query length 1 "
             "(no speculative tokens)")
    ex.input("batch / context", f"{_i(batch)} / {_i(context)} tokens", "given")
    ex.input("host-to-GPU bandwidth", U.fmt_bandwidth(bw), "assumption (one direction, per GPU)")
    ex.step(f"in host memory: {_i(batch)} × {_i(L)} × {_i(context)} × {_i(main)} = {_b(host)}")
    ex.step(f"on the GPU: indexer {_b(gpu_idx)} + buffer {_b(buf)} = {_b(gpu_idx + buf)}")
    rows = ["| Miss fraction | Reload per step | Time per step at the host link |", "| --- | --- | --- |"]
    for f in miss_fractions:
        b = batch * S.reload_bytes_per_step(d.index_topk, main, L, f)
        rows.append(f"| {f:g} | {_b(b)} | {U.fmt_seconds(b / bw)} |")
    rows.append(f"| full attention, whole context each step | {_b(full)} | {U.fmt_seconds(full / bw)} |")
    ex.table("\n".join(rows))
    worst = batch * S.reload_bytes_per_step(d.index_topk, main, L, 1)
    ex.result(f"with no reuse between steps the host link adds {U.fmt_seconds(worst / bw)} to every step, "
              f"against {U.fmt_seconds(full / bw)} to stream the whole context; offloading only works because "
              "consecutive steps select mostly the same tokens, so the miss fraction, not top-k, sets the traffic")
    ex.note("Miss fractions are assumptions: measure them (vLLM's HiSparse connector counts buffer hits, misses "
            "and host-to-device bytes). With speculative decoding every verified token selects its own top-k, "
            "which multiplies both the reload and the buffer. HiSparse also pins two tail pages per request on "
            "the GPU, a small addition left out here. "
            "MLA is not split across tensor-parallel ranks, so every GPU attends over the same rows and needs "
            "them in its own buffer. Indexer writes and the new token's row (mirrored to host) are left out.")
    return ex.render()
