"""Kimi Delta Attention layers, latent-MoE projections and MLA output gates (macros/formulas/hybridmoe.py),
and the Kimi K3 catalog entry they make countable, against published figures and hand arithmetic."""

from __future__ import annotations

import dataclasses
import shutil

import pytest
import yaml

from macros.catalog import CATALOG_DIR, CATALOG_FILES, CatalogError, clear_cache, load_catalog
from macros.formulas import (bytes_for_params, expert_params, kda_attention_params, kda_state_bytes,
                             kda_state_values, kv_bytes_per_sequence, kv_bytes_per_token,
                             latent_moe_projection_params, mla_output_gate_params, param_breakdown,
                             relative_difference, weight_bytes_breakdown)

CAT = load_catalog()
K3 = CAT.model("kimi-k3")


# --- the shapes, by hand -----------------------------------------------------------------------------

def test_kda_layer_params_of_kimi_k3_by_hand():
    # vLLM 0.33 KimiK3DeltaAttention, hidden 7168, 96 heads x 128 (P = 12,288), kernel 4:
    fused_in = 7168 * (4 * 12288 + 128 + 96)   # q, k, v, g, f_a, b: 353,927,168
    f_b = 128 * 12288                          # 1,572,864
    dt_bias = 12288
    conv = 3 * 12288 * 4                       # 147,456
    a_log = 96
    o_norm = 128
    o_proj = 12288 * 7168                      # 88,080,384
    assert fused_in + f_b + dt_bias + conv + a_log + o_norm + o_proj == 443_740_384
    assert kda_attention_params(7168, 96, 128, 4) == 443_740_384


def test_kda_state_of_kimi_k3_by_hand():
    # recurrent 96 x 128 x 128; conv: q, k, v channels (3 x 12,288) x the last kernel - 1 = 3 inputs
    assert kda_state_values(96, 128, 4) == (1_572_864, 110_592)
    # vLLM 0.33 default: recurrent state FP32, conv state in the model dtype (BF16)
    assert kda_state_bytes(96, 128, 4, recurrent_bytes=4, conv_bytes=2) == 6_291_456 + 221_184
    # --mamba-ssm-cache-dtype bfloat16 halves the recurrent part
    assert kda_state_bytes(96, 128, 4, recurrent_bytes=2, conv_bytes=2) == 3_366_912


def test_latent_projection_and_output_gate_by_hand():
    assert latent_moe_projection_params(7168, 3584, use_norm=True) == 2 * 7168 * 3584 + 3584
    assert latent_moe_projection_params(7168, 3584, use_norm=False) == 51_380_224
    assert mla_output_gate_params(7168, 96, 128) == 88_080_384


@pytest.mark.parametrize("call", [
    lambda: kda_attention_params(7168, 0, 128, 4),
    lambda: kda_state_values(96, 128, -1),
    lambda: kda_state_bytes(96, 128, 4, recurrent_bytes=0, conv_bytes=2),
    lambda: latent_moe_projection_params(7168, 0, True),
    lambda: mla_output_gate_params(7168, 96, 1.5),
])
def test_bad_input_is_refused(call):
    with pytest.raises(ValueError):
        call()


# --- Kimi K3 against its published figures ------------------------------------------------------------

def test_kimi_k3_total_reproduces_the_published_2_8t():
    # NeMo AutoModel's Kimi K3 page and the model card: 2.8T total (one decimal, so within 1%).
    total = param_breakdown(K3).total
    assert abs(relative_difference(total, 2.8e12)) < 0.01
    assert 2.75e12 <= total < 2.85e12


def test_kimi_k3_active_reproduces_the_published_104b_without_the_input_embedding():
    b = param_breakdown(K3)
    # 104B active: the count leaves out the input embedding table (a lookup, not a matmul)
    assert abs(relative_difference(b.compute_active, 104e9)) < 0.005
    # with both embedding tables it would round to 105B, not 104B
    assert b.active - b.compute_active == K3.vocab_size * K3.hidden_size
    assert round(b.active / 1e9) == 105


def test_kimi_k3_routed_expert_matches_the_checkpoint_shapes():
    # One routed expert holds w1 and w3 of [3072, 3584] and w2 of [3584, 3072] (latent width 3584):
    assert expert_params(K3) == 3 * 3072 * 3584 == 33_030_144
    b = param_breakdown(K3)
    assert b.routed_experts == 33_030_144 * 896 * 92
    # shared experts stay at hidden_size: 2 x 3 x 7168 x 3072 per MoE layer
    assert b.shared_experts == 2 * 3 * 7168 * 3072 * 92
    assert b.latent_projections == (2 * 7168 * 3584 + 3584) * 92
    assert not b.approximate


