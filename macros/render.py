"""Worked examples and reference tables rendered as Markdown, for the mkdocs-macros plugin.

Every function here resolves catalog keys, calls the formulas, and formats the result; nothing here
does arithmetic of its own beyond unit conversion and per-GPU shares. ``MACROS`` maps each macro name (exactly the name
page authors write in ``{{ ... }}``) to its function; the lead's ``define_env`` registers them all.

Conventions:
- Parameter names are the same everywhere: ``model``, ``gpu``, ``fmt`` (weight format),
  ``expert_fmt``, ``embed_fmt``, ``kv_dtype``, ``n_gpus``, ``batch``, ``context``, ``tokens``.
- Token counts accept integers or strings such as ``"8K"`` / ``"128k"`` (K = 1,024 tokens).
- Block macros return one ``example_block`` (the single place the wrapper is defined); inline
  macros return a short formatted value for use inside a sentence.
- Byte results are shown in GB (1e9) and GiB (2**30).
- Every input links to its catalog entry through :func:`catalog_href` (the single place the
  reference-page URLs are built).
- Bad input raises :class:`~macros.errors.MacroInputError` naming the valid choices.

Pure Python + PyYAML: nothing here imports MkDocs.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Callable

from . import formulas as F
from . import units as U
from .catalog import Catalog, Format, Gpu, Model, UnknownKeyError, load_catalog
from .errors import MacroInputError

# ==================================================================================================
# links and the block wrapper (single points of change)
# ==================================================================================================

#: Reference pages, docs-relative. Worked examples link their inputs to anchors on these pages.
REFERENCE_PAGES = {
    "model": "/reference/models.md",
    "gpu": "/reference/gpus.md",
    "format": "/reference/formats.md",
    "price": "/reference/prices.md",
    "api": "/reference/prices.md",
    "what-fits": "/reference/what-fits.md",
}


def anchor_id(kind: str, key: str) -> str:
    """HTML id of a catalog entry's heading: ``model-llama-3-1-70b`` (dots become hyphens)."""
    return f"{kind}-{key.replace('.', '-')}"


def catalog_href(kind: str, key: str) -> str:
    """Link target of a catalog entry, e.g. ``/reference/models.md#model-llama-3-1-70b``."""
    return f"{REFERENCE_PAGES[kind]}#{anchor_id(kind, key)}"


def catalog_link(kind: str, key: str, text: str) -> str:
    """A Markdown link to a catalog entry."""
    return f"[{text}]({catalog_href(kind, key)})"


def example_block(title: str, body_md: str) -> str:
    """Wrap a worked example. Every block macro goes through here; change the wrapper only here."""
    return f'<div class="worked-example" markdown>\n\n**Worked example — {title}**\n\n{body_md}\n\n</div>'


# ==================================================================================================
# input resolution (keys -> catalog objects), each failure a MacroInputError listing valid choices
# ==================================================================================================

def _cat() -> Catalog:
    return load_catalog()


def _as_input_error(fn: Callable[..., str]) -> Callable[..., str]:
    """Turn any ValueError from the catalog or formulas into a MacroInputError (same message)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MacroInputError:
            raise
        except ValueError as exc:
            raise MacroInputError(str(exc)) from exc

    return wrapper


def _model(key: str) -> Model:
    try:
        return _cat().model(key)
    except UnknownKeyError as exc:
        raise MacroInputError(str(exc)) from None


def _gpu(key: str) -> Gpu:
    try:
        return _cat().gpu(key)
    except UnknownKeyError as exc:
        raise MacroInputError(str(exc)) from None


def _fmt(key: str) -> Format:
    try:
        return _cat().format(key)
    except UnknownKeyError as exc:
        raise MacroInputError(str(exc)) from None


def _opt_fmt(key: str | None) -> Format | None:
    return None if key is None else _fmt(key)


def _kv_dtype(key: str) -> Format:
    f = _fmt(key)
    if not f.kv_cache:
        valid = ", ".join(sorted(_cat().kv_formats()))
        raise MacroInputError(f"format {key!r} cannot be used as a KV-cache dtype (formats.yaml marks it "
                              f"kv_cache: false); valid KV dtypes: {valid}")
    return f


_TOKENS_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")


def _tokens(name: str, value, allow_zero: bool = False) -> int:
    """A token count from an int or a string like '8K' (K = 1024, M = 1024**2)."""
    if isinstance(value, str):
        m = _TOKENS_RE.match(value)
        if not m:
            raise MacroInputError(f"{name} must be a whole number of tokens such as 8192 or '8K', got {value!r}")
        mult = {"": 1, "k": 1024, "m": 1024**2}[m.group(2).lower()]
        value = float(m.group(1)) * mult
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
        raise MacroInputError(f"{name} must be a whole number of tokens, got {value!r}")
    value = int(value)
    if value < 0 or (value == 0 and not allow_zero):
        raise MacroInputError(f"{name} must be {'>= 0' if allow_zero else '>= 1'}, got {value}")
    return value


def _count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer() or value < 1:
        raise MacroInputError(f"{name} must be a whole number >= 1, got {value!r}")
    return int(value)


def _number(name: str, value, *, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise MacroInputError(f"{name} must be a number, got {value!r}")
    if positive and value <= 0:
        raise MacroInputError(f"{name} must be > 0, got {value!r}")
    if not positive and value < 0:
        raise MacroInputError(f"{name} must be >= 0, got {value!r}")
    return float(value)


def _check_tp(m: Model, n_gpus: int) -> None:
    try:
        F.check_tp(m, n_gpus)
    except ValueError as exc:
        raise MacroInputError(str(exc)) from None


def _peak_flops(g: Gpu, fmt: Format) -> tuple[float, str]:
    """The dense tensor rate a matmul in ``fmt`` runs at on ``g``, and its label.

    FP8 weights with FP8 activations use the FP8 rate, INT8 the INT8 rate; weight-only formats
    (INT4, MXFP4 on GPUs without FP4 matmuls, GGUF, NF4) dequantize to BF16 and use the BF16 rate.
    """
    if fmt.key == "fp8":
        if g.fp8_dense_flops is None:
            raise MacroInputError(f"{g.name} has no FP8 tensor cores (gpus.yaml fp8_dense_flops is null); "
                                  "use fmt='bf16' or a GPU with FP8: "
                                  + ", ".join(k for k, v in _cat().gpus.items() if v.fp8_dense_flops))
        return g.fp8_dense_flops, "dense FP8"
    if fmt.key == "int8":
        if g.int8_dense_ops is None:
            raise MacroInputError(f"{g.name} has no INT8 tensor rate in gpus.yaml; use fmt='bf16'")
        return g.int8_dense_ops, "dense INT8"
    return g.bf16_dense_flops, "dense BF16"


# ==================================================================================================
# small formatting helpers
# ==================================================================================================

def _i(n) -> str:
    return U.fmt_int(n)


def _gib(n_bytes: float) -> str:
    """Bytes in GiB only, for intermediate steps that mix with GiB allowances."""
    return f"{_n(U.bytes_to_gib(n_bytes))} GiB"


_MD_SPECIAL = re.compile(r"([\\`*_\[\]])")


def _esc(text: str, cell: bool = False) -> str:
    """Free text from the catalog, escaped so Markdown shows it literally (``*``, ``_``, brackets, ``<``);
    in a table cell ``|`` is escaped too and newlines become spaces."""
    out = _MD_SPECIAL.sub(r"\\\1", text).replace("<", "&lt;")
    if cell:
        out = out.replace("|", "\\|").replace("\n", " ")
    return out


def _n(x: float) -> str:
    """A number as given: whole values without decimals ('12,000'), others at fmt_num precision."""
    if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and float(x).is_integer():
        return _i(x)
    return U.fmt_num(x)


def _sci(x: float) -> str:
    """A large count in scientific notation: 4.624e15 -> '4.62 × 10^15'."""
    if x == 0:
        return "0"
    exp = int(math.floor(math.log10(abs(x))))
    return f"{x / 10**exp:.2f} × 10^{exp}"


def _frac(x: float) -> str:
    """A share such as 0.5 or 0.125 without trailing zeros."""
    return f"{x:.4g}"


def _bits(x: float) -> str:
    s = f"{x:.6f}".rstrip("0").rstrip(".")
    return s


def _bytes_el(x: float) -> str:
    """Bytes per element: 2, 1, 0.515625 ..."""
    return _bits(x)


def _mlink(m: Model) -> str:
    return catalog_link("model", m.key, m.name)


def _glink(g: Gpu) -> str:
    return catalog_link("gpu", g.key, g.name)


def _flink(f: Format) -> str:
    return catalog_link("format", f.key, f.name)


GIVEN = "given"
ACTIVATION_BYTES = 2  # BF16/FP16 activations: the all-reduced hidden states


class _Example:
    """Collects the parts of a worked example and renders them in a fixed order."""

    def __init__(self, title: str):
        self.title = title
        self.formulas: list[str] = []
        self.inputs: list[tuple[str, str, str]] = []
        self.steps: list[str] = []
        self.results: list[str] = []
        self.notes: list[str] = []

    def formula(self, text: str) -> "_Example":
        self.formulas.append(text)
        return self

    def input(self, name: str, value: str, source: str) -> "_Example":
        self.inputs.append((name, value, source))
        return self

    def step(self, text: str) -> "_Example":
        self.steps.append(text)
        return self

    def result(self, text: str) -> "_Example":
        self.results.append(text)
        return self

    def note(self, text: str) -> "_Example":
        self.notes.append(text)
        return self

    def render(self) -> str:
        parts: list[str] = []
        if self.formulas:
            label = "Formula" if len(self.formulas) == 1 else "Formulas"
            parts.append(f"**{label}**")
            parts.append("\n".join(f"- `{f}`" for f in self.formulas))
        if self.inputs:
            rows = ["| Input | Value | Source |", "| --- | --- | --- |"]
            rows += [f"| {n} | {v} | {s} |" for n, v, s in self.inputs]
            parts.append("\n".join(rows))
        if self.steps:
            parts.append("**Substitution**")
            parts.append("\n".join(f"- {s}" for s in self.steps))
        if len(self.results) == 1:
            parts.append(f"**Result:** {self.results[0]}")
        elif self.results:
            parts.append("**Result**")
            parts.append("\n".join(f"- {r}" for r in self.results))
        if self.notes:
            parts.append("*Assumptions and notes:* " + " ".join(self.notes))
        return example_block(self.title, "\n\n".join(parts))


# ==================================================================================================
# parameters and weights
# ==================================================================================================

@_as_input_error
def param_count(model: str) -> str:
    """Worked example: parameter count from the config, by component, against the vendor's figure."""
    m = _model(model)
    b = F.param_breakdown(m)
    L = m.num_hidden_layers
    ex = _Example(f"parameters of {m.name} from its config")
    ex.formula("total = embedding + lm_head + layers × attention + dense MLPs + experts + router + norms")
    if m.is_moe:
        ex.formula("active = total − (num_experts − experts_per_token) × 3 × hidden × moe_intermediate × moe_layers")
    src = _mlink(m)
    ex.input("`hidden_size`", _i(m.hidden_size), src)
    ex.input("`num_hidden_layers`", _i(L), src)
    ex.input("`vocab_size`", _i(m.vocab_size), src)
    ex.input("`tie_word_embeddings`", str(m.tie_word_embeddings).lower(), src)
    if m.mla is None:
        ex.input("heads / KV heads / `head_dim`",
                 f"{m.num_attention_heads} / {m.num_key_value_heads} / {m.head_dim}", src)
    else:
        ex.input("heads; MLA q / kv LoRA rank; nope / rope / v dims",
                 f"{m.num_attention_heads}; {m.mla.q_lora_rank} / {m.mla.kv_lora_rank}; "
                 f"{m.mla.qk_nope_head_dim} / {m.mla.qk_rope_head_dim} / {m.mla.v_head_dim}", src)
    if m.intermediate_size and (not m.is_moe or m.moe.first_dense_layers):
        ex.input("`intermediate_size`", _i(m.intermediate_size), src)
    if m.is_moe:
        mo = m.moe
        ex.input("experts (routed / shared / per token)",
                 f"{mo.num_experts} / {mo.num_shared_experts} / {mo.experts_per_token}", src)
        ex.input("`moe_intermediate_size`; dense layers first", f"{_i(mo.moe_intermediate_size)}; {mo.first_dense_layers}", src)
    rows = [("embedding", b.embedding), ("lm_head", b.lm_head), ("attention (all layers)", b.attention),
            ("dense MLPs", b.dense_mlp), ("routed experts", b.routed_experts),
            ("shared experts", b.shared_experts), ("router", b.router), ("norms", b.norms)]
    for name, val in rows:
        if val:
            ex.step(f"{name}: {_i(val)}" + (f" ({U.fmt_params(val)})" if val >= 1e6 else ""))
    ex.result(f"{_i(b.total)} parameters ({U.fmt_params(b.total)}) in total")
    if m.is_moe:
        ex.result(f"{_i(b.active)} ({U.fmt_params(b.active)}) active per token, "
                  f"{U.fmt_params(b.active - b.embedding)} without the input embedding")
    if m.stated_total_params:
        diff = F.relative_difference(b.total, m.stated_total_params)
        ex.result(f"vendor states {U.fmt_params(m.stated_total_params)} "
                  f"([source]({m.stated_params_source})): computed is {U.fmt_pct(diff)} off")
    if b.approximate:
        ex.note("Linear-attention layers are counted with the standard attention shape, so this total is approximate.")
    ex.note("Omits tensors below 0.1% of the total (output-projection bias, extra norms, sinks, expert biases).")
    return ex.render()


