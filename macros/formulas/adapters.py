"""LoRA adapter size (Hu et al., "LoRA: Low-Rank Adaptation of Large Language Models", 2021,
https://arxiv.org/abs/2106.09685).

A LoRA adapter replaces the update of a ``d_in x d_out`` weight by ``B A`` with ``A: r x d_in`` and
``B: d_out x r``, so it stores ``r x (d_in + d_out)`` numbers per adapted matrix.
"""

from __future__ import annotations

from . import _checks as chk

__all__ = ["LORA_TARGETS", "lora_params_per_matrix", "lora_target_shapes", "lora_params", "lora_adapter_bytes"]

#: Module names LoRA commonly targets in Llama-style models (PEFT ``target_modules``).
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def lora_params_per_matrix(rank: int, d_in: int, d_out: int) -> int:
    """Adapter numbers for one adapted matrix: ``r x (d_in + d_out)``."""
    r = chk.positive_int("rank", rank)
    return r * (chk.positive_int("d_in", d_in) + chk.positive_int("d_out", d_out))


def lora_target_shapes(model, targets=("q_proj", "v_proj")) -> list[tuple[str, int, int]]:
    """``(name, d_in, d_out)`` of each targeted matrix in one layer of a standard (non-MLA) model.

    q/o: ``hidden <-> heads x head_dim``; k/v: ``hidden -> kv_heads x head_dim``; gate/up:
    ``hidden -> intermediate_size``; down: ``intermediate_size -> hidden``. MLP targets need a dense
    model (MoE experts are adapted per expert, which this does not model); attention targets need
    a non-MLA model.
    """
    if isinstance(targets, str):
        targets = tuple(t.strip() for t in targets.split(",") if t.strip())
    unknown = [t for t in targets if t not in LORA_TARGETS]
    if unknown or not targets:
        raise ValueError(f"unknown LoRA target(s) {unknown or targets!r}; valid targets: {', '.join(LORA_TARGETS)}")
    h = model.hidden_size
    q = model.num_attention_heads * model.head_dim
    kv = model.num_key_value_heads * model.head_dim
    shapes = {"q_proj": (h, q), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (q, h)}
    if model.moe is None:
        i = model.intermediate_size
        shapes.update({"gate_proj": (h, i), "up_proj": (h, i), "down_proj": (i, h)})
    if model.linear_attention is not None:
        raise ValueError(f"{model.key} is a hybrid linear-attention model: its layers do not share one "
                         "projection shape, so this LoRA sizing does not apply")
    out = []
    for t in targets:
        if t in ("q_proj", "k_proj", "v_proj", "o_proj") and model.mla is not None:
            raise ValueError(f"{model.key} uses MLA (q_a/q_b/kv_a/kv_b projections), not q/k/v/o_proj; "
                             "this LoRA sizing covers standard attention and dense MLPs only")
        if t not in shapes:
            raise ValueError(f"{model.key} is a mixture-of-experts model: MLP target {t!r} is per expert "
                             "and not modelled; use attention targets (q_proj, k_proj, v_proj, o_proj)")
        out.append((t, *shapes[t]))
    return out


def lora_params(model, rank: int, targets=("q_proj", "v_proj")) -> int:
    """Adapter parameters: ``sum over targets of r x (d_in + d_out)``, times ``num_hidden_layers``."""
    per_layer = sum(lora_params_per_matrix(rank, d_in, d_out) for _, d_in, d_out in lora_target_shapes(model, targets))
    return per_layer * model.num_hidden_layers


def lora_adapter_bytes(params: int, element_bytes: float = 2.0) -> float:
    """Adapter bytes: ``params x bytes per element`` (2 for BF16/FP16 adapters)."""
    chk.non_negative("params", params)
    chk.positive("element_bytes", element_bytes)
    return params * element_bytes
