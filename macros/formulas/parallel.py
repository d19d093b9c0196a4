"""Tensor and expert parallelism: valid TP degrees, per-GPU shards and communication volume.

TP rule (vLLM, ``QKVParallelLinear`` in vllm/model_executor/layers/linear.py): the query heads are
split evenly, so ``num_attention_heads % tp == 0``. KV heads are split when there are at least as
many as GPUs (``tp <= kv_heads`` and ``kv_heads % tp == 0``); otherwise every GPU holds one KV head
and each KV head is replicated ``tp / kv_heads`` times, which needs ``tp % kv_heads == 0``.
MLA models cache one latent per token that every head uses, so under TP each GPU keeps the whole
latent cache (it is replicated, not split). The MLP's column-parallel split also needs the
intermediate widths to divide by TP.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _checks as chk

__all__ = [
    "tp_problem",
    "check_tp",
    "valid_tp_degrees",
    "kv_heads_per_gpu",
    "kv_fraction_per_gpu",
    "TpShard",
    "tp_replicated_extra_params",
    "tp_shard",
    "ring_allreduce_bytes_per_gpu",
    "tp_allreduce_bytes_per_token_per_layer",
    "tp_allreduce_bytes_per_token",
    "ep_all_to_all_bytes",
    "allreduce_time",
    "tp_decode_allreduce_time",
]


def tp_problem(num_attention_heads: int, num_kv_heads: int, tp: int,
               widths: tuple[tuple[str, int], ...] = ()) -> str | None:
    """Why ``tp`` is not a valid tensor-parallel degree, or ``None`` if it is (see the module rule)."""
    chk.positive_int("tp", tp)
    if num_attention_heads % tp:
        return f"num_attention_heads {num_attention_heads} is not divisible by TP {tp}"
    if tp <= num_kv_heads:
        if num_kv_heads % tp:
            return f"num_key_value_heads {num_kv_heads} is not divisible by TP {tp}"
    elif tp % num_kv_heads:
        return (f"TP {tp} exceeds num_key_value_heads {num_kv_heads} but is not a multiple of it, "
                "so KV heads cannot be replicated evenly")
    for name, width in widths:
        if width and width % tp:
            return f"{name} {width} is not divisible by TP {tp}"
    return None


def _model_widths(model) -> tuple[tuple[str, int], ...]:
    widths = []
    if model.intermediate_size and (model.moe is None or model.moe.first_dense_layers):
        widths.append(("intermediate_size", model.intermediate_size))
    if model.moe is not None:
        widths.append(("moe_intermediate_size", model.moe.moe_intermediate_size))
    return tuple(widths)


def _kv_heads_for_tp(model) -> int:
    # MLA: the latent is replicated, so only the query heads constrain TP.
    return model.num_attention_heads if model.mla is not None else model.num_key_value_heads


def check_tp(model, tp: int) -> None:
    """Raise ValueError naming the rule ``tp`` breaks for ``model`` and listing the valid degrees."""
    problem = tp_problem(model.num_attention_heads, _kv_heads_for_tp(model), tp, _model_widths(model))
    if problem:
        valid = ", ".join(str(t) for t in valid_tp_degrees(model))
        raise ValueError(f"{model.key}: invalid tensor-parallel degree {tp}: {problem}; "
                         f"valid TP degrees up to 16: {valid}")


def valid_tp_degrees(model, max_tp: int = 16) -> list[int]:
    """Every TP degree from 1 to ``max_tp`` that ``model``'s head counts and widths allow."""
    chk.positive_int("max_tp", max_tp)
    kv = _kv_heads_for_tp(model)
    widths = _model_widths(model)
    return [t for t in range(1, max_tp + 1)
            if tp_problem(model.num_attention_heads, kv, t, widths) is None]


def kv_heads_per_gpu(num_kv_heads: int, tp: int) -> int:
    """KV heads one GPU stores: ``kv_heads / tp`` when tp <= kv_heads, else 1 (replicated)."""
    chk.positive_int("num_kv_heads", num_kv_heads)
    chk.positive_int("tp", tp)
    if tp <= num_kv_heads:
        if num_kv_heads % tp:
            raise ValueError(f"num_key_value_heads {num_kv_heads} is not divisible by TP {tp}")
        return num_kv_heads // tp
    if tp % num_kv_heads:
        raise ValueError(f"TP {tp} is not a multiple of num_key_value_heads {num_kv_heads}")
    return 1


