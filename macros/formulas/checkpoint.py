"""Checkpoints as shipped: which module is stored in which format, read from a ``quantization_config``,
and the bytes the engine allocates for them (vLLM's MXFP4 MoE padding).

A checkpoint rarely stores every weight in one format. gpt-oss ships MXFP4 routed experts and BF16
for everything else; Meta's Llama-3.1-405B-Instruct-FP8 keeps attention and the first and last
layers in BF16. :func:`module_formats` walks the model's modules by the names Hugging Face
checkpoints use (``model.embed_tokens``, ``model.layers.N.self_attn.q_proj``, ``...mlp.experts``,
``lm_head``) and gives each the format its ``quantization_config`` implies, honouring
``modules_to_not_convert`` / ``ignore`` / ``ignored_layers``. Units: parameters and bytes.
"""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass

from .memory import WeightBytes, bits_of
from .params import param_breakdown

__all__ = ["Module", "QuantConfigError", "module_list", "module_formats", "checkpoint_weight_bytes",
           "MXFP4_ROUND_UP", "vllm_mxfp4_expert_bytes", "vllm_loaded_weight_bytes"]


class QuantConfigError(ValueError):
    """A ``quantization_config`` the converter cannot read; the message names the field."""


@dataclass(frozen=True)
class Module:
    name: str        # Hugging Face module path, e.g. model.layers.0.self_attn.q_proj
    part: str        # embedding, lm_head, attention, dense_mlp, routed_experts, shared_experts, router, norms
    params: float
    linear: bool     # a linear layer (what weight quantizers convert); embeddings and norms are not
    aliases: tuple = ()


def _attention_children(model) -> list[tuple[str, float]]:
    """q/k/v/o shares of one attention block (MLA: one block), by their matrix sizes."""
    if model.mla is not None:
        return [("", 1.0)]
    h, hd = model.hidden_size, model.head_dim
    q, kv = model.num_attention_heads * hd, model.num_key_value_heads * hd
    sizes = {"q_proj": h * q, "k_proj": h * kv, "v_proj": h * kv, "o_proj": q * h}
    total = sum(sizes.values())
    return [(k, v / total) for k, v in sizes.items()]


def module_list(model) -> list[Module]:
    """Every weight-holding module of ``model`` with its parameter count (from :func:`param_breakdown`,
    spread evenly over the layers that hold each part)."""
    b = param_breakdown(model)
    L = model.num_hidden_layers
    moe = model.moe
    moe_layers = list(range(moe.first_dense_layers, L)) if moe else []
    dense_layers = list(range(moe.first_dense_layers)) if moe else list(range(L))
    out = [Module("model.embed_tokens", "embedding", b.embedding, False)]
    if b.lm_head:
        out.append(Module("lm_head", "lm_head", b.lm_head, True))
    for i in range(L):
        base = f"model.layers.{i}"
        for child, share in _attention_children(model):
            name = f"{base}.self_attn" + (f".{child}" if child else "")
            out.append(Module(name, "attention", b.attention / L * share, True))
    for i in dense_layers:
        for child in ("gate_proj", "up_proj", "down_proj"):
            out.append(Module(f"model.layers.{i}.mlp.{child}", "dense_mlp", b.dense_mlp / len(dense_layers) / 3, True))
    for i in moe_layers:
        base = f"model.layers.{i}.mlp"
        out.append(Module(f"{base}.experts", "routed_experts", b.routed_experts / len(moe_layers), True))
        if b.shared_experts:
            out.append(Module(f"{base}.shared_experts", "shared_experts", b.shared_experts / len(moe_layers), True))
        out.append(Module(f"{base}.router", "router", b.router / len(moe_layers), True, (f"{base}.gate",)))
        if b.latent_projections:
            out.append(Module(f"{base}.latent_proj", "rest", b.latent_projections / len(moe_layers), True))
    out.append(Module("model.norm", "norms", b.norms, False))
    return out


def _matches(name: str, pattern: str) -> bool:
    """``pattern`` names ``name`` or one of its parents: ``re:`` regex (compressed-tensors), glob
    (``model.layers.*.self_attn``), or a dotted path or component (``lm_head``, ``self_attn``)."""
    if pattern.startswith("re:"):
        rx = re.compile(pattern[3:])
        parts = name.split(".")
        return any(rx.fullmatch(".".join(parts[:k])) for k in range(1, len(parts) + 1))
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(name, pattern + ".*")
    return name == pattern or name.startswith(pattern + ".") or ("." + pattern + ".") in ("." + name + ".")


