"""Parameter counts from a model's config (formulas: :mod:`macros.formulas.params`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Model
from .blocks import Example, _i, _mlink
from .registry import macro


@macro("block", example='param_count("deepseek-v3")')
def param_count(model: Model) -> str:
    """Worked example: parameter count from the config, by component, against the vendor's figure.

    By component: embedding, lm_head, attention, dense MLPs, routed and shared experts, router, norms;
    the total and (MoE) the active count, and the difference from the vendor's stated figure.
    """
    m = model
    b = F.param_breakdown(m)
    L = m.num_hidden_layers
    ex = Example(f"parameters of {m.name} from its config")
    ex.formula("total = embedding + lm_head + layers × attention + dense MLPs + experts + router + norms")
    if m.is_moe:
        width = "routed_expert_hidden_size" if m.moe.routed_expert_hidden_size else "hidden"
        ex.formula(f"active = total − (num_experts − experts_per_token) × 3 × {width} × moe_intermediate × moe_layers")
    src = _mlink(m)
    ex.input("`hidden_size`", _i(m.hidden_size), src)
    ex.input("`num_hidden_layers`", _i(L), src)
    ex.input("`vocab_size`", _i(m.vocab_size), src)
    ex.input("`tie_word_embeddings`", str(m.tie_word_embeddings).lower(), src)
    if m.mla is None:
        ex.input("heads / KV heads / `head_dim`",
                 f"{m.num_attention_heads} / {m.num_key_value_heads} / {m.head_dim}", src)
    else:
        ex.input("heads; MLA q / kv LoRA rank; nope / rope / v dims",
                 f"{m.num_attention_heads}; {m.mla.q_lora_rank} / {m.mla.kv_lora_rank}; "
                 f"{m.mla.qk_nope_head_dim} / {m.mla.qk_rope_head_dim} / {m.mla.v_head_dim}", src)
    if m.intermediate_size and (not m.is_moe or m.moe.first_dense_layers):
        ex.input("`intermediate_size`", _i(m.intermediate_size), src)
    if m.is_moe:
        mo = m.moe
        ex.input("experts (routed / shared / per token)",
                 f"{mo.num_experts} / {mo.num_shared_experts} / {mo.experts_per_token}", src)
        ex.input("`moe_intermediate_size`; dense layers first",
                 f"{_i(mo.moe_intermediate_size)}; {mo.first_dense_layers}", src)
        if mo.routed_expert_hidden_size:
            ex.input("`routed_expert_hidden_size` (latent MoE width)", _i(mo.routed_expert_hidden_size), src)
    la = m.linear_attention
    if la is not None and la.kda is not None:
        ex.input("KDA layers; heads × `head_dim`; conv kernel",
                 f"{la.num_linear_layers}; {la.kda.num_heads} × {la.kda.head_dim}; "
                 f"{la.kda.short_conv_kernel_size}", src)
    rows = [("embedding", b.embedding), ("lm_head", b.lm_head), ("attention (all layers)", b.attention),
            ("dense MLPs", b.dense_mlp), ("routed experts", b.routed_experts),
            ("shared experts", b.shared_experts), ("router", b.router), ("norms", b.norms),
            ("latent MoE projections", b.latent_projections)]
    for name, val in rows:
        if val:
            ex.step(f"{name}: {_i(val)}" + (f" ({U.fmt_params(val)})" if val >= 1e6 else ""))
    ex.result(f"{_i(b.total)} parameters ({U.fmt_params(b.total)}) in total")
    if m.is_moe:
        ex.result(f"{_i(b.active)} ({U.fmt_params(b.active)}) active per token, "
                  f"{U.fmt_params(b.active - b.embedding)} without the input embedding")
    if m.stated_total_params:
        diff = F.relative_difference(b.total, m.stated_total_params)
        ex.result(f"vendor states {U.fmt_params(m.stated_total_params)} "
                  f"([source]({m.stated_params_source})): computed is {U.fmt_pct(diff)} off")
    if b.approximate:
        ex.note("Linear-attention layers are counted with the standard attention shape, so this total is approximate.")
    ex.note("Omits tensors below 0.1% of the total (output-projection bias, extra norms, sinks, expert biases).")
    return ex.render()


@macro("inline", example='params_total("llama-3.1-70b")')
def params_total(model: Model) -> str:
    """Total parameters computed from the config, e.g. '70.55B'."""
    return U.fmt_params(F.total_params(model))


@macro("inline", example='params_active("deepseek-v3")')
def params_active(model: Model) -> str:
    """Active parameters per token computed from the config, e.g. '37.55B'."""
    return U.fmt_params(F.active_params(model))
