"""The catalog: models, GPUs, number formats and prices, loaded from the YAML files in this directory.

Every input figure the site uses (a model's layer count, a GPU's memory bandwidth, a format's bits per
weight, an illustrative price) lives here once, with its source URL. The files follow
``CATALOG-SCHEMA`` (the shared contract); :func:`load_catalog` validates them at load time and raises
:class:`CatalogError` naming the file, the entry key and the field on the first violation.

Pure Python + PyYAML: nothing here imports MkDocs.

Usage::

    cat = load_catalog()                 # cached; reloads when a file changes
    m = cat.model("llama-3.1-70b")       # UnknownKeyError lists the valid keys
    g = cat.gpu("h100-sxm")
    f = cat.format("fp8")
"""

from __future__ import annotations

import datetime as _dt
import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

__all__ = [
    "CatalogError",
    "UnknownKeyError",
    "Moe",
    "Mla",
    "SlidingWindow",
    "LinearAttention",
    "Model",
    "Gpu",
    "Format",
    "GpuPrice",
    "ApiPrice",
    "Prices",
    "Catalog",
    "load_catalog",
    "clear_cache",
    "CATALOG_DIR",
    "CATALOG_FILES",
]

CATALOG_DIR = Path(__file__).resolve().parent
CATALOG_FILES = ("models.yaml", "gpus.yaml", "formats.yaml", "prices.yaml")


class CatalogError(ValueError):
    """A catalog file violates the schema. The message names the file, the entry key and the field."""


class UnknownKeyError(ValueError):
    """A lookup used a key the catalog does not have. The message lists the valid keys."""

    def __init__(self, kind: str, key: object, valid: Iterable[str]):
        self.kind = kind
        self.key = key
        self.valid = sorted(valid)
        hint = difflib.get_close_matches(str(key), self.valid, n=1, cutoff=0.6)
        did_you_mean = f" (did you mean '{hint[0]}'?)" if hint else ""
        plural = "formats" if kind == "format" else f"{kind}s"
        super().__init__(
            f"unknown {kind} {key!r}{did_you_mean}; valid {plural}: {', '.join(self.valid)}"
        )


# ==================================================================================================
# dataclasses
# ==================================================================================================

@dataclass(frozen=True)
class Moe:
    """Mixture-of-experts block of a model (see CATALOG-SCHEMA, models.yaml ``moe``)."""

    num_experts: int            # routed experts per MoE layer
    experts_per_token: int      # top-k routed experts each token uses
    num_shared_experts: int     # always-on shared experts per MoE layer (0 if none)
    moe_intermediate_size: int  # each expert's MLP width
    first_dense_layers: int     # leading layers that use a dense MLP instead of experts


@dataclass(frozen=True)
class Mla:
    """Multi-head latent attention block (DeepSeek-V2/V3 style)."""

    kv_lora_rank: int
    q_lora_rank: int | None
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int


@dataclass(frozen=True)
class SlidingWindow:
    """Layers that attend only to the last ``size`` tokens."""

    size: int
    num_sliding_layers: int
    pattern: str


@dataclass(frozen=True)
class LinearAttention:
    """Layers that keep a constant-size state per sequence instead of a growing KV cache."""

    num_linear_layers: int
    state_bytes_per_layer: float


@dataclass(frozen=True)
class Model:
    """One model entry of models.yaml. Field names follow config.json where it has them."""

    key: str
    name: str
    hf_repo: str
    config_source: str
    card_source: str
    released_format: str
    architecture: str
    attention: str
    stated_total_params: float | None
    stated_active_params: float | None
    stated_params_source: str | None
    num_hidden_layers: int
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    head_dim_in_config: bool
    intermediate_size: int | None
    vocab_size: int
    tie_word_embeddings: bool
    max_position_embeddings: int
    attention_bias: bool
    moe: Moe | None = None
    mla: Mla | None = None
    sliding_window: SlidingWindow | None = None
    linear_attention: LinearAttention | None = None
    notes: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_moe(self) -> bool:
        return self.moe is not None