def _skipped(m: Module, patterns: list[str]) -> bool:
    return any(_matches(n, p) for p in patterns for n in (m.name, *m.aliases))


def _group_format(weights: dict, where: str) -> str:
    """Format key of a compressed-tensors ``weights`` scheme."""
    bits, typ, group = weights.get("num_bits"), weights.get("type"), weights.get("group_size")
    if typ == "float" and bits == 8:
        return "fp8"
    if typ == "int" and bits == 8:
        return "int8"
    if typ == "int" and bits == 4 and group in (128, None):
        return "int4-g128" if weights.get("symmetric", True) else "int4-g128-zp"
    if typ == "float" and bits == 4:
        return "nvfp4" if group == 16 else "mxfp4"
    raise QuantConfigError(f"{where}: weights num_bits={bits!r} type={typ!r} group_size={group!r} is not a "
                           "scheme the converter knows (fp8, int8, int4 g128, fp4)")


def module_formats(model, quantization_config: dict | None, default: str = "bf16") -> list[tuple[Module, str]]:
    """Each module of ``model`` with the format key its checkpoint stores it in.

    Methods (``quant_method``): ``mxfp4`` quantizes only the routed experts (as vLLM 0.33.0's
    ``Mxfp4Config.get_quant_method`` in vllm/model_executor/layers/quantization/mxfp4.py: every linear
    layer falls back to ``UnquantizedLinearMethod``); ``fp8`` and ``fbgemm_fp8`` every linear layer
    not in ``modules_to_not_convert`` / ``ignored_layers``; ``compressed-tensors`` the linear layers
    its config group targets, less ``ignore``; ``awq`` / ``gptq`` INT4 group-128; ``bitsandbytes``
    NF4 or INT8. Embeddings and norms stay in ``default`` (the checkpoint's ``torch_dtype``).
    """
    qc = quantization_config or {}
    method = qc.get("quant_method")
    mods = module_list(model)
    if not qc:
        return [(m, default) for m in mods]
    skip = list(qc.get("modules_to_not_convert") or []) + list(qc.get("ignored_layers") or []) \
        + list(qc.get("ignore") or [])
    if method == "mxfp4":
        return [(m, "mxfp4" if m.part == "routed_experts" and not _skipped(m, skip) else default) for m in mods]
    if method in ("fp8", "fbgemm_fp8"):
        quant = "fp8"
    elif method == "compressed-tensors":
        groups = qc.get("config_groups")
        if not isinstance(groups, dict) or not groups:
            raise QuantConfigError("quantization_config.config_groups: missing (compressed-tensors needs at least one)")
        name, group = next(iter(groups.items()))
        if "Linear" not in (group.get("targets") or ["Linear"]):
            raise QuantConfigError(f"quantization_config.config_groups.{name}.targets: only 'Linear' is understood")
        quant = _group_format(group.get("weights") or {}, f"quantization_config.config_groups.{name}")
    elif method in ("awq", "gptq"):
        bits, group = qc.get("bits", qc.get("w_bit")), qc.get("group_size", qc.get("q_group_size"))
        if bits != 4 or group != 128:
            raise QuantConfigError(f"quantization_config: {method} bits={bits!r} group_size={group!r}; "
                                   "only 4-bit group-128 is in the catalog")
        quant = "int4-g128"
    elif method == "bitsandbytes":
        quant = "nf4" if qc.get("load_in_4bit") else ("int8" if qc.get("load_in_8bit") else None)
        if quant is None:
            raise QuantConfigError("quantization_config: bitsandbytes without load_in_4bit or load_in_8bit")
    else:
        raise QuantConfigError(f"quantization_config.quant_method: {method!r} is not understood")
    return [(m, quant if m.linear and not _skipped(m, skip) else default) for m in mods]


def checkpoint_weight_bytes(model, quantization_config: dict | None, fmt_of, default: str = "bf16") -> WeightBytes:
    """Weight bytes of the checkpoint, by part: each module's parameters x its format's bits / 8.

    ``fmt_of(key)`` returns the catalog format of a key (its effective bits include scales)."""
    emb = exp = rest = 0.0
    for m, key in module_formats(model, quantization_config, default):
        nbytes = m.params * bits_of(fmt_of(key)) / 8
        if m.part in ("embedding", "lm_head"):
            emb += nbytes
        elif m.part == "routed_experts":
            exp += nbytes
        else:
            rest += nbytes
    b = param_breakdown(model)
    active_share = 1 - b.inactive_experts_per_token * b.params_per_expert * b.moe_layers / b.routed_experts \
        if b.routed_experts else 0.0
    return WeightBytes(embeddings=emb, routed_experts=exp, rest=rest, active_routed=exp * active_share)