def test_kimi_k3_attention_counts_69_kda_and_24_gated_mla_layers():
    b = param_breakdown(K3)
    mla_q = 7168 * 1536 + 1536 + 1536 * 96 * 192
    mla_kv = 7168 * 576 + 512 + 512 * 96 * 256
    mla_o_and_gate = 2 * 96 * 128 * 7168
    assert b.attention == 24 * (mla_q + mla_kv + mla_o_and_gate) + 69 * 443_740_384


def test_kimi_k3_weight_bytes_with_mxfp4_experts():
    w = weight_bytes_breakdown(K3, CAT.format("bf16"), CAT.format("mxfp4"))
    # MXFP4: 4 bits + one 8-bit E8M0 scale per 32 = 4.25 bits
    assert w.routed_experts == pytest.approx(2_722_740_830_208 * 4.25 / 8)
    # embeddings and lm_head in BF16: 2 x 163,840 x 7,168 x 2 bytes
    assert w.embeddings == 2 * 163840 * 7168 * 2
    # the whole text model is between 1.5 and 1.6 TB, above one HGX B200 node (8 x 180 GB)
    # and below one HGX B300 node (8 x 288 GB)
    assert 1.5e12 < w.total < 1.6e12
    assert 8 * CAT.gpu("b200").memory_bytes < w.total < 8 * CAT.gpu("b300").memory_bytes


def test_kimi_k3_kv_per_token_is_the_24_mla_layers_only():
    # MLA caches kv_lora_rank + qk_rope_head_dim = 576 values per layer per token, 24 such layers
    assert kv_bytes_per_token(K3, CAT.format("bf16")) == 24 * 576 * 2
    # one sequence adds the 69 constant KDA states on top
    assert kv_bytes_per_sequence(K3, 1000, CAT.format("bf16")) == 24 * 576 * 2 * 1000 + 69 * 6_512_640


def test_catalog_state_bytes_follow_the_kda_shape():
    la = K3.linear_attention
    assert la.state_bytes_per_layer == kda_state_bytes(la.kda.num_heads, la.kda.head_dim,
                                                       la.kda.short_conv_kernel_size, 4, 2)


def test_without_the_kda_shape_the_count_is_flagged_approximate():
    la = dataclasses.replace(K3.linear_attention, kda=None)
    b = param_breakdown(dataclasses.replace(K3, linear_attention=la))
    assert b.approximate
    assert b.attention == 93 * (param_breakdown(K3).attention - 69 * 443_740_384) // 24


def test_b300_memory_is_the_usable_total_nvidia_smi_reports():
    # nvidia-smi on HGX B300: 275040 MiB per GPU, below the 288 GiB of HBM3E behind the label
    g = CAT.gpu("b300")
    assert g.memory_bytes == 275040 * 2**20
    assert g.memory_bytes < 288 * 2**30
    # HGX B300: 36 PFLOPS BF16 and 72 PFLOPS FP8 with sparsity per 8 GPUs
    assert g.bf16_dense_flops == pytest.approx(36e15 / 2 / 8)
    assert g.fp8_dense_flops == pytest.approx(72e15 / 2 / 8)


def test_mxfp4_scale_overhead_is_8_bits_per_32():
    assert bytes_for_params(32, CAT.format("mxfp4")) == (32 * 4 + 8) / 8


# --- bad catalog input ----------------------------------------------------------------------------------

@pytest.fixture
def copy(tmp_path):
    for name in CATALOG_FILES:
        shutil.copy(CATALOG_DIR / name, tmp_path / name)
    clear_cache()
    return tmp_path


def _edit_k3(path, fn):
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    fn(next(m for m in doc["models"] if m["key"] == "kimi-k3"))
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


def _error(copy) -> str:
    with pytest.raises(CatalogError) as info:
        load_catalog(copy)
    return str(info.value)


def test_latent_norm_without_a_latent_width_is_refused(copy):
    _edit_k3(copy / "models.yaml", lambda m: m["moe"].pop("routed_expert_hidden_size"))
    msg = _error(copy)
    assert "models.yaml" in msg and "[kimi-k3]" in msg and "moe.latent_moe_use_norm" in msg


def test_latent_width_must_be_below_hidden(copy):
    _edit_k3(copy / "models.yaml", lambda m: m["moe"].update(routed_expert_hidden_size=7168))
    msg = _error(copy)
    assert "[kimi-k3]" in msg and "moe.routed_expert_hidden_size" in msg and "smaller" in msg


def test_kda_block_field_typo_is_refused(copy):
    _edit_k3(copy / "models.yaml", lambda m: m["linear_attention"]["kda"].update(heads=96))
    msg = _error(copy)
    assert "[kimi-k3]" in msg and "linear_attention.kda.heads" in msg and "unknown field" in msg


def test_kda_block_missing_field_is_refused(copy):
    _edit_k3(copy / "models.yaml", lambda m: m["linear_attention"]["kda"].pop("head_dim"))
    msg = _error(copy)
    assert "[kimi-k3]" in msg and "linear_attention.kda.head_dim" in msg and "missing" in msg


