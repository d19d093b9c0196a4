"""Napkin-math drills: problems generated from the catalog and the sizing formulas, drawn with a seed,
with an answer key, the named mistakes a wrong answer may match, and a worked solution.

This module is the Python reference of the browser's drill engine (``docs/assets/javascripts/
drills-engine.js``), as :mod:`sitebuild.calcsheet` is of the calculator's: for a drill type and a seed
both draw the same problem with the same generator (mulberry32), compute the same answer with the
same engine (the calculator's sheet where the drill is a deployment, :mod:`macros.formulas` otherwise;
the mistakes from :mod:`macros.formulas.traps`) and fill the same text. tests/test_drills_parity.py
runs hundreds of seeds of every type through both and requires equal results.

The texts (prompt, formula, inputs with their sources, substitution, result) are templates, written
once here and exported to the browser in the data script (:func:`drills_script`); each side computes
the values that fill them. A template line may start with ``?name:`` (kept only when the value
``name`` exists) or ``!name:`` (only when it does not); ``{name}`` is replaced by the value, and a
missing value is an error, never an empty string. Pure Python; the build hook writes the script.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Callable

from macros import formulas as F
from macros import units as U
from macros.catalog import Catalog, load_catalog
from macros.formulas import traps as T
from macros.render.blocks import _bits, _bytes_el, _frac, _gib, _i, _n, _sci
from macros.render.memory import kv_sequence_expr

from .calcsheet import evaluate, peak_flops
from .calculator import DEFAULTS, export_format, export_gpu, export_model

DATA_SCRIPT = "assets/javascripts/drills-data.js"
DRILLS_PAGE = "drills.md"
DAILY_SIZE = 5
MAX_SET = 20
#: A named mistake is listed for a drill only when it moves the answer by at least this share; below it
#: the mistake does not change the figure a reader would give.
MIN_TRAP_DIFF = 0.02
ATTEMPTS = 200


# --------------------------------------------------------------------------------------------------
# the generator: mulberry32, as practice.js and drills-engine.js
# --------------------------------------------------------------------------------------------------

class Rng:
    """mulberry32: 32-bit state, floats in [0, 1). The browser's generator, bit for bit."""

    def __init__(self, seed: int):
        self.state = seed & 0xFFFFFFFF

    def random(self) -> float:
        self.state = (self.state + 0x6D2B79F5) & 0xFFFFFFFF
        t = self.state
        t = ((t ^ (t >> 15)) * (t | 1)) & 0xFFFFFFFF
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        return ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296

    def index(self, n: int) -> int:
        return int(self.random() * n)

    def pick(self, seq):
        return seq[self.index(len(seq))]


def fnv1a(text: str) -> int:
    """32-bit FNV-1a of the UTF-16 code units of ``text`` (what the browser's charCodeAt gives)."""
    raw = text.encode("utf-16-le")
    h = 0x811C9DC5
    for i in range(0, len(raw), 2):
        h ^= raw[i] | raw[i + 1] << 8
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def daily_set(day: str) -> list[tuple[str, int]]:
    """The set of the day ``YYYY-MM-DD``: :data:`DAILY_SIZE` different drill types and a seed each."""
    rng = Rng(fnv1a("msib-drills:" + day))
    keys = list(TYPES)
    for i in range(len(keys) - 1, 0, -1):
        j = rng.index(i + 1)
        keys[i], keys[j] = keys[j], keys[i]
    return [(k, int(rng.random() * 4294967296)) for k in keys[:DAILY_SIZE]]


# --------------------------------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{([a-z0-9_]+)\}")


_CONDITION = re.compile(r"([?!])([a-z0-9_]+):")


def fill(template: str, values: dict[str, str]) -> str | None:
    """``template`` with its values, or ``None`` when one of its ``?name:`` / ``!name:`` conditions fails."""
    while m := _CONDITION.match(template):
        if (m.group(2) in values) != (m.group(1) == "?"):
            return None
        template = template[m.end():]

    def value(hit: re.Match) -> str:
        key = hit.group(1)
        if key not in values:
            raise KeyError(f"sitebuild/drills.py: template {template!r} needs the value {key!r}")
        return values[key]

    return _PLACEHOLDER.sub(value, template)


def _lines(templates: list[str], values: dict) -> list[str]:
    return [t for t in (fill(x, values) for x in templates) if t is not None]


def render(tpl: dict, values: dict) -> dict:
    """The prompt and the worked solution of one drill from its type's templates."""
    inputs = []
    for label, value, source in tpl["inputs"]:
        text = fill(label, values)
        if text is not None:
            inputs.append([text, fill(value, values), source])
    return {
        "prompt": " ".join(_lines(tpl["prompt"], values)),
        "ask": " ".join(_lines(tpl["ask"], values)),
        "solution": {"title": fill(tpl["title"], values), "formulas": _lines(tpl["formulas"], values),
                     "inputs": inputs, "steps": _lines(tpl["steps"], values),
                     "results": _lines(tpl["results"], values), "notes": _lines(tpl["notes"], values)},
    }


def answer_text(dt: "DrillType", x) -> str:
    """An answer (or a mistake's figure) as the drills show it."""
    dim = dt.dim
    if dim == "bytes":
        return U.fmt_bytes(x)
    if dim == "rate":
        return f"{_n(x)} tokens/s"
    if dim == "time":
        return U.fmt_seconds(x)
    if dim == "usd":
        return f"{U.fmt_usd(x)} per million tokens"
    if dim == "bits":
        return f"{_bits(x)} bits per weight"
    if dim == "list":
        return ", ".join(str(t) for t in x)
    return f"{_n(x)} {dt.noun}" if dt.noun else _n(x)


# --------------------------------------------------------------------------------------------------
# catalog slices
# --------------------------------------------------------------------------------------------------

KV_CLASSES = ("gqa", "mla", "sliding", "hybrid")
CONTEXTS = (2048, 4096, 8192, 16384, 32768, 65536, 131072)
SHEET_FORMATS = ("bf16", "fp8", "int4-g128")
SHEET_KV = ("bf16", "fp8")
EXPERT_FORMATS = ("mxfp4", "int4-g128", "fp8", "nvfp4")
TP_CHOICES = (1, 2, 4, 8)
RIDGE_FORMATS = ("bf16", "fp8", "int8", "int4-g128")


def kv_class(m) -> str:
    if m.linear_attention is not None:
        return "hybrid"
    if m.mla is not None:
        return "mla"
    if m.sliding_window is not None:
        return "sliding"
    return "gqa"


def _split_states(m) -> bool:
    return m.linear_attention is not None and m.linear_attention.kda is not None


@dataclass
class Ctx:
    cat: Catalog

    def __post_init__(self):
        c = self.cat
        self.models = list(c.models.values())
        self.gpus = list(c.gpus.values())
        self.formats = list(c.formats.values())
        self.kv_formats = [f for f in self.formats if f.kv_cache]
        self.sheet_models = [m for m in self.models if not _split_states(m)]
        self.block_formats = [f for f in self.formats if f.group_size and f.scale_bits]
        self.gpu_prices = list(c.prices.gpu_hour.values())
        self.api_prices = list(c.prices.api.values())

    def fmt(self, key: str):
        return self.cat.format(key)


@dataclass
class Draft:
    """What a drill type's maker returns: the entries drawn, the values that fill the templates, the
    answer, the mistakes' figures (before the difference filter) and an optional napkin figure."""

    refs: dict
    values: dict
    answer: object
    traps: dict
    question: int | None = None
    napkin: float | None = None


@dataclass(frozen=True)
class DrillType:
    key: str
    title: str
    question: int
    dim: str           # bytes | count | list | rate | time | usd | bits
    tolerance: float   # relative; lists must match exactly
    bare: float | None  # a number without a unit is read in the base unit when >= this; None: never
    noun: str          # what the answer counts (count drills): "sequences", "tokens", ...
    templates: dict
    make: Callable
    slack: float = 0   # an answer this close (in the answer's unit) passes too: one sequence for a count of 5


def _num(x: float) -> str:
    return _n(x)


def _kv_values(v: dict, m, kv) -> None:
    """The model facts every KV drill shows."""
    full, sliding, linear = F.kv_layer_counts(m)
    v.update(model=m.name, layers=_i(m.num_hidden_layers), heads=_i(m.num_attention_heads),
             kvh=_i(m.num_key_value_heads), hd=_i(m.head_dim), hidden=_i(m.hidden_size),
             kvname=kv.name, kvkey=kv.key, kvbits=_bits(kv.bits_per_weight), eb=_bytes_el(kv.bits_per_weight / 8),
             full=_i(full), caching=_i(full + sliding))
    if sliding:
        v.update(sliding=_i(sliding), window=_i(m.sliding_window.size))
        if not full:
            v["all_sliding"] = ""
    if linear:
        v.update(linear=_i(linear), state=U.fmt_bytes(m.linear_attention.state_bytes_per_layer),
                 state_i=_i(m.linear_attention.state_bytes_per_layer))
    if m.mla is not None:
        v.update(mla="", rank=_i(m.mla.kv_lora_rank), rope=_i(m.mla.qk_rope_head_dim))
    else:
        v["gqa"] = ""
        if not m.head_dim_in_config:
            v["hd_derived"] = ""


def _kv_per_layer_expr(m, kv) -> str:
    eb = _bytes_el(kv.bits_per_weight / 8)
    if m.mla is not None:
        return f"({_i(m.mla.kv_lora_rank)} + {_i(m.mla.qk_rope_head_dim)}) × {eb}"
    return f"2 × {_i(m.num_key_value_heads)} × {_i(m.head_dim)} × {eb}"


def _kv_layer_traps(m, kv) -> dict[str, float]:
    """Per-layer figures of the mistakes that apply to ``m``."""
    out = {}
    if m.mla is None:
        if m.num_attention_heads != m.num_key_value_heads:
            out["query_heads"] = T.kv_per_layer_query_heads(m, kv)
        out["k_or_v_once"] = T.kv_per_layer_k_or_v_once(m, kv)
    else:
        out["mla_as_mha"] = T.kv_per_layer_mla_as_mha(m, kv)
    out["hidden_size"] = T.kv_per_layer_hidden_size(m, kv)
    out["bits_as_bytes"] = T.kv_per_layer_bits_as_bytes(m, kv)
    return out


