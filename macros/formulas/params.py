"""Parameter counts computed from a model's config (the catalog entry), dense and mixture-of-experts.

The count walks the module tree of a standard decoder-only transformer (Llama / Qwen / Mistral /
DeepSeek / gpt-oss style) and adds up the weight matrices:

- token embedding ``vocab_size x hidden_size``; the output projection (lm_head) is another
  ``vocab_size x hidden_size`` unless ``tie_word_embeddings`` (then it shares the embedding matrix);
- per layer, attention:
  - MHA / GQA / MQA: q ``hidden x heads*head_dim``, k and v ``hidden x kv_heads*head_dim`` each,
    o ``heads*head_dim x hidden``; with ``attention_bias`` the q, k and v projections carry a bias
    (``heads*head_dim + 2*kv_heads*head_dim`` numbers);
  - MLA (DeepSeek-V2/V3): q either direct (``hidden x heads*(nope+rope)``) or compressed
    (``hidden x q_lora_rank`` + a ``q_lora_rank`` norm + ``q_lora_rank x heads*(nope+rope)``); the joint
    KV down-projection ``hidden x (kv_lora_rank + rope)``, its ``kv_lora_rank`` norm, the up-projection
    ``kv_lora_rank x heads*(nope + v_head_dim)`` and o ``heads*v_head_dim x hidden``;
- per layer, MLP: a gated (SwiGLU-style) MLP has three matrices, ``3 x hidden x width``; dense layers
  use ``intermediate_size``; MoE layers have ``num_experts`` routed experts and
  ``num_shared_experts`` shared experts of ``moe_intermediate_size`` each plus a router
  ``hidden x num_experts``;
- norms: two RMSNorm vectors of ``hidden`` per layer plus the final norm.

Active parameters per token = total minus the routed experts a token does not use:
``(num_experts - experts_per_token) x expert_params x moe_layers``. Embedding and lm_head are counted
in both totals (vendors differ on this; see each model's notes).

Not modelled (each below 0.1% of any catalog model): the output-projection bias, extra norms
(Gemma-2's pre/post-FFN norms, Qwen3's per-head q/k norms), attention sinks, expert and router biases,
DeepSeek's router score-correction bias, and multi-token-prediction (MTP) modules, which vendors
exclude from the stated totals. Layers listed under ``linear_attention`` are counted with the same
attention shape as the other layers, which is only an approximation (their projections differ): the
breakdown flags this with ``approximate = True``.

Hybrid and latent-MoE extensions (optional catalog fields; shapes in :mod:`.hybridmoe`): when
``linear_attention.kda`` gives the Kimi Delta Attention shapes, those layers are counted exactly and
the other layers with the standard (MLA or GQA) shape; ``mla.output_gate`` adds a
``hidden x heads*v_head_dim`` gate per MLA layer; ``moe.routed_expert_hidden_size`` (latent MoE)
makes each routed expert ``3 x latent x moe_intermediate_size`` and adds the ``hidden x latent``
down- and up-projections (and the latent norm) per MoE layer, while shared experts and the router
stay at ``hidden``. Kimi K3's attention-residual vectors (four ``hidden``-sized vectors per layer) and
the router's score-correction bias are below 0.001% and not modelled.
"""

from __future__ import annotations

import functools

from dataclasses import dataclass

from . import _checks as chk
from .hybridmoe import kda_attention_params, latent_moe_projection_params, mla_output_gate_params

__all__ = [
    "ParamBreakdown",
    "gated_mlp_params",
    "gqa_attention_params",
    "mla_attention_params",
    "attention_params_per_layer",
    "expert_params",
    "param_breakdown",
    "total_params",
    "active_params",
    "relative_difference",
]


def gated_mlp_params(hidden_size: int, width: int) -> int:
    """Parameters of a gated MLP (gate, up, down projections, no biases): ``3 x hidden x width``."""
    chk.positive_int("hidden_size", hidden_size)
    chk.positive_int("width", width)
    return 3 * hidden_size * width