@dataclass(frozen=True)
class Gpu:
    """One accelerator entry of gpus.yaml. Memory in bytes, bandwidth in decimal bytes/s."""

    key: str
    name: str
    vendor: str
    source: str
    memory_bytes: int
    memory_label: str
    memory_note: str | None
    memory_bandwidth_bytes_per_s: float
    bf16_dense_flops: float
    fp8_dense_flops: float | None
    int8_dense_ops: float | None
    interconnect: str | None
    interconnect_bytes_per_s_per_direction: float | None
    interconnect_note: str | None
    tdp_watts: float | None
    notes: str = ""
    allreduce_latency_s: float | None = None  # per-call small-message all-reduce time (seconds)
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Format:
    """One number format of formats.yaml. ``bits_per_weight`` is effective (scales included)."""

    key: str
    name: str
    bits_per_weight: float
    kind: str
    group_size: int | None
    scale_bits: float | None
    kv_cache: bool
    source: str
    notes: str = ""
    embedding_bits_per_weight: float | None = None  # bits of embedding + lm_head when not quantized
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def bytes_per_weight(self) -> float:
        return self.bits_per_weight / 8


@dataclass(frozen=True)
class GpuPrice:
    key: str
    gpu: str
    usd_per_hour: float
    basis: str
    source: str
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class ApiPrice:
    key: str
    name: str
    usd_per_m_input: float
    usd_per_m_output: float
    source: str
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Prices:
    as_of: str
    disclaimer: str
    gpu_hour: dict[str, GpuPrice]
    api: dict[str, ApiPrice]


@dataclass(frozen=True)
class Catalog:
    """All four files, validated. Dicts keep file order."""

    directory: Path
    models: dict[str, Model]
    gpus: dict[str, Gpu]
    formats: dict[str, Format]
    prices: Prices

    def model(self, key: str) -> Model:
        try:
            return self.models[key]
        except (KeyError, TypeError):
            raise UnknownKeyError("model", key, self.models) from None

    def gpu(self, key: str) -> Gpu:
        try:
            return self.gpus[key]
        except (KeyError, TypeError):
            raise UnknownKeyError("GPU", key, self.gpus) from None

    def format(self, key: str) -> Format:
        try:
            return self.formats[key]
        except (KeyError, TypeError):
            raise UnknownKeyError("format", key, self.formats) from None

    def gpu_price(self, key: str) -> GpuPrice:
        try:
            return self.prices.gpu_hour[key]
        except (KeyError, TypeError):
            raise UnknownKeyError("GPU price", key, self.prices.gpu_hour) from None

    def api_price(self, key: str) -> ApiPrice:
        try:
            return self.prices.api[key]
        except (KeyError, TypeError):
            raise UnknownKeyError("API price", key, self.prices.api) from None

    def gpu_prices_for(self, gpu_key: str) -> list[GpuPrice]:
        """Every GPU-hour price entry that refers to ``gpu_key`` (file order)."""
        return [p for p in self.prices.gpu_hour.values() if p.gpu == gpu_key]

    def kv_formats(self) -> list[str]:
        """Keys of the formats usable as a KV-cache dtype (``kv_cache: true``)."""
        return [k for k, f in self.formats.items() if f.kv_cache]


# ==================================================================================================
# YAML loading: decimal exponents without a sign are floats; duplicate mapping keys are errors
# ==================================================================================================