def _draw_kv_model(rng: Rng, ctx: Ctx):
    cls = rng.pick(KV_CLASSES)
    return rng.pick([m for m in ctx.models if kv_class(m) == cls]), cls


# --------------------------------------------------------------------------------------------------
# drill types
# --------------------------------------------------------------------------------------------------

def make_weights(rng: Rng, ctx: Ctx) -> Draft:
    m = rng.pick(ctx.models)
    f = rng.pick(ctx.formats)
    fe = None
    if m.moe is not None and rng.random() < 0.5:
        fe = ctx.fmt(rng.pick([k for k in EXPERT_FORMATS if k != f.key]))
    b = F.param_breakdown(m)
    wb = F.weight_bytes_breakdown(m, f, fe, breakdown=b)
    emb_bits = F.embedding_format_bits(f)
    rest = b.total - b.embeddings - b.routed_experts
    v = {"model": m.name, "fmt": f.name, "fkey": f.key, "params": _i(b.total), "bits": _bits(f.bits_per_weight),
         "result": U.fmt_gb(wb.total), "total_b": _i(wb.total)}
    refs = {"model": m.key, "fmt": f.key}
    mixed = fe is not None or emb_bits != f.bits_per_weight
    if mixed:
        v.update(mixed="", emb=_i(b.embeddings), rest=_i(rest), embbits=_bits(emb_bits),
                 emb_b=_i(wb.embeddings), rest_b=_i(wb.rest))
    else:
        v["plain"] = ""
    if emb_bits != f.bits_per_weight:
        v["embrule"] = ""
    if not b.lm_head:
        v["tied"] = ""
    if fe is not None:
        refs["efmt"] = fe.key
        v.update(experts=_i(b.routed_experts), fename=fe.name, fekey=fe.key, febits=_bits(fe.bits_per_weight),
                 exp_b=_i(wb.routed_experts))
    traps = {"bits_as_bytes": T.weight_bytes_bits_as_bytes(m, f, fe),
             "gb_as_gib": T.gb_read_as_gib(wb.total), "gib_as_gb": T.gib_read_as_gb(wb.total)}
    if emb_bits != f.bits_per_weight:
        traps["embeddings_quantized"] = T.weight_bytes_embeddings_quantized(m, f, fe)
    if f.group_size or (fe is not None and fe.group_size):
        traps["scale_forgotten"] = T.weight_bytes_scale_forgotten(m, f, fe)
    if m.moe is not None:
        traps["active_for_total"] = T.weight_bytes_active_for_total(m, f, fe)
    return Draft(refs, v, wb.total, traps)


WEIGHTS = {
    "title": "weights of {model} in {fmt}",
    "prompt": ["{model} has {params} parameters, counted from its config.",
               "?experts:{experts} of them are in the routed experts.",
               "?embrule:!tied:{emb} of them are in the embedding and the lm_head.",
               "?embrule:?tied:{emb} of them are in the embedding table, which the lm_head shares.",
               "The weights are stored in {fmt}, {bits} bits per weight.",
               "?embrule:The format keeps the embedding and lm_head in {embbits}-bit.",
               "?experts:The routed experts are stored in {fename} instead, {febits} bits per weight."],
    "ask": ["How much memory do the weights take?"],
    "formulas": ["?plain:weight bytes = parameters × bits_per_weight / 8",
                 "?mixed:bytes = experts × bits(experts)/8 + embeddings × bits(embeddings)/8 + rest × bits(rest)/8"],
    "inputs": [["?plain:parameters (computed from config)", "{params}", "model"],
               ["?plain:bits per weight, {fkey}", "{bits}", "fmt"],
               ["?experts:routed-expert parameters", "{experts}", "model"],
               ["?mixed:embedding + lm_head parameters", "{emb}", "model"],
               ["?mixed:other parameters", "{rest}", "model"],
               ["?experts:bits per weight, experts ({fekey})", "{febits}", "efmt"],
               ["?mixed:bits per weight, embeddings", "{embbits}", "fmt"],
               ["?mixed:bits per weight, rest ({fkey})", "{bits}", "fmt"]],
    "steps": ["?plain:{params} × {bits} / 8 = {total_b} bytes",
              "?experts:experts: {experts} × {febits} / 8 = {exp_b} bytes",
              "?mixed:embeddings: {emb} × {embbits} / 8 = {emb_b} bytes",
              "?mixed:rest: {rest} × {bits} / 8 = {rest_b} bytes",
              "?mixed:sum = {total_b} bytes"],
    "results": ["{result}"],
    "notes": ["Weights only: KV cache, activations and runtime memory come on top. Effective bits include "
              "the format's scale overhead."],
}

_KV_PROMPT = [
    "!sliding:!linear:{model} has {layers} layers.",
    "?sliding:!all_sliding:{model} has {layers} layers: {full} full-attention layers and {sliding} "
    "sliding-window layers with a window of {window} tokens.",
    "?all_sliding:{model} has {layers} layers, all with a sliding window of {window} tokens.",
    "?linear:{model} has {layers} layers: {full} full-attention layers and {linear} linear-attention layers, "
    "which keep a constant state per sequence instead of a KV cache.",
    "?gqa:!hd_derived:Its config gives num_attention_heads {heads}, num_key_value_heads {kvh}, head_dim {hd} "
    "and hidden_size {hidden}.",
    "?gqa:?hd_derived:Its config gives num_attention_heads {heads}, num_key_value_heads {kvh} and hidden_size "
    "{hidden}; head_dim is {hd} (hidden_size / num_attention_heads: the config does not state it).",
    "?mla:It uses multi-head latent attention with kv_lora_rank {rank} and qk_rope_head_dim {rope}; its "
    "config also gives num_attention_heads {heads}, num_key_value_heads {kvh} and hidden_size {hidden}, and "
    "each head's query and key are {hd} wide (qk_nope_head_dim + qk_rope_head_dim).",
    "The KV cache is stored in {kvname}, {kvbits} bits per element.",
]
_KV_INPUTS = [
    ["`num_hidden_layers`", "{layers}", "model"],
    ["?caching_note:layers with a growing KV cache (full)", "{full}", "model"],
    ["?sliding:sliding-window layers / window", "{sliding} / {window} tokens", "model"],
    ["?linear:constant-state (linear) layers / state per layer", "{linear} / {state}", "model"],
    ["?mla:`kv_lora_rank` + `qk_rope_head_dim`", "{rank} + {rope}", "model"],
    ["?gqa:`num_key_value_heads`", "{kvh}", "model"],
    ["?gqa:`head_dim`", "{hd}", "model"],
    ["bytes per element, {kvkey}", "{eb}", "kv"],
]


def make_kv_token(rng: Rng, ctx: Ctx) -> Draft:
    m, cls = _draw_kv_model(rng, ctx)
    kv = rng.pick(ctx.kv_formats)
    per_layer = F.kv_bytes_per_token_per_layer(m, kv)
    answer = F.kv_bytes_per_token(m, kv)
    v: dict = {}
    _kv_values(v, m, kv)
    full, sliding, linear = F.kv_layer_counts(m)
    if sliding or linear:
        v["caching_note"] = ""
    if sliding:
        v["past_window"] = U.fmt_bytes(per_layer * full)
    if linear:
        v["states"] = U.fmt_bytes(m.linear_attention.state_bytes_per_layer * linear)
    v.update(expr=_kv_per_layer_expr(m, kv), per_layer=_i(per_layer), answer_b=_i(answer),
             result=U.fmt_bytes(answer))
    traps = {k: T.kv_per_token_with(m, x) for k, x in _kv_layer_traps(m, kv).items()}
    if linear:
        traps["linear_as_attention"] = T.kv_per_token_with(m, per_layer, linear_as_attention=True)
    return Draft({"model": m.key, "kv": kv.key}, v, answer, traps, question=121 if cls in ("sliding", "hybrid") else 75)


KV_TOKEN = {
    "title": "KV cache per token of {model} in {kvname}",
    "prompt": _KV_PROMPT,
    "ask": ["?sliding:How many bytes of KV cache does each token add across all layers, while the context is "
            "shorter than the window?",
            "!sliding:How many bytes of KV cache does each token add, across all layers?"],
    "formulas": ["?mla:KV bytes/token = layers × (kv_lora_rank + qk_rope_head_dim) × bytes",
                 "?gqa:KV bytes/token = 2 × layers × num_key_value_heads × head_dim × bytes"],
    "inputs": _KV_INPUTS,
    "steps": ["per layer: {expr} = {per_layer} bytes",
              "× {caching} layers that cache KV = {answer_b} bytes"],
    "results": ["{result} per token"],
    "notes": ["?sliding:{sliding} of these layers keep at most {window} tokens, so past the window each token "
              "adds only {past_window}.",
              "?linear:The {linear} linear-attention layers keep a constant state instead ({states} per sequence).",
              "?mla:MLA caches one compressed latent and one shared RoPE key per layer, not per-head K and V."],
}


def make_kv_batch(rng: Rng, ctx: Ctx) -> Draft:
    m, cls = _draw_kv_model(rng, ctx)
    kv = rng.pick(ctx.kv_formats)
    context = rng.pick([c for c in CONTEXTS if c <= m.max_position_embeddings])
    batch = rng.pick((1, 4, 8, 16, 32, 64, 128))
    per_layer = F.kv_bytes_per_token_per_layer(m, kv)
    per_seq = F.kv_bytes_per_sequence(m, context, kv)
    answer = F.kv_cache_bytes(m, batch, context, kv)
    v: dict = {}
    _kv_values(v, m, kv)
    full, sliding, linear = F.kv_layer_counts(m)
    v.update(batch=_i(batch), ctx=_i(context), per_layer=_i(per_layer), per_seq=_i(per_seq),
             answer_b=_i(answer), result=U.fmt_gb(answer), expr=_kv_per_layer_expr(m, kv))
    if sliding or linear:
        v["caching_note"] = ""
        v["seq_expr"] = kv_sequence_expr(m, context, per_layer)
    else:
        v["per_token"] = _i(per_layer * full)
    traps = {k: batch * T.kv_per_sequence_with(m, context, x) for k, x in _kv_layer_traps(m, kv).items()}
    if sliding and context > m.sliding_window.size:
        traps["window_ignored"] = batch * T.kv_per_sequence_with(m, context, per_layer, window=False)
    if linear:
        traps["linear_as_attention"] = batch * T.kv_per_sequence_with(m, context, per_layer,
                                                                      linear_as_attention=True)
    traps["gb_as_gib"] = T.gb_read_as_gib(answer)
    traps["gib_as_gb"] = T.gib_read_as_gb(answer)
    return Draft({"model": m.key, "kv": kv.key}, v, answer, traps,
                 question=121 if cls in ("sliding", "hybrid") else 75)


