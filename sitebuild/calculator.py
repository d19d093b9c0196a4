"""The sizing calculator's data: the catalog's models, GPUs and formats, exported at build time as a
script (``assets/javascripts/calculator-data.js``) that the calculator page reads, so it works from
``file://`` in the offline bundle like practice mode's data.

The exporter knows every field the browser engine (``docs/assets/javascripts/calc-engine.js``) reads
and every documentation field it may leave out. A model, GPU or format field it does not know fails
the build with the entry and the field named: a new architecture field (say, a latent-MoE block)
must be taught to both engines before the calculator can size that model, never silently dropped.
Pure Python; the hook in :mod:`sitebuild.hooks` writes the script.
"""

from __future__ import annotations

import dataclasses
import json

from macros import formulas as F
from macros.catalog import Catalog, Format, Gpu, Model, load_catalog

DATA_SCRIPT = "assets/javascripts/calculator-data.js"
CALCULATOR_PAGE = "calculator.md"

# Assumptions the calculator shares with the worked examples (macros/render/budget.py, speed.py).
DEFAULTS = {
    "gpu_util": F.DEFAULT_GPU_UTILIZATION,
    "activation_bytes": F.DEFAULT_ACTIVATION_BYTES,
    "reserve_bytes": F.DEFAULT_RUNTIME_RESERVE_BYTES,
    "block_size": F.DEFAULT_BLOCK_SIZE,
    "activation_element_bytes": 2,  # BF16 activations in the TP all-reduces (render/speed.py)
    "mfu": 0.5,                     # prefill_time's default MFU
    "max_tp": 16,
}

# Model fields the engine reads, and fields that only document the entry.
MODEL_SIZING = ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
                "intermediate_size", "vocab_size", "tie_word_embeddings", "max_position_embeddings",
                "attention_bias")
MODEL_SHOWN = ("key", "name", "hf_repo", "config_source", "released_format")
MODEL_DOC = ("card_source", "architecture", "attention", "stated_total_params", "stated_active_params",
             "stated_params_source", "head_dim_in_config", "notes", "extra")
BLOCKS = {
    "moe": ("num_experts", "experts_per_token", "num_shared_experts", "moe_intermediate_size",
            "first_dense_layers", "routed_expert_hidden_size", "latent_moe_use_norm"),
    "mla": ("kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "output_gate"),
    "sliding_window": ("size", "num_sliding_layers"),
    "linear_attention": ("num_linear_layers", "state_bytes_per_layer", "kda"),
}
# Blocks nested inside a block (exported as objects with these fields, or null).
SUB_BLOCKS = {"kda": ("num_heads", "head_dim", "short_conv_kernel_size")}
BLOCK_DOC = {"sliding_window": ("pattern",)}
GPU_FIELDS = ("key", "name", "memory_bytes", "cuda_total_bytes", "memory_bandwidth_bytes_per_s", "bf16_dense_flops",
              "fp8_dense_flops", "int8_dense_ops", "interconnect_bytes_per_s_per_direction",
              "allreduce_latency_s")
GPU_DOC = ("vendor", "source", "memory_label", "memory_note", "interconnect", "interconnect_note", "tdp_watts",
           "notes", "extra")
FORMAT_FIELDS = ("key", "name", "bits_per_weight", "kv_cache", "embedding_bits_per_weight")
FORMAT_DOC = ("kind", "group_size", "scale_bits", "source", "notes", "extra")


class CalculatorExportError(ValueError):
    """The catalog has a field the calculator cannot export; the message names the entry and field."""


def _unknown(record, known: tuple[str, ...], where: str) -> None:
    for f in dataclasses.fields(record):
        if f.name in known:
            continue
        value = getattr(record, f.name)
        default = f.default if f.default is not dataclasses.MISSING else None
        if value is None or value == default:
            continue  # a new optional field this entry does not use
        raise CalculatorExportError(
            f"{where}: field {f.name!r} is not known to the sizing calculator (sitebuild/calculator.py), so "
            "the browser engine would size this entry without it; teach calc-engine.js and "
            "sitebuild/calcsheet.py the field, then list it in sitebuild/calculator.py")


def export_model(m: Model) -> dict:
    where = f"macros/catalog/models.yaml: models[{m.key}]"
    _unknown(m, MODEL_SIZING + MODEL_SHOWN + MODEL_DOC + tuple(BLOCKS), where)
    out = {k: getattr(m, k) for k in MODEL_SHOWN + MODEL_SIZING}
    for block, fields in BLOCKS.items():
        value = getattr(m, block)
        if value is None:
            out[block] = None
            continue
        _unknown(value, fields + BLOCK_DOC.get(block, ()), f"{where}.{block}")
        out[block] = {k: _sub(getattr(value, k), k, f"{where}.{block}") for k in fields}
    return out


def _sub(value, name: str, where: str):
    """A plain field as it is; a nested block (``linear_attention.kda``) as an object of its known fields."""
    if name not in SUB_BLOCKS or value is None:
        return value
    _unknown(value, SUB_BLOCKS[name], f"{where}.{name}")
    return {k: getattr(value, k) for k in SUB_BLOCKS[name]}


def export_gpu(g: Gpu) -> dict:
    _unknown(g, GPU_FIELDS + GPU_DOC, f"macros/catalog/gpus.yaml: gpus[{g.key}]")
    return {k: getattr(g, k) for k in GPU_FIELDS}


def export_format(f: Format) -> dict:
    _unknown(f, FORMAT_FIELDS + FORMAT_DOC, f"macros/catalog/formats.yaml: formats[{f.key}]")
    return {k: getattr(f, k) for k in FORMAT_FIELDS}


def calculator_payload(cat: Catalog | None = None) -> dict:
    """Everything the calculator page needs from the catalog, in file order."""
    cat = cat or load_catalog()
    return {
        "defaults": DEFAULTS,
        "models": [export_model(m) for m in cat.models.values()],
        "gpus": [export_gpu(g) for g in cat.gpus.values()],
        "formats": [export_format(f) for f in cat.formats.values()],
    }


def calculator_script(cat: Catalog | None = None) -> str:
    """The data script: ``window.MSIB_CALC_DATA = {...};``."""
    text = json.dumps(calculator_payload(cat), ensure_ascii=False, separators=(",", ":"))
    return "window.MSIB_CALC_DATA=" + text.replace("</", "<\\/") + ";\n"