@_as_input_error
def weights(model: str, fmt: str = "bf16", expert_fmt: str | None = None, embed_fmt: str | None = None) -> str:
    """Worked example: weight memory of ``model`` in ``fmt`` (optionally experts/embeddings in another format)."""
    m = _model(model)
    f, fe, fm = _fmt(fmt), _opt_fmt(expert_fmt), _opt_fmt(embed_fmt)
    b = F.param_breakdown(m)
    wb = F.weight_bytes_breakdown(m, f, fe, fm, breakdown=b)
    if fm is None and f.embedding_bits_per_weight is not None:
        fm = next((x for x in _cat().formats.values() if x.bits_per_weight == f.embedding_bits_per_weight
                   and x.kind == "float"), None)
    mixed = fe is not None or fm is not None
    if fe is not None and not b.routed_experts:
        raise MacroInputError(f"expert_fmt applies to MoE models only; {m.name} is dense "
                              "(omit expert_fmt, or use embed_fmt for the embeddings)")
    title = f"weights of {m.name} in {f.name}" + (" (mixed formats)" if mixed else "")
    ex = _Example(title)
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
            ex.step(f"experts: {_i(b.routed_experts)} × {_bits(fe_.bits_per_weight)} / 8 = {_i(wb.routed_experts)} bytes")
        ex.step(f"embeddings: {_i(b.embeddings)} × {_bits(fm_.bits_per_weight)} / 8 = {_i(wb.embeddings)} bytes")
        ex.step(f"rest: {_i(rest)} × {_bits(f.bits_per_weight)} / 8 = {_i(wb.rest)} bytes")
        ex.step(f"sum = {_i(wb.total)} bytes")
    ex.result(U.fmt_gb(wb.total))
    ex.note("Weights only: KV cache, activations and runtime memory come on top. Effective bits include the "
            "format's scale overhead.")
    return ex.render()


# ==================================================================================================
# KV cache
# ==================================================================================================

def _kv_formula(m: Model) -> str:
    if m.mla is not None:
        return "KV bytes/token = layers × (kv_lora_rank + qk_rope_head_dim) × bytes"
    return "KV bytes/token = 2 × layers × num_key_value_heads × head_dim × bytes"


def _kv_inputs(ex: _Example, m: Model, kv: Format) -> None:
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


@_as_input_error
def kv_per_token(model: str, kv_dtype: str = "bf16") -> str:
    """Worked example: KV-cache bytes each token adds (MHA/GQA/MQA or MLA; windows and linear layers noted)."""
    m = _model(model)
    kv = _kv_dtype(kv_dtype)
    full, sliding, linear = F.kv_layer_counts(m)
    per_layer = F.kv_bytes_per_token_per_layer(m, kv)
    per_token = F.kv_bytes_per_token(m, kv)
    ex = _Example(f"KV cache per token of {m.name} in {kv.name}")
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


@_as_input_error
def kv_cache(model: str, batch: int = 1, context=8192, kv_dtype: str = "bf16", naive: bool = True) -> str:
    """Worked example: KV cache for ``batch`` sequences of ``context`` tokens, with the naive formula for contrast."""
    m = _model(model)
    kv = _kv_dtype(kv_dtype)
    batch = _count("batch", batch)
    ctx = _tokens("context", context)
    full, sliding, linear = F.kv_layer_counts(m)
    per_layer = F.kv_bytes_per_token_per_layer(m, kv)
    per_seq = F.kv_bytes_per_sequence(m, ctx, kv)
    total = F.kv_cache_bytes(m, batch, ctx, kv)
    ex = _Example(f"KV cache of {m.name}, {batch} × {_i(ctx)} tokens, {kv.name}")
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
        parts = [f"{full} × {_i(ctx)}"]
        if sliding:
            parts.append(f"{sliding} × {_i(min(ctx, m.sliding_window.size))}")
        expr = f"{_i(per_layer)} × ({' + '.join(parts)})"
        if linear:
            expr += f" + {linear} × {_i(m.linear_attention.state_bytes_per_layer)}"
        ex.step(f"per sequence: {expr} = {_i(per_seq)} bytes")
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


@_as_input_error
def paged_tail_waste(model: str, block_size: int = F.DEFAULT_BLOCK_SIZE, kv_dtype: str = "bf16",
                     sequences: int = 1) -> str:
    """Worked example: internal fragmentation of paged KV, at most block_size − 1 empty slots per sequence."""
    m, kv = _model(model), _kv_dtype(kv_dtype)
    bs = _count("block_size", block_size)
    n = _count("sequences", sequences)
    w = F.paged_tail_waste(m, bs, kv, n)
    ex = _Example(f"paged KV tail waste of {m.name}, blocks of {bs} tokens, {n} sequence{'s' if n != 1 else ''}")
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


# ==================================================================================================
# memory budget, tensor parallelism
# ==================================================================================================

def _budget(m: Model, g: Gpu, f: Format, kv: Format, n_gpus: int, gpu_util: float, activation_gib: float,
            reserve_gib: float, expert_fmt: Format | None):
    _check_tp(m, n_gpus)
    shard = F.tp_shard(m, n_gpus, f, expert_fmt)
    wtotal = shard.weights_total
    budget = F.kv_budget_bytes(g.memory_bytes, shard.weights_per_gpu, gpu_util,
                               activation_gib * U.GiB, reserve_gib * U.GiB)
    return wtotal, shard, budget


@_as_input_error
def memory_budget(model: str, gpu: str, fmt: str = "bf16", n_gpus: int = 1, context=8192,
                  kv_dtype: str = "bf16", gpu_util: float = F.DEFAULT_GPU_UTILIZATION,
                  activation_gib: float = 2.0, reserve_gib: float = 1.0, block_size: int = F.DEFAULT_BLOCK_SIZE,
                  expert_fmt: str | None = None) -> str:
    """Worked example: does ``model`` fit on ``n_gpus`` x ``gpu``, how many KV tokens, sequences and context."""
    m, g, f, kv = _model(model), _gpu(gpu), _fmt(fmt), _kv_dtype(kv_dtype)
    fe = _opt_fmt(expert_fmt)
    n = _count("n_gpus", n_gpus)
    ctx = _tokens("context", context)
    block_size = _count("block_size", block_size)
    gpu_util = _number("gpu_util", gpu_util)
    activation_gib = _number("activation_gib", activation_gib, positive=False)
    reserve_gib = _number("reserve_gib", reserve_gib, positive=False)
    wtotal, shard, budget = _budget(m, g, f, kv, n, gpu_util, activation_gib, reserve_gib, fe)
    ex = _Example(f"{m.name} in {f.name} on {n} × {g.name}")
    ex.formula("KV budget per GPU = memory × gpu_util − weights per GPU − activations − runtime reserve")
    ex.formula("max sequences = floor(KV budget / (KV bytes per block × ceil(context / block_size)))")
    ex.input("GPU memory", U.fmt_gb(g.memory_bytes), _glink(g))
    ex.input("weights (all GPUs)", U.fmt_gb(wtotal), f"{_mlink(m)}, {_flink(f)}" + (f", experts {_flink(fe)}" if fe else ""))
    ex.input("TP degree (= GPUs)", str(n), GIVEN)
    ex.input("`--gpu-memory-utilization`", _bits(gpu_util),
             "assumption (vLLM's default was 0.9; recent releases default to 0.92)")
    ex.input("activations / runtime reserve per GPU", f"{_bits(activation_gib)} GiB / {_bits(reserve_gib)} GiB",
             "assumption")
    ex.input(f"KV dtype ({kv.key}), block size", f"{_bytes_el(kv.bits_per_weight / 8)} bytes, {block_size} tokens",
             _flink(kv))
    ex.input("context per sequence", f"{_i(ctx)} tokens", GIVEN)
    usable = g.memory_bytes * gpu_util
    ex.step(f"usable: {_gib(g.memory_bytes)} × {_bits(gpu_util)} = {_gib(usable)}")
    if shard.replicated_extra_bytes:
        ex.step(f"weights per GPU: {_gib(wtotal)} / {n} + {U.fmt_bytes(shard.replicated_extra_bytes)} of replicated "
                f"tensors = {_gib(shard.weights_per_gpu)}")
    else:
        ex.step(f"weights per GPU: {_gib(wtotal)} / {n} = {_gib(shard.weights_per_gpu)}")
    ex.step(f"KV budget: {_gib(usable)} − {_gib(shard.weights_per_gpu)} − {_bits(activation_gib)} GiB − "
            f"{_bits(reserve_gib)} GiB = {_gib(budget)}")
    if budget <= 0:
        ex.result(f"does not fit: the weights per GPU alone leave no room for a KV cache "
                  f"(short by {U.fmt_gb(-budget)} per GPU)")
        valid = F.valid_tp_degrees(m)
        ex.note(f"Valid TP degrees for {m.name}: {', '.join(map(str, valid))}.")
        return ex.render()
    per_tok_gpu = F.kv_bytes_per_token(m, kv) * shard.kv_fraction
    ex.step(f"KV per token per GPU: {_i(F.kv_bytes_per_token(m, kv))} bytes × {_frac(shard.kv_fraction)} "
            f"(share held by one GPU) = {_i(per_tok_gpu)} bytes")
    tokens = F.kv_tokens_in_budget(budget, per_tok_gpu)
    per_seq = F.kv_bytes_per_sequence_paged(m, ctx, kv, block_size, shard.kv_fraction)
    seqs = F.max_concurrent_sequences(budget, per_seq)
    ex.step(f"per sequence at {_i(ctx)} tokens ({F.blocks_per_sequence(ctx, block_size)} blocks): "
            f"{_i(per_seq)} bytes per GPU")
    ex.step(f"max sequences: floor({_i(budget)} / {_i(per_seq)}) = {_i(seqs)}")
    max_ctx, limit = F.max_context_one_sequence(m, budget, kv, block_size, shard.kv_fraction)
    ex.result(f"fits; KV budget {U.fmt_gb(budget)} per GPU = {_i(tokens)} tokens")
    ex.result(f"{_i(seqs)} concurrent sequences of {_i(ctx)} tokens")
    lim = ("the model's `max_position_embeddings`" if limit == "max_position_embeddings" else "memory")
    ex.result(f"longest single sequence: {_i(max_ctx)} tokens (limited by {lim})")
    if ctx > m.max_position_embeddings:
        ex.note(f"The requested context exceeds the model's max_position_embeddings ({_i(m.max_position_embeddings)}).")
    if F.kv_layer_counts(m)[1] or F.kv_layer_counts(m)[2]:
        ex.note("Sliding-window and linear layers are capped per sequence, so tokens-per-budget is an uncapped lower bound.")
    ex.note("vLLM measures activations with a profiling pass at start-up; the allowances here are illustrative.")
    return ex.render()