KV_BATCH = {
    "title": "KV cache of {model}, {batch} × {ctx} tokens, {kvname}",
    "prompt": _KV_PROMPT + ["?linear:Each linear-attention layer keeps {state} of state per sequence.",
                            "A batch of {batch} sequences of {ctx} tokens each is in the cache."],
    "ask": ["How much KV cache does the batch hold?"],
    "formulas": ["?caching_note:per sequence = per_layer × (full_layers × context + sliding_layers × "
                 "min(context, window)) + linear_layers × state",
                 "?mla:!caching_note:KV bytes/token = layers × (kv_lora_rank + qk_rope_head_dim) × bytes; "
                 "KV = batch × context × KV bytes/token",
                 "?gqa:!caching_note:KV bytes/token = 2 × layers × num_key_value_heads × head_dim × bytes; "
                 "KV = batch × context × KV bytes/token"],
    "inputs": _KV_INPUTS + [["batch", "{batch}", "given"], ["context", "{ctx} tokens", "given"]],
    "steps": ["per layer per token: {expr} = {per_layer} bytes",
              "?caching_note:per sequence: {seq_expr} = {per_seq} bytes",
              "!caching_note:per token: {per_layer} × {full} layers = {per_token} bytes; per sequence: × {ctx} = "
              "{per_seq} bytes",
              "× batch {batch} = {answer_b} bytes"],
    "results": ["{result}"],
    "notes": ["?sliding:The sliding-window layers stop growing at {window} tokens.",
              "?mla:MLA caches one compressed latent and one shared RoPE key per layer, not per-head K and V."],
}


# ---- deployments: the calculator's sheet ------------------------------------------------------------

def _sheet(m, g, f, kv, n, context, conc, mfu=None):
    """The calculator's sheet (:func:`sitebuild.calcsheet.evaluate`) at the calculator's defaults."""
    return evaluate(m, g, f, kv, None, n, context, conc, DEFAULTS["gpu_util"],
                    DEFAULTS["mfu"] if mfu is None else mfu)


def _smallest_tp(m, g, f, kv, context, conc, ok, mfu=None):
    """The smallest TP degree of :data:`TP_CHOICES` the model allows for which ``ok(n, sheet)`` holds."""
    valid = F.valid_tp_degrees(m, DEFAULTS["max_tp"])
    for n in TP_CHOICES:
        if n in valid:
            s = _sheet(m, g, f, kv, n, context, conc, mfu)
            if ok(n, s):
                return n, s
    return None


def _within(napkin: float, exact: float, share: float) -> bool:
    """A draw is kept only when the napkin method the prompt supports lands this close to the engine."""
    return abs(napkin - exact) <= share * abs(exact)


def _allowances() -> float:
    return DEFAULTS["activation_bytes"] + DEFAULTS["reserve_bytes"]


def _budget(memory: float, weights_per_gpu: float, util: float, allowances: bool = True) -> float:
    d = DEFAULTS
    if allowances:
        return F.kv_budget_bytes(memory, weights_per_gpu, util, d["activation_bytes"], d["reserve_bytes"])
    return F.kv_budget_bytes(memory, weights_per_gpu, util, 0, 0)


def _napkin_budget(s, n) -> float:
    """The KV budget per GPU with the weights split evenly (the replicated tensors left out)."""
    return s["usable_per_gpu"] - s["weights_total"] / n - _allowances()


def _deploy_values(v: dict, m, g, f, kv, n, s) -> None:
    v.update(model=m.name, gpu=g.name, fmt=f.name, fkey=f.key, kvname=kv.name, kvkey=kv.key, n=_i(n),
             mem=_num(g.memory_bytes / U.GiB), mem_gb=U.fmt_gb(g.memory_bytes), weights=U.fmt_gb(s["weights_total"]),
             util=_bits(DEFAULTS["gpu_util"]), act=_bits(DEFAULTS["activation_bytes"] / U.GiB),
             res=_bits(DEFAULTS["reserve_bytes"] / U.GiB), frac=_frac(s["kv_fraction"]),
             usable=_gib(s["usable_per_gpu"]), wpg=_gib(s["weights_per_gpu"]), wtot=_gib(s["weights_total"]),
             budget=_gib(s["kv_budget"]), budget_b=_i(s["kv_budget"]))
    if s["replicated_extra"]:
        v["extra"] = U.fmt_bytes(s["replicated_extra"])
    if m.mla is not None:
        v["mla"] = ""
    else:
        v["kvh"] = _i(m.num_key_value_heads)


_DEPLOY_PROMPT = [
    "{model} in {fmt}, {weights} of weights in total, runs on {n} × {gpu} with tensor parallelism {n}; "
    "the driver reports {mem} GiB on each GPU.",
    "The engine may use {util} of each GPU's memory, and {act} GiB of activations and {res} GiB of runtime "
    "reserve per GPU come off that share.",
]
_KV_SPLIT = ["?kvh:The model has {kvh} KV heads.",
             "?mla:The model caches an MLA latent per token."]
_DEPLOY_INPUTS = [
    ["GPU memory", "{mem_gb}", "gpu"],
    ["weights (all GPUs)", "{weights}", "model"],
    ["TP degree (= GPUs)", "{n}", "given"],
    ["`--gpu-memory-utilization`", "{util}", "assumption (the calculator's default)"],
    ["activations / runtime reserve per GPU", "{act} GiB / {res} GiB", "assumption (the calculator's default)"],
]
_BUDGET_STEPS = [
    "usable: {mem} GiB × {util} = {usable}",
    "?extra:weights per GPU: {wtot} / {n} + {extra} of replicated tensors = {wpg}",
    "!extra:weights per GPU: {wtot} / {n} = {wpg}",
    "KV budget: {usable} − {wpg} − {act} GiB − {res} GiB = {budget}",
]
_SPLIT_NOTES = ["?kvh:Under tensor parallelism each GPU caches its share of the KV heads (one whole head when TP "
                "exceeds the KV heads).",
                "?mla:An MLA latent is not split by tensor parallelism: every GPU keeps it whole."]


def _draw_deployment(rng: Rng, ctx: Ctx, contexts, conc_choices, ok, *, formats=SHEET_FORMATS, gpu_ok=None,
                     mfus=None):
    """Model, format, GPU, KV dtype, context, concurrency (and MFU), then the smallest TP degree for which
    ``ok(n, sheet, draw)`` holds; redrawn until one does."""
    for _ in range(ATTEMPTS):
        m = rng.pick(ctx.sheet_models)
        f = ctx.fmt(rng.pick(formats))
        g = rng.pick([x for x in ctx.gpus if gpu_ok(x, f)] if gpu_ok else ctx.gpus)
        kv = ctx.fmt(rng.pick(SHEET_KV))
        context = rng.pick([c for c in contexts if c <= m.max_position_embeddings])
        conc = rng.pick(conc_choices)
        mfu = rng.pick(mfus) if mfus else None
        draw = {"m": m, "f": f, "g": g, "kv": kv, "ctx": context, "conc": conc, "mfu": mfu}
        found = _smallest_tp(m, g, f, kv, context, conc, lambda n, s: ok(n, s, draw), mfu)
        if found:
            draw["n"], draw["s"] = found
            return draw
    raise RuntimeError("sitebuild/drills.py: no deployment drawn after many attempts")


def _seqs_napkin(n, s) -> float:
    return _napkin_budget(s, n) / (s["kv_per_sequence"] * s["kv_fraction"])


def make_max_sequences(rng: Rng, ctx: Ctx) -> Draft:
    tol = TYPES["max_sequences"].tolerance

    def ok(n, s, draw):
        return s["fits"] and s["max_sequences"] >= 1 and _within(_seqs_napkin(n, s), s["max_sequences"], tol / 2)

    d = _draw_deployment(rng, ctx, CONTEXTS, (1,), ok)
    m, g, f, kv, n, s = d["m"], d["g"], d["f"], d["kv"], d["n"], d["s"]
    v: dict = {}
    _deploy_values(v, m, g, f, kv, n, s)
    per_seq = s["kv_per_sequence_gpu"]
    per_seq_whole = per_seq / s["kv_fraction"]
    v.update(ctx=_i(d["ctx"]), kvseq=U.fmt_bytes(s["kv_per_sequence"]), kvseq_gpu=_i(per_seq),
             answer=_i(s["max_sequences"]), blocks=_i(s["blocks_per_sequence"]))
    mem, wpg, util = g.memory_bytes, s["weights_per_gpu"], DEFAULTS["gpu_util"]
    seqs = F.max_concurrent_sequences
    traps = {"util_forgotten": seqs(_budget(mem, wpg, 1.0), per_seq),
             "ledger_forgotten": seqs(_budget(mem, wpg, util, allowances=False), per_seq),
             "gib_as_gb": seqs(_budget(T.gib_read_as_gb(mem), wpg, util), per_seq)}
    if s["kv_fraction"] < 1:
        traps["kv_share_forgotten"] = seqs(s["kv_budget"], per_seq_whole)
    if n > 1:
        traps["tp_share_forgotten"] = seqs(_budget(mem, s["weights_total"], util), per_seq_whole)
    return Draft({"model": m.key, "gpu": g.key, "fmt": f.key, "kv": kv.key}, v, s["max_sequences"], traps,
                 napkin=_seqs_napkin(n, s))