# Round-up of (hidden, intermediate) per MXFP4 MoE kernel backend in vLLM 0.33.0,
# vllm/model_executor/layers/fused_moe/oracle/mxfp4.py mxfp4_round_up_hidden_size_and_intermediate_size
# (CUDA branches). The selector there (_get_priority_backends_for_gpt_oss, select_mxfp4_moe_backend)
# picks TRITON on Hopper (SM90, bundled triton_kernels): its branch is the final `else`, rounding the
# intermediate size to 64 and leaving hidden alone; MARLIN, the weight-only fallback (and what vLLM
# 0.10 used on Hopper), rounds intermediate to 128 and hidden to 256.
# Measured: with the Marlin rule gpt-oss-120b comes to 65.90 GiB against "Model loading took 65.9651 GiB"
# (vllm-project/vllm#23278, Marlin on H100): -0.1%. With the Triton rule it comes to 60.77 GiB, while a
# Triton-backend log at vLLM 0.14.1 reads "Model loading took 64.38 GiB" (vllm-project/vllm#33155): -5.6%,
# a gap this module does not explain (the triton_kernels Hopper swizzle pads only a few MiB here).
MXFP4_ROUND_UP = {"triton": (1, 64), "marlin": (256, 128), "cutlass": (128, 128), "trtllm": (256, 128),
                  "deepgemm": (128, 128)}


def _round_up(x: int, m: int) -> int:
    return int(math.ceil(x / m) * m)


def vllm_mxfp4_expert_bytes(model, backend: str = "triton", tp: int = 1, expert_bias: bool | None = None) -> float:
    """Bytes vLLM allocates for one GPU's MXFP4 routed experts (all MoE layers), padding included.

    Per MoE layer, as ``Mxfp4MoEMethod.create_weights`` (vllm/model_executor/layers/quantization/mxfp4.py)
    with H, I after :data:`MXFP4_ROUND_UP`: w13 ``E x 2I x H/2`` bytes + its scales ``E x 2I x H/32``,
    w2 ``E x H x I/2`` + ``E x H x I/32``, and with expert biases (gpt-oss) BF16 ``E x 2I`` and
    ``E x H``. Under TP each GPU holds ``I / tp`` of every expert. ``expert_bias`` defaults to the
    model's ``attention_bias``: gpt-oss, the catalog's MXFP4 MoE, has biases on both (vLLM's gpt_oss
    model builds its experts with ``has_bias=True``).
    """
    if model.moe is None:
        raise ValueError(f"{model.key} has no routed experts")
    if backend not in MXFP4_ROUND_UP:
        raise ValueError(f"MXFP4 backend {backend!r} unknown (valid: {', '.join(MXFP4_ROUND_UP)})")
    h_align, i_align = MXFP4_ROUND_UP[backend]
    e = model.moe.num_experts
    h = _round_up(model.hidden_size, h_align)
    i = _round_up(model.moe.moe_intermediate_size // tp, i_align)
    per_layer = e * 2 * i * (h // 2 + h // 32) + e * h * (i // 2 + i // 32)
    if model.attention_bias if expert_bias is None else expert_bias:
        per_layer += e * (2 * i + h) * 2
    return per_layer * (model.num_hidden_layers - model.moe.first_dense_layers)


def vllm_loaded_weight_bytes(model, quantization_config: dict | None, fmt_of, default: str = "bf16",
                             backend: str = "triton") -> float:
    """Bytes vLLM holds after loading the checkpoint on one GPU (no parallelism): the checkpoint's
    bytes with MXFP4 routed experts replaced by their padded allocation (:func:`vllm_mxfp4_expert_bytes`).
    This is what vLLM's "Model loading took X GiB" reports, up to allocator rounding."""
    wb = checkpoint_weight_bytes(model, quantization_config, fmt_of, default)
    if (quantization_config or {}).get("quant_method") == "mxfp4" and model.moe is not None:
        return wb.embeddings + wb.rest + vllm_mxfp4_expert_bytes(model, backend)
    return wb.total