@_as_input_error
def tp_shards(model: str, n_gpus: int = 8, fmt: str = "bf16", kv_dtype: str = "bf16", batch: int = 1,
              context=8192, expert_fmt: str | None = None) -> str:
    """Worked example: valid TP degrees and what each of ``n_gpus`` GPUs holds (weights, KV heads, KV bytes)."""
    m, f, kv = _model(model), _fmt(fmt), _kv_dtype(kv_dtype)
    fe = _opt_fmt(expert_fmt)
    n = _count("n_gpus", n_gpus)
    batch = _count("batch", batch)
    ctx = _tokens("context", context)
    valid = F.valid_tp_degrees(m)
    ex = _Example(f"tensor parallelism for {m.name} on {n} GPUs")
    ex.formula("TP valid if heads % TP == 0 and (kv_heads % TP == 0 when TP ≤ kv_heads, else TP % kv_heads == 0)")
    ex.formula("weights per GPU = weights / TP + replicated tensors' extra copies; "
               "KV heads per GPU = max(1, kv_heads / TP)")
    src = _mlink(m)
    ex.input("`num_attention_heads`", _i(m.num_attention_heads), src)
    ex.input("`num_key_value_heads`", _i(m.num_key_value_heads) + (" (MLA: latent is shared)" if m.mla else ""), src)
    ex.input("TP degree", str(n), GIVEN)
    ex.step(f"valid TP degrees up to 16: {', '.join(map(str, valid))}")
    if n not in valid:
        _check_tp(m, n)  # raises with the reason
    shard = F.tp_shard(m, n, f, fe)
    wtotal = shard.weights_total
    ex.input("weights", U.fmt_gb(wtotal), f"{src}, {_flink(f)}")
    ex.step(f"query heads per GPU: {m.num_attention_heads} / {n} = {m.num_attention_heads // n}")
    if m.mla is not None:
        ex.step("MLA latent cache: replicated on every GPU (each GPU's heads need the whole latent)")
    elif n <= m.num_key_value_heads:
        ex.step(f"KV heads per GPU: {m.num_key_value_heads} / {n} = {shard.kv_heads_per_gpu}")
    else:
        ex.step(f"KV heads per GPU: 1, each KV head replicated on {n} / {m.num_key_value_heads} = "
                f"{shard.kv_head_replicas} GPUs")
    extra = F.tp_replicated_extra_params(m, n)
    parts = [("norms", "RMSNorm weights"), ("router", "MoE router"), ("mla_down_proj", "MLA q_a/kv_a projections"),
             ("kv_heads", "one whole K/V head per GPU")]
    listed = ", ".join(f"{label} {U.fmt_params(extra[k])}" for k, label in parts if extra[k] >= 1)
    if listed:
        ex.step(f"replicated tensors, extra parameters per GPU over an even split: {listed}")
    ex.step(f"weights per GPU: {U.fmt_gb(wtotal)} / {n} + {U.fmt_bytes(shard.replicated_extra_bytes)} replicated = "
            f"{U.fmt_gb(shard.weights_per_gpu)} (+{U.fmt_pct(shard.weights_per_gpu / shard.even_split - 1)} over "
            f"{U.fmt_gb(shard.even_split)})")
    kv_total = F.kv_cache_bytes(m, batch, ctx, kv)
    kv_gpu = kv_total * shard.kv_fraction
    ex.step(f"KV for {batch} × {_i(ctx)} tokens: {U.fmt_gb(kv_total)} in total, × {_frac(shard.kv_fraction)} "
            f"= {U.fmt_gb(kv_gpu)} per GPU")
    ex.result(f"TP {n}: {U.fmt_gb(shard.weights_per_gpu)} of weights and {U.fmt_gb(kv_gpu)} of KV per GPU")
    if shard.kv_fraction * n > 1 + 1e-9:
        ex.note(f"Replication means the GPUs together hold {_n(shard.kv_fraction * n)}× the model's KV cache.")
    ex.note("Rule as implemented by vLLM's QKVParallelLinear. Replicated on every GPU: RMSNorm weights, a whole "
            "K/V head when TP exceeds the KV heads, MLA's q_a/kv_a projections and the MoE router "
            "(vLLM ReplicatedLinear); embedding and lm_head are split by vocabulary rows.")
    return ex.render()


def _link_time(ex: "_Example", gpu: str, n_bytes: float, what: str) -> None:
    """Add the GPU's per-direction link bandwidth as an input and the time to move ``n_bytes`` as a result."""
    g = _gpu(gpu)
    bw = g.interconnect_bytes_per_s_per_direction
    if not bw:
        raise MacroInputError(f"{g.name} has no interconnect bandwidth in gpus.yaml")
    ex.input("link bandwidth per direction", U.fmt_bandwidth(bw), _glink(g))
    ex.result(f"{U.fmt_seconds(F.transfer_time(n_bytes, bw))} {what}")


@_as_input_error
def allreduce_volume(model: str, n_gpus: int = 8, tokens=1, dtype: str = "bf16", gpu: str | None = None) -> str:
    """Worked example: TP all-reduce bytes per token (2 per layer, ring 2(p−1)/p), optionally time on ``gpu``'s link."""
    m, f = _model(model), _fmt(dtype)
    n = _count("n_gpus", n_gpus)
    toks = _tokens("tokens", tokens)
    eb = f.bits_per_weight / 8
    per_layer = F.tp_allreduce_bytes_per_token_per_layer(m.hidden_size, eb, n)
    per_token = F.tp_allreduce_bytes_per_token(m, eb, n)
    total = per_token * toks
    ex = _Example(f"TP all-reduce traffic of {m.name} on {n} GPUs")
    ex.formula("bytes sent per GPU per token = layers × 2 all-reduces × 2(p − 1)/p × hidden_size × bytes")
    ex.input("`hidden_size`", _i(m.hidden_size), _mlink(m))
    ex.input("`num_hidden_layers`", _i(m.num_hidden_layers), _mlink(m))
    ex.input(f"activation bytes ({f.key})", _bytes_el(eb), _flink(f))
    ex.input("GPUs p / tokens", f"{n} / {_i(toks)}", GIVEN)
    ex.step(f"per layer: 2 × 2 × ({n} − 1)/{n} × {_i(m.hidden_size)} × {_bytes_el(eb)} = {_i(per_layer)} bytes")
    ex.step(f"× {m.num_hidden_layers} layers = {_i(per_token)} bytes per token")
    ex.step(f"× {_i(toks)} tokens = {_i(total)} bytes")
    ex.result(f"{U.fmt_bytes(total)} sent by each GPU")
    if gpu is not None:
        _link_time(ex, gpu, total, "of link time at full bandwidth")
        g = _gpu(gpu)
        if n > 1 and g.allreduce_latency_s:
            calls = 2 * m.num_hidden_layers
            t = F.tp_decode_allreduce_time(m, toks, eb, n, g.allreduce_latency_s,
                                           g.interconnect_bytes_per_s_per_direction)
            ex.input("all-reduce latency per call", U.fmt_seconds(g.allreduce_latency_s), _glink(g))
            ex.step(f"latency: {calls} calls (one step over all {_i(toks)} tokens) × "
                    f"{U.fmt_seconds(g.allreduce_latency_s)} = {U.fmt_seconds(calls * g.allreduce_latency_s)}")
            ex.result(f"{U.fmt_seconds(t)} per step with the per-call latency added")
    ex.note("Megatron-style TP: one all-reduce after attention, one after the MLP. Each call also pays a fixed "
            "latency; at small batch (decode) it outweighs the bandwidth term.")
    return ex.render()


@_as_input_error
def ep_all_to_all(model: str, tokens=256, n_gpus: int = 8, dtype: str = "bf16", gpu: str | None = None) -> str:
    """Worked example: expert-parallel dispatch + combine bytes per step for ``tokens`` tokens."""
    m, f = _model(model), _fmt(dtype)
    if not m.is_moe:
        dense = ", ".join(k for k, v in _cat().models.items() if v.is_moe)
        raise MacroInputError(f"{model!r} is a dense model; expert parallelism needs an MoE model: {dense}")
    toks = _tokens("tokens", tokens)
    ep = _count("n_gpus", n_gpus)
    eb = f.bits_per_weight / 8
    k = m.moe.experts_per_token
    per_layer = F.ep_all_to_all_bytes(toks, k, m.hidden_size, eb)
    layers = m.num_hidden_layers - m.moe.first_dense_layers
    total = per_layer * layers
    remote = total * (ep - 1) / ep
    ex = _Example(f"expert-parallel all-to-all of {m.name}, {_i(toks)} tokens over EP {ep}")
    ex.formula("bytes per MoE layer = 2 (dispatch + combine) × tokens × top_k × hidden_size × bytes")
    ex.input("`experts_per_token` (top-k)", str(k), _mlink(m))
    ex.input("`hidden_size`", _i(m.hidden_size), _mlink(m))
    ex.input("MoE layers", str(layers), _mlink(m))
    ex.input(f"activation bytes ({f.key})", _bytes_el(eb), _flink(f))
    ex.input("tokens in the step / EP ranks", f"{_i(toks)} / {ep}", GIVEN)
    ex.step(f"per MoE layer: 2 × {_i(toks)} × {k} × {_i(m.hidden_size)} × {_bytes_el(eb)} = {_i(per_layer)} bytes")
    ex.step(f"× {layers} MoE layers = {_i(total)} bytes per step")
    ex.step(f"crossing GPUs under uniform routing: × ({ep} − 1)/{ep} = {_i(remote)} bytes")
    ex.result(f"{U.fmt_bytes(remote)} over the interconnect per step; each GPU sends {U.fmt_bytes(remote / ep)}")
    if gpu is not None:
        _link_time(ex, gpu, remote / ep, "of link time per step at full bandwidth")
    ex.note("Skewed routing concentrates traffic on hot experts' GPUs; FP8 dispatch halves the dispatch bytes.")
    return ex.render()


# ==================================================================================================
# speed
# ==================================================================================================

def _decode(m: Model, g: Gpu, f: Format, fe: Format | None, kv: Format, n: int, batch: int, ctx: int):
    _check_tp(m, n)
    wb = F.weight_bytes_breakdown(m, f, fe)
    read = F.weight_bytes_read_per_step(m, f, batch, fe)
    touched = (F.expected_experts_touched(m.moe.num_experts, m.moe.experts_per_token, batch)
               if m.is_moe else None)
    frac = F.kv_fraction_per_gpu(m, n)
    kv_seq = F.kv_bytes_per_sequence(m, ctx, kv) * frac
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