MAX_SEQUENCES = {
    "title": "concurrent sequences of {model} in {fmt} on {n} × {gpu}",
    "prompt": _DEPLOY_PROMPT + ["Each sequence of {ctx} tokens holds {kvseq} of KV cache for the whole model, "
                                "in {kvname}."] + _KV_SPLIT,
    "ask": ["How many sequences of {ctx} tokens fit in the KV cache at once?"],
    "formulas": ["KV budget per GPU = memory × gpu_util − weights per GPU − activations − runtime reserve",
                 "max sequences = floor(KV budget / KV bytes per sequence per GPU)"],
    "inputs": _DEPLOY_INPUTS + [["KV per sequence (whole model)", "{kvseq}", "model"],
                                ["?kvh:`num_key_value_heads`", "{kvh}", "model"],
                                ["context per sequence", "{ctx} tokens", "given"]],
    "steps": _BUDGET_STEPS + [
        "KV per sequence per GPU: share {frac} held by one GPU, in {blocks} blocks of 16 tokens = {kvseq_gpu} bytes",
        "max sequences: floor({budget_b} / {kvseq_gpu}) = {answer}"],
    "results": ["{answer} concurrent sequences of {ctx} tokens"],
    "notes": _SPLIT_NOTES + ["The allowances are illustrative: vLLM measures the activation peak with a profiling "
                             "pass at start-up."],
}


def _window_parts(m, kv) -> tuple[float, float]:
    """(KV bytes per token of the layers that keep every token, fixed bytes per sequence once the
    windows are full, constant states included), whole model."""
    full, sliding, linear = F.kv_layer_counts(m)
    per_layer = F.kv_bytes_per_token_per_layer(m, kv)
    fixed = 0.0
    if sliding:
        fixed += per_layer * sliding * m.sliding_window.size
    if linear:
        fixed += m.linear_attention.state_bytes_per_layer * linear
    return per_layer * full, fixed


def _context_napkin(budget: float, fixed: float, per_tok: float, frac: float) -> int:
    """The longest context by napkin, ``floor((budget - fixed x frac) / (per_tok x frac))``, at least 0;
    the mistakes are this figure with one input wrong."""
    return max(0, math.floor((budget - fixed * frac) / (per_tok * frac)))


def make_max_context(rng: Rng, ctx: Ctx) -> Draft:
    tol = TYPES["max_context"].tolerance

    def ok(n, s, draw):
        if not s["fits"] or s["max_context_limit"] != "memory" or s["max_context"] < 1024:
            return False
        per_tok, fixed = _window_parts(draw["m"], draw["kv"])
        napkin = _context_napkin(_napkin_budget(s, n), fixed, per_tok, s["kv_fraction"])
        return _within(napkin, s["max_context"], tol / 2)

    d = _draw_deployment(rng, ctx, (1,), (1,), ok)
    m, g, f, kv, n, s = d["m"], d["g"], d["f"], d["kv"], d["n"], d["s"]
    v: dict = {}
    _deploy_values(v, m, g, f, kv, n, s)
    per_tok, fixed = _window_parts(m, kv)
    full, sliding, linear = F.kv_layer_counts(m)
    frac = s["kv_fraction"]
    v.update(per_tok=U.fmt_bytes(per_tok), per_tok_gpu=_i(per_tok * frac), answer=_i(s["max_context"]),
             maxpos=_i(m.max_position_embeddings))
    if fixed:
        v.update(windowed="", fixed=U.fmt_bytes(fixed), fixed_gpu=_i(fixed * frac))
    mem, wpg, util, budget = g.memory_bytes, s["weights_per_gpu"], DEFAULTS["gpu_util"], s["kv_budget"]
    per_layer = F.kv_bytes_per_token_per_layer(m, kv)
    traps = {"util_forgotten": _context_napkin(_budget(mem, wpg, 1.0), fixed, per_tok, frac),
             "ledger_forgotten": _context_napkin(_budget(mem, wpg, util, allowances=False), fixed, per_tok, frac),
             "gib_as_gb": _context_napkin(_budget(T.gib_read_as_gb(mem), wpg, util), fixed, per_tok, frac)}
    if frac < 1:
        traps["kv_share_forgotten"] = _context_napkin(budget, fixed, per_tok, 1.0)
    if sliding:
        traps["window_ignored"] = _context_napkin(budget, 0.0, per_layer * (full + sliding), frac)
    if linear:
        traps["linear_as_attention"] = _context_napkin(budget, 0.0, per_layer * (full + linear), frac)
    return Draft({"model": m.key, "gpu": g.key, "fmt": f.key, "kv": kv.key}, v, s["max_context"], traps,
                 question=121 if fixed else 102,
                 napkin=_context_napkin(_napkin_budget(s, n), fixed, per_tok, frac))


MAX_CONTEXT = {
    "title": "longest context of {model} in {fmt} on {n} × {gpu}",
    "prompt": _DEPLOY_PROMPT + [
        "!windowed:Each token of context adds {per_tok} of KV cache for the whole model, in {kvname}.",
        "?windowed:Each token of context adds {per_tok} of KV cache on the layers that keep every token, for "
        "the whole model in {kvname}; the window-capped layers and constant states hold a further {fixed} "
        "per sequence once the context is past the window."] + _KV_SPLIT,
    "ask": ["What is the longest context a single sequence can reach?"],
    "formulas": ["KV budget per GPU = memory × gpu_util − weights per GPU − activations − runtime reserve",
                 "!windowed:longest context ≈ KV budget / KV bytes per token per GPU (whole blocks of 16 tokens)",
                 "?windowed:longest context ≈ (KV budget − fixed bytes per GPU) / KV bytes per token per GPU"],
    "inputs": _DEPLOY_INPUTS + [["KV per token (layers that keep every token)", "{per_tok}", "model"],
                                ["?windowed:fixed KV per sequence (windows, states)", "{fixed}", "model"],
                                ["?kvh:`num_key_value_heads`", "{kvh}", "model"]],
    "steps": _BUDGET_STEPS + [
        "KV per token per GPU: share {frac} held by one GPU = {per_tok_gpu} bytes",
        "?windowed:fixed part per GPU: {fixed_gpu} bytes",
        "longest context that fits in whole blocks: {answer} tokens (the model allows {maxpos})"],
    "results": ["{answer} tokens"],
    "notes": _SPLIT_NOTES + ["The cache is paged in blocks of 16 tokens, so the exact figure is a whole number of "
                             "blocks."],
}


def _tp_list(ts) -> str:
    return ", ".join(str(t) for t in ts)


def make_valid_tp(rng: Rng, ctx: Ctx) -> Draft:
    from macros.formulas.parallel import _model_widths

    mx = DEFAULTS["max_tp"]
    for _ in range(ATTEMPTS):  # a model on which some mistake changes the list
        m = rng.pick(ctx.models)
        answer = F.valid_tp_degrees(m, mx)
        traps = {"kv_capped_tp": T.valid_tp_kv_capped(m, mx), "heads_only_tp": T.valid_tp_heads_only(m, mx),
                 "powers_of_two": T.valid_tp_powers_of_two(mx)}
        if any(t != answer for t in traps.values()):
            break
    degrees = range(1, mx + 1)
    widths = _model_widths(m)
    heads, kvh = m.num_attention_heads, m.num_key_value_heads
    v = {"model": m.name, "heads": _i(heads), "kvh": _i(kvh), "answer": _tp_list(answer), "max": _i(mx),
         "widths": " and ".join(f"{name} {_i(w)}" for name, w in widths),
         "heads_ok": _tp_list(t for t in degrees if heads % t == 0),
         "width_ok": "; ".join(f"{name} {_i(w)} divides by TP {_tp_list(t for t in degrees if w % t == 0)}"
                               for name, w in widths)}
    if m.mla is not None:
        v["mla"] = ""
    else:
        v["kv_ok"] = _tp_list(t for t in degrees if (kvh % t == 0 if t <= kvh else t % kvh == 0))
    return Draft({"model": m.key}, v, answer, traps)


VALID_TP = {
    "title": "valid tensor-parallel degrees of {model}",
    "prompt": ["{model}: num_attention_heads {heads}, num_key_value_heads {kvh}, {widths}.",
               "?mla:It uses multi-head latent attention: every GPU keeps the whole latent cache."],
    "ask": ["Which tensor-parallel degrees from 1 to {max} split it evenly?"],
    "formulas": ["num_attention_heads % TP = 0",
                 "TP ≤ KV heads: KV heads % TP = 0; TP > KV heads: TP % KV heads = 0 (each GPU holds one replicated "
                 "KV head)",
                 "every MLP width % TP = 0"],
    "inputs": [["`num_attention_heads`", "{heads}", "model"], ["`num_key_value_heads`", "{kvh}", "model"],
               ["MLP widths", "{widths}", "model"]],
    "steps": ["num_attention_heads {heads} divides by TP {heads_ok}",
              "?kv_ok:num_key_value_heads {kvh}: TP {kv_ok} (dividing it, or a multiple of it when larger)",
              "{width_ok}",
              "all of them: TP {answer}"],
    "results": ["TP {answer}"],
    "notes": ["?mla:For MLA the latent is replicated, so only the query heads and the widths constrain TP.",
              "vLLM checks these divisions when it starts (QKVParallelLinear and the MLP's column-parallel split)."],
}


def make_fit(rng: Rng, ctx: Ctx) -> Draft:
    tol = TYPES["fit"].tolerance
    for _ in range(ATTEMPTS):
        m = rng.pick(ctx.sheet_models)
        f = ctx.fmt(rng.pick(SHEET_FORMATS))
        g = rng.pick(ctx.gpus)
        kv = ctx.fmt(rng.pick(SHEET_KV))
        context = rng.pick([c for c in CONTEXTS if c <= m.max_position_embeddings])
        conc = rng.pick((1, 8, 16, 32, 64, 128, 256))
        n = rng.pick([t for t in TP_CHOICES if t in F.valid_tp_degrees(m, DEFAULTS["max_tp"])])
        s = _sheet(m, g, f, kv, n, context, conc)
        need = s["weights_per_gpu"] + s["kv_load_gpu"] + _allowances()
        napkin = s["weights_total"] / n + conc * s["kv_per_sequence"] * s["kv_fraction"] + _allowances()
        if need <= 2.5 * s["usable_per_gpu"] and _within(napkin, need, tol / 2):
            break
    else:
        raise RuntimeError("sitebuild/drills.py: fit: no deployment drawn")
    v: dict = {}
    _deploy_values(v, m, g, f, kv, n, s)
    v.update(ctx=_i(context), conc=_i(conc), kvseq=U.fmt_bytes(s["kv_per_sequence"]),
             load=_gib(s["kv_load_gpu"]), need=_gib(need), result=U.fmt_gb(need))
    v["fits" if s["headroom"] >= 0 else "short"] = U.fmt_gb(abs(s["headroom"]))
    per_seq_whole = s["kv_per_sequence_gpu"] / s["kv_fraction"]
    traps = {"ledger_forgotten": s["weights_per_gpu"] + s["kv_load_gpu"],
             "gb_as_gib": T.gb_read_as_gib(need), "gib_as_gb": T.gib_read_as_gb(need)}
    if s["kv_fraction"] < 1:
        traps["kv_share_forgotten"] = s["weights_per_gpu"] + conc * per_seq_whole + _allowances()
    if n > 1:
        traps["tp_share_forgotten"] = s["weights_total"] + conc * per_seq_whole + _allowances()
    return Draft({"model": m.key, "gpu": g.key, "fmt": f.key, "kv": kv.key}, v, need, traps, napkin=napkin)


