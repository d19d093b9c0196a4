"""The named mistakes (macros/formulas/traps.py), tested like the right formulas: by hand arithmetic on
catalog models, against the right formula where the mistake cannot matter, and by the factor each
mistake is known to be off by."""

from __future__ import annotations

import pytest

from macros import formulas as F
from macros.catalog import load_catalog
from macros.formulas import traps as T

CAT = load_catalog()
BF16, FP8, INT4, MXFP4, NVFP4, NF4DQ = (CAT.format(k) for k in ("bf16", "fp8", "int4-g128", "mxfp4", "nvfp4", "nf4-dq"))
GB, GiB = 10**9, 2**30


def test_every_mistake_is_named_and_explained():
    assert len(T.TRAPS) >= 30
    for key, (name, why) in T.TRAPS.items():
        assert key.isidentifier() and key == key.lower(), key
        assert name and why.endswith("."), key
        assert "<" not in name + why, "the names are shown as text, never markup"


# ---- KV cache -----------------------------------------------------------------------------------

def test_query_heads_instead_of_kv_heads_on_llama_31_70b():
    m = CAT.model("llama-3.1-70b")  # 64 query heads, 8 KV heads, head_dim 128, 80 layers
    assert T.kv_per_layer_query_heads(m, BF16) == 2 * 64 * 128 * 2 == 32_768
    assert T.kv_per_token_with(m, T.kv_per_layer_query_heads(m, BF16)) == 80 * 32_768
    assert T.kv_per_token_with(m, T.kv_per_layer_query_heads(m, BF16)) == 8 * F.kv_bytes_per_token(m, BF16)


def test_query_heads_is_no_mistake_for_mha():
    m = CAT.model("llama-2-7b")  # 32 heads, 32 KV heads
    assert T.kv_per_layer_query_heads(m, BF16) == F.kv_bytes_per_token_per_layer(m, BF16)


def test_hidden_size_formula_is_the_naive_one():
    m = CAT.model("llama-2-70b")
    naive = F.naive_kv_cache_bytes(80, 8192, 32, 2048, 2)
    assert 32 * T.kv_per_sequence_with(m, 2048, T.kv_per_layer_hidden_size(m, BF16)) == naive
    # Gemma-2-9B: 16 heads x 256 = 4096 is wider than hidden_size 3584, so the two mistakes differ there.
    g = CAT.model("gemma-2-9b")
    assert T.kv_per_layer_hidden_size(g, BF16) == 2 * 3584 * 2
    assert T.kv_per_layer_query_heads(g, BF16) == 2 * 16 * 256 * 2


def test_k_or_v_once_halves_the_cache():
    m = CAT.model("qwen2.5-7b")
    assert T.kv_per_layer_k_or_v_once(m, FP8) == 4 * 128 * 1
    assert T.kv_per_layer_k_or_v_once(m, FP8) * 2 == F.kv_bytes_per_token_per_layer(m, FP8)


def test_mla_as_mha_on_deepseek_v3():
    m = CAT.model("deepseek-v3")
    # the config's 128 KV heads x head_dim 192, K and V, in BF16 -- against (512 + 64) x 2 = 1,152
    assert T.kv_per_layer_mla_as_mha(m, BF16) == 2 * 128 * 192 * 2 == 98_304
    assert F.kv_bytes_per_token_per_layer(m, BF16) == 1_152
    with pytest.raises(ValueError, match="MLA"):
        T.kv_per_layer_query_heads(m, BF16)
    with pytest.raises(ValueError, match="MLA models only"):
        T.kv_per_layer_mla_as_mha(CAT.model("llama-3.1-8b"), BF16)


def test_bits_as_bytes_is_eight_times():
    for key in ("llama-3.1-8b", "deepseek-v3", "gpt-oss-120b"):
        m = CAT.model(key)
        assert T.kv_per_layer_bits_as_bytes(m, FP8) == 8 * F.kv_bytes_per_token_per_layer(m, FP8)