@_as_input_error
def decode_speed(model: str, gpu: str, fmt: str = "bf16", n_gpus: int = 1, batch: int = 1, context=8192,
                 kv_dtype: str = "bf16", expert_fmt: str | None = None) -> str:
    """Worked example: memory-bandwidth bound of decode (tokens/s per sequence and aggregate)."""
    m, g, f, kv = _model(model), _gpu(gpu), _fmt(fmt), _kv_dtype(kv_dtype)
    fe = _opt_fmt(expert_fmt)
    n = _count("n_gpus", n_gpus)
    batch = _count("batch", batch)
    ctx = _tokens("context", context)
    bound, wb, touched, kv_seq, read = _decode(m, g, f, fe, kv, n, batch, ctx)
    ex = _Example(f"decode bound of {m.name} ({f.name}) on {n} × {g.name}, batch {batch} at {_i(ctx)} tokens")
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
            "add time" + ("; the all-reduces are assumed not to overlap the memory reads." if n > 1 else ".") + " Weights are read once per step for the whole batch; the input "
            "embedding is a lookup, so only its rows for this step's tokens are read (a tied table is read "
            "in full as the output projection).")
    if m.is_moe:
        ex.note("Expert coverage assumes uniform, independent routing.")
    return ex.render()


@_as_input_error
def prefill_time(model: str, gpu: str, tokens=8192, fmt: str = "bf16", n_gpus: int = 1, mfu: float = 0.5,
                 attention: bool = True) -> str:
    """Worked example: compute-bound prefill time, 2 × active params × tokens (+ attention) / (peak × MFU)."""
    m, g, f = _model(model), _gpu(gpu), _fmt(fmt)
    n = _count("n_gpus", n_gpus)
    toks = _tokens("tokens", tokens)
    mfu = _number("mfu", mfu)
    peak, label = _peak_flops(g, f)
    b = F.param_breakdown(m)
    active = b.compute_active
    head = b.lm_head or b.embedding
    sampled = min(1, toks)
    dense = F.prefill_matmul_flops(m, toks, sampled)
    attn = F.prefill_attention_flops(m, toks) if attention else 0.0
    t = F.prefill_time(dense + attn, peak * n, mfu)
    ex = _Example(f"prefill of {_i(toks)} tokens on {m.name}, {n} × {g.name}")
    ex.formula("time = (2 × (active_params − lm_head) × tokens + 2 × lm_head × sampled positions "
               "+ attention FLOPs) / (GPUs × peak × MFU)")
    ex.input("active parameters in matmuls (computed)", f"{_i(active)} ({U.fmt_params(active)})", _mlink(m))
    ex.input("of which the LM head" + (" (tied to the embedding)" if not b.lm_head else ""),
             f"{_i(head)} ({U.fmt_params(head)})", _mlink(m))
    ex.input(f"peak per GPU ({label})", U.fmt_flops(peak), _glink(g))
    ex.input("tokens / GPUs", f"{_i(toks)} / {n}", GIVEN)
    ex.input("MFU", _bits(mfu), "assumption")
    ex.step(f"dense: 2 × {_i(active - head)} × {_i(toks)} + 2 × {_i(head)} × {sampled} = {_sci(dense)} FLOPs")
    if attention:
        ex.step(f"attention scores (causal): {_sci(attn)} FLOPs")
    ex.step(f"time: {_sci(dense + attn)} / ({n} × {U.fmt_flops(peak)} × {_bits(mfu)}) = {U.fmt_seconds(t)}")
    ex.result(f"about {U.fmt_seconds(t)} of compute (time to first token, ignoring queueing)")
    ex.note("Peak is the dense tensor rate, not the with-sparsity figure. The input embedding is a lookup, "
            "so its parameters are not counted as FLOPs. The LM head runs only at the position that is "
            "sampled (vLLM's V1 model runner computes logits at logits_indices, one per request), not at "
            "every prompt token; prompt log-probabilities would need it at every position.")
    return ex.render()


@_as_input_error
def arithmetic_intensity(gpu: str, batch: int = 1, fmt: str = "bf16") -> str:
    """Worked example: decode GEMM intensity ≈ 2 × batch / bytes per weight against the GPU's ridge point."""
    g, f = _gpu(gpu), _fmt(fmt)
    batch = _count("batch", batch)
    peak, label = _peak_flops(g, f)
    ridge = F.ridge_point(peak, g.memory_bandwidth_bytes_per_s)
    bpw = f.bits_per_weight / 8
    ai = F.decode_arithmetic_intensity(batch, bpw)
    needed = F.batch_to_reach_ridge(ridge, bpw)
    ex = _Example(f"arithmetic intensity at batch {batch} ({f.name}) on {g.name}")
    ex.formula("decode GEMM intensity ≈ 2 × batch / bytes_per_weight FLOP/byte (weight reads dominate)")
    ex.formula("ridge point = peak FLOP/s / memory bandwidth")
    ex.input(f"peak ({label})", U.fmt_flops(peak), _glink(g))
    ex.input("memory bandwidth", U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s), _glink(g))
    ex.input(f"bytes per weight ({f.key})", _bytes_el(bpw), _flink(f))
    ex.input("batch", str(batch), GIVEN)
    ex.step(f"intensity: 2 × {batch} / {_bytes_el(bpw)} = {_n(ai)} FLOP/byte")
    ex.step(f"ridge: {U.fmt_flops(peak)} / {U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s)} = {_n(ridge)} FLOP/byte")
    verdict = "memory-bound" if ai < ridge else "compute-bound"
    ex.result(f"{verdict}: {_n(ai)} vs a ridge of {_n(ridge)} FLOP/byte")
    ex.result(f"the batch would need to reach about {_i(needed)} before the weight GEMMs become compute-bound")
    ex.note("KV reads add bytes without adding weight FLOPs, so long contexts lower decode intensity further.")
    return ex.render()


#: Formats whose matmuls run with activations in the same dtype as the weights (W16A16, W8A8).
_SAME_DTYPE_GEMM = ("bf16", "fp8", "int8")


@_as_input_error
def gemm_intensity(gpu: str, m, k: int, n: int, fmt: str = "bf16") -> str:
    """Worked example: roofline of one (m × k) @ (k × n) GEMM, 2mkn / bytes moved, against the ridge point."""
    g, f = _gpu(gpu), _fmt(fmt)
    m = _tokens("m", m)
    k, n = _count("k", k), _count("n", n)
    if f.key == "fp32":
        raise MacroInputError("fmt 'fp32' has no tensor-core rate in gpus.yaml; use one of "
                              + ", ".join(_SAME_DTYPE_GEMM) + " or a weight-only format such as int4-g128")
    peak, label = _peak_flops(g, f)
    bw = g.memory_bandwidth_bytes_per_s
    w = f.bits_per_weight / 8
    if f.key in _SAME_DTYPE_GEMM:
        act, a = f, w
    else:  # weight-only: dequantized to BF16, activations and output in BF16
        act = _fmt("bf16")
        a = act.bits_per_weight / 8
    flops = 2 * m * k * n
    moved = a * (m * k + m * n) + w * k * n
    ai = F.gemm_arithmetic_intensity(m, k, n, a, w)
    ridge = F.ridge_point(peak, bw)
    t = F.roofline_time(flops, moved, peak, bw)
    m_star = F.gemm_m_to_reach_ridge(ridge, k, n, a, w)
    ex = _Example(f"roofline of a {_i(m)} × {_i(k)} by {_i(k)} × {_i(n)} GEMM ({f.name}) on {g.name}")
    ex.formula("I = 2 × m × k × n / (a × (m × k + m × n) + w × k × n) FLOP/byte "
               "(a: activation and output bytes, w: weight bytes per element)")
    ex.formula("ridge = peak / bandwidth; time ≥ max(FLOPs / peak, bytes / bandwidth)")
    ex.input("m (tokens in the step) / k / n", f"{_i(m)} / {_i(k)} / {_i(n)}", GIVEN)
    ex.input(f"activation and output bytes a ({act.key})", _bytes_el(a), _flink(act))
    ex.input(f"weight bytes w ({f.key})", _bytes_el(w), _flink(f))
    ex.input(f"peak ({label})", U.fmt_flops(peak), _glink(g))
    ex.input("memory bandwidth", U.fmt_bandwidth(bw), _glink(g))
    ex.step(f"FLOPs: 2 × {_i(m)} × {_i(k)} × {_i(n)} = {_sci(flops)}")
    ex.step(f"bytes: {_bytes_el(a)} × ({_i(m)} × {_i(k)} + {_i(m)} × {_i(n)}) + {_bytes_el(w)} × {_i(k)} × "
            f"{_i(n)} = {_i(moved)} bytes = {U.fmt_bytes(moved)}")
    ex.step(f"I = {_sci(flops)} / {_i(moved)} = {_n(ai)} FLOP/byte")
    ex.step(f"ridge: {U.fmt_flops(peak)} / {U.fmt_bandwidth(bw)} = {_n(ridge)} FLOP/byte")
    ex.step(f"time: max(compute {U.fmt_seconds(flops / peak)}, memory {U.fmt_seconds(moved / bw)}) "
            f"= {U.fmt_seconds(t)}")
    if ai < ridge:
        ex.result(f"memory-bound: {_n(ai)} vs a ridge of {_n(ridge)} FLOP/byte; at most I × bandwidth = "
                  f"{U.fmt_flops(flops / t)} of the {U.fmt_flops(peak)} peak, at least {U.fmt_seconds(t)} per GEMM")
    else:
        ex.result(f"compute-bound: {_n(ai)} vs a ridge of {_n(ridge)} FLOP/byte; it can run at the "
                  f"{U.fmt_flops(peak)} roof, at least {U.fmt_seconds(t)} per GEMM")
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


# ==================================================================================================
# capacity and cost
# ==================================================================================================

@_as_input_error
def littles_law(concurrency: float | None = None, arrival_rate: float | None = None,
                latency: float | None = None) -> str:
    """Worked example: Little's law L = λ × W; give two of concurrency, arrival_rate (1/s), latency (s)."""
    given = [x is not None for x in (concurrency, arrival_rate, latency)]
    if sum(given) != 2:
        raise MacroInputError("littles_law needs exactly two of concurrency, arrival_rate (per second), "
                              "latency (seconds)")
    value = F.littles_law(concurrency=concurrency, arrival_rate=arrival_rate, time_in_system=latency)
    ex = _Example("Little's law")
    ex.formula("L = λ × W (in flight = arrival rate × time in system)")
    if concurrency is not None:
        ex.input("in flight L", _n(concurrency), GIVEN)
    if arrival_rate is not None:
        ex.input("arrival rate λ", f"{_n(arrival_rate)} /s", GIVEN)
    if latency is not None:
        ex.input("time in system W", U.fmt_seconds(latency), GIVEN)
    if concurrency is None:
        ex.step(f"L = {_n(arrival_rate)} /s × {_n(latency)} s = {_n(value)}")
        ex.result(f"{_n(value)} requests in flight on average")
    elif arrival_rate is None:
        ex.step(f"λ = {_n(concurrency)} / {_n(latency)} s = {_n(value)} /s")
        ex.result(f"{_n(value)} requests per second")
    else:
        ex.step(f"W = {_n(concurrency)} / {_n(arrival_rate)} /s = {_n(value)} s")
        ex.result(f"{U.fmt_seconds(value)} average time in system")
    ex.note("Averages in steady state; holds for any arrival and service distribution.")
    return ex.render()


@_as_input_error
def replicas(peak_load: float, per_replica: float, target_util: float = 0.7, redundancy: int = 1,
             unit: str = "requests/s") -> str:
    """Worked example: replicas = ceil(peak / (per-replica capacity at the SLO × target utilization)) + redundancy."""
    n = F.replicas_needed(peak_load, per_replica, target_util, redundancy)
    base = n - redundancy
    ex = _Example("replica count for peak load")
    ex.formula("replicas = ceil(peak load / (capacity per replica × target utilization)) + redundancy")
    ex.input("peak load", f"{_n(peak_load)} {unit}", GIVEN)
    ex.input("capacity per replica at the SLO", f"{_n(per_replica)} {unit}", "measured (given)")
    ex.input("target utilization", _bits(target_util), "assumption")
    ex.input("redundancy", str(redundancy), "N+1 or a zone's worth")
    ex.step(f"ceil({_n(peak_load)} / ({_n(per_replica)} × {_bits(target_util)})) = {base}")
    ex.step(f"{base} + {redundancy} = {n}")
    ex.result(f"{n} replicas")
    return ex.render()