FIT = {
    "title": "memory per GPU of {model} in {fmt} on {n} × {gpu}, {conc} × {ctx} tokens",
    "prompt": _DEPLOY_PROMPT + ["It serves {conc} concurrent sequences of {ctx} tokens; each holds {kvseq} of KV "
                                "cache for the whole model, in {kvname}."] + _KV_SPLIT,
    "ask": ["How much memory does each GPU need for its weights, its KV cache and the allowances?"],
    "formulas": ["need per GPU = weights / TP (+ replicated tensors) + sequences × KV per sequence per GPU "
                 "+ activations + runtime reserve",
                 "fits when need ≤ memory × gpu_util"],
    "inputs": _DEPLOY_INPUTS + [["KV per sequence (whole model)", "{kvseq}", "model"],
                                ["?kvh:`num_key_value_heads`", "{kvh}", "model"],
                                ["concurrent sequences × context", "{conc} × {ctx} tokens", "given"]],
    "steps": ["?extra:weights per GPU: {wtot} / {n} + {extra} of replicated tensors = {wpg}",
              "!extra:weights per GPU: {wtot} / {n} = {wpg}",
              "KV per GPU: {conc} sequences × share {frac} of each, paged in blocks of 16 tokens = {load}",
              "need: {wpg} + {load} + {act} GiB + {res} GiB = {need}",
              "usable: {mem} GiB × {util} = {usable}"],
    "results": ["{result} per GPU", "?fits:fits, with {fits} per GPU to spare",
                "?short:does not fit: short by {short} per GPU"],
    "notes": _SPLIT_NOTES,
}


# ---- decode and prefill --------------------------------------------------------------------------------

DECODE_CONTEXTS = (1024, 2048, 4096, 8192, 16384, 32768)
PREFILL_CONTEXTS = (1024, 4096, 8192, 32768, 131072)


def _decode_values(v: dict, m, g, f, kv, n, context, conc, s) -> None:
    _deploy_values(v, m, g, f, kv, n, s)
    b = F.param_breakdown(m)
    v.update(bw=U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s), ctx=_i(context), conc=_i(conc),
             kvtok=U.fmt_bytes(s["kv_per_token"]), read=U.fmt_gb(s["decode_weight_read"]),
             read_gpu=_i(s["decode_weight_read_gpu"]), kv_gpu=_i(s["decode_kv_read_gpu"]),
             mem_s=U.fmt_seconds(s["decode_memory_s"]), step=U.fmt_seconds(s["decode_step_s"]),
             per_seq=_num(s["decode_per_sequence"]), agg=_num(s["decode_aggregate"]))
    if s["decode_comm_s"]:
        v["comm"] = U.fmt_seconds(s["decode_comm_s"])
    if m.moe is not None and b.moe_layers:
        wb = F.weight_bytes_breakdown(m, f, None, breakdown=b)
        v.update(moe="", k=_i(m.moe.experts_per_token), experts=_i(m.moe.num_experts),
                 expert_bytes=U.fmt_gb(wb.routed_experts), touched=_num(s["experts_touched"]))
    if b.lm_head:
        v["lookup"] = ""


_DECODE_PROMPT = [
    "{model} in {fmt}, {weights} of weights, decodes on {n} × {gpu} with tensor parallelism {n}; each GPU "
    "reads its memory at {bw}.",
    "?moe:Each token is routed to {k} of the {experts} experts in every MoE layer; the routed experts hold "
    "{expert_bytes} of the weights.",
    "Each token of context holds {kvtok} of KV cache for the whole model.",
    "?comm:The step's tensor-parallel all-reduces take {comm}.",
]
_DECODE_INPUTS = [["memory bandwidth per GPU", "{bw}", "gpu"],
                  ["weights (all GPUs)", "{weights}", "model"],
                  ["TP degree (= GPUs)", "{n}", "given"],
                  ["KV per token (whole model)", "{kvtok}", "model"]]


def _decode_napkin(m, f, g, n, s, conc) -> float:
    """Weights (MoE: the non-expert weights plus the experts' expected share) over TP, plus the KV, over
    the bandwidth, plus the stated all-reduce time."""
    b = F.param_breakdown(m)
    wb = F.weight_bytes_breakdown(m, f, None, breakdown=b)
    weights = wb.total
    if m.moe is not None and b.moe_layers:
        weights = wb.non_expert + wb.routed_experts * s["experts_touched"] / m.moe.num_experts
    step = (weights / n + conc * s["kv_per_sequence"] * s["kv_fraction"]) / g.memory_bandwidth_bytes_per_s
    return conc / (step + s["decode_comm_s"])


def _decode_traps(m, f, g, n, s, conc: int) -> dict:
    bw, comm = g.memory_bandwidth_bytes_per_s, s["decode_comm_s"]
    traps = {"kv_reads_forgotten": conc / (s["decode_weight_read_gpu"] / bw + comm)}
    if comm:
        traps["comm_forgotten"] = conc / s["decode_memory_s"]
    if n > 1:
        traps["tp_share_forgotten"] = conc / ((s["decode_weight_read"] + s["decode_kv_read_gpu"] / s["kv_fraction"])
                                              / bw)
    if m.moe is not None and F.param_breakdown(m).moe_layers:
        every = T.weight_bytes_read_all_experts(m, f, conc) / n + s["replicated_extra"]
        traps["all_experts"] = conc / ((every + s["decode_kv_read_gpu"]) / bw + comm)
    return traps


def make_decode_b1(rng: Rng, ctx: Ctx) -> Draft:
    tol = TYPES["decode_b1"].tolerance

    def ok(n, s, d):
        return (s["fits"] and s["max_sequences"] >= 1
                and _within(_decode_napkin(d["m"], d["f"], d["g"], n, s, 1), s["decode_per_sequence"], tol / 2)
                and any(_differs(t, s["decode_per_sequence"]) for t in _decode_traps(d["m"], d["f"], d["g"], n, s,
                                                                                   1).values()))

    d = _draw_deployment(rng, ctx, DECODE_CONTEXTS, (1,), ok)
    m, g, f, kv, n, s = d["m"], d["g"], d["f"], d["kv"], d["n"], d["s"]
    v: dict = {}
    _decode_values(v, m, g, f, kv, n, d["ctx"], 1, s)
    v["result"] = f"{_num(s['decode_per_sequence'])} tokens/s"
    return Draft({"model": m.key, "gpu": g.key, "fmt": f.key, "kv": kv.key}, v, s["decode_per_sequence"],
                 _decode_traps(m, f, g, n, s, 1), napkin=_decode_napkin(m, f, g, n, s, 1))


DECODE_B1 = {
    "title": "batch-1 decode bound of {model} in {fmt} on {n} × {gpu}",
    "prompt": _DECODE_PROMPT + ["One sequence decodes, {ctx} tokens into its context."],
    "ask": ["What is the decode bound at batch 1, in tokens per second?"],
    "formulas": ["step time = (weight bytes read per GPU + KV bytes read per GPU) / bandwidth + all-reduce time",
                 "tokens/s per sequence = 1 / step time"],
    "inputs": _DECODE_INPUTS + [["context", "{ctx} tokens", "given"]],
    "steps": ["weights read per step (all GPUs): {read}",
              "per GPU: {read_gpu} bytes of weights + {kv_gpu} bytes of KV",
              "memory time: {mem_s}",
              "?comm:with the all-reduces ({comm}): step {step}",
              "1 / {step} = {per_seq} tokens/s"],
    "results": ["{result}"],
    "notes": ["?moe:At batch 1 a step reads the non-expert weights and the token's top-{k} experts per layer.",
              "?lookup:The input embedding is only looked up (one row per token), not read whole.",
              "A bound, not a prediction: kernels reach a fraction of the bandwidth."],
}


def make_decode_batch(rng: Rng, ctx: Ctx) -> Draft:
    tol = TYPES["decode_batch"].tolerance

    def ok(n, s, d):
        return (s["fits"] and s["headroom"] >= 0
                and _within(_decode_napkin(d["m"], d["f"], d["g"], n, s, d["conc"]), s["decode_aggregate"], tol / 2))

    d = _draw_deployment(rng, ctx, DECODE_CONTEXTS, (8, 16, 32, 64, 128), ok)
    m, g, f, kv, n, s, conc = d["m"], d["g"], d["f"], d["kv"], d["n"], d["s"], d["conc"]
    v: dict = {}
    _decode_values(v, m, g, f, kv, n, d["ctx"], conc, s)
    v["result"] = f"{_num(s['decode_aggregate'])} tokens/s in total ({v['per_seq']} per sequence)"
    traps = _decode_traps(m, f, g, n, s, conc)
    bw = g.memory_bandwidth_bytes_per_s
    traps["weights_per_sequence"] = conc / ((conc * s["decode_weight_read_gpu"] + s["decode_kv_read_gpu"]) / bw
                                            + s["decode_comm_s"])
    traps["per_sequence_rate"] = s["decode_per_sequence"]
    return Draft({"model": m.key, "gpu": g.key, "fmt": f.key, "kv": kv.key}, v, s["decode_aggregate"], traps,
                 napkin=_decode_napkin(m, f, g, n, s, conc))