def test_layer_counts_right_and_wrong_on_hybrid_models():
    g = CAT.model("gemma-2-9b")      # 21 full + 21 sliding layers, window 4096
    per = F.kv_bytes_per_token_per_layer(g, BF16)
    assert per == 2 * 8 * 256 * 2
    # The right per-layer figure gives the right formulas back.
    for ctx in (1, 4096, 8192):
        assert T.kv_per_sequence_with(g, ctx, per) == F.kv_bytes_per_sequence(g, ctx, BF16)
    assert T.kv_per_token_with(g, per) == F.kv_bytes_per_token(g, BF16)
    # The window ignored: every layer keeps all 8,192 tokens.
    assert T.kv_per_sequence_with(g, 8192, per, window=False) == per * 42 * 8192
    q = CAT.model("qwen3-next-80b-a3b")  # 12 full-attention layers, 36 Gated DeltaNet layers
    per_q = F.kv_bytes_per_token_per_layer(q, BF16)
    assert T.kv_per_sequence_with(q, 1000, per_q) == per_q * 12 * 1000 + 36 * 1_097_728
    assert T.kv_per_sequence_with(q, 1000, per_q, linear_as_attention=True) == per_q * 48 * 1000
    assert T.kv_per_token_with(q, per_q, linear_as_attention=True) == 4 * F.kv_bytes_per_token(q, BF16)


# ---- weights ------------------------------------------------------------------------------------

def test_weight_mistakes_on_llama_31_8b_int4():
    m = CAT.model("llama-3.1-8b")
    b = F.param_breakdown(m)
    right = F.weight_bytes(m, INT4)
    # embedding + lm_head (2 x 128,256 x 4,096) stay 16-bit; the rest is 4.125 bits
    assert right == b.embeddings * 16 / 8 + (b.total - b.embeddings) * 4.125 / 8
    assert T.weight_bytes_embeddings_quantized(m, INT4) == b.total * 4.125 / 8
    assert T.weight_bytes_scale_forgotten(m, INT4) == b.embeddings * 16 / 8 + (b.total - b.embeddings) * 4 / 8
    assert T.weight_bytes_bits_as_bytes(m, INT4) == 8 * right


def test_scale_forgotten_uses_element_bits_of_every_block_format():
    assert T.element_bits(INT4) == 4 and T.element_bits(MXFP4) == 4 and T.element_bits(NVFP4) == 4
    assert T.element_bits(NF4DQ) == 4 and T.element_bits(BF16) == 16
    m = CAT.model("gpt-oss-120b")
    b = F.param_breakdown(m)
    # BF16 everywhere but MXFP4 experts; scale forgotten: experts at 4 bits
    assert T.weight_bytes_scale_forgotten(m, BF16, MXFP4) == b.routed_experts * 4 / 8 + (b.total - b.routed_experts) * 2
    assert F.weight_bytes(m, BF16, MXFP4) == b.routed_experts * 4.25 / 8 + (b.total - b.routed_experts) * 2


def test_active_for_total_on_a_moe_and_no_mistake_on_a_dense_model():
    m = CAT.model("deepseek-v3")
    b = F.param_breakdown(m)
    assert T.weight_bytes_active_for_total(m, FP8) == pytest.approx(
        F.weight_bytes(m, FP8) - b.inactive_experts_per_token * b.params_per_expert * b.moe_layers)
    d = CAT.model("llama-3.1-70b")
    assert T.weight_bytes_active_for_total(d, FP8) == F.weight_bytes(d, FP8)


def test_all_experts_read_equals_the_engine_at_a_batch_that_touches_every_expert():
    m = CAT.model("mixtral-8x7b")   # 8 experts, top-2: a batch of 256 touches all of them
    assert T.weight_bytes_read_all_experts(m, BF16, 256) == pytest.approx(F.weight_bytes_read_per_step(m, BF16, 256),
                                                                          rel=1e-12)
    assert T.weight_bytes_read_all_experts(m, BF16, 1) > 3 * F.weight_bytes_read_per_step(m, BF16, 1)
    d = CAT.model("llama-3.1-8b")   # dense: the same as the engine's figure at any batch
    assert T.weight_bytes_read_all_experts(d, BF16, 4) == F.weight_bytes_read_per_step(d, BF16, 4)