@_as_input_error
def zone_replicas(peak_load: float, per_replica: float, zones: int = 3, target_util: float = 0.7,
                  unit: str = "requests/s") -> str:
    """Worked example: replicas per zone so that the other zones carry the peak when one zone is lost."""
    z = _count("zones", zones)
    per_zone, total = F.zone_replicas(peak_load, per_replica, z, target_util)
    n_plus_1 = F.replicas_needed(peak_load, per_replica, target_util, 1)
    ex = _Example(f"replicas to survive losing one of {z} zones")
    ex.formula("per zone = ceil(peak load / (zones − 1) / (capacity per replica × target utilization))")
    ex.formula("fleet = zones × per zone")
    ex.input("peak load", f"{_n(peak_load)} {unit}", GIVEN)
    ex.input("capacity per replica at the SLO", f"{_n(per_replica)} {unit}", "measured (given)")
    ex.input("target utilization", _bits(target_util), "assumption")
    ex.input("zones", str(z), GIVEN)
    ex.step(f"one zone lost: {z - 1} zones carry {_n(peak_load)} {unit}, "
            f"{_n(peak_load / (z - 1))} {unit} each")
    ex.step(f"per zone: ceil({_n(peak_load / (z - 1))} / ({_n(per_replica)} × {_bits(target_util)})) = {per_zone}")
    ex.step(f"fleet: {z} × {per_zone} = {total}")
    ex.result(f"{per_zone} replicas per zone, {total} in total")
    ex.result(f"against {n_plus_1} for N+1 without zone loss: {_n(total / n_plus_1)}× the replicas")
    ex.note(f"Assumes the load balancer spreads traffic evenly across zones and drains a lost zone. With all "
            f"zones up, each zone carries {z - 1}/{z} of the load it is sized for.")
    return ex.render()


@_as_input_error
def hpa(current_replicas: int, current_metric: float, target_metric: float,
        tolerance: float = F.HPA_DEFAULT_TOLERANCE) -> str:
    """Worked example: Kubernetes HPA desired = ceil(current × metric / target), skipped within tolerance."""
    cur = _count("current_replicas", current_replicas)
    desired = F.hpa_desired_replicas(cur, current_metric, target_metric, tolerance)
    ratio = current_metric / target_metric
    ex = _Example("Kubernetes HPA scaling decision")
    ex.formula("desired = ceil(current_replicas × current_metric / target_metric); no change if |ratio − 1| ≤ tolerance")
    ex.input("current replicas", str(cur), GIVEN)
    ex.input("current metric (average per pod)", _n(current_metric), GIVEN)
    ex.input("target metric", _n(target_metric), GIVEN)
    ex.input("tolerance", _bits(tolerance), "`--horizontal-pod-autoscaler-tolerance` (default 0.1)")
    ex.step(f"ratio = {_n(current_metric)} / {_n(target_metric)} = {_n(ratio)}")
    if abs(ratio - 1) <= tolerance:
        ex.step(f"|{_n(ratio)} − 1| ≤ {_bits(tolerance)}: inside the tolerance band")
        ex.result(f"no scaling: stays at {cur} replicas")
    else:
        ex.step(f"ceil({cur} × {_n(ratio)}) = {desired}")
        ex.result(f"{desired} replicas (before min/max bounds and the scale-down stabilization window)")
    return ex.render()


def _gpu_price(g: Gpu):
    prices = _cat().gpu_prices_for(g.key)
    if not prices:
        priced = ", ".join(sorted({p.gpu for p in _cat().prices.gpu_hour.values()}))
        raise MacroInputError(f"prices.yaml has no GPU-hour price for {g.key!r}; GPUs with a price: {priced}")
    return prices[0]


@_as_input_error
def cost_per_million(gpu: str, tokens_per_s: float, n_gpus: int = 1, utilization: float = 1.0) -> str:
    """Worked example: self-hosted $ per million tokens = $/h × GPUs / (tokens/s × 3600 × utilization) × 1e6."""
    g = _gpu(gpu)
    n = _count("n_gpus", n_gpus)
    p = _gpu_price(g)
    cost = F.cost_per_million_tokens(p.usd_per_hour, n, tokens_per_s, utilization)
    ex = _Example(f"cost per million tokens on {n} × {g.name}")
    ex.formula("$/M tokens = $/GPU-hour × GPUs / (tokens/s × 3600 × utilization) × 10^6")
    ex.input("price per GPU-hour", U.fmt_usd(p.usd_per_hour), catalog_link("price", p.key, f"{p.key} (illustrative)"))
    ex.input("GPUs", str(n), GIVEN)
    ex.input("sustained throughput", U.fmt_rate(tokens_per_s), GIVEN)
    ex.input("utilization (busy share of paid hours)", _bits(utilization), "assumption")
    ex.step(f"{U.fmt_usd(p.usd_per_hour)} × {n} / ({_n(tokens_per_s)} × 3600 × {_bits(utilization)}) × 10^6 "
            f"= {U.fmt_usd(cost)}")
    ex.result(f"{U.fmt_usd(cost)} per million tokens")
    ex.note(_esc(_cat().prices.disclaimer))
    return ex.render()


@_as_input_error
def crossover(gpu: str, api: str, n_gpus: int = 1, input_share: float = 0.5) -> str:
    """Worked example: sustained tokens/s above which a fixed self-hosted deployment beats an API price."""
    g = _gpu(gpu)
    n = _count("n_gpus", n_gpus)
    p = _gpu_price(g)
    try:
        a = _cat().api_price(api)
    except UnknownKeyError as exc:
        raise MacroInputError(str(exc)) from None
    blended = F.blended_api_price(a.usd_per_m_input, a.usd_per_m_output, input_share)
    rate = F.crossover_tokens_per_s(p.usd_per_hour, n, blended)
    ex = _Example(f"self-hosted {n} × {g.name} vs {a.name}")
    ex.formula("API $/M = input $/M × share + output $/M × (1 − share)")
    ex.formula("crossover tokens/s = $/GPU-hour × GPUs / 3600 / (API $/M / 10^6)")
    ex.input("price per GPU-hour", U.fmt_usd(p.usd_per_hour), catalog_link("price", p.key, f"{p.key} (illustrative)"))
    ex.input("API input / output $/M", f"{U.fmt_usd(a.usd_per_m_input)} / {U.fmt_usd(a.usd_per_m_output)}",
             catalog_link("api", a.key, f"{a.key} (illustrative)"))
    ex.input("input share of tokens", _bits(input_share), "assumption")
    ex.input("GPUs", str(n), GIVEN)
    ex.step(f"API: {U.fmt_usd(a.usd_per_m_input)} × {_bits(input_share)} + {U.fmt_usd(a.usd_per_m_output)} × "
            f"{_bits(1 - input_share)} = {U.fmt_usd(blended)} per M tokens")
    ex.step(f"{U.fmt_usd(p.usd_per_hour)} × {n} / 3600 / ({U.fmt_usd(blended)} / 10^6) = {_n(rate)} tokens/s")
    ex.result(f"self-hosting is cheaper above a sustained {U.fmt_rate(rate)} "
              f"({_n(rate * 3600 * U.HOURS_PER_MONTH / 1e9)} billion tokens a month)")
    ex.note("Only if the deployment can actually serve that rate at the SLO; otherwise add replicas and "
            "recompute. " + _esc(_cat().prices.disclaimer))
    return ex.render()


@_as_input_error
def cost_floor(gpu: str, n_gpus: int = 1, min_replicas: int = 1) -> str:
    """Worked example: the minimum deployment's monthly cost, paid whatever the traffic."""
    g = _gpu(gpu)
    n = _count("n_gpus", n_gpus)
    r = _count("min_replicas", min_replicas)
    p = _gpu_price(g)
    cost = F.fixed_cost_floor(p.usd_per_hour, n, r)
    ex = _Example(f"fixed cost floor of {r} × {n} × {g.name}")
    ex.formula("monthly floor = $/GPU-hour × GPUs per replica × min replicas × 730 h")
    ex.input("price per GPU-hour", U.fmt_usd(p.usd_per_hour), catalog_link("price", p.key, f"{p.key} (illustrative)"))
    ex.input("GPUs per replica / min replicas", f"{n} / {r}", GIVEN)
    ex.step(f"{U.fmt_usd(p.usd_per_hour)} × {n} × {r} × 730 = {U.fmt_usd(cost)}")
    ex.result(f"{U.fmt_usd(cost)} per month before the first request")
    ex.note("730 h = 8,760 h / 12. " + _esc(_cat().prices.disclaimer))
    return ex.render()


# ==================================================================================================
# other
# ==================================================================================================

@_as_input_error
def spec_decode(acceptance_rate: float = 0.8, draft_length: int = 4, draft_cost: float = 0.05) -> str:
    """Worked example: speculative decoding E = (1 − a^(g+1)) / (1 − a) and speed-up E / (g·c + 1)."""
    e = F.expected_tokens_per_step(acceptance_rate, draft_length)
    s = F.speculative_speedup(acceptance_rate, draft_length, draft_cost)
    a, g, c = acceptance_rate, draft_length, draft_cost
    ex = _Example(f"speculative decoding, a = {_bits(a)}, γ = {g}, c = {_bits(c)}")
    ex.formula("E = (1 − a^(γ+1)) / (1 − a) tokens per target pass")
    ex.formula("speed-up = E / (γ × c + 1)")
    ex.input("acceptance rate a", _bits(a), "measured (given)")
    ex.input("draft length γ", str(g), GIVEN)
    ex.input("draft cost c (draft pass / target pass)", _bits(c), GIVEN)
    if a == 1:
        ex.step(f"a = 1: every draft token is accepted, E = γ + 1 = {g + 1}")
    else:
        ex.step(f"E = (1 − {_bits(a)}^{g + 1}) / (1 − {_bits(a)}) = {_n(e)}")
    ex.step(f"speed-up = {_n(e)} / ({g} × {_bits(c)} + 1) = {_n(s)}")
    ex.result(f"{_n(e)} tokens per target pass; {_n(s)}× faster" if s >= 1
              else f"{_n(e)} tokens per target pass; {_n(s)}×, i.e. slower than no speculation")
    ex.note("Leviathan et al. 2023 (arXiv:2211.17192); assumes i.i.d. acceptance and that verifying γ + 1 tokens "
            "costs one decode step (decode memory-bound).")
    return ex.render()


@_as_input_error
def lora_size(model: str, rank: int = 16, targets: str = "q_proj,v_proj", dtype: str = "bf16") -> str:
    """Worked example: LoRA adapter bytes = rank × (d_in + d_out) per matrix × layers × bytes."""
    m, f = _model(model), _fmt(dtype)
    r = _count("rank", rank)
    shapes = F.lora_target_shapes(m, targets)
    params = F.lora_params(m, r, [s[0] for s in shapes])
    eb = f.bits_per_weight / 8
    nbytes = F.lora_adapter_bytes(params, eb)
    ex = _Example(f"LoRA adapter of rank {r} on {m.name}")
    ex.formula("adapter params = layers × Σ over targets of rank × (d_in + d_out)")
    for name, d_in, d_out in shapes:
        ex.input(f"`{name}` d_in × d_out", f"{_i(d_in)} × {_i(d_out)}", _mlink(m))
    ex.input("`num_hidden_layers`", _i(m.num_hidden_layers), _mlink(m))
    ex.input("rank", str(r), GIVEN)
    ex.input(f"bytes per element ({f.key})", _bytes_el(eb), _flink(f))
    per_layer = " + ".join(f"{r} × ({_i(a)} + {_i(b)})" for _, a, b in shapes)
    ex.step(f"per layer: {per_layer} = {_i(params // m.num_hidden_layers)}")
    ex.step(f"× {m.num_hidden_layers} layers = {_i(params)} parameters; × {_bytes_el(eb)} bytes = {_i(nbytes)} bytes")
    ex.result(U.fmt_bytes(nbytes))
    base = F.weight_bytes(m, f)
    ex.result(f"{U.fmt_pct(nbytes / base)} of the base model's {U.fmt_gb(base)} of {f.key} weights")
    return ex.render()