DECODE_BATCH = {
    "title": "decode bound of {model} in {fmt} on {n} × {gpu} at batch {conc}",
    "prompt": _DECODE_PROMPT + ["{conc} sequences decode together, each {ctx} tokens into its context.",
                                "?moe:At this batch a step touches {touched} of the {experts} experts per layer on "
                                "average."],
    "ask": ["What is the decode bound for the whole batch, in tokens per second?"],
    "formulas": ["step time = (weight bytes read per GPU + batch × KV bytes per sequence per GPU) / bandwidth "
                 "+ all-reduce time",
                 "aggregate tokens/s = batch / step time"],
    "inputs": _DECODE_INPUTS + [["batch × context", "{conc} × {ctx} tokens", "given"]],
    "steps": ["weights read per step (all GPUs, once for the whole batch): {read}",
              "per GPU: {read_gpu} bytes of weights + {kv_gpu} bytes of KV for {conc} sequences",
              "memory time: {mem_s}",
              "?comm:with the all-reduces ({comm}): step {step}",
              "{conc} / {step} = {agg} tokens/s"],
    "results": ["{result}"],
    "notes": ["?moe:A batch reads the experts its tokens are routed to: {touched} of {experts} per layer on average "
              "under uniform routing.",
              "?lookup:The input embedding is only looked up (one row per token), not read whole.",
              "A bound, not a prediction: kernels reach a fraction of the bandwidth."],
}


def _prefill_parts(m, context, s) -> tuple[int, int, float, float]:
    """(matmul parameters per token without the LM head, the LM head, weight-matmul FLOPs, attention FLOPs)."""
    b = F.param_breakdown(m)
    head = b.lm_head or b.embedding
    dense = F.prefill_matmul_flops(m, context, min(1, context))
    return b.compute_active - head, head, dense, s["prefill_flops"] - dense


def _prefill_napkin(m, context, s, n, mfu) -> float:
    matmul, _, _, attn = _prefill_parts(m, context, s)
    return (2 * matmul * context + attn) / (s["prefill_peak"] * n * mfu)


def make_prefill(rng: Rng, ctx: Ctx) -> Draft:
    tol = TYPES["prefill"].tolerance

    def ok(n, s, d):
        return (s["fits"] and s["max_sequences"] >= 1 and "prefill_s" in s
                and _within(_prefill_napkin(d["m"], d["ctx"], s, n, d["mfu"]), s["prefill_s"], tol / 2))

    d = _draw_deployment(rng, ctx, PREFILL_CONTEXTS, (1,), ok, gpu_ok=lambda x, f: peak_flops(x, f)[0] is not None,
                         mfus=(0.3, 0.4, 0.5, 0.6))
    m, g, f, n, s, context, mfu = d["m"], d["g"], d["f"], d["n"], d["s"], d["ctx"], d["mfu"]
    b = F.param_breakdown(m)
    matmul, head, dense, attn = _prefill_parts(m, context, s)
    peak, label, flops = s["prefill_peak"], s["prefill_peak_label"], s["prefill_flops"]
    v = {"model": m.name, "gpu": g.name, "fmt": f.name, "n": _i(n), "ctx": _i(context), "mfu": _bits(mfu),
         "matmul": _i(matmul), "attn": _sci(attn), "dense": _sci(dense), "flops": _sci(flops),
         "label": label, "kind": _rate_kind(label), "peak": U.fmt_flops(peak),
         "sparse": U.fmt_flops(T.sparse_flops_as_dense(peak)), "group": U.fmt_flops(peak * n),
         "result": U.fmt_seconds(s["prefill_s"])}
    moe = m.moe is not None and b.moe_layers
    if moe:
        v.update(moe="", total=_i(b.total))
    traps = {"sparse_flops": F.prefill_time(flops, T.sparse_flops_as_dense(peak) * n, mfu),
             "mfu_forgotten": F.prefill_time(flops, peak * n, 1.0),
             "one_flop_per_param": F.prefill_time(dense / 2 + attn, peak * n, mfu),
             "attention_forgotten": F.prefill_time(dense, peak * n, mfu)}
    if moe:
        every = b.total - (b.embedding if b.lm_head else 0) - head
        traps["total_for_active"] = F.prefill_time(2 * every * context + 2 * head + attn, peak * n, mfu)
    if n > 1:
        traps["tp_share_forgotten"] = F.prefill_time(flops, peak, mfu)
    return Draft({"model": m.key, "gpu": g.key, "fmt": f.key}, v, s["prefill_s"], traps,
                 question=116 if context >= 32768 else None, napkin=_prefill_napkin(m, context, s, n, mfu))


PREFILL = {
    "title": "prefill of {ctx} tokens, {model} in {fmt} on {n} × {gpu}",
    "prompt": ["{model} in {fmt} prefills a prompt of {ctx} tokens on {n} × {gpu} with tensor parallelism {n}.",
               "Each token passes through {matmul} matmul parameters (the LM head runs once, at the last position).",
               "?moe:Those are the active parameters: the model has {total} in all.",
               "At this length the attention scores add {attn} FLOPs.",
               "The GPU's datasheet prints {sparse} {kind} with 2:4 structured sparsity.",
               "The engine reaches {mfu} MFU."],
    "ask": ["How long does the prefill take?"],
    "formulas": ["prefill FLOPs = 2 × matmul parameters × tokens + 2 × LM head + attention FLOPs",
                 "time = FLOPs / (dense peak × GPUs × MFU)"],
    "inputs": [["matmul parameters per token", "{matmul}", "model"],
               ["prompt tokens", "{ctx}", "given"],
               ["dense peak per GPU ({label})", "{peak}", "gpu"],
               ["GPUs (TP)", "{n}", "given"],
               ["MFU", "{mfu}", "given"]],
    "steps": ["matmul FLOPs: {dense}", "with the attention FLOPs ({attn}): {flops}",
              "{flops} / ({group} × {mfu}) = {result}"],
    "results": ["{result}"],
    "notes": ["The dense rate is half the with-sparsity figure datasheets print.",
              "A bound at the stated MFU: long prompts are compute-bound."],
}


def _rate_kind(label: str) -> str:
    """'dense FP8' -> 'FP8': the precision of a tensor rate, for the datasheet's with-sparsity figure."""
    return label.replace("dense ", "")


def _rate(x: float, label: str) -> str:
    """A tensor rate in TFLOPS, or in TOPS for an integer format."""
    text = U.fmt_flops(x)
    return text.replace("TFLOPS", "TOPS") if "INT8" in label else text


def make_ridge_batch(rng: Rng, ctx: Ctx) -> Draft:
    for _ in range(ATTEMPTS):
        g = rng.pick(ctx.gpus)
        f = ctx.fmt(rng.pick(RIDGE_FORMATS))
        peak, label = peak_flops(g, f)
        if peak is not None:
            break
    else:
        raise RuntimeError("sitebuild/drills.py: ridge_batch: no GPU drawn")
    bw = g.memory_bandwidth_bytes_per_s
    ridge = F.ridge_point(peak, bw)
    bpp = f.bits_per_weight / 8
    answer = F.batch_to_reach_ridge(ridge, bpp)
    v = {"gpu": g.name, "fmt": f.name, "fkey": f.key, "bits": _bits(f.bits_per_weight), "bpp": _bytes_el(bpp),
         "label": label, "kind": _rate_kind(label), "peak": _rate(peak, label),
         "sparse": _rate(T.sparse_flops_as_dense(peak), label), "bw": U.fmt_bandwidth(bw), "ridge": _num(ridge),
         "op": "op" if "INT8" in label else "FLOP", "answer": _i(answer)}
    if f.key not in ("bf16", "fp8", "int8"):
        v["weight_only"] = ""
    traps = {"sparse_flops": F.batch_to_reach_ridge(F.ridge_point(T.sparse_flops_as_dense(peak), bw), bpp),
             "bits_as_bytes": F.batch_to_reach_ridge(ridge, bpp * 8)}
    if bpp != 2:
        traps["ridge_as_batch"] = F.batch_to_reach_ridge(ridge, 2)
    if f.key == "fp8":
        traps["bf16_rate_for_fp8"] = F.batch_to_reach_ridge(F.ridge_point(g.bf16_dense_flops, bw), bpp)
    return Draft({"gpu": g.key, "fmt": f.key}, v, answer, traps, question=7)


RIDGE_BATCH = {
    "title": "decode batch at the ridge point of {gpu}, weights in {fmt}",
    "prompt": ["On {gpu}, memory bandwidth {bw}; its datasheet prints {sparse} {kind} with 2:4 structured "
               "sparsity.",
               "Decode runs with weights in {fmt}, {bits} bits per weight.",
               "?weight_only:The weights are dequantized, so the matmuls run at the BF16 rate."],
    "ask": ["From what batch size on do decode's weight matmuls stop being memory-bound (reach the ridge point)?"],
    "formulas": ["ridge point = dense peak / bandwidth (operations per byte)",
                 "decode matmul intensity ≈ 2 × batch / bytes per weight",
                 "batch = ceil(ridge × bytes per weight / 2)"],
    "inputs": [["dense peak ({label})", "{peak}", "gpu"], ["memory bandwidth", "{bw}", "gpu"],
               ["bytes per weight, {fkey}", "{bpp}", "fmt"]],
    "steps": ["ridge: {peak} / {bw} = {ridge} {op} per byte",
              "batch: ceil({ridge} × {bpp} / 2) = {answer}"],
    "results": ["batch {answer}"],
    "notes": ["Each weight does a multiply and an add per sequence in the batch; KV reads push the real batch "
              "higher.",
              "The dense rate is half the with-sparsity figure datasheets print."],
}


def make_littles_law(rng: Rng, ctx: Ctx) -> Draft:
    rate = rng.pick((2, 4, 5, 8, 10, 12, 16, 20, 25, 40, 50, 80, 100))
    ttft_ms = rng.pick((150, 200, 250, 300, 400, 500, 800))
    tpot_ms = rng.pick((8, 10, 12, 15, 20, 25, 30, 40, 50))
    out = rng.pick((100, 150, 200, 256, 300, 500, 800, 1000))
    ttft, tpot = ttft_ms / 1000, tpot_ms / 1000
    w = ttft + out * tpot
    answer = F.littles_law(arrival_rate=rate, time_in_system=w)
    v = {"rate": _i(rate), "ttft": _i(ttft_ms), "tpot": _i(tpot_ms), "out": _i(out), "w": _num(w),
         "decode": _num(out * tpot), "ttft_s": _bits(ttft), "answer": _num(answer)}
    traps = {"ttft_only": F.littles_law(arrival_rate=rate, time_in_system=ttft),
             "ttft_forgotten": F.littles_law(arrival_rate=rate, time_in_system=out * tpot),
             "ms_as_s": F.littles_law(arrival_rate=rate, time_in_system=ttft_ms + out * tpot_ms)}
    return Draft({}, v, answer, traps, question=6)