# ---- units and datasheet figures -------------------------------------------------------------------

def test_gb_and_gib_slips():
    assert T.gb_read_as_gib(140 * GB) == 140 * GiB
    assert T.gib_read_as_gb(80 * GiB) == 80 * GB
    assert T.gib_read_as_gb(T.gb_read_as_gib(12345.0)) == pytest.approx(12345.0)


def test_sparse_and_bidirectional_figures_are_twice_the_real_rate():
    h100 = CAT.gpu("h100-sxm")
    assert T.sparse_flops_as_dense(h100.bf16_dense_flops) == 1979e12      # the datasheet's with-sparsity figure
    assert T.bidirectional_as_per_direction(h100.interconnect_bytes_per_s_per_direction) == 900e9
    with pytest.raises(ValueError):
        T.sparse_flops_as_dense(0)


# ---- tensor-parallel all-reduce -----------------------------------------------------------------

def test_allreduce_mistakes_by_hand():
    m = CAT.model("llama-3.1-70b")   # 80 layers, hidden 8192
    lat, link, n, tokens = 8e-6, 450e9, 8, 32
    buf = tokens * 8192 * 2
    right = F.tp_decode_allreduce_time(m, tokens, 2, n, lat, link)
    assert right == pytest.approx(160 * (lat + 2 * 7 / 8 * buf / link))
    assert T.allreduce_time_one_per_layer(m, tokens, 2, n, lat, link) == pytest.approx(right / 2)
    assert T.allreduce_time_no_latency(m, tokens, 2, n, lat, link) == pytest.approx(160 * 2 * 7 / 8 * buf / link)
    assert T.allreduce_time_no_ring_factor(m, tokens, 2, n, lat, link) == pytest.approx(160 * (lat + buf / link))
    # bidirectional taken as one direction: only the bandwidth term halves
    bidir = F.tp_decode_allreduce_time(m, tokens, 2, n, lat, T.bidirectional_as_per_direction(link))
    assert bidir == pytest.approx(160 * (lat + 2 * 7 / 8 * buf / (2 * link)))


# ---- valid TP degrees -------------------------------------------------------------------------------

def test_tp_mistakes_on_qwen25_7b_and_llama_31_70b():
    q = CAT.model("qwen2.5-7b")      # 28 heads, 4 KV heads, intermediate 18,944
    assert F.valid_tp_degrees(q) == [1, 2, 4]
    assert T.valid_tp_heads_only(q) == [1, 2, 4, 7, 14]
    assert T.valid_tp_kv_capped(q) == [1, 2, 4]
    assert T.valid_tp_powers_of_two() == [1, 2, 4, 8, 16]
    ll = CAT.model("llama-3.1-70b")  # 64 heads, 8 KV heads: TP 16 replicates each KV head twice
    assert F.valid_tp_degrees(ll) == [1, 2, 4, 8, 16]
    assert T.valid_tp_kv_capped(ll) == [1, 2, 4, 8]
    k3 = CAT.model("kimi-k3")        # 96 heads: 3, 6 and 12 are valid, not every power of two is the list
    assert T.valid_tp_powers_of_two() != F.valid_tp_degrees(k3)


# ---- block formats ----------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["int4-g128", "int4-g128-zp", "mxfp4", "nvfp4", "nf4", "nf4-dq", "gguf-q8_0",
                                 "gguf-q6_k", "gguf-q5_k", "gguf-q4_k", "gguf-q3_k", "gguf-q2_k"])
def test_effective_bits_right_and_wrong(key):
    f = CAT.format(key)
    eb = T.element_bits(f)
    assert eb == int(eb), "element bits of a block format are whole"
    assert F.effective_bits_per_weight(eb, f.group_size, f.scale_bits) == f.bits_per_weight
    assert T.effective_bits_scale_per_weight(eb, f.scale_bits) == eb + f.scale_bits
    assert T.effective_bits_scale_per_weight(eb, f.scale_bits) > f.bits_per_weight > eb