@_as_input_error
def vision_tokens(height: int, width: int, patch_size: int = 14, merge: int = 2) -> str:
    """Worked example: image tokens = ceil(H/(p·m)) × ceil(W/(p·m)) (Qwen2-VL: p = 14, m = 2)."""
    h, w = _count("height", height), _count("width", width)
    p, mg = _count("patch_size", patch_size), _count("merge", merge)
    n = F.vision_tokens(h, w, p, mg)
    cell = p * mg
    ex = _Example(f"vision tokens for a {w} × {h} image")
    ex.formula("tokens = ceil(H / (patch × merge)) × ceil(W / (patch × merge))")
    ex.input("image height × width", f"{_i(h)} × {_i(w)} px", GIVEN)
    ex.input("patch size", f"{p} px", GIVEN)
    ex.input("spatial merge", f"{mg} × {mg}", GIVEN)
    ex.step(f"patch grid: {math.ceil(h / p)} × {math.ceil(w / p)} = {_i(math.ceil(h / p) * math.ceil(w / p))} patches")
    ex.step(f"merged: ceil({_i(h)}/{cell}) × ceil({_i(w)}/{cell}) = {-(-h // cell)} × {-(-w // cell)} = {_i(n)}")
    ex.result(f"{_i(n)} tokens per image")
    ex.note("Excludes vision start/end marker tokens; engines that resize images may differ by a row or column.")
    return ex.render()


@_as_input_error
def kv_transfer(model: str, context=8192, kv_dtype: str = "bf16", gpu: str | None = None,
                link_gb_per_s: float | None = None, link_gbit_per_s: float | None = None) -> str:
    """Worked example: disaggregated prefill, KV bytes of the prompt / link bandwidth."""
    m, kv = _model(model), _kv_dtype(kv_dtype)
    ctx = _tokens("context", context)
    given = [x is not None for x in (gpu, link_gb_per_s, link_gbit_per_s)]
    if sum(given) != 1:
        raise MacroInputError("kv_transfer needs exactly one of gpu (its interconnect), link_gb_per_s (GB/s) "
                              "or link_gbit_per_s (Gbit/s, e.g. 400 for a 400G NIC)")
    if gpu is not None:
        g = _gpu(gpu)
        bw = g.interconnect_bytes_per_s_per_direction
        if not bw:
            raise MacroInputError(f"{g.name} has no interconnect bandwidth in gpus.yaml")
        bw_src = _glink(g)
    elif link_gb_per_s is not None:
        bw, bw_src = _number("link_gb_per_s", link_gb_per_s) * 1e9, GIVEN
    else:
        bw, bw_src = _number("link_gbit_per_s", link_gbit_per_s) * 1e9 / 8, GIVEN
    nbytes = F.kv_bytes_per_sequence(m, ctx, kv)
    t = F.kv_transfer_time(nbytes, bw)
    ex = _Example(f"KV transfer of a {_i(ctx)}-token prompt of {m.name}")
    ex.formula("transfer time = KV bytes of the prompt / link bandwidth (one direction)")
    ex.input("KV bytes per token", U.fmt_bytes(F.kv_bytes_per_token(m, kv)), f"{_mlink(m)}, {_flink(kv)}")
    ex.input("prompt length", f"{_i(ctx)} tokens", GIVEN)
    ex.input("link bandwidth per direction", U.fmt_bandwidth(bw), bw_src)
    ex.step(f"KV of the prompt: {U.fmt_bytes(nbytes)}")
    ex.step(f"{_i(nbytes)} bytes / {U.fmt_bandwidth(bw)} = {U.fmt_seconds(t)}")
    ex.result(f"{U.fmt_seconds(t)} to move the prompt's KV cache")
    ex.note("Not overlapped with prefill; layer-by-layer streaming hides part of it. Link setup latency excluded.")
    return ex.render()


@_as_input_error
def load_time(model: str, storage_gb_per_s: float, fmt: str = "bf16", network_gbit_per_s: float | None = None,
              pcie_gb_per_s: float | None = None, expert_fmt: str | None = None) -> str:
    """Worked example: cold-start weight load = bytes / min(storage, network, PCIe) bandwidth."""
    m, f, fe = _model(model), _fmt(fmt), _opt_fmt(expert_fmt)
    nbytes = F.weight_bytes(m, f, fe)
    storage = _number("storage_gb_per_s", storage_gb_per_s) * 1e9
    network = _number("network_gbit_per_s", network_gbit_per_s) * 1e9 / 8 if network_gbit_per_s is not None else None
    pcie = _number("pcie_gb_per_s", pcie_gb_per_s) * 1e9 if pcie_gb_per_s is not None else None
    t = F.model_load_time(nbytes, storage, network, pcie)
    stages = [("storage", storage), ("network", network), ("PCIe", pcie)]
    stages = [(n, b) for n, b in stages if b is not None]
    slowest = min(stages, key=lambda s: s[1])
    ex = _Example(f"loading {m.name} ({f.name})")
    ex.formula("load time = weight bytes / min(storage, network, PCIe bandwidth)")
    ex.input("weights", U.fmt_gb(nbytes), f"{_mlink(m)}, {_flink(f)}")
    for name, bw in stages:
        # a NIC is specified in Gbit/s: show the value as given next to its GB/s conversion
        shown = (f"{network_gbit_per_s:g} Gbit/s = {U.fmt_bandwidth(bw)}" if name == "network"
                 else U.fmt_bandwidth(bw))
        ex.input(f"{name} bandwidth", shown, GIVEN)
    ex.step(f"slowest stage: {slowest[0]} at {U.fmt_bandwidth(slowest[1])}")
    ex.step(f"{U.fmt_gb(nbytes)} / {U.fmt_bandwidth(slowest[1])} = {U.fmt_seconds(t)}")
    ex.result(f"{U.fmt_seconds(t)} to stream the weights")
    ex.note("Assumes the stages overlap (a streaming loader), so the slowest one sets the pace; a loader "
            "that finishes each stage before starting the next pays the sum of the stage times. "
            "Excludes process start, CUDA context, compilation and CUDA-graph capture.")
    return ex.render()


# ==================================================================================================
# inline value macros (a formatted value for a sentence)
# ==================================================================================================

@_as_input_error
def kv_token_bytes(model: str, kv_dtype: str = "bf16") -> str:
    """KV bytes per token, e.g. '327,680 bytes (320 KiB)'."""
    return U.fmt_bytes(F.kv_bytes_per_token(_model(model), _kv_dtype(kv_dtype)))


@_as_input_error
def kv_cache_gb(model: str, batch: int = 1, context=8192, kv_dtype: str = "bf16") -> str:
    """KV cache for batch × context, e.g. '85.9 GB (80.0 GiB)'."""
    return U.fmt_gb(F.kv_cache_bytes(_model(model), _count("batch", batch), _tokens("context", context),
                                     _kv_dtype(kv_dtype)))


@_as_input_error
def weight_gb(model: str, fmt: str = "bf16", expert_fmt: str | None = None, embed_fmt: str | None = None) -> str:
    """Weight bytes, e.g. '141.1 GB (131.4 GiB)'."""
    return U.fmt_gb(F.weight_bytes(_model(model), _fmt(fmt), _opt_fmt(expert_fmt), _opt_fmt(embed_fmt)))


@_as_input_error
def params_total(model: str) -> str:
    """Total parameters computed from the config, e.g. '70.55B'."""
    return U.fmt_params(F.total_params(_model(model)))


@_as_input_error
def params_active(model: str) -> str:
    """Active parameters per token computed from the config, e.g. '37.55B'."""
    return U.fmt_params(F.active_params(_model(model)))


@_as_input_error
def model_field(model: str, field: str) -> str:
    """One catalog field of a model, e.g. model_field('llama-3.1-70b', 'num_key_value_heads') -> '8'."""
    m = _model(model)
    obj, name = m, field
    if "." in field:
        block, name = field.split(".", 1)
        obj = getattr(m, block, None)
        if obj is None:
            raise MacroInputError(f"{m.key} has no {block!r} block")
    if name.startswith("_") or not hasattr(obj, name) or callable(getattr(obj, name)):
        valid = [k for k in vars(m) if k not in ("extra",)]
        raise MacroInputError(f"unknown model field {field!r}; valid fields: {', '.join(valid)} "
                              "(and moe.*, mla.*, sliding_window.*, linear_attention.*)")
    v = getattr(obj, name)
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return _i(v) if float(v).is_integer() else _n(v)
    if v is None:
        return "none"
    return str(v)


@_as_input_error
def gpu_memory(gpu: str) -> str:
    """GPU memory, e.g. '85.5 GB (79.6 GiB)' for the H100 SXM."""
    return U.fmt_gb(_gpu(gpu).memory_bytes)


@_as_input_error
def gpu_bandwidth(gpu: str) -> str:
    """GPU memory bandwidth, e.g. '3.35 TB/s'."""
    return U.fmt_bandwidth(_gpu(gpu).memory_bandwidth_bytes_per_s)


@_as_input_error
def gpu_flops(gpu: str, fmt: str = "bf16") -> str:
    """Dense tensor peak for fmt's compute precision, e.g. '989.5 TFLOPS'."""
    return U.fmt_flops(_peak_flops(_gpu(gpu), _fmt(fmt))[0])


@_as_input_error
def ridge_point(gpu: str, fmt: str = "bf16") -> str:
    """Ridge point, e.g. '295.4 FLOP/byte'."""
    g = _gpu(gpu)
    return f"{_n(F.ridge_point(_peak_flops(g, _fmt(fmt))[0], g.memory_bandwidth_bytes_per_s))} FLOP/byte"


@_as_input_error
def format_bits(fmt: str) -> str:
    """Effective bits per weight, e.g. '4.125 bits'."""
    return f"{_bits(_fmt(fmt).bits_per_weight)} bits"


@_as_input_error
def gpu_price(gpu: str) -> str:
    """Illustrative price per GPU-hour, e.g. '$2.95'."""
    return U.fmt_usd(_gpu_price(_gpu(gpu)).usd_per_hour)


@_as_input_error
def valid_tp(model: str) -> str:
    """Valid tensor-parallel degrees up to 16, e.g. '1, 2, 4, 8'."""
    return ", ".join(map(str, F.valid_tp_degrees(_model(model))))


@_as_input_error
def decode_tps(model: str, gpu: str, fmt: str = "bf16", n_gpus: int = 1, batch: int = 1, context=8192,
               kv_dtype: str = "bf16", expert_fmt: str | None = None, aggregate: bool = False) -> str:
    """Decode bound in tokens/s per sequence (or aggregate), e.g. '41.0 tokens/s'."""
    bound = _decode(_model(model), _gpu(gpu), _fmt(fmt), _opt_fmt(expert_fmt), _kv_dtype(kv_dtype),
                    _count("n_gpus", n_gpus), _count("batch", batch), _tokens("context", context))[0]
    return U.fmt_rate(bound.tokens_per_s_aggregate if aggregate else bound.tokens_per_s_per_sequence)


