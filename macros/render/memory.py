"""Weights and the KV cache (formulas: :mod:`macros.formulas.memory`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _bits, _bytes_el, _flink, _i, _mlink, _n
from .registry import macro


_PART_NAMES = {"embedding": "embedding", "lm_head": "lm_head", "attention": "attention",
               "dense_mlp": "dense MLPs", "routed_experts": "routed experts", "shared_experts": "shared experts",
               "router": "router", "norms": "norms", "rest": "latent projections"}


def _checkpoint_weights(m: Model, ck) -> str:
    """The shipped checkpoint, module group by module group, in the formats its quantization_config gives."""
    cat = inputs.cat()
    groups: dict[tuple[str, str], float] = {}
    for mod, key in F.module_formats(m, ck.quantization_config, ck.torch_dtype):
        groups[(mod.part, key)] = groups.get((mod.part, key), 0.0) + mod.params
    wb = F.checkpoint_weight_bytes(m, ck.quantization_config, cat.format, ck.torch_dtype)
    qc = ck.quantization_config or {}
    ex = Example(f"weights of {m.name} as shipped ({ck.hf_repo})")
    ex.formula("weight bytes = Σ over module groups of parameters × bits_per_weight(group's format) / 8")
    ex.input("checkpoint, `quantization_config`",
             f"`{ck.hf_repo}`, `{qc.get('quant_method', 'none')}`", f"[config.json]({ck.config_source})")
    if qc.get("modules_to_not_convert") or qc.get("ignore"):
        kept = qc.get("modules_to_not_convert") or qc.get("ignore")
        ex.input("left in " + ck.torch_dtype, ", ".join(f"`{k}`" for k in kept), f"[config.json]({ck.config_source})")
    total = 0.0
    for (part, key), params in groups.items():
        f = cat.format(key)
        nbytes = params * f.bits_per_weight / 8
        total += nbytes
        ex.step(f"{_PART_NAMES.get(part, part)} in {_flink(f)}: {_i(params)} × {_bits(f.bits_per_weight)} / 8 = "
                f"{_i(nbytes)} bytes")
    ex.step(f"sum = {_i(wb.total)} bytes")
    ex.result(U.fmt_gb(wb.total))
    ex.note("The checkpoint as stored; the engine may pad some tensors to its kernels' tiles (vLLM's MXFP4 MoE, "
            "see `loaded_weights`). KV cache, activations and runtime memory come on top.")
    return ex.render()


def _loaded(m: Model, mxfp4_backend: str):
    from ..catalog.checkpoints import shipped_checkpoint

    ck = shipped_checkpoint(m.key)
    if ck is None:
        raise MacroInputError(f"loaded_weights: {m.key} has no record in macros/catalog/checkpoints.yaml")
    if mxfp4_backend not in F.MXFP4_ROUND_UP:
        raise MacroInputError(f"loaded_weights: mxfp4_backend {mxfp4_backend!r} unknown "
                              f"(valid: {', '.join(F.MXFP4_ROUND_UP)})")
    cat = inputs.cat()
    stored = F.checkpoint_weight_bytes(m, ck.quantization_config, cat.format, ck.torch_dtype)
    loaded = F.vllm_loaded_weight_bytes(m, ck.quantization_config, cat.format, ck.torch_dtype, mxfp4_backend)
    return ck, stored, loaded


@macro("inline", example='loaded_weights("gpt-oss-120b")')
def loaded_weights(model: Model, mxfp4_backend: str = "triton") -> str:
    """What vLLM 0.33 allocates for the shipped checkpoint on one GPU, in GiB as its "Model loading
    took" line prints it, e.g. '60.77 GiB'. MXFP4 routed experts are padded to the kernel backend's
    tiles (`triton`, the Hopper default, pads gpt-oss not at all; `marlin` rounds hidden to 256 and
    the intermediate size to 128)."""
    _, _, loaded = _loaded(model, mxfp4_backend)
    return f"{loaded / U.GiB:.2f} GiB"


@macro("block", example='weights("gpt-oss-120b")')
def weights(model: Model, fmt: Format | None = None, expert_fmt: Format | None = None,
            embed_fmt: Format | None = None) -> str:
    """Worked example: weight memory of ``model``: as shipped by default, or in ``fmt`` (optionally
    experts/embeddings in another format) to discuss an alternative.

    Without `fmt`: the model's shipped checkpoint (`macros/catalog/checkpoints.yaml`), each module
    group in the format its `quantization_config` gives (gpt-oss: MXFP4 routed experts, BF16 the
    rest), or the model's `released_format` throughout when no checkpoint record exists.
    With `fmt`: parameters × effective bits per weight / 8; with `expert_fmt` or `embed_fmt`, or a
    format whose rule keeps the embedding and lm_head in 16-bit (`int4-g128`, `int4-g128-zp`, `nf4`,
    `nf4-dq`), the mixed-format sum (experts / embeddings / the rest).
    """
    from ..catalog.checkpoints import shipped_checkpoint

    if fmt is None and expert_fmt is None and embed_fmt is None:
        ck = shipped_checkpoint(model.key)
        if ck is not None:
            return _checkpoint_weights(model, ck)
    if fmt is None:
        fmt = inputs.fmt(model.released_format)
    m, f, fe, fm = model, fmt, expert_fmt, embed_fmt
    b = F.param_breakdown(m)
    wb = F.weight_bytes_breakdown(m, f, fe, fm, breakdown=b)
    if fm is None and f.embedding_bits_per_weight is not None:
        fm = next((x for x in inputs.cat().formats.values() if x.bits_per_weight == f.embedding_bits_per_weight
                   and x.kind == "float"), None)
    mixed = fe is not None or fm is not None
    if fe is not None and not b.routed_experts:
        raise MacroInputError(f"expert_fmt applies to MoE models only; {m.name} is dense "
                              "(omit expert_fmt, or use embed_fmt for the embeddings)")
    title = f"weights of {m.name} in {f.name}" + (" (mixed formats)" if mixed else "")
    ex = Example(title)
    src = _mlink(m)
    if not mixed:
        ex.formula("weight bytes = parameters × bits_per_weight / 8")
        ex.input("parameters (computed from config)", _i(b.total), src)
        ex.input(f"bits per weight, {f.key}", _bits(f.bits_per_weight), _flink(f))
        ex.step(f"{_i(b.total)} × {_bits(f.bits_per_weight)} / 8 = {_i(wb.total)} bytes")
    else:
        if b.routed_experts:
            ex.formula("bytes = experts × bits(expert_fmt)/8 + embeddings × bits(embed_fmt)/8 + rest × bits(fmt)/8")
        else:
            ex.formula("bytes = embeddings × bits(embed_fmt)/8 + rest × bits(fmt)/8")
        rest = b.total - b.embeddings - b.routed_experts
        fe_ = fe or f
        fm_ = fm or f
        if b.routed_experts:
            ex.input("routed-expert parameters", _i(b.routed_experts), src)
        ex.input("embedding + lm_head parameters", _i(b.embeddings), src)
        ex.input("other parameters", _i(rest), src)
        if b.routed_experts:
            ex.input(f"bits per weight, experts ({fe_.key})", _bits(fe_.bits_per_weight), _flink(fe_))
        ex.input(f"bits per weight, embeddings ({fm_.key})", _bits(fm_.bits_per_weight), _flink(fm_))
        ex.input(f"bits per weight, rest ({f.key})", _bits(f.bits_per_weight), _flink(f))
        if b.routed_experts:
            ex.step(f"experts: {_i(b.routed_experts)} × {_bits(fe_.bits_per_weight)} / 8 = "
                    f"{_i(wb.routed_experts)} bytes")
        ex.step(f"embeddings: {_i(b.embeddings)} × {_bits(fm_.bits_per_weight)} / 8 = {_i(wb.embeddings)} bytes")
        ex.step(f"rest: {_i(rest)} × {_bits(f.bits_per_weight)} / 8 = {_i(wb.rest)} bytes")
        ex.step(f"sum = {_i(wb.total)} bytes")
    ex.result(U.fmt_gb(wb.total))
    ex.note("Weights only: KV cache, activations and runtime memory come on top. Effective bits include the "
            "format's scale overhead.")
    return ex.render()


def _kv_formula(m: Model) -> str:
    if m.mla is not None:
        return "KV bytes/token = layers × (kv_lora_rank + qk_rope_head_dim) × bytes"
    return "KV bytes/token = 2 × layers × num_key_value_heads × head_dim × bytes"


def _kv_inputs(ex: Example, m: Model, kv: Format) -> None:
    src = _mlink(m)
    full, sliding, linear = F.kv_layer_counts(m)
    ex.input("`num_hidden_layers`", _i(m.num_hidden_layers), src)
    if sliding or linear:
        ex.input("layers with a growing KV cache (full)", _i(full), src)
    if sliding:
        ex.input("sliding-window layers / window", f"{sliding} / {_i(m.sliding_window.size)} tokens", src)
    if linear:
        ex.input("constant-state (linear) layers / state per layer",
                 f"{linear} / {U.fmt_bytes(m.linear_attention.state_bytes_per_layer)}", src)
    if m.mla is not None:
        ex.input("`kv_lora_rank` + `qk_rope_head_dim`", f"{m.mla.kv_lora_rank} + {m.mla.qk_rope_head_dim}", src)
    else:
        ex.input("`num_key_value_heads`", _i(m.num_key_value_heads), src)
        ex.input("`head_dim`", _i(m.head_dim), src)
    ex.input(f"bytes per element, {kv.key}", _bytes_el(kv.bits_per_weight / 8), _flink(kv))


def _kv_per_layer_expr(m: Model, kv: Format) -> str:
    eb = _bytes_el(kv.bits_per_weight / 8)
    if m.mla is not None:
        return f"({m.mla.kv_lora_rank} + {m.mla.qk_rope_head_dim}) × {eb}"
    return f"2 × {m.num_key_value_heads} × {m.head_dim} × {eb}"


def kv_sequence_expr(m: Model, ctx: int, per_layer: float) -> str:
    """The substitution of one sequence's KV bytes on a model with window-capped or constant-state layers:
    ``per_layer × (full × ctx + sliding × min(ctx, window)) + linear × state``."""
    full, sliding, linear = F.kv_layer_counts(m)
    parts = [f"{full} × {_i(ctx)}"]
    if sliding:
        parts.append(f"{sliding} × {_i(min(ctx, m.sliding_window.size))}")
    expr = f"{_i(per_layer)} × ({' + '.join(parts)})"
    if linear:
        expr += f" + {linear} × {_i(m.linear_attention.state_bytes_per_layer)}"
    return expr


@macro("block", example='kv_per_token("llama-3.1-70b", kv_dtype="bf16")')
def kv_per_token(model: Model, kv_dtype: Format = "bf16") -> str:
    """Worked example: KV-cache bytes each token adds (MHA/GQA/MQA or MLA; windows and linear layers noted).

    `2 × layers × kv_heads × head_dim × bytes` (MHA/GQA/MQA) or `layers × (kv_lora_rank + rope_dim) × bytes`
    (MLA); notes sliding-window and linear layers.
    """
    m, kv = model, kv_dtype
    full, sliding, linear = F.kv_layer_counts(m)
    per_layer = F.kv_bytes_per_token_per_layer(m, kv)
    per_token = F.kv_bytes_per_token(m, kv)
    ex = Example(f"KV cache per token of {m.name} in {kv.name}")
    ex.formula(_kv_formula(m))
    _kv_inputs(ex, m, kv)
    ex.step(f"per layer: {_kv_per_layer_expr(m, kv)} = {_i(per_layer)} bytes")
    ex.step(f"× {full + sliding} layers that cache KV = {_i(per_token)} bytes")
    ex.result(U.fmt_bytes(per_token) + " per token")
    if sliding:
        ex.note(f"{sliding} of these layers keep at most {_i(m.sliding_window.size)} tokens, so past the window "
                f"each token adds only {U.fmt_bytes(per_layer * full)}.")
    if linear:
        ex.note(f"The {linear} linear-attention layers keep a constant state instead "
                f"({U.fmt_bytes(m.linear_attention.state_bytes_per_layer * linear)} per sequence).")
    if m.mla is not None:
        ex.note("MLA caches one compressed latent and one shared RoPE key per layer, not per-head K and V.")
    return ex.render()


@macro("block", example='kv_cache("llama-3.1-70b", batch=32, context=8192, kv_dtype="bf16")')
def kv_cache(model: Model, batch: int = 1, context: int = 8192, kv_dtype: Format = "bf16", naive: bool = True) -> str:
    """Worked example: KV cache for ``batch`` sequences of ``context`` tokens, with the naive formula for contrast.

    Windows capped, linear-layer states added, with the naive `2 × layers × hidden_size × batch × context
    × bytes` formula and the ratio for contrast (`naive=False` to omit it).
    """
    m, kv, ctx = model, kv_dtype, context
    full, sliding, linear = F.kv_layer_counts(m)
    per_layer = F.kv_bytes_per_token_per_layer(m, kv)
    per_seq = F.kv_bytes_per_sequence(m, ctx, kv)
    total = F.kv_cache_bytes(m, batch, ctx, kv)
    ex = Example(f"KV cache of {m.name}, {batch} × {_i(ctx)} tokens, {kv.name}")
    if sliding or linear:
        ex.formula("per sequence = per_layer × (full_layers × context + sliding_layers × min(context, window)) "
                   "+ linear_layers × state")
    else:
        ex.formula(_kv_formula(m) + "; KV = batch × context × KV bytes/token")
    if naive:
        ex.formula("naive (MHA-only) KV = 2 × layers × hidden_size × batch × context × bytes")
    _kv_inputs(ex, m, kv)
    if naive:
        ex.input("`hidden_size` (naive formula only)", _i(m.hidden_size), _mlink(m))
    ex.input("batch", _i(batch), GIVEN)
    ex.input("context", f"{_i(ctx)} tokens", GIVEN)
    ex.step(f"per layer per token: {_kv_per_layer_expr(m, kv)} = {_i(per_layer)} bytes")
    if sliding or linear:
        ex.step(f"per sequence: {kv_sequence_expr(m, ctx, per_layer)} = {_i(per_seq)} bytes")
    else:
        ex.step(f"per token: {_i(per_layer)} × {full} layers = {_i(per_layer * full)} bytes; "
                f"per sequence: × {_i(ctx)} = {_i(per_seq)} bytes")
    ex.step(f"× batch {batch} = {_i(total)} bytes")
    ex.result(U.fmt_gb(total))
    if naive:
        nv = F.naive_kv_cache_bytes(m.num_hidden_layers, m.hidden_size, batch, ctx, kv.bits_per_weight / 8)
        ex.step(f"naive: 2 × {m.num_hidden_layers} × {_i(m.hidden_size)} × {batch} × {_i(ctx)} × "
                f"{_bytes_el(kv.bits_per_weight / 8)} = {_i(nv)} bytes")
        ratio = nv / total if total else float("inf")
        ex.result(f"the naive formula gives {U.fmt_gb(nv)}, {_n(ratio)}× the correct figure")
        ex.note("The naive formula assumes every query head keeps its own K and V (kv_heads × head_dim = "
                "hidden_size); it is wrong for GQA, MQA and MLA and ignores windows and linear layers.")
    return ex.render()


@macro("block", example='paged_tail_waste("llama-3.1-8b", block_size=16, sequences=256)')
def paged_tail_waste(model: Model, block_size: int = F.DEFAULT_BLOCK_SIZE, kv_dtype: Format = "bf16",
                     sequences: int = 1) -> str:
    """Worked example: internal fragmentation of paged KV, at most block_size − 1 empty slots per sequence.

    Each sequence's last block has at most `block_size − 1` empty slots (about half a block on average),
    times the KV bytes per token, times `sequences`.
    """
    m, kv, bs, n = model, kv_dtype, block_size, sequences
    w = F.paged_tail_waste(m, bs, kv, n)
    ex = Example(f"paged KV tail waste of {m.name}, blocks of {bs} tokens, {n} sequence{'s' if n != 1 else ''}")
    ex.formula("worst case = sequences × (block_size − 1) × KV bytes/token")
    ex.formula("average = sequences × (block_size − 1) / 2 × KV bytes/token (lengths spread evenly over a block)")
    ex.input("KV bytes per token", U.fmt_bytes(w.bytes_per_token), f"{_mlink(m)}, {_flink(kv)}")
    ex.input("block size", f"{bs} tokens", "vLLM default 16" if bs == F.DEFAULT_BLOCK_SIZE else GIVEN)
    ex.input("sequences", _i(n), GIVEN)
    ex.step(f"worst case per sequence: {bs - 1} tokens × {_i(w.bytes_per_token)} bytes = "
            f"{U.fmt_bytes(w.bytes_per_token * w.worst_tokens_per_sequence)}")
    ex.step(f"average per sequence: {_n(w.mean_tokens_per_sequence)} tokens × {_i(w.bytes_per_token)} bytes = "
            f"{U.fmt_bytes(w.bytes_per_token * w.mean_tokens_per_sequence)}")
    if n > 1:
        ex.step(f"× {_i(n)} sequences")
    ex.result(f"at most {U.fmt_gb(w.worst_bytes)} wasted" + (f" across {_i(n)} sequences" if n > 1 else ""))
    ex.result(f"about {U.fmt_gb(w.mean_bytes)} on average")
    ex.note("Only each sequence's last block is partly empty; every other block is full. Blocks shared "
            "through prefix caching are counted once per sequence here, an upper bound.")
    return ex.render()


@macro("inline", example='kv_token_bytes("llama-3.1-70b", "bf16")')
def kv_token_bytes(model: Model, kv_dtype: Format = "bf16") -> str:
    """KV bytes per token, e.g. '327,680 bytes (320 KiB)'."""
    return U.fmt_bytes(F.kv_bytes_per_token(model, kv_dtype))


@macro("inline", example='kv_cache_gb("llama-3.1-70b", batch=32, context="8K")')
def kv_cache_gb(model: Model, batch: int = 1, context: int = 8192, kv_dtype: Format = "bf16") -> str:
    """KV cache for batch × context, e.g. '85.9 GB (80.0 GiB)'."""
    return U.fmt_gb(F.kv_cache_bytes(model, batch, context, kv_dtype))


@macro("inline", example='weight_gb("llama-3.1-70b", "fp8")')
def weight_gb(model: Model, fmt: Format = "bf16", expert_fmt: Format | None = None,
              embed_fmt: Format | None = None) -> str:
    """Weight bytes, e.g. '141.1 GB (131.4 GiB)'."""
    return U.fmt_gb(F.weight_bytes(model, fmt, expert_fmt, embed_fmt))