class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml when present: same results, faster
    """SafeLoader that (1) reads ``70.6e9`` / ``450e9`` as floats (YAML 1.1, and so PyYAML, needs a
    dot and a signed exponent, and would otherwise return the string '70.6e9') and (2) records the
    line of every mapping so duplicate keys can be reported."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


class _DuplicateKey(Exception):
    def __init__(self, key: str, line: int, entry: str | None):
        self.key = key
        self.line = line
        self.entry = entry


def _construct_mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: set = set()
    for key_node, _ in node.value:
        k = loader.construct_object(key_node, deep=True)
        if k in seen:
            entry = next((v.value for kn, v in node.value
                          if getattr(kn, "value", None) == "key" and isinstance(v, yaml.ScalarNode)), None)
            raise _DuplicateKey(str(k), key_node.start_mark.line + 1, entry)
        seen.add(k)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_Loader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    lambda loader, node: _construct_mapping(loader, node, deep=True),
)


def _read_yaml(path: Path) -> Any:
    name = _display(path)
    if not path.is_file():
        raise CatalogError(f"{name}: catalog file is missing")
    try:
        with path.open(encoding="utf-8") as fh:
            return yaml.load(fh, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader subclass
    except _DuplicateKey as dup:
        where = f"[{dup.entry}].{dup.key}" if dup.entry else f" {dup.key}"
        raise CatalogError(f"{name}: line {dup.line}:{where}: duplicate mapping key {dup.key!r} "
                           "(YAML would silently keep the last one)") from None
    except yaml.YAMLError as exc:
        raise CatalogError(f"{name}: not valid YAML: {exc}") from None


def _display(path: Path) -> str:
    """The path as the error shows it: relative to the repository when possible."""
    try:
        return str(path.resolve().relative_to(CATALOG_DIR.parent.parent))
    except ValueError:
        return str(path)


# ==================================================================================================
# schema validation
# ==================================================================================================

_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")

# Free-form documentation fields are allowed beyond the schema when their name ends like this, so a
# data author can add e.g. ``bandwidth_source`` without a code change. Anything else unknown is an
# error (it is usually a typo of a real field).
_FREE_SUFFIXES = ("_source", "_sources", "_note", "_notes", "_url", "_comment")


class _Ctx:
    """Where we are: file, list name, entry key. Builds the error messages."""

    def __init__(self, file: str, section: str, key: str | None = None):
        self.file = file
        self.section = section
        self.key = key

    def at(self, key: str) -> "_Ctx":
        return _Ctx(self.file, self.section, key)

    def err(self, fld: str | None, msg: str) -> CatalogError:
        where = f"{self.file}: {self.section}"
        if self.key is not None:
            where += f"[{self.key}]"
        if fld:
            where += f".{fld}"
        return CatalogError(f"{where}: {msg}")


def _tname(v: Any) -> str:
    return type(v).__name__


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class _Spec:
    """One field: its kind, nullability and range."""

    def __init__(self, kind: str, *, null: bool = False, min: float | None = None,
                 gt: float | None = None, choices: tuple[str, ...] | None = None,
                 integral: bool = False):
        self.kind = kind          # str | int | num | bool | date | map
        self.null = null
        self.min = min
        self.gt = gt
        self.choices = choices
        self.integral = integral  # a float is accepted when it is a whole number (e.g. 1.5e6)


def _check(ctx: _Ctx, fld: str, v: Any, spec: _Spec) -> Any:
    if v is None:
        if spec.null:
            return None
        raise ctx.err(fld, "is required and must not be null")
    if spec.kind == "str":
        if not isinstance(v, str):
            raise ctx.err(fld, f"expected a string, got {v!r} ({_tname(v)})")
        if spec.choices and v not in spec.choices:
            raise ctx.err(fld, f"must be one of {', '.join(spec.choices)}; got {v!r}")
        return v
    if spec.kind == "bool":
        if not isinstance(v, bool):
            raise ctx.err(fld, f"expected true or false, got {v!r} ({_tname(v)})")
        return v
    if spec.kind == "date":
        if isinstance(v, (_dt.date, str)):
            return str(v)
        raise ctx.err(fld, f"expected a date (YYYY-MM-DD), got {v!r} ({_tname(v)})")
    if spec.kind == "int":
        if _is_num(v) and not _is_int(v) and spec.integral and float(v).is_integer():
            v = int(v)
        if not _is_int(v):
            raise ctx.err(fld, f"expected an integer, got {v!r} ({_tname(v)})")
    elif spec.kind == "num":
        if not _is_num(v):
            raise ctx.err(fld, f"expected a number, got {v!r} ({_tname(v)})")
    if spec.min is not None and v < spec.min:
        raise ctx.err(fld, f"must be >= {spec.min:g}; got {v!r}")
    if spec.gt is not None and not v > spec.gt:
        raise ctx.err(fld, f"must be > {spec.gt:g}; got {v!r}")
    return v


def _fields(ctx: _Ctx, entry: Any, specs: Mapping[str, _Spec], optional: Iterable[str] = ()) -> tuple[dict, dict]:
    """Validate ``entry`` against ``specs``; return (known values, extra free-form fields)."""
    if not isinstance(entry, dict):
        raise ctx.err(None, f"expected a mapping of fields, got {_tname(entry)}")
    optional = set(optional)
    out: dict[str, Any] = {}
    for fld, spec in specs.items():
        if fld not in entry:
            if fld in optional:
                out[fld] = None
                continue
            raise ctx.err(fld, "required field is missing")
        out[fld] = _check(ctx, fld, entry[fld], spec)
    extra: dict[str, Any] = {}
    for fld, v in entry.items():
        if fld in specs:
            continue
        if isinstance(fld, str) and fld.endswith(_FREE_SUFFIXES):
            extra[fld] = v
            continue
        allowed = ", ".join(specs)
        raise ctx.err(str(fld), f"unknown field (allowed: {allowed}; free-form fields may end in "
                                f"{', '.join(_FREE_SUFFIXES)})")
    return out, extra


def _entries(ctx: _Ctx, doc: Any, section: str) -> list[tuple[_Ctx, dict]]:
    """The list under ``section``, each entry with its context; checks keys and duplicates."""
    if not isinstance(doc, dict) or section not in doc:
        raise CatalogError(f"{ctx.file}: top-level '{section}:' list is missing")
    items = doc[section]
    if not isinstance(items, list) or not items:
        raise CatalogError(f"{ctx.file}: '{section}' must be a non-empty list of entries")
    seen: dict[str, int] = {}
    out = []
    for i, entry in enumerate(items):
        ectx = ctx.at(f"#{i}")
        if not isinstance(entry, dict):
            raise ectx.err(None, f"expected a mapping of fields, got {_tname(entry)}")
        key = entry.get("key")
        if not isinstance(key, str) or not key:
            raise ectx.err("key", f"required field is missing or not a string (got {key!r})")
        if not _KEY_RE.match(key):
            raise ectx.at(key).err("key", "keys are lowercase letters, digits, '.', '_' and '-'")
        if key in seen:
            raise ctx.at(key).err("key", f"duplicate key (entries #{seen[key]} and #{i})")
        seen[key] = i
        out.append((ctx.at(key), entry))
    return out


S, I, N, B = "str", "int", "num", "bool"

_MODEL_SPECS: dict[str, _Spec] = {
    "key": _Spec(S),
    "name": _Spec(S),
    "hf_repo": _Spec(S),
    "config_source": _Spec(S),
    "card_source": _Spec(S),
    "released_format": _Spec(S),
    "architecture": _Spec(S, choices=("dense", "moe")),
    "attention": _Spec(S, choices=("mha", "gqa", "mqa", "mla")),
    "stated_total_params": _Spec(N, null=True, gt=0),
    "stated_active_params": _Spec(N, null=True, gt=0),
    "stated_params_source": _Spec(S, null=True),
    "num_hidden_layers": _Spec(I, gt=0),
    "hidden_size": _Spec(I, gt=0),
    "num_attention_heads": _Spec(I, gt=0),
    "num_key_value_heads": _Spec(I, gt=0),
    "head_dim": _Spec(I, gt=0),
    "head_dim_in_config": _Spec(B),
    "intermediate_size": _Spec(I, null=True, gt=0),
    "vocab_size": _Spec(I, gt=0),
    "tie_word_embeddings": _Spec(B),
    "max_position_embeddings": _Spec(I, gt=0, integral=True),
    "attention_bias": _Spec(B),
    "moe": _Spec("map", null=True),
    "mla": _Spec("map", null=True),
    "sliding_window": _Spec("map", null=True),
    "linear_attention": _Spec("map", null=True),
    "notes": _Spec(S, null=True),
}
_MODEL_OPTIONAL = ("stated_active_params", "stated_params_source", "moe", "mla", "sliding_window",
                   "linear_attention", "notes")

_MOE_SPECS = {
    "num_experts": _Spec(I, gt=0),
    "experts_per_token": _Spec(I, gt=0),
    "num_shared_experts": _Spec(I, min=0),
    "moe_intermediate_size": _Spec(I, gt=0),
    "first_dense_layers": _Spec(I, min=0),
}
_MLA_SPECS = {
    "kv_lora_rank": _Spec(I, gt=0),
    "q_lora_rank": _Spec(I, null=True, gt=0),
    "qk_rope_head_dim": _Spec(I, gt=0),
    "qk_nope_head_dim": _Spec(I, gt=0),
    "v_head_dim": _Spec(I, gt=0),
}
_SW_SPECS = {
    "size": _Spec(I, gt=0),
    "num_sliding_layers": _Spec(I, gt=0),
    "pattern": _Spec(S),
}
_LIN_SPECS = {
    "num_linear_layers": _Spec(I, gt=0),
    "state_bytes_per_layer": _Spec(N, gt=0),
}

_GPU_SPECS = {
    "key": _Spec(S),
    "name": _Spec(S),
    "vendor": _Spec(S),
    "source": _Spec(S),
    "memory_bytes": _Spec(I, gt=0, integral=True),
    "memory_label": _Spec(S),
    "memory_note": _Spec(S, null=True),
    "memory_bandwidth_bytes_per_s": _Spec(N, gt=0),
    "bf16_dense_flops": _Spec(N, gt=0),
    "fp8_dense_flops": _Spec(N, null=True, gt=0),
    "int8_dense_ops": _Spec(N, null=True, gt=0),
    "interconnect": _Spec(S, null=True),
    "interconnect_bytes_per_s_per_direction": _Spec(N, null=True, gt=0),
    "interconnect_note": _Spec(S, null=True),
    "tdp_watts": _Spec(N, null=True, gt=0),
    "notes": _Spec(S, null=True),
    "allreduce_latency_s": _Spec(N, null=True, gt=0),
}
_GPU_OPTIONAL = ("memory_note", "fp8_dense_flops", "int8_dense_ops", "interconnect",
                 "interconnect_bytes_per_s_per_direction", "interconnect_note", "tdp_watts", "notes",
                 "allreduce_latency_s")

_FORMAT_SPECS = {
    "key": _Spec(S),
    "name": _Spec(S),
    "bits_per_weight": _Spec(N, gt=0),
    "kind": _Spec(S, choices=("float", "int", "block")),
    "group_size": _Spec(I, null=True, gt=0),
    "scale_bits": _Spec(N, null=True, min=0),
    "kv_cache": _Spec(B),
    "source": _Spec(S),
    "notes": _Spec(S, null=True),
    "embedding_bits_per_weight": _Spec(N, null=True, gt=0),
}
_FORMAT_OPTIONAL = ("group_size", "scale_bits", "notes", "embedding_bits_per_weight")

_GPU_PRICE_SPECS = {
    "key": _Spec(S),
    "gpu": _Spec(S),
    "usd_per_hour": _Spec(N, gt=0),
    "basis": _Spec(S),
    "source": _Spec(S),
}
_API_PRICE_SPECS = {
    "key": _Spec(S),
    "name": _Spec(S),
    "usd_per_m_input": _Spec(N, min=0),
    "usd_per_m_output": _Spec(N, min=0),
    "source": _Spec(S),
}


def _sub(ctx: _Ctx, fld: str, value: Any, specs: Mapping[str, _Spec], cls, optional=()):
    """A nested block (moe, mla, ...): null, or a mapping validated field by field."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ctx.err(fld, f"expected a mapping or null, got {_tname(value)}")
    return cls(**_fields_prefixed(ctx, fld, value, specs, optional))