def _fit(model, gpu, fmt, n_gpus, context, kv_dtype, gpu_util, activation_gib, reserve_gib, block_size, expert_fmt):
    m, g, f, kv = _model(model), _gpu(gpu), _fmt(fmt), _kv_dtype(kv_dtype)
    n = _count("n_gpus", n_gpus)
    _, shard, budget = _budget(m, g, f, kv, n, _number("gpu_util", gpu_util), activation_gib, reserve_gib,
                               _opt_fmt(expert_fmt))
    return m, kv, shard, budget


@_as_input_error
def max_seqs(model: str, gpu: str, fmt: str = "bf16", n_gpus: int = 1, context=8192, kv_dtype: str = "bf16",
             gpu_util: float = F.DEFAULT_GPU_UTILIZATION, activation_gib: float = 2.0, reserve_gib: float = 1.0,
             block_size: int = F.DEFAULT_BLOCK_SIZE, expert_fmt: str | None = None) -> str:
    """Max concurrent sequences at ``context`` from the memory budget, e.g. '52'."""
    m, kv, shard, budget = _fit(model, gpu, fmt, n_gpus, context, kv_dtype, gpu_util, activation_gib,
                                reserve_gib, block_size, expert_fmt)
    ctx = _tokens("context", context)
    per_seq = F.kv_bytes_per_sequence_paged(m, ctx, kv, _count("block_size", block_size), shard.kv_fraction)
    return _i(F.max_concurrent_sequences(budget, per_seq))


@_as_input_error
def max_context(model: str, gpu: str, fmt: str = "bf16", n_gpus: int = 1, kv_dtype: str = "bf16",
                gpu_util: float = F.DEFAULT_GPU_UTILIZATION, activation_gib: float = 2.0, reserve_gib: float = 1.0,
                block_size: int = F.DEFAULT_BLOCK_SIZE, expert_fmt: str | None = None) -> str:
    """Longest single-sequence context from the memory budget, e.g. '131,072 tokens (model maximum)'."""
    m, kv, shard, budget = _fit(model, gpu, fmt, n_gpus, 1, kv_dtype, gpu_util, activation_gib,
                                reserve_gib, block_size, expert_fmt)
    tokens, limit = F.max_context_one_sequence(m, budget, kv, _count("block_size", block_size), shard.kv_fraction)
    return f"{_i(tokens)} tokens" + (" (model maximum)" if limit == "max_position_embeddings" else "")


@_as_input_error
def spec_tokens(acceptance_rate: float, draft_length: int) -> str:
    """Expected tokens per target pass, e.g. '3.36'."""
    return _n(F.expected_tokens_per_step(acceptance_rate, draft_length))


@_as_input_error
def model_link(model: str) -> str:
    """A link to the model's catalog entry."""
    return _mlink(_model(model))


@_as_input_error
def gpu_link(gpu: str) -> str:
    """A link to the GPU's catalog entry."""
    return _glink(_gpu(gpu))


@_as_input_error
def format_link(fmt: str) -> str:
    """A link to the format's catalog entry."""
    return _flink(_fmt(fmt))


# ==================================================================================================
# generated reference pages
# ==================================================================================================

REFERENCE_FORMATS = ("bf16", "fp8", "int4-g128")
REFERENCE_KV = ("bf16", "fp8")


def _heading(level: int, text: str, kind: str, key: str) -> str:
    return f"{'#' * level} {text} {{#{anchor_id(kind, key)}}}"


def _model_section(m: Model, level: int) -> str:
    cat = _cat()
    b = F.param_breakdown(m)
    lines = [_heading(level, m.name, "model", m.key), ""]
    kind = "mixture-of-experts" if m.is_moe else "dense"
    att = {"mha": "multi-head", "gqa": "grouped-query", "mqa": "multi-query", "mla": "multi-head latent"}[m.attention]
    extras = []
    if m.sliding_window:
        extras.append(f"{m.sliding_window.num_sliding_layers} of {m.num_hidden_layers} layers use a "
                      f"{_i(m.sliding_window.size)}-token sliding window")
    if m.linear_attention:
        extras.append(f"{m.linear_attention.num_linear_layers} of {m.num_hidden_layers} layers are "
                      "linear-attention layers with a constant state")
    lines.append(f"Key `{m.key}` · {kind}, {att} attention · ships in "
                 f"{catalog_link('format', m.released_format, cat.format(m.released_format).name)} · "
                 f"[{m.hf_repo}](https://huggingface.co/{m.hf_repo})"
                 + ("" if not extras else " · " + "; ".join(extras)))
    lines.append("")
    # config table
    cfg = [("num_hidden_layers", m.num_hidden_layers), ("hidden_size", m.hidden_size),
           ("num_attention_heads", m.num_attention_heads), ("num_key_value_heads", m.num_key_value_heads),
           ("head_dim", f"{m.head_dim}" + ("" if m.head_dim_in_config else " (not stated in config.json; see notes)")),
           ("intermediate_size", m.intermediate_size if m.intermediate_size is not None else "—"),
           ("vocab_size", m.vocab_size), ("tie_word_embeddings", str(m.tie_word_embeddings).lower()),
           ("max_position_embeddings", m.max_position_embeddings),
           ("attention_bias", str(m.attention_bias).lower())]
    if m.moe:
        cfg += [("experts (routed / shared / per token)",
                 f"{m.moe.num_experts} / {m.moe.num_shared_experts} / {m.moe.experts_per_token}"),
                ("moe_intermediate_size", m.moe.moe_intermediate_size),
                ("dense layers first", m.moe.first_dense_layers)]
    if m.mla:
        cfg += [("kv_lora_rank / q_lora_rank", f"{m.mla.kv_lora_rank} / {m.mla.q_lora_rank}"),
                ("qk_nope / qk_rope / v head dims",
                 f"{m.mla.qk_nope_head_dim} / {m.mla.qk_rope_head_dim} / {m.mla.v_head_dim}")]
    rows = ["| Config field | Value |", "| --- | --- |"]
    for k, v in cfg:
        v = _i(v) if isinstance(v, int) and not isinstance(v, bool) else v
        rows.append(f"| `{k}` | {v} |" if not k.startswith(("experts", "dense", "kv_lora", "qk_")) else f"| {k} | {v} |")
    lines += rows + [""]
    # sizes table
    rows = ["| Figure | Value |", "| --- | --- |"]
    rows.append(f"| Total parameters (computed) | {_i(b.total)} ({U.fmt_params(b.total)}) |")
    if m.stated_total_params:
        diff = F.relative_difference(b.total, m.stated_total_params)
        rows.append(f"| Total parameters (stated) | {U.fmt_params(m.stated_total_params)}; computed is "
                    f"{'+' if diff >= 0 else ''}{U.fmt_pct(diff)} off ([source]({m.stated_params_source})) |")
    if m.is_moe:
        rows.append(f"| Active parameters per token (computed) | {U.fmt_params(b.active)} "
                    f"({U.fmt_params(b.active - b.embedding)} without the input embedding) |")
        if m.stated_active_params:
            rows.append(f"| Active parameters (stated) | {U.fmt_params(m.stated_active_params)} |")
    for key in REFERENCE_FORMATS:
        if key in cat.formats:
            f = cat.format(key)
            rows.append(f"| Weights, {catalog_link('format', key, f.name)} | {U.fmt_gb(F.weight_bytes(m, f))} |")
    for key in REFERENCE_KV:
        if key in cat.formats:
            f = cat.format(key)
            rows.append(f"| KV cache per token, {catalog_link('format', key, f.name)} | "
                        f"{U.fmt_bytes(F.kv_bytes_per_token(m, f))} |")
    if m.sliding_window or m.linear_attention:
        f = cat.format("bf16")
        ctx = m.max_position_embeddings
        rows.append(f"| KV per sequence at {_i(ctx)} tokens, BF16 (windows and states applied) | "
                    f"{U.fmt_gb(F.kv_bytes_per_sequence(m, ctx, f))} |")
    rows.append(f"| Valid tensor-parallel degrees (≤ 16) | {', '.join(map(str, F.valid_tp_degrees(m)))} |")
    lines += rows + [""]
    if b.approximate:
        lines += ["Parameter count approximate: the linear-attention layers are counted with the standard "
                  "attention shape.", ""]
    if m.notes:
        lines += [f"Notes: {_esc(m.notes.strip())}", ""]
    lines.append(f"Sources: [config.json]({m.config_source}) · [model card]({m.card_source})"
                 + (f" · [stated parameters]({m.stated_params_source})" if m.stated_params_source else ""))
    return "\n".join(lines)


def _model_summary() -> str:
    """One comparison row per model, linking to its section below."""
    cat = _cat()
    bf16, fp8, int4 = cat.format("bf16"), cat.format("fp8"), cat.format("int4-g128")
    rows = ["| Model | Total params | Active params | BF16 weights | FP8 weights | INT4 (g128) weights "
            "| KV per token, BF16 | KV per token, FP8 |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for m in cat.models.values():
        b = F.param_breakdown(m)
        active = U.fmt_params(b.active) if m.is_moe else "all"
        rows.append(
            f"| [{m.name}]({catalog_href('model', m.key)}) | {U.fmt_params(b.total)} | {active} "
            f"| {U.fmt_gb(F.weight_bytes(m, bf16))} | {U.fmt_gb(F.weight_bytes(m, fp8))} "
            f"| {U.fmt_gb(F.weight_bytes(m, int4))} | {_i(F.kv_bytes_per_token(m, bf16))} B "
            f"| {_i(F.kv_bytes_per_token(m, fp8))} B |")
    return "\n".join(rows)


@_as_input_error
def model_catalog(level: int = 3) -> str:
    """Reference page: every model with config, computed parameters, weights per format, KV per token."""
    cat = _cat()
    out = [f"{'#' * (level - 1)} Summary", _model_summary(),
           "Weights with every tensor in the named format; KV bytes per token count only the layers that keep a "
           "KV cache (sliding-window and linear-attention layers are capped or constant per sequence, see each "
           "model's section)."]
    groups = [("Dense models", [m for m in cat.models.values() if not m.is_moe]),
              ("Mixture-of-experts models", [m for m in cat.models.values() if m.is_moe])]
    for title, models in groups:
        if not models:
            continue
        out.append(f"{'#' * (level - 1)} {title}")
        for m in models:
            out.append(_model_section(m, level))
    out.append("Weights are parameters × the format's effective bits per weight / 8, with every tensor in that "
               "format; KV per token counts only the layers that keep a KV cache.")
    return "\n\n".join(out)


@_as_input_error
def gpu_catalog(level: int = 3) -> str:
    """Reference page: every GPU with memory (GB and GiB), bandwidth, dense FLOPS, link, ridge point."""
    cat = _cat()
    vendors: dict[str, list[Gpu]] = {}
    for g in cat.gpus.values():
        vendors.setdefault(g.vendor, []).append(g)
    out = []
    for vendor, gpus in vendors.items():
        label = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "google": "Google"}.get(vendor, vendor.title())
        out.append(f"{'#' * (level - 1)} {label}")
        for g in gpus:
            rows = ["| Figure | Value |", "| --- | --- |",
                    f"| Memory | {U.fmt_gb(g.memory_bytes)}; datasheet: {g.memory_label} |",
                    f"| Memory bandwidth | {U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s)} |",
                    f"| Dense BF16 | {U.fmt_flops(g.bf16_dense_flops)} |",
                    f"| Dense FP8 | {U.fmt_flops(g.fp8_dense_flops) if g.fp8_dense_flops else 'not supported'} |",
                    f"| Dense INT8 | {U.fmt_flops(g.int8_dense_ops).replace('TFLOPS', 'TOPS') if g.int8_dense_ops else '—'} |",
                    f"| Ridge point, BF16 | {_n(F.ridge_point(g.bf16_dense_flops, g.memory_bandwidth_bytes_per_s))} FLOP/byte |"]
            if g.interconnect_bytes_per_s_per_direction:
                rows.append(f"| Interconnect ({g.interconnect}) | "
                            f"{U.fmt_bandwidth(g.interconnect_bytes_per_s_per_direction)} per direction |")
            if g.allreduce_latency_s:
                rows.append(f"| All-reduce latency per call (modelled) | {U.fmt_seconds(g.allreduce_latency_s)} |")
            if g.tdp_watts:
                rows.append(f"| Board power | {_i(g.tdp_watts)} W |")
            parts = [_heading(level, g.name, "gpu", g.key), f"Key `{g.key}`", "\n".join(rows)]
            lat_note = g.extra.get("allreduce_latency_note")
            lat_src = g.extra.get("allreduce_latency_source")
            for label, text in (("Memory", g.memory_note), ("Interconnect", g.interconnect_note),
                                ("All-reduce latency", lat_note), ("Notes", g.notes)):
                if text and text.strip():
                    parts.append(f"{label}: {_esc(text.strip())}"
                                 + (f" ([{_domain(lat_src)}]({lat_src}))" if label == "All-reduce latency" and lat_src else ""))
            parts.append(f"Source: [{_domain(g.source)}]({g.source})")
            out.append("\n\n".join(parts))
    return "\n\n".join(out)


