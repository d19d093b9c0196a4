"""The drills' common ground: the generator (mulberry32, as the browser's), the templates and how they are
filled, the catalog slices the draws pick from, and the records a drill type is made of."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from macros import formulas as F
from macros import units as U
from macros.catalog import Catalog
from macros.formulas import traps as T
from macros.render.blocks import _bits, _bytes_el, _i, _n

#: The napkin tolerance: an answer within 10% of the engine's passes.
TOL = 0.10


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
            raise KeyError(f"sitebuild/drills: template {template!r} needs the value {key!r}")
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



def _within(napkin: float, exact: float, share: float) -> bool:
    """A draw is kept only when the napkin method the prompt supports lands this close to the engine."""
    return abs(napkin - exact) <= share * abs(exact)




def _differs(t, x) -> bool:
    if isinstance(x, list):
        return t != x
    return abs(t - x) >= MIN_TRAP_DIFF * abs(x)