LITTLES_LAW = {
    "title": "requests in flight at {rate} requests/s",
    "prompt": ["A chat service receives {rate} requests per second.",
               "Each request waits {ttft} ms for its first token, then streams {out} output tokens at {tpot} ms "
               "per token."],
    "ask": ["On average, how many requests are in flight?"],
    "formulas": ["L = λ × W (Little's law)", "W = TTFT + output tokens × TPOT"],
    "inputs": [["arrival rate λ", "{rate} requests/s", "given"], ["TTFT", "{ttft} ms", "given"],
               ["output tokens", "{out}", "given"], ["TPOT", "{tpot} ms", "given"]],
    "steps": ["W = {ttft_s} s + {out} × {tpot} ms = {ttft_s} + {decode} = {w} s",
              "L = {rate} × {w} = {answer}"],
    "results": ["{answer} requests in flight"],
    "notes": ["Little's law holds for any stable system in steady state, whatever the arrival pattern."],
}

COST_RATES = (400, 800, 1200, 2000, 2500, 3000, 4000, 6000, 10000)


def _price_values(v: dict, p, g, n) -> None:
    v.update(gpu=g.name, price=U.fmt_usd(p.usd_per_hour), n=_i(n), hourly=U.fmt_usd(p.usd_per_hour * n))


def make_cost_per_m(rng: Rng, ctx: Ctx) -> Draft:
    p = rng.pick(ctx.gpu_prices)
    n = rng.pick(TP_CHOICES)
    tps = rng.pick(COST_RATES) * n
    util = rng.pick((0.8, 0.6, 0.5, 0.4, 0.3))
    g = ctx.cat.gpu(p.gpu)
    answer = F.cost_per_million_tokens(p.usd_per_hour, n, tps, util)
    v: dict = {}
    _price_values(v, p, g, n)
    v.update(tps=_i(tps), util=U.fmt_pct(util), util_f=_bits(util), result=U.fmt_usd(answer),
             per_hour_tokens=_i(tps * 3600 * util))
    traps = {"idle_forgotten": F.cost_per_million_tokens(p.usd_per_hour, n, tps, 1.0)}
    if n > 1:
        traps["gpus_forgotten"] = F.cost_per_million_tokens(p.usd_per_hour, 1, tps, util)
    return Draft({"gpu": g.key, "price": p.key}, v, answer, traps, question=114)


COST_PER_M = {
    "title": "cost per million tokens on {n} × {gpu}",
    "prompt": ["{n} × {gpu}, rented at {price} per GPU-hour, serve {tps} tokens/s in total while busy.",
               "They are busy {util} of the hours paid for."],
    "ask": ["What does a million tokens cost?"],
    "formulas": ["$ per million tokens = price per GPU-hour × GPUs / (tokens/s × 3,600 × busy share) × 10^6"],
    "inputs": [["price per GPU-hour", "{price}", "price"], ["GPUs", "{n}", "given"],
               ["throughput while busy", "{tps} tokens/s", "given"], ["busy share", "{util_f}", "given"]],
    "steps": ["cost per hour: {price} × {n} = {hourly}",
              "tokens per paid hour: {tps} × 3,600 × {util_f} = {per_hour_tokens}",
              "{hourly} / {per_hour_tokens} × 10^6 = {result}"],
    "results": ["{result} per million tokens"],
    "notes": ["Prices are illustrative catalog figures, not quotes."],
}


def make_crossover(rng: Rng, ctx: Ctx) -> Draft:
    p = rng.pick(ctx.gpu_prices)
    n = rng.pick(TP_CHOICES)
    a = rng.pick(ctx.api_prices)
    share = rng.pick((0.5, 0.6, 0.75, 0.8, 0.9))
    g = ctx.cat.gpu(p.gpu)
    blended = F.blended_api_price(a.usd_per_m_input, a.usd_per_m_output, share)
    answer = F.crossover_tokens_per_s(p.usd_per_hour, n, blended)
    v: dict = {}
    _price_values(v, p, g, n)
    v.update(api=a.key, pin=U.fmt_usd(a.usd_per_m_input), pout=U.fmt_usd(a.usd_per_m_output), share=U.fmt_pct(share),
             share_f=_bits(share), out_f=_bits(1 - share), blended=U.fmt_usd(blended),
             result=f"{_num(answer)} tokens/s")
    traps = {"output_price_only": F.crossover_tokens_per_s(p.usd_per_hour, n, a.usd_per_m_output),
             "input_price_only": F.crossover_tokens_per_s(p.usd_per_hour, n, a.usd_per_m_input)}
    if n > 1:
        traps["gpus_forgotten"] = F.crossover_tokens_per_s(p.usd_per_hour, 1, blended)
    return Draft({"gpu": g.key, "price": p.key, "api": a.key}, v, answer, traps, question=114)


CROSSOVER = {
    "title": "self-host or API: {n} × {gpu} against {api}",
    "prompt": ["A hosted API charges {pin} per million input tokens and {pout} per million output tokens; "
               "{share} of your tokens are input tokens.",
               "Self-hosting takes {n} × {gpu} at {price} per GPU-hour, paid whether busy or not."],
    "ask": ["Above what sustained rate, in tokens per second, is self-hosting cheaper?"],
    "formulas": ["blended API price = input price × input share + output price × (1 − input share)",
                 "crossover tokens/s = price per GPU-hour × GPUs / 3,600 / (blended price / 10^6)"],
    "inputs": [["API price in / out per million", "{pin} / {pout}", "api"], ["input share", "{share_f}", "given"],
               ["price per GPU-hour", "{price}", "price"], ["GPUs", "{n}", "given"]],
    "steps": ["blended: {pin} × {share_f} + {pout} × {out_f} = {blended} per million tokens",
              "self-hosting per hour: {price} × {n} = {hourly}",
              "{hourly} / 3,600 / ({blended} / 10^6) = {result}"],
    "results": ["{result}"],
    "notes": ["Only meaningful if the deployment can serve that rate; above its capacity add replicas.",
              "Prices are illustrative catalog figures, not quotes."],
}

ALLREDUCE_BATCHES = (1, 8, 32, 64, 128, 256)


def make_allreduce(rng: Rng, ctx: Ctx) -> Draft:
    gpus = [g for g in ctx.gpus if g.allreduce_latency_s and g.interconnect_bytes_per_s_per_direction]
    for _ in range(ATTEMPTS):
        m = rng.pick(ctx.models)
        g = rng.pick(gpus)
        degrees = [t for t in (2, 4, 8) if t in F.valid_tp_degrees(m, DEFAULTS["max_tp"])]
        if degrees:
            break
    else:
        raise RuntimeError("sitebuild/drills.py: allreduce: no model drawn")
    n = rng.pick(degrees)
    batch = rng.pick(ALLREDUCE_BATCHES)
    eb = DEFAULTS["activation_element_bytes"]
    lat, link = g.allreduce_latency_s, g.interconnect_bytes_per_s_per_direction
    answer = F.tp_decode_allreduce_time(m, batch, eb, n, lat, link)
    buf = batch * m.hidden_size * eb
    one = F.allreduce_time(buf, n, lat, link)
    v = {"model": m.name, "gpu": g.name, "layers": _i(m.num_hidden_layers), "hidden": _i(m.hidden_size),
         "n": _i(n), "batch": _i(batch), "eb": _bits(eb), "lat": U.fmt_seconds(lat),
         "bidir": U.fmt_bandwidth(T.bidirectional_as_per_direction(link)), "link": U.fmt_bandwidth(link),
         "buf": _i(buf), "ring": _i(F.ring_allreduce_bytes_per_gpu(buf, n)), "one": U.fmt_seconds(one),
         "calls": _i(2 * m.num_hidden_layers), "result": U.fmt_seconds(answer)}
    args = (m, batch, eb, n, lat, link)
    traps = {"bidirectional": F.tp_decode_allreduce_time(m, batch, eb, n, lat, T.bidirectional_as_per_direction(link)),
             "one_allreduce_per_layer": T.allreduce_time_one_per_layer(*args),
             "latency_forgotten": T.allreduce_time_no_latency(*args),
             "ring_factor_forgotten": T.allreduce_time_no_ring_factor(*args)}
    if batch > 1:
        traps["batch_forgotten"] = F.tp_decode_allreduce_time(m, 1, eb, n, lat, link)
    return Draft({"model": m.key, "gpu": g.key}, v, answer, traps, question=79)


ALLREDUCE = {
    "title": "TP all-reduce time per decode step, {model} on {n} × {gpu}, batch {batch}",
    "prompt": ["{model} ({layers} layers, hidden_size {hidden}) decodes with tensor parallelism {n} on {gpu}.",
               "A step carries {batch} tokens; the activations are BF16 ({eb} bytes per value).",
               "The GPU-to-GPU link's datasheet figure is {bidir}, both directions added together; one all-reduce "
               "call costs about {lat} before any bytes move."],
    "ask": ["How long do one decode step's tensor-parallel all-reduces take in total?"],
    "formulas": ["per step = 2 × layers × (latency + 2(p − 1)/p × tokens × hidden_size × bytes / link per direction)"],
    "inputs": [["`num_hidden_layers` / `hidden_size`", "{layers} / {hidden}", "model"],
               ["link per direction", "{link}", "gpu"], ["all-reduce latency", "{lat}", "gpu"],
               ["TP degree p", "{n}", "given"], ["tokens in the step", "{batch}", "given"]],
    "steps": ["buffer: {batch} × {hidden} × {eb} = {buf} bytes; the ring sends {ring} bytes per GPU",
              "one all-reduce: {lat} + {ring} / {link} = {one}",
              "× {calls} all-reduces (2 per layer) = {result}"],
    "results": ["{result} per step"],
    "notes": ["Two all-reduces per layer: after attention's output projection and after the MLP.",
              "Real collectives pick ring, tree or one-shot algorithms whose constants differ; a bound-style "
              "estimate."],
}