@_as_input_error
def format_catalog(level: int = 3) -> str:
    """Reference page: every number format with effective bits, bytes per billion parameters, KV use."""
    cat = _cat()
    kinds = {"float": "Floating point", "int": "Integer", "block": "Block-scaled"}
    out = []
    for kind, title in kinds.items():
        fmts = [f for f in cat.formats.values() if f.kind == kind]
        if not fmts:
            continue
        out.append(f"{'#' * (level - 1)} {title}")
        for f in fmts:
            rows = ["| Figure | Value |", "| --- | --- |",
                    f"| Effective bits per weight | {_bits(f.bits_per_weight)} |",
                    f"| Bytes per billion parameters | {U.fmt_gb(F.bytes_for_params(1e9, f))} |"]
            if f.group_size:
                eff = F.effective_bits_per_weight(f.bits_per_weight - (f.scale_bits or 0) / f.group_size,
                                                  f.group_size, f.scale_bits or 0)
                rows.append(f"| Group size; scale bits per group | {f.group_size}; {_bits(f.scale_bits or 0)} "
                            f"(element bits + {_bits(f.scale_bits or 0)}/{f.group_size} = {_bits(eff)}) |")
            rows.append(f"| Usable as KV-cache dtype | {'yes' if f.kv_cache else 'no'} |")
            if f.embedding_bits_per_weight is not None:
                rows.append(f"| Embedding and lm_head | not quantized: {_bits(f.embedding_bits_per_weight)} bits |")
            parts = [_heading(level, f.name, "format", f.key), f"Key `{f.key}`", "\n".join(rows)]
            if f.notes:
                parts.append(f"Notes: {_esc(f.notes.strip())}")
            emb_note, emb_src = f.extra.get("embedding_note"), f.extra.get("embedding_source")
            if emb_note:
                parts.append(f"Embedding and lm_head: {_esc(str(emb_note).strip())}"
                             + (f" ([{_domain(emb_src)}]({emb_src}))" if emb_src else ""))
            parts.append(f"Source: [{_domain(f.source)}]({f.source})")
            out.append("\n\n".join(parts))
    return "\n\n".join(out)


def _domain(url: str) -> str:
    """Link text for a source URL: its host and path start, e.g. 'nvidia.com/…/h200'."""
    m = re.match(r"https?://(?:www\.)?([^/]+)(/.*)?$", url)
    if not m:
        return url
    path = (m.group(2) or "").rstrip("/")
    tail = path.rsplit("/", 1)[-1] if path else ""
    return m.group(1) + (f"/…/{tail}" if path.count("/") > 1 else path)


def _src_cell(src: str) -> str:
    return f"[{_domain(src)}]({src})" if src.startswith("http") else _esc(src, cell=True)


@_as_input_error
def price_table() -> str:
    """Reference page: illustrative GPU-hour and API prices, each row with an anchor and its source."""
    cat = _cat()
    pr = cat.prices
    out = [f"Prices as of {pr.as_of}. {_esc(pr.disclaimer)}"]
    rows = ["| Key | GPU | $ per GPU-hour | Monthly (730 h) | Basis | Source |", "| --- | --- | --- | --- | --- | --- |"]
    for p in pr.gpu_hour.values():
        g = cat.gpu(p.gpu)
        rows.append(f"| <a id=\"{anchor_id('price', p.key)}\"></a>`{p.key}` | {_glink(g)} | {U.fmt_usd(p.usd_per_hour)} | "
                    f"{U.fmt_usd(F.fixed_cost_floor(p.usd_per_hour, 1))} | {_esc(p.basis, cell=True)} | {_src_cell(p.source)} |")
    out += ["## GPU hours", "\n".join(rows)]
    rows = ["| Key | Offering | $ per M input | $ per M output | Source |", "| --- | --- | --- | --- | --- |"]
    for a in pr.api.values():
        rows.append(f"| <a id=\"{anchor_id('api', a.key)}\"></a>`{a.key}` | {_esc(a.name, cell=True)} | {U.fmt_usd(a.usd_per_m_input)} | "
                    f"{U.fmt_usd(a.usd_per_m_output)} | {_src_cell(a.source)} |")
    out += ["## Hosted APIs", "\n".join(rows)]
    return "\n\n".join(out)


def _fit_cell(m: Model, g: Gpu, f: Format, kv: Format, n: int, context: int, gpu_util: float,
              activation_gib: float, reserve_gib: float, block_size: int) -> str:
    try:
        _, shard, budget = _budget(m, g, f, kv, n, gpu_util, activation_gib, reserve_gib, None)
    except MacroInputError:
        return "TP invalid"
    if budget <= 0:
        return f"✗ ({_n(U.bytes_to_gib(shard.weights_per_gpu))} GiB weights/GPU)"
    ctx = min(context, m.max_position_embeddings)
    per_seq = F.kv_bytes_per_sequence_paged(m, ctx, kv, block_size, shard.kv_fraction)
    seqs = F.max_concurrent_sequences(budget, per_seq)
    max_ctx, limit = F.max_context_one_sequence(m, budget, kv, block_size, shard.kv_fraction)
    ctx_txt = f"{_k(max_ctx)} ctx" + (" (max)" if limit == "max_position_embeddings" else "")
    if seqs == 0:
        return f"✓ {ctx_txt}; 0 seqs @ {_k(ctx)}"
    return f"✓ {ctx_txt}; {_i(seqs)} seqs @ {_k(ctx)}"


def _k(tokens: int) -> str:
    """Compact token count: 131072 -> '128K', 8192 -> '8K', 1500 -> '1,500'."""
    if tokens >= 1024 and tokens % 1024 == 0:
        return f"{tokens // 1024:,}K"
    if tokens >= 10240:
        return f"{tokens / 1024:,.0f}K"
    return _i(tokens)


@_as_input_error
def what_fits(context=8192, kv_dtype: str = "bf16", counts=(1, 2, 4, 8), fmts=REFERENCE_FORMATS,
              models=None, gpus=None, gpu_util: float = F.DEFAULT_GPU_UTILIZATION, activation_gib: float = 2.0,
              reserve_gib: float = 1.0, block_size: int = F.DEFAULT_BLOCK_SIZE, level: int = 2) -> str:
    """Reference page: model × GPU × GPU count × format -> fits?, max single-sequence context, max sequences."""
    cat = _cat()
    ctx = _tokens("context", context)
    kv = _kv_dtype(kv_dtype)
    fobjs = [_fmt(k) for k in fmts]
    mlist = [_model(k) for k in models] if models else list(cat.models.values())
    glist = [_gpu(k) for k in gpus] if gpus else list(cat.gpus.values())
    counts = [_count("n_gpus", c) for c in counts]
    out = ["**Assumptions.** Tensor parallelism over all GPUs of one node (TP = GPU count); every weight "
           f"tensor in the column's format; KV cache in {catalog_link('format', kv.key, kv.name)}; "
           f"`--gpu-memory-utilization` {_bits(gpu_util)}; {_bits(activation_gib)} GiB activations and "
           f"{_bits(reserve_gib)} GiB runtime reserve per GPU; paged KV in blocks of {block_size} tokens. "
           "A cell shows the longest single sequence that fits (ctx; “(max)” = the model's trained maximum) and "
           f"how many sequences of {_k(ctx)} tokens (or the model's maximum, if shorter) fit at once. "
           "“✗” = the weights alone leave no KV budget; “TP invalid” = the head counts do not divide by the GPU "
           "count. Weight-only storage is assumed possible in every format on every GPU (e.g. FP8 weights on "
           "A100 through weight-only kernels); speed is a separate question."]
    for m in mlist:
        head = ["| GPU | GPUs | " + " | ".join(catalog_link("format", f.key, f.key) for f in fobjs) + " |",
                "| --- | --- | " + " | ".join("---" for _ in fobjs) + " |"]
        for g in glist:
            for n in counts:
                cells = [_fit_cell(m, g, f, kv, n, ctx, gpu_util, activation_gib, reserve_gib, block_size)
                         for f in fobjs]
                head.append(f"| {catalog_link('gpu', g.key, g.name)} | {n} | " + " | ".join(cells) + " |")
        out.append(f"{'#' * level} {m.name} {{#fits-{m.key.replace('.', '-')}}}\n\n"
                   f"{_mlink(m)}: weights "
                   + ", ".join(f"{f.key} {U.fmt_gb(F.weight_bytes(m, f))}" for f in fobjs)
                   + f"; KV {U.fmt_bytes(F.kv_bytes_per_token(m, kv))} per token.\n\n" + "\n".join(head))
    return "\n\n".join(out)


# ==================================================================================================
# registry
# ==================================================================================================

MACROS: dict[str, Callable[..., str]] = {
    # worked examples (blocks)
    "param_count": param_count,
    "weights": weights,
    "kv_per_token": kv_per_token,
    "kv_cache": kv_cache,
    "paged_tail_waste": paged_tail_waste,
    "memory_budget": memory_budget,
    "tp_shards": tp_shards,
    "allreduce_volume": allreduce_volume,
    "ep_all_to_all": ep_all_to_all,
    "decode_speed": decode_speed,
    "prefill_time": prefill_time,
    "arithmetic_intensity": arithmetic_intensity,
    "gemm_intensity": gemm_intensity,
    "littles_law": littles_law,
    "replicas": replicas,
    "zone_replicas": zone_replicas,
    "hpa": hpa,
    "cost_per_million": cost_per_million,
    "crossover": crossover,
    "cost_floor": cost_floor,
    "spec_decode": spec_decode,
    "lora_size": lora_size,
    "vision_tokens": vision_tokens,
    "kv_transfer": kv_transfer,
    "load_time": load_time,
    # inline values
    "kv_token_bytes": kv_token_bytes,
    "kv_cache_gb": kv_cache_gb,
    "weight_gb": weight_gb,
    "params_total": params_total,
    "params_active": params_active,
    "model_field": model_field,
    "gpu_memory": gpu_memory,
    "gpu_bandwidth": gpu_bandwidth,
    "gpu_flops": gpu_flops,
    "ridge_point": ridge_point,
    "format_bits": format_bits,
    "gpu_price": gpu_price,
    "valid_tp": valid_tp,
    "decode_tps": decode_tps,
    "max_seqs": max_seqs,
    "max_context": max_context,
    "spec_tokens": spec_tokens,
    "model_link": model_link,
    "gpu_link": gpu_link,
    "format_link": format_link,
    # reference pages
    "model_catalog": model_catalog,
    "gpu_catalog": gpu_catalog,
    "format_catalog": format_catalog,
    "price_table": price_table,
    "what_fits": what_fits,
}