def gqa_attention_params(hidden_size: int, num_heads: int, num_kv_heads: int, head_dim: int,
                         qkv_bias: bool = False) -> int:
    """Parameters of one MHA/GQA/MQA attention block.

    ``hidden*heads*hd`` (q) + ``2*hidden*kv*hd`` (k, v) + ``heads*hd*hidden`` (o), plus
    ``heads*hd + 2*kv*hd`` bias terms when the q/k/v projections have biases.
    """
    for n, v in (("hidden_size", hidden_size), ("num_heads", num_heads),
                 ("num_kv_heads", num_kv_heads), ("head_dim", head_dim)):
        chk.positive_int(n, v)
    q = heads_dim = num_heads * head_dim
    kv = num_kv_heads * head_dim
    weights = hidden_size * q + 2 * hidden_size * kv + heads_dim * hidden_size
    bias = (q + 2 * kv) if qkv_bias else 0
    return weights + bias


def mla_attention_params(hidden_size: int, num_heads: int, kv_lora_rank: int, q_lora_rank: int | None,
                         qk_rope_head_dim: int, qk_nope_head_dim: int, v_head_dim: int) -> int:
    """Parameters of one multi-head latent attention block (DeepSeek-V2/V3 layout, no biases).

    q: ``hidden*q_lora + q_lora + q_lora*heads*(nope+rope)`` when compressed, else
    ``hidden*heads*(nope+rope)``; KV: ``hidden*(kv_lora+rope) + kv_lora + kv_lora*heads*(nope+v)``;
    o: ``heads*v*hidden``.
    """
    for n, v in (("hidden_size", hidden_size), ("num_heads", num_heads), ("kv_lora_rank", kv_lora_rank),
                 ("qk_rope_head_dim", qk_rope_head_dim), ("qk_nope_head_dim", qk_nope_head_dim),
                 ("v_head_dim", v_head_dim)):
        chk.positive_int(n, v)
    qk_head = qk_nope_head_dim + qk_rope_head_dim
    if q_lora_rank:
        chk.positive_int("q_lora_rank", q_lora_rank)
        q = hidden_size * q_lora_rank + q_lora_rank + q_lora_rank * num_heads * qk_head
    else:
        q = hidden_size * num_heads * qk_head
    kv = (hidden_size * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank
          + kv_lora_rank * num_heads * (qk_nope_head_dim + v_head_dim))
    o = num_heads * v_head_dim * hidden_size
    return q + kv + o


def attention_params_per_layer(model) -> int:
    """Attention parameters of one full-attention layer of ``model`` (MLA or MHA/GQA/MQA, by its
    catalog entry; an MLA output gate included when ``mla.output_gate``)."""
    if model.mla is not None:
        m = model.mla
        gate = (mla_output_gate_params(model.hidden_size, model.num_attention_heads, m.v_head_dim)
                if m.output_gate else 0)
        return gate + mla_attention_params(model.hidden_size, model.num_attention_heads, m.kv_lora_rank,
                                           m.q_lora_rank, m.qk_rope_head_dim, m.qk_nope_head_dim, m.v_head_dim)
    return gqa_attention_params(model.hidden_size, model.num_attention_heads, model.num_key_value_heads,
                                model.head_dim, model.attention_bias)


def _attention_params(model) -> int:
    """All layers' attention: KDA layers at their own shape when the catalog gives it."""
    la = model.linear_attention
    if la is not None and la.kda is not None:
        k = la.kda
        full = model.num_hidden_layers - la.num_linear_layers
        kda = kda_attention_params(model.hidden_size, k.num_heads, k.head_dim, k.short_conv_kernel_size)
        return (attention_params_per_layer(model) * full if full else 0) + kda * la.num_linear_layers
    return attention_params_per_layer(model) * model.num_hidden_layers


def expert_params(model) -> int:
    """Parameters of one routed expert: ``3 x width x moe_intermediate_size``, where width is
    ``hidden_size``, or ``routed_expert_hidden_size`` for a latent MoE."""
    if model.moe is None:
        raise ValueError(f"{model.key} is a dense model: it has no experts")
    width = model.moe.routed_expert_hidden_size or model.hidden_size
    return gated_mlp_params(width, model.moe.moe_intermediate_size)