def _fields_prefixed(ctx: _Ctx, fld: str, value: dict, specs: Mapping[str, _Spec], optional=()) -> dict:
    """Validate a nested block; error messages name the field as ``block.field``."""
    optional = set(optional)
    out = {}
    for name, spec in specs.items():
        path = f"{fld}.{name}"
        if name not in value:
            if name in optional:
                out[name] = None
                continue
            raise ctx.err(path, "required field is missing")
        out[name] = _check(ctx, path, value[name], spec)
    for name in value:
        if name not in specs and not (isinstance(name, str) and name.endswith(_FREE_SUFFIXES)):
            raise ctx.err(f"{fld}.{name}", f"unknown field (allowed: {', '.join(specs)})")
    return out


def _parse_model(ctx: _Ctx, entry: dict) -> Model:
    vals, extra = _fields(ctx, entry, _MODEL_SPECS, _MODEL_OPTIONAL)
    moe = _sub(ctx, "moe", vals["moe"], _MOE_SPECS, Moe)
    mla = _sub(ctx, "mla", vals["mla"], _MLA_SPECS, Mla, optional=("q_lora_rank",))
    sw = _sub(ctx, "sliding_window", vals["sliding_window"], _SW_SPECS, SlidingWindow)
    lin = _sub(ctx, "linear_attention", vals["linear_attention"], _LIN_SPECS, LinearAttention)
    vals.update(moe=moe, mla=mla, sliding_window=sw, linear_attention=lin, notes=vals["notes"] or "")
    m = Model(**vals, extra=extra)
    _check_model_consistency(ctx, m)
    return m