def test_output_gate_must_be_a_bool(copy):
    _edit_k3(copy / "models.yaml", lambda m: m["mla"].update(output_gate="yes"))
    msg = _error(copy)
    assert "[kimi-k3]" in msg and "mla.output_gate" in msg and "true or false" in msg


# --- one node: per-GPU weights and the sequence footprint ---------------------------------------------

def test_tp_replication_counts_only_the_mla_layers_and_the_latent_projections():
    from macros.formulas import tp_replicated_extra_params
    extra = tp_replicated_extra_params(K3, 8)
    spread = 1 - 1 / 8
    # q_a (7168 x 1536 + norm) and kv_a (7168 x 576 + norm) of the 24 MLA layers only, not all 93
    assert extra["mla_down_proj"] == pytest.approx((7168 * 1536 + 1536 + 7168 * 576 + 512) * 24 * spread)
    assert extra["latent_moe_proj"] == pytest.approx((2 * 7168 * 3584 + 3584) * 92 * spread)
    # the KDA decay gate's f_a (7168 x 128) stays whole on every rank in vLLM 0.33, in the 69 KDA layers
    assert extra["kda_decay_gate_a"] == pytest.approx(7168 * 128 * 69 * spread)
    # a model without a latent MoE or KDA layers replicates nothing extra there
    assert tp_replicated_extra_params(CAT.model("deepseek-v3"), 8)["latent_moe_proj"] == 0
    assert tp_replicated_extra_params(CAT.model("deepseek-v3"), 8)["kda_decay_gate_a"] == 0


def test_hybrid_sequence_on_one_gpu_keeps_the_latent_and_splits_the_states():
    from macros.formulas import hybrid_sequence_bytes_per_gpu
    seq = hybrid_sequence_bytes_per_gpu(K3, 131072, CAT.format("bf16"), tp=8)
    # MLA: the whole latent on every GPU, 131,072 tokens = 8,192 whole blocks of 16
    assert seq.cache_bytes == 24 * 576 * 2 * 131072
    # KDA: heads and conv channels split over 8 GPUs
    assert seq.state_bytes == 69 * 6_512_640 / 8
    # a context that is not a whole number of blocks pays for the last block in full
    assert hybrid_sequence_bytes_per_gpu(K3, 17, CAT.format("bf16"), tp=8).cache_bytes == 24 * 576 * 2 * 32


def test_hybrid_sequence_refuses_a_model_without_linear_layers():
    from macros.formulas import hybrid_sequence_bytes_per_gpu
    with pytest.raises(ValueError, match="no linear-attention layers"):
        hybrid_sequence_bytes_per_gpu(CAT.model("deepseek-v3"), 1024, CAT.format("bf16"), tp=8)


def test_node_fit_example_agrees_with_the_formulas():
    from macros import units as U
    from macros.formulas import (DEFAULT_GPU_UTILIZATION, hybrid_sequence_bytes_per_gpu, kv_budget_bytes,
                                 max_concurrent_sequences, tp_shard)
    from macros.render.nodefit import node_fit
    shard = tp_shard(K3, 8, CAT.format("bf16"), CAT.format("mxfp4"))
    budget = kv_budget_bytes(CAT.gpu("b300").memory_bytes, shard.weights_per_gpu, DEFAULT_GPU_UTILIZATION,
                             2 * U.GiB, 1 * U.GiB)
    seqs = max_concurrent_sequences(budget, hybrid_sequence_bytes_per_gpu(K3, 131072, CAT.format("bf16"), 8).total)
    html = node_fit("kimi-k3", "b300", n_gpus=8, fmt="bf16", expert_fmt="mxfp4", context="128K")
    assert seqs > 0 and f"{seqs:,} concurrent sequences of 131,072 tokens" in html
    # the same weights on eight B200s leave no room at all
    assert "does not fit" in node_fit("kimi-k3", "b200", n_gpus=8, fmt="bf16", expert_fmt="mxfp4")


def test_measured_vs_bound_reports_the_share_of_the_decode_bound():
    from macros.errors import MacroInputError
    from macros.render.nodefit import measured_vs_bound
    from macros.render.speed import _decode
    bound = _decode(K3, CAT.gpu("b300"), CAT.format("bf16"), CAT.format("mxfp4"), CAT.format("bf16"), 8, 1, 8192)[0]
    out = measured_vs_bound("kimi-k3", "b300", tpot_ms=8.51, fmt="bf16", expert_fmt="mxfp4", n_gpus=8, context="8K")
    share = (1000 / 8.51) / bound.tokens_per_s_per_sequence
    assert out.startswith("8.51 ms per token") and f"{share * 100:.1f}% of the bound" in out
    with pytest.raises(MacroInputError, match="tpot_ms"):
        measured_vs_bound("kimi-k3", "b300", tpot_ms=0, n_gpus=8)