@dataclass(frozen=True)
class ParamBreakdown:
    """Where a model's parameters are. All counts are whole-model totals (all layers)."""

    embedding: int        # input token embedding
    lm_head: int          # output projection; 0 when tied to the embedding
    attention: int        # all layers' attention blocks (incl. MLA norms, q/k/v biases)
    dense_mlp: int        # MLPs of dense layers
    routed_experts: int   # all routed experts of all MoE layers
    shared_experts: int   # shared experts of all MoE layers
    router: int           # router (gate) matrices of all MoE layers
    norms: int            # per-layer RMSNorms + final norm
    moe_layers: int       # how many layers are MoE layers
    params_per_expert: int  # one routed expert's parameters (0 for dense models)
    inactive_experts_per_token: int  # routed experts per MoE layer a token does NOT use
    approximate: bool     # True when linear-attention layers were counted with the standard shape
    latent_projections: int = 0  # latent MoE: hidden <-> latent projections (+ norms) of all MoE layers

    @property
    def total(self) -> int:
        return (self.embedding + self.lm_head + self.attention + self.dense_mlp + self.routed_experts
                + self.shared_experts + self.router + self.norms + self.latent_projections)

    @property
    def active(self) -> int:
        """Parameters one token uses: total minus the routed experts it is not sent to."""
        return self.total - self.inactive_experts_per_token * self.params_per_expert * self.moe_layers

    @property
    def compute_active(self) -> int:
        """Active parameters that take part in matmuls: the input embedding is a table lookup, not a
        matmul, so it is left out unless it is tied to (and so is) the output projection."""
        return self.active - (self.embedding if self.lm_head else 0)

    @property
    def embeddings(self) -> int:
        """Embedding plus (untied) lm_head."""
        return self.embedding + self.lm_head

    @property
    def non_expert(self) -> int:
        """Everything but the routed experts (what a decode step reads regardless of routing)."""
        return self.total - self.routed_experts


@functools.lru_cache(maxsize=256)
def param_breakdown(model) -> ParamBreakdown:
    """Count ``model``'s parameters by component from its catalog entry (see the module docstring)."""
    h = model.hidden_size
    layers = model.num_hidden_layers
    embedding = model.vocab_size * h
    lm_head = 0 if model.tie_word_embeddings else model.vocab_size * h
    attention = _attention_params(model)
    norms = 2 * h * layers + h
    if model.moe is None:
        dense_layers, moe_layers = layers, 0
    else:
        dense_layers = model.moe.first_dense_layers
        moe_layers = layers - dense_layers
    dense_mlp = gated_mlp_params(h, model.intermediate_size) * dense_layers if dense_layers else 0
    if model.moe is not None and moe_layers:
        mo = model.moe
        per_expert = expert_params(model)
        routed = per_expert * mo.num_experts * moe_layers
        shared = gated_mlp_params(h, mo.moe_intermediate_size) * mo.num_shared_experts * moe_layers
        router = h * mo.num_experts * moe_layers
        inactive = mo.num_experts - mo.experts_per_token
        latent = (latent_moe_projection_params(h, mo.routed_expert_hidden_size, mo.latent_moe_use_norm)
                  * moe_layers if mo.routed_expert_hidden_size else 0)
    else:
        per_expert = routed = shared = router = inactive = latent = 0
    la = model.linear_attention
    return ParamBreakdown(
        embedding=embedding, lm_head=lm_head, attention=attention, dense_mlp=dense_mlp,
        routed_experts=routed, shared_experts=shared, router=router, norms=norms,
        moe_layers=moe_layers, params_per_expert=per_expert, inactive_experts_per_token=inactive,
        approximate=la is not None and la.kda is None, latent_projections=latent,
    )


def total_params(model) -> int:
    """Total parameters computed from the config (see :func:`param_breakdown`)."""
    return param_breakdown(model).total


def active_params(model) -> int:
    """Parameters used per token: equal to the total for dense models."""
    return param_breakdown(model).active


def relative_difference(computed: float, stated: float) -> float:
    """``(computed - stated) / stated``: how far a computed count is from a vendor's stated figure."""
    chk.positive("stated", stated)
    chk.non_negative("computed", computed)
    return (computed - stated) / stated