def _check_model_consistency(ctx: _Ctx, m: Model) -> None:
    L = m.num_hidden_layers
    if (m.architecture == "moe") != (m.moe is not None):
        raise ctx.err("moe", f"architecture is {m.architecture!r} but the moe block is "
                             f"{'present' if m.moe else 'null'}; moe models need it, dense models must not have it")
    if (m.attention == "mla") != (m.mla is not None):
        raise ctx.err("mla", f"attention is {m.attention!r} but the mla block is "
                             f"{'present' if m.mla else 'null'}; only attention: mla takes an mla block")
    if m.attention != "mla" and m.num_attention_heads % m.num_key_value_heads:
        raise ctx.err("num_key_value_heads", f"{m.num_key_value_heads} does not divide "
                                             f"num_attention_heads {m.num_attention_heads}")
    if m.attention == "mha" and m.num_key_value_heads != m.num_attention_heads:
        raise ctx.err("num_key_value_heads", "attention: mha needs num_key_value_heads == num_attention_heads")
    if m.attention == "mqa" and m.num_key_value_heads != 1:
        raise ctx.err("num_key_value_heads", "attention: mqa needs num_key_value_heads == 1")
    if m.moe is not None:
        if m.moe.experts_per_token > m.moe.num_experts:
            raise ctx.err("moe.experts_per_token", f"{m.moe.experts_per_token} exceeds num_experts {m.moe.num_experts}")
        if m.moe.first_dense_layers > L:
            raise ctx.err("moe.first_dense_layers", f"{m.moe.first_dense_layers} exceeds num_hidden_layers {L}")
        if m.moe.first_dense_layers > 0 and m.intermediate_size is None:
            raise ctx.err("intermediate_size", "needed: the model has dense layers (moe.first_dense_layers > 0)")
    elif m.intermediate_size is None:
        raise ctx.err("intermediate_size", "required for dense models")
    sliding = m.sliding_window.num_sliding_layers if m.sliding_window else 0
    linear = m.linear_attention.num_linear_layers if m.linear_attention else 0
    if sliding > L:
        raise ctx.err("sliding_window.num_sliding_layers", f"{sliding} exceeds num_hidden_layers {L}")
    if linear > L:
        raise ctx.err("linear_attention.num_linear_layers", f"{linear} exceeds num_hidden_layers {L}")
    if sliding + linear > L:
        raise ctx.err("linear_attention.num_linear_layers",
                      f"sliding ({sliding}) + linear ({linear}) layers exceed num_hidden_layers {L}")
    if m.stated_active_params is not None and m.stated_total_params is not None \
            and m.stated_active_params > m.stated_total_params:
        raise ctx.err("stated_active_params", "exceeds stated_total_params")
    if m.stated_total_params is not None and not m.stated_params_source:
        raise ctx.err("stated_params_source", "a stated parameter count needs its source URL")