def make_effective_bits(rng: Rng, ctx: Ctx) -> Draft:
    f = rng.pick(ctx.block_formats)
    eb = T.element_bits(f)
    answer = F.effective_bits_per_weight(eb, f.group_size, f.scale_bits)
    v = {"fmt": f.name, "fkey": f.key, "eb": _bits(eb), "g": _i(f.group_size), "scale": _bits(f.scale_bits),
         "over": _bits(f.scale_bits / f.group_size), "answer": _bits(answer)}
    traps = {"scale_forgotten": eb, "scale_per_weight": T.effective_bits_scale_per_weight(eb, f.scale_bits),
             "bytes_for_bits": answer / 8}
    return Draft({"fmt": f.key}, v, answer, traps, question=144)


EFFECTIVE_BITS = {
    "title": "effective bits of {fmt}",
    "prompt": ["{fmt} stores {eb}-bit elements in groups of {g} weights.",
               "Each group also stores {scale} bits of scale data (its scale, and any minimum or zero point)."],
    "ask": ["How many bits does each weight take on average?"],
    "formulas": ["effective bits = element bits + scale bits / group size"],
    "inputs": [["element bits", "{eb}", "fmt"], ["group size", "{g}", "fmt"],
               ["scale bits per group", "{scale}", "fmt"]],
    "steps": ["{eb} + {scale} / {g} = {eb} + {over} = {answer}"],
    "results": ["{answer} bits per weight"],
    "notes": ["Weight bytes = parameters × effective bits / 8."],
}


def _type(key, title, question, dim, tolerance, bare, noun, templates, make, slack=0) -> DrillType:
    return DrillType(key, title, question, dim, tolerance, bare, noun, templates, make, slack)


#: Every drill type, in the order the drills page lists them.
TYPES: dict[str, DrillType] = {t.key: t for t in (
    _type("weights", "Weight footprint", 4, "bytes", 0.10, 1e6, "", WEIGHTS, make_weights),
    _type("kv_token", "KV bytes per token", 75, "bytes", 0.10, 1000, "", KV_TOKEN, make_kv_token),
    _type("kv_batch", "KV cache of a batch", 75, "bytes", 0.10, 1e6, "", KV_BATCH, make_kv_batch),
    _type("max_sequences", "Most sequences that fit", 102, "count", 0.10, 0, "sequences", MAX_SEQUENCES,
          make_max_sequences, slack=1),
    _type("max_context", "Longest context that fits", 102, "count", 0.10, 0, "tokens", MAX_CONTEXT,
          make_max_context),
    _type("valid_tp", "Valid tensor-parallel degrees", 95, "list", 0.0, 0, "", VALID_TP, make_valid_tp),
    _type("fit", "Does it fit: memory per GPU", 80, "bytes", 0.10, 1e6, "", FIT, make_fit),
    _type("decode_b1", "Batch-1 decode bound", 101, "rate", 0.10, 0, "", DECODE_B1, make_decode_b1),
    _type("decode_batch", "Decode bound at batch B", 7, "rate", 0.10, 0, "", DECODE_BATCH, make_decode_batch),
    _type("prefill", "Prefill time at a stated MFU", 81, "time", 0.10, None, "", PREFILL, make_prefill),
    _type("ridge_batch", "Arithmetic intensity against the ridge point", 7, "count", 0.10, 0, "", RIDGE_BATCH,
          make_ridge_batch),
    _type("littles_law", "Little's law: requests in flight", 6, "count", 0.10, 0, "requests", LITTLES_LAW,
          make_littles_law),
    _type("cost_per_m", "Cost per million tokens", 114, "usd", 0.10, 0, "", COST_PER_M, make_cost_per_m),
    _type("crossover", "Self-host or API: the crossover", 114, "rate", 0.10, 0, "", CROSSOVER, make_crossover),
    _type("allreduce", "All-reduce time per step under TP", 79, "time", 0.10, None, "", ALLREDUCE, make_allreduce),
    _type("effective_bits", "Effective bits of a block-scaled format", 144, "bits", 0.01, 0, "", EFFECTIVE_BITS,
          make_effective_bits),
)}


# --------------------------------------------------------------------------------------------------
# one drill
# --------------------------------------------------------------------------------------------------

def _differs(t, x) -> bool:
    if isinstance(x, list):
        return t != x
    return abs(t - x) >= MIN_TRAP_DIFF * abs(x)


def make(key: str, seed: int, cat: Catalog | None = None) -> dict:
    """The drill of type ``key`` drawn with ``seed`` (0 to 2**32 - 1): problem, answer key, the named
    mistakes that change the answer, and the worked solution."""
    dt = TYPES[key]
    if not (isinstance(seed, int) and 0 <= seed <= 0xFFFFFFFF):
        raise ValueError(f"seed must be a whole number from 0 to 4294967295, got {seed!r}")
    ctx = _context(cat)
    draft = dt.make(Rng(seed), ctx)
    out = {"type": key, "seed": seed, "question": draft.question or dt.question, "refs": draft.refs,
           "answer": draft.answer, "answer_text": answer_text(dt, draft.answer),
           "traps": {k: t for k, t in draft.traps.items() if _differs(t, draft.answer)}}
    if draft.napkin is not None:
        out["napkin"] = draft.napkin
    out.update(render(dt.templates, draft.values))
    return out


_CTX: dict = {}


def _context(cat: Catalog | None) -> Ctx:
    cat = cat or load_catalog()
    if _CTX.get("cat") is not cat:
        _CTX["cat"], _CTX["ctx"] = cat, Ctx(cat)
    return _CTX["ctx"]


# --------------------------------------------------------------------------------------------------
# the data script
# --------------------------------------------------------------------------------------------------

REF_PAGES = {"model": "reference/models.md", "gpu": "reference/gpus.md", "format": "reference/formats.md",
             "price": "reference/prices.md", "api": "reference/prices.md", "drills": DRILLS_PAGE}


class DrillExportError(ValueError):
    """The drills cannot be exported for this site; the message names what is missing."""


def _catalog_slice(cat: Catalog) -> dict:
    gpus = []
    for g in cat.gpus.values():
        row = export_gpu(g)
        row["interconnect"] = g.interconnect
        gpus.append(row)
    formats = []
    for f in cat.formats.values():
        row = export_format(f)
        row.update(group_size=f.group_size, scale_bits=f.scale_bits)
        formats.append(row)
    models = [dict(export_model(m), head_dim_in_config=m.head_dim_in_config) for m in cat.models.values()]
    return {"models": models, "gpus": gpus, "formats": formats,
            "gpu_prices": [{"key": p.key, "gpu": p.gpu, "usd_per_hour": p.usd_per_hour}
                           for p in cat.prices.gpu_hour.values()],
            "api_prices": [{"key": a.key, "name": a.name, "usd_per_m_input": a.usd_per_m_input,
                            "usd_per_m_output": a.usd_per_m_output} for a in cat.prices.api.values()]}


def question_ids() -> set[int]:
    """Every question a drill links to: each type's own and the ones its makers pick for a problem
    (sliding-window and hybrid models: Q121; long prompts: Q116)."""
    return {t.question for t in TYPES.values()} | {121, 116}


def payload(questions: dict[int, tuple[str, str]], page_urls: dict[str, str], cat: Catalog | None = None) -> dict:
    """Everything the drill engine needs: the types with their templates, the mistakes' names, the
    catalog slice, the calculator's defaults and the engine's settings, and the addresses (relative to
    the site root, as MkDocs wrote them) of the questions and pages the drills link to.

    ``questions`` maps a question id to (URL, title); ``page_urls`` maps a docs source path to its URL.
    """
    cat = cat or load_catalog()
    missing = sorted(q for q in question_ids() if q not in questions)
    if missing:
        raise DrillExportError("sitebuild/drills.py: the drills link to questions that are not in this site: "
                               + ", ".join(f"Q{q}" for q in missing))
    absent = sorted({p for p in REF_PAGES.values() if p not in page_urls})
    if absent:
        raise DrillExportError("sitebuild/drills.py: the drills link to pages that are not in this site: "
                               + ", ".join(f"docs/{p}" for p in absent))
    return {
        "types": [{"key": t.key, "title": t.title, "question": t.question, "dim": t.dim, "tolerance": t.tolerance,
                   "slack": t.slack, "bare": t.bare, "noun": t.noun, "templates": t.templates}
                  for t in TYPES.values()],
        "traps": {k: {"name": n, "why": w} for k, (n, w) in T.TRAPS.items()},
        "catalog": _catalog_slice(cat),
        "defaults": DEFAULTS,
        "settings": {"min_trap_diff": MIN_TRAP_DIFF, "attempts": ATTEMPTS, "daily_size": DAILY_SIZE,
                     "max_set": MAX_SET, "kv_classes": list(KV_CLASSES), "contexts": list(CONTEXTS),
                     "sheet_formats": list(SHEET_FORMATS), "sheet_kv": list(SHEET_KV),
                     "expert_formats": list(EXPERT_FORMATS), "tp_choices": list(TP_CHOICES),
                     "ridge_formats": list(RIDGE_FORMATS), "decode_contexts": list(DECODE_CONTEXTS),
                     "prefill_contexts": list(PREFILL_CONTEXTS), "cost_rates": list(COST_RATES),
                     "allreduce_batches": list(ALLREDUCE_BATCHES)},
        "questions": {str(q): {"url": questions[q][0], "title": questions[q][1]} for q in sorted(question_ids())},
        "pages": {kind: page_urls[src] for kind, src in REF_PAGES.items()},
    }


def drills_script(questions: dict[int, tuple[str, str]], page_urls: dict[str, str], cat: Catalog | None = None) -> str:
    """The data script: ``window.MSIB_DRILLS = {...};`` (a script, not JSON fetched at run time, so that
    the drills work from ``file://`` in the offline bundle)."""
    text = json.dumps(payload(questions, page_urls, cat), ensure_ascii=False, separators=(",", ":"))
    return "window.MSIB_DRILLS=" + text.replace("</", "<\\/") + ";\n"
