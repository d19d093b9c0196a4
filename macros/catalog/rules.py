"""Rules the schema cannot say field by field: consistency within a model entry, and references
between files. Each violation raises :class:`~.records.CatalogError` naming the file, entry and field."""

from __future__ import annotations

from pathlib import Path

from .records import CatalogError, Model, Prices
from .yamlio import display


class Where:
    """Where we are: file, list name, entry key. Builds the error messages."""

    def __init__(self, file: str, section: str, key: str | None = None):
        self.file = file
        self.section = section
        self.key = key

    def at(self, key: str) -> "Where":
        return Where(self.file, self.section, key)

    def __str__(self) -> str:
        return f"{self.file}: {self.section}" + (f"[{self.key}]" if self.key is not None else "")

    def err(self, fld: str | None, msg: str) -> CatalogError:
        where = f"{self.file}: {self.section}"
        if self.key is not None:
            where += f"[{self.key}]"
        if fld:
            where += f".{fld}"
        return CatalogError(f"{where}: {msg}")


def check_model(ctx: Where, m: Model) -> None:
    """Rules between a model's fields: architecture and blocks agree, head counts divide, layer counts add up."""
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
        if m.moe.latent_moe_use_norm and m.moe.routed_expert_hidden_size is None:
            raise ctx.err("moe.latent_moe_use_norm", "needs moe.routed_expert_hidden_size (a latent MoE)")
        if m.moe.routed_expert_hidden_size is not None and m.moe.routed_expert_hidden_size >= m.hidden_size:
            raise ctx.err("moe.routed_expert_hidden_size", f"{m.moe.routed_expert_hidden_size} must be smaller "
                                                           f"than hidden_size {m.hidden_size} (a latent width)")
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


def check_gpu(ctx: Where, g) -> None:
    """A GPU's CUDA total is sourced, or says it is a fallback; it never exceeds the nvidia-smi total."""
    src, note = g.extra.get("cuda_total_source"), g.extra.get("cuda_total_note")
    if not note:
        raise ctx.err("cuda_total_note", "required: quote the log line the CUDA total comes from, "
                                         "or start with 'fallback:' and say which figure stands in")
    if not src and not str(note).startswith("fallback:"):
        raise ctx.err("cuda_total_source", "required unless cuda_total_note starts with 'fallback:'")
    if src and str(note).startswith("fallback:"):
        raise ctx.err("cuda_total_note", "starts with 'fallback:' but cuda_total_source is given")
    if g.cuda_total_bytes > g.memory_bytes:
        raise ctx.err("cuda_total_bytes", f"{g.cuda_total_bytes} exceeds memory_bytes {g.memory_bytes} "
                                          "(cudaMemGetInfo reports at most what nvidia-smi does)")


def check_references(directory: Path, models, gpus, formats, prices: Prices) -> None:
    """Rules between files: a model's released format and a price's GPU exist."""
    for m in models.values():
        if m.released_format not in formats:
            ctx = Where(display(directory / "models.yaml"), "models", m.key)
            raise ctx.err("released_format", f"{m.released_format!r} is not a key in formats.yaml "
                                             f"(valid: {', '.join(sorted(formats))})")
    for p in prices.gpu_hour.values():
        if p.gpu not in gpus:
            ctx = Where(display(directory / "prices.yaml"), "gpu_hour", p.key)
            raise ctx.err("gpu", f"{p.gpu!r} is not a key in gpus.yaml (valid: {', '.join(sorted(gpus))})")