def _parse_simple(ctx: _Ctx, entry: dict, specs, cls, optional=()):
    vals, extra = _fields(ctx, entry, specs, optional)
    if "notes" in vals:
        vals["notes"] = vals["notes"] or ""
    return cls(**vals, extra=extra)


def _load_models(path: Path) -> dict[str, Model]:
    ctx = _Ctx(_display(path), "models")
    return {c.key: _parse_model(c, e) for c, e in _entries(ctx, _read_yaml(path), "models")}


def _load_gpus(path: Path) -> dict[str, Gpu]:
    ctx = _Ctx(_display(path), "gpus")
    return {c.key: _parse_simple(c, e, _GPU_SPECS, Gpu, _GPU_OPTIONAL)
            for c, e in _entries(ctx, _read_yaml(path), "gpus")}


def _load_formats(path: Path) -> dict[str, Format]:
    ctx = _Ctx(_display(path), "formats")
    return {c.key: _parse_simple(c, e, _FORMAT_SPECS, Format, _FORMAT_OPTIONAL)
            for c, e in _entries(ctx, _read_yaml(path), "formats")}


def _load_prices(path: Path) -> Prices:
    name = _display(path)
    doc = _read_yaml(path)
    if not isinstance(doc, dict):
        raise CatalogError(f"{name}: expected a mapping with as_of, disclaimer, gpu_hour and api")
    top = _Ctx(name, "prices")
    as_of = _check(top, "as_of", doc.get("as_of"), _Spec("date"))
    disclaimer = _check(top, "disclaimer", doc.get("disclaimer"), _Spec(S))
    for k in doc:
        if k not in ("as_of", "disclaimer", "gpu_hour", "api") and not str(k).endswith(_FREE_SUFFIXES):
            raise top.err(str(k), "unknown top-level field (allowed: as_of, disclaimer, gpu_hour, api)")
    gpu_hour = {c.key: _parse_simple(c, e, _GPU_PRICE_SPECS, GpuPrice)
                for c, e in _entries(_Ctx(name, "gpu_hour"), doc, "gpu_hour")}
    api = {c.key: _parse_simple(c, e, _API_PRICE_SPECS, ApiPrice)
           for c, e in _entries(_Ctx(name, "api"), doc, "api")}
    return Prices(as_of=as_of, disclaimer=disclaimer, gpu_hour=gpu_hour, api=api)