def kv_fraction_per_gpu(model, tp: int) -> float:
    """Share of the model's KV cache one GPU holds under TP ``tp``.

    ``kv_heads_per_gpu / kv_heads`` for MHA/GQA/MQA (1/tp when split, 1/kv_heads when replicated);
    1.0 for MLA (latent replicated on every GPU). Linear-attention states are assumed to split the
    same way as the KV heads.
    """
    chk.positive_int("tp", tp)
    if model.mla is not None:
        return 1.0
    return kv_heads_per_gpu(model.num_key_value_heads, tp) / model.num_key_value_heads


@dataclass(frozen=True)
class TpShard:
    tp: int
    weights_per_gpu: float       # bytes one GPU holds: even share plus replicated copies
    kv_fraction: float           # share of the KV cache one GPU holds
    kv_heads_per_gpu: int        # KV heads (MLA: latent copies) per GPU
    kv_head_replicas: int        # how many GPUs hold each KV head
    weights_total: float = 0.0   # bytes of the whole model (one copy)
    replicated_extra_bytes: float = 0.0  # per GPU, above weights_total / tp

    @property
    def even_split(self) -> float:
        return self.weights_total / self.tp


def tp_replicated_extra_params(model, tp: int) -> dict[str, float]:
    """Parameters one GPU holds beyond an even ``1/tp`` share, by tensor group (see module docstring).

    A tensor replicated on every GPU costs ``(1 - 1/tp) x its size`` extra; a KV projection whose
    heads are fewer than ``tp`` costs ``kv_proj x (1/kv_heads - 1/tp)`` extra (one whole head per GPU
    instead of a ``1/tp`` slice). A latent MoE's down- and up-projections are replicated too
    (``ReplicatedLinear`` in vLLM 0.33's Kimi K3 model), and so is a KDA layer's ``hidden -> head_dim``
    decay-gate factor. All zero at ``tp = 1``.
    """
    from .params import param_breakdown  # local: params imports nothing from here

    check_tp(model, tp)
    b = param_breakdown(model)
    spread = 1 - 1 / tp
    h = model.hidden_size
    layers = model.num_hidden_layers
    out = {"norms": b.norms * spread, "router": b.router * spread, "kv_heads": 0.0, "mla_down_proj": 0.0,
           "latent_moe_proj": b.latent_projections * spread, "kda_decay_gate_a": 0.0}
    la = model.linear_attention
    if la is not None and la.kda is not None:
        # KDA layers split by heads, except the decay gate's first low-rank factor f_a
        # (hidden -> head_dim), which vLLM 0.33 keeps whole on every rank (replicated_shard_id=4 of
        # in_proj_qkvgfab in vllm/models/kimi_k3/nvidia/kda.py); only the MLA layers replicate q_a/kv_a.
        out["kda_decay_gate_a"] = h * la.kda.head_dim * la.num_linear_layers * spread
        layers -= la.num_linear_layers
    if model.mla is not None:
        a = model.mla
        per_layer = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank
        if a.q_lora_rank:
            per_layer += h * a.q_lora_rank + a.q_lora_rank
        out["mla_down_proj"] = per_layer * layers * spread
    elif tp > model.num_key_value_heads:
        kv_width = 2 * model.num_key_value_heads * model.head_dim
        kv_proj = (h * kv_width + (kv_width if model.attention_bias else 0)) * layers
        out["kv_heads"] = kv_proj * (1 / model.num_key_value_heads - 1 / tp)
    return out


