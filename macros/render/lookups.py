"""Catalog values and links for use inside a sentence: a model's config field, a GPU's memory or
bandwidth, a format's bits, a link to an entry. Nothing computed beyond unit conversion."""

from __future__ import annotations

from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from .blocks import _bits, _flink, _glink, _i, _mlink, _n
from .registry import macro


@macro("inline", example='model_field("llama-3.1-70b", "num_key_value_heads")')
def model_field(model: Model, field: str) -> str:
    """One catalog field of a model, e.g. model_field('llama-3.1-70b', 'num_key_value_heads') -> '8'.

    Nested fields as `moe.num_experts`, `mla.kv_lora_rank`, `sliding_window.size`.
    """
    m = model
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


@macro("inline", example='gpu_memory("h100-sxm")')
def gpu_memory(gpu: Gpu) -> str:
    """GPU memory, e.g. '85.5 GB (79.6 GiB)' for the H100 SXM."""
    return U.fmt_gb(gpu.memory_bytes)


@macro("inline", example='gpu_cuda_memory("rtx-5090")')
def gpu_cuda_memory(gpu: Gpu) -> str:
    """GPU memory as CUDA reports it, the total an engine's memory fraction multiplies (slightly below
    the nvidia-smi figure of `gpu_memory`), e.g. '33.7 GB (31.4 GiB)' for the RTX 5090."""
    return U.fmt_gb(gpu.engine_memory_bytes)


@macro("inline", example='gpu_memory_label("rtx-5090")')
def gpu_memory_label(gpu: Gpu) -> str:
    """The memory size the vendor's product page states, e.g. '32 GB GDDR7' for the RTX 5090."""
    return gpu.memory_label


@macro("inline", example='gpu_bandwidth("h100-sxm")')
def gpu_bandwidth(gpu: Gpu) -> str:
    """GPU memory bandwidth, e.g. '3.35 TB/s'."""
    return U.fmt_bandwidth(gpu.memory_bandwidth_bytes_per_s)


@macro("inline", example='format_bits("int4-g128")')
def format_bits(fmt: Format) -> str:
    """Effective bits per weight, e.g. '4.125 bits'."""
    return f"{_bits(fmt.bits_per_weight)} bits"


@macro("inline", example='model_link("llama-3.1-70b")')
def model_link(model: Model) -> str:
    """A link to the model's catalog entry."""
    return _mlink(model)


@macro("inline", example='gpu_link("h100-sxm")')
def gpu_link(gpu: Gpu) -> str:
    """A link to the GPU's catalog entry."""
    return _glink(gpu)


@macro("inline", example='format_link("mxfp4")')
def format_link(fmt: Format) -> str:
    """A link to the format's catalog entry."""
    return _flink(fmt)