def _cross_check(directory: Path, models, gpus, formats, prices: Prices) -> None:
    for m in models.values():
        if m.released_format not in formats:
            ctx = _Ctx(_display(directory / "models.yaml"), "models", m.key)
            raise ctx.err("released_format", f"{m.released_format!r} is not a key in formats.yaml "
                                             f"(valid: {', '.join(sorted(formats))})")
    for p in prices.gpu_hour.values():
        if p.gpu not in gpus:
            ctx = _Ctx(_display(directory / "prices.yaml"), "gpu_hour", p.key)
            raise ctx.err("gpu", f"{p.gpu!r} is not a key in gpus.yaml (valid: {', '.join(sorted(gpus))})")


# ==================================================================================================
# public entry point, cached per directory and file modification times
# ==================================================================================================

_CACHE: dict[tuple, Catalog] = {}


def _stamp(directory: Path) -> tuple:
    stamp = []
    for name in CATALOG_FILES:
        p = directory / name
        try:
            st = p.stat()
            stamp.append((name, st.st_mtime_ns, st.st_size))
        except FileNotFoundError:
            stamp.append((name, None, None))
    return tuple(stamp)


def load_catalog(path: str | Path | None = None) -> Catalog:
    """Load and validate the catalog directory (default: this package's directory).

    The result is cached; the cache is keyed on the directory and the files' modification times, so
    an edited file is re-read (useful under ``mkdocs serve``). Raises :class:`CatalogError` naming
    the file, the entry key and the field on any schema violation.
    """
    directory = Path(path).resolve() if path is not None else CATALOG_DIR
    if not directory.is_dir():
        raise CatalogError(f"{directory}: catalog directory does not exist")
    cache_key = (str(directory), _stamp(directory))
    hit = _CACHE.get(cache_key)
    if hit is not None:
        return hit
    models = _load_models(directory / "models.yaml")
    gpus = _load_gpus(directory / "gpus.yaml")
    formats = _load_formats(directory / "formats.yaml")
    prices = _load_prices(directory / "prices.yaml")
    _cross_check(directory, models, gpus, formats, prices)
    cat = Catalog(directory=directory, models=models, gpus=gpus, formats=formats, prices=prices)
    for k in [k for k in _CACHE if k[0] == str(directory)]:
        del _CACHE[k]
    _CACHE[cache_key] = cat
    return cat


def clear_cache() -> None:
    """Forget every loaded catalog (tests use this)."""
    _CACHE.clear()