def tp_shard(model, tp: int, fmt, expert_fmt=None, embed_fmt=None) -> TpShard:
    """What one GPU holds under tensor parallelism ``tp`` for ``model`` stored in ``fmt``.

    Weights: ``total / tp + replicated extra`` (:func:`tp_replicated_extra_params`, priced at the
    bits of ``fmt``: the replicated tensors are attention, router and norm weights, not experts or
    embeddings). KV: see :func:`kv_fraction_per_gpu`. ``expert_fmt`` / ``embed_fmt`` as in
    :func:`macros.formulas.memory.weight_bytes`.
    """
    from .memory import bits_of, weight_bytes  # local: memory imports nothing from here

    check_tp(model, tp)
    total = weight_bytes(model, fmt, expert_fmt, embed_fmt)
    extra = sum(tp_replicated_extra_params(model, tp).values()) * bits_of(fmt) / 8
    if model.mla is not None:
        per_gpu, replicas = 1, tp
    else:
        per_gpu = kv_heads_per_gpu(model.num_key_value_heads, tp)
        replicas = max(1, tp // model.num_key_value_heads)
    return TpShard(tp=tp, weights_per_gpu=total / tp + extra, kv_fraction=kv_fraction_per_gpu(model, tp),
                   kv_heads_per_gpu=per_gpu, kv_head_replicas=replicas, weights_total=total,
                   replicated_extra_bytes=extra)


def ring_allreduce_bytes_per_gpu(buffer_bytes: float, n_gpus: int) -> float:
    """Bytes each GPU sends (and receives) in a ring all-reduce of ``buffer_bytes``: ``2(p-1)/p x buffer``.

    A ring all-reduce is a reduce-scatter plus an all-gather, each moving ``(p-1)/p`` of the buffer
    through every GPU. Zero for a single GPU.
    """
    chk.non_negative("buffer_bytes", buffer_bytes)
    chk.positive_int("n_gpus", n_gpus)
    return 2 * (n_gpus - 1) / n_gpus * buffer_bytes


def tp_allreduce_bytes_per_token_per_layer(hidden_size: int, element_bytes: float, tp: int) -> float:
    """Bytes each GPU sends per token per layer under TP: 2 all-reduces of ``hidden x bytes``.

    Megatron-style TP all-reduces the activations once after attention's row-parallel o_proj and once
    after the MLP's row-parallel down projection: ``2 x 2(p-1)/p x hidden x bytes``.
    """
    chk.positive_int("hidden_size", hidden_size)
    chk.positive("element_bytes", element_bytes)
    return 2 * ring_allreduce_bytes_per_gpu(hidden_size * element_bytes, tp)


def tp_allreduce_bytes_per_token(model, element_bytes: float, tp: int) -> float:
    """All layers: ``layers x`` :func:`tp_allreduce_bytes_per_token_per_layer`."""
    return model.num_hidden_layers * tp_allreduce_bytes_per_token_per_layer(model.hidden_size, element_bytes, tp)


def ep_all_to_all_bytes(tokens: int, top_k: int, hidden_size: int, element_bytes: float,
                        include_combine: bool = True) -> float:
    """Bytes an expert-parallel MoE layer moves per step: ``tokens x top_k x hidden x bytes`` per direction.

    Dispatch sends each token's hidden state to each of its top-k experts; combine brings the k
    results back; so ``x 2`` with ``include_combine``. Per MoE layer, summed over all GPUs; with
    uniform routing over ``ep`` ranks, ``(ep-1)/ep`` of it crosses the interconnect (the rest stays
    on the local GPU).
    """
    chk.non_negative_int("tokens", tokens)
    chk.positive_int("top_k", top_k)
    chk.positive_int("hidden_size", hidden_size)
    chk.positive("element_bytes", element_bytes)
    one_way = tokens * top_k * hidden_size * element_bytes
    return 2 * one_way if include_combine else one_way


def allreduce_time(buffer_bytes: float, n_gpus: int, latency_s: float, link_bytes_per_s: float) -> float:
    """Latency-plus-bandwidth time of one all-reduce: ``latency + 2(p-1)/p x buffer / link``.

    ``latency`` is the fixed cost of one call (launch, synchronisation, protocol), measured as the
    small-message time of an all-reduce benchmark; ``link`` is one GPU's bandwidth in ONE direction
    (a ring sends and receives at once, so each direction carries ``2(p-1)/p x buffer``). Zero for a
    single GPU. A bound-style estimate: real collectives pick algorithms (ring, tree, NVLink SHARP,
    one-shot) whose constants differ.
    """
    chk.non_negative("buffer_bytes", buffer_bytes)
    chk.positive_int("n_gpus", n_gpus)
    chk.non_negative("latency_s", latency_s)
    chk.positive("link_bytes_per_s", link_bytes_per_s)
    if n_gpus == 1:
        return 0.0
    return latency_s + ring_allreduce_bytes_per_gpu(buffer_bytes, n_gpus) / link_bytes_per_s


def tp_decode_allreduce_time(model, tokens: int, element_bytes: float, tp: int, latency_s: float,
                             link_bytes_per_s: float) -> float:
    """All-reduce time of one TP forward step over ``tokens`` tokens: ``layers x 2 x`` :func:`allreduce_time`.

    Each layer all-reduces ``tokens x hidden x bytes`` twice (after attention's o_proj and after the
    MLP's down projection, or the MoE layer's combined output). At decode ``tokens`` is the batch,
    so at small batch the per-call latency dominates.
    """
    chk.positive_int("tokens", tokens)
    chk.positive("element_bytes", element_bytes)
    buf = tokens * model.hidden_size * element_bytes
    return 2 * model.num_hidden_layers * allreduce_time(buf, tp, latency_s, link_bytes_per_s)
