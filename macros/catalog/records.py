"""The catalog's record types: frozen dataclasses that the formulas and the renderer read.

Pure Python: nothing here imports MkDocs or pydantic; :mod:`.schema` validates the YAML and builds
these records.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping


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


@dataclass(frozen=True)
class Moe:
    """Mixture-of-experts block of a model (see CATALOG-SCHEMA, models.yaml ``moe``)."""

    num_experts: int            # routed experts per MoE layer
    experts_per_token: int      # top-k routed experts each token uses
    num_shared_experts: int     # always-on shared experts per MoE layer (0 if none)
    moe_intermediate_size: int  # each expert's MLP width
    first_dense_layers: int     # leading layers that use a dense MLP instead of experts
    routed_expert_hidden_size: int | None = None  # latent MoE: routed experts' input/output width
    latent_moe_use_norm: bool = False             # latent MoE: an RMSNorm on the latent output


@dataclass(frozen=True)
class Mla:
    """Multi-head latent attention block (DeepSeek-V2/V3 style)."""

    kv_lora_rank: int
    q_lora_rank: int | None
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    output_gate: bool = False   # sigmoid gate hidden -> heads * v_head_dim before o_proj


@dataclass(frozen=True)
class SlidingWindow:
    """Layers that attend only to the last ``size`` tokens."""

    size: int
    num_sliding_layers: int
    pattern: str


@dataclass(frozen=True)
class Kda:
    """Kimi Delta Attention layer shapes (config ``linear_attn_config``), full-rank output gate."""

    num_heads: int
    head_dim: int
    short_conv_kernel_size: int


@dataclass(frozen=True)
class LinearAttention:
    """Layers that keep a constant-size state per sequence instead of a growing KV cache."""

    num_linear_layers: int
    state_bytes_per_layer: float
    kda: Kda | None = None  # projection shapes when known (exact parameter count); None: approximate


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
    # total cudaMemGetInfo reports (what vLLM multiplies by --gpu-memory-utilization); None only for
    # a hand-made GPU (the calculator's custom GPU), where the memory the user typed stands in
    cuda_total_bytes: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def engine_memory_bytes(self) -> int:
        """The device total an engine budgets from: ``cuda_total_bytes`` (catalog GPUs always have
        it), else ``memory_bytes`` for a hand-made GPU."""
        return self.cuda_total_bytes if self.cuda_total_bytes is not None else self.memory_bytes


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
