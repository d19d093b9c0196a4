"""The catalog schema, declared once per entry type with pydantic (strict: no silent coercion of a
string to a number or of 1.5 to 1), and the translation of a validation error into the catalog's own
message, which names the file, the entry key and the field::

    macros/catalog/gpus.yaml: gpus[h100-sxm].memory_bytes: expected an integer, got '80GB' (str)

Free-form documentation fields (a name ending in ``_source``, ``_note``, ``_url``, ...) are allowed
beyond the schema so that a data author can add one without a code change; they are split off before
validation and kept in the record's ``extra``. Anything else unknown is an error: it is usually a typo.
Rules that span fields or files are in :mod:`.rules`.
"""

from __future__ import annotations

import datetime as _dt
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from .records import CatalogError

FREE_SUFFIXES = ("_source", "_sources", "_note", "_notes", "_url", "_comment")


def _whole_float_to_int(v: Any) -> Any:
    """``1.5e6``-style whole numbers are accepted where an integer is expected (sizes written in
    exponent notation); 1.5 is still an error."""
    return int(v) if isinstance(v, float) and v.is_integer() else v


Pos = Annotated[int, Field(gt=0)]
NonNeg = Annotated[int, Field(ge=0)]
PosWhole = Annotated[int, BeforeValidator(_whole_float_to_int), Field(gt=0)]
Num = Union[int, float]  # kept as written: 700 stays an int, 3.35e12 a float
PosNum = Annotated[Num, Field(gt=0)]
NonNegNum = Annotated[Num, Field(ge=0)]


class _Schema(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class MoeBlock(_Schema):
    num_experts: Pos
    experts_per_token: Pos
    num_shared_experts: NonNeg
    moe_intermediate_size: Pos
    first_dense_layers: NonNeg
    # latent MoE (config routed_expert_hidden_size): routed experts run at this width, between a
    # hidden -> latent down-projection and a latent -> hidden up-projection; shared experts stay at
    # hidden_size. Absent: experts run at hidden_size.
    routed_expert_hidden_size: Optional[Pos] = None
    latent_moe_use_norm: bool = False


class MlaBlock(_Schema):
    kv_lora_rank: Pos
    q_lora_rank: Optional[Pos] = None
    qk_rope_head_dim: Pos
    qk_nope_head_dim: Pos
    v_head_dim: Pos
    # config mla_use_output_gate: a sigmoid gate hidden -> heads * v_head_dim before o_proj
    output_gate: bool = False


class SlidingWindowBlock(_Schema):
    size: Pos
    num_sliding_layers: Pos
    pattern: str


class KdaBlock(_Schema):
    """Kimi Delta Attention projection shapes (config linear_attn_config), for an exact count."""
    num_heads: Pos
    head_dim: Pos
    short_conv_kernel_size: Pos


class LinearAttentionBlock(_Schema):
    num_linear_layers: Pos
    state_bytes_per_layer: PosNum
    kda: Optional[KdaBlock] = None


class ModelEntry(_Schema):
    key: str
    name: str
    hf_repo: str
    config_source: str
    card_source: str
    released_format: str
    architecture: Literal["dense", "moe"]
    attention: Literal["mha", "gqa", "mqa", "mla"]
    stated_total_params: Optional[PosNum]
    stated_active_params: Optional[PosNum] = None
    stated_params_source: Optional[str] = None
    num_hidden_layers: Pos
    hidden_size: Pos
    num_attention_heads: Pos
    num_key_value_heads: Pos
    head_dim: Pos
    head_dim_in_config: bool
    intermediate_size: Optional[Pos]
    vocab_size: Pos
    tie_word_embeddings: bool
    max_position_embeddings: PosWhole
    attention_bias: bool
    moe: Optional[MoeBlock] = None
    mla: Optional[MlaBlock] = None
    sliding_window: Optional[SlidingWindowBlock] = None
    linear_attention: Optional[LinearAttentionBlock] = None
    notes: Optional[str] = None


class GpuEntry(_Schema):
    key: str
    name: str
    vendor: str
    source: str
    memory_bytes: PosWhole
    memory_label: str
    memory_note: Optional[str] = None
    cuda_total_bytes: PosWhole
    memory_bandwidth_bytes_per_s: PosNum
    bf16_dense_flops: PosNum
    fp8_dense_flops: Optional[PosNum] = None
    int8_dense_ops: Optional[PosNum] = None
    interconnect: Optional[str] = None
    interconnect_bytes_per_s_per_direction: Optional[PosNum] = None
    interconnect_note: Optional[str] = None
    tdp_watts: Optional[PosNum] = None
    notes: Optional[str] = None
    allreduce_latency_s: Optional[PosNum] = None


class FormatEntry(_Schema):
    key: str
    name: str
    bits_per_weight: PosNum
    kind: Literal["float", "int", "block"]
    group_size: Optional[Pos] = None
    scale_bits: Optional[NonNegNum] = None
    kv_cache: bool
    source: str
    notes: Optional[str] = None
    embedding_bits_per_weight: Optional[PosNum] = None


class GpuPriceEntry(_Schema):
    key: str
    gpu: str
    usd_per_hour: PosNum
    basis: str
    source: str


class ApiPriceEntry(_Schema):
    key: str
    name: str
    usd_per_m_input: NonNegNum
    usd_per_m_output: NonNegNum
    source: str


class PricesHeader(_Schema):
    as_of: Union[_dt.date, str]
    disclaimer: str


# --------------------------------------------------------------------------------------------------
# validation with the catalog's messages
# --------------------------------------------------------------------------------------------------

def split_free_form(schema: type[_Schema], entry: dict) -> tuple[dict, dict]:
    """(schema fields, free-form documentation fields) of a YAML mapping for ``schema``; nested blocks
    are split too (their free-form fields are allowed and dropped)."""
    known: dict = {}
    extra: dict = {}
    for k, v in entry.items():
        if k in schema.model_fields:
            known[k] = split_free_form(_owner(schema, [k]), v)[0] if isinstance(v, dict) else v
        elif isinstance(k, str) and k.endswith(FREE_SUFFIXES):
            extra[k] = v
        else:
            known[k] = v  # an unknown field: the schema reports it
    return known, extra


def validate(schema: type[_Schema], data: dict, where: str) -> _Schema:
    """``schema`` validated against ``data``; the first violation raises :class:`CatalogError` as
    ``<where>.<field>: <what is wrong>`` (``where`` is ``file: section[key]``)."""
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        path, message = _explain(schema, err)
        raise CatalogError(f"{where}.{path}: {message}") from None


_UNION_TAGS = {"int", "float", "str", "bool", "date"}


def _explain(schema: type[_Schema], err: dict) -> tuple[str, str]:
    loc = [str(p) for p in err["loc"] if not (str(p) in _UNION_TAGS or "[" in str(p))]
    union = any(str(p) in _UNION_TAGS for p in err["loc"])
    kind, value, ctx = err["type"], err.get("input"), err.get("ctx") or {}
    path = ".".join(loc)
    got = f"got {value!r} ({type(value).__name__})"
    if kind == "missing":
        return path, "required field is missing"
    if kind == "extra_forbidden":
        owner = _owner(schema, loc[:-1])
        allowed = ", ".join(owner.model_fields)
        if len(loc) == 1:
            return path, (f"unknown field (allowed: {allowed}; free-form fields may end in "
                          f"{', '.join(FREE_SUFFIXES)})")
        return path, f"unknown field (allowed: {allowed})"
    if value is None:
        return path, "is required and must not be null"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return path, f"expected a mapping or null, got {type(value).__name__}"
    if kind.startswith(("int_", "float_")) and (union or kind.startswith("float_")):
        return path, f"expected a number, {got}"
    if kind.startswith("int_"):
        return path, f"expected an integer, {got}"
    if kind.startswith("string_"):
        return path, f"expected a string, {got}"
    if kind.startswith("bool_"):
        return path, f"expected true or false, {got}"
    if kind.startswith(("date_", "is_instance_of")) or (union and kind.startswith("string_")):
        return path, f"expected a date (YYYY-MM-DD), {got}"
    if kind == "literal_error":
        choices = ctx["expected"].replace(" or ", ", ").replace("'", "")
        return path, f"must be one of {choices}; got {value!r}"
    if kind == "greater_than":
        return path, f"must be > {ctx['gt']:g}; got {value!r}"
    if kind == "greater_than_equal":
        return path, f"must be >= {ctx['ge']:g}; got {value!r}"
    return path, err["msg"]


def _owner(schema: type[_Schema], loc: list[str]) -> type[_Schema]:
    """The schema class of the (nested) block at ``loc``."""
    for name in loc:
        annotation = schema.model_fields[name].annotation
        schema = next((a for a in getattr(annotation, "__args__", (annotation,)) if isinstance(a, type)
                       and issubclass(a, _Schema)), None)
        if schema is None:
            return _Schema
    return schema
