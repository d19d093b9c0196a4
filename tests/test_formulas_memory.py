"""Weight bytes, KV-cache bytes and the memory budget, against published figures and hand arithmetic,
plus property tests for monotonicity."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from macros.catalog import LinearAttention, SlidingWindow, load_catalog
from macros.formulas import (blocks_per_sequence, bytes_for_params, effective_bits_per_weight, kv_budget_bytes,
                             kv_bytes_per_sequence, kv_bytes_per_sequence_paged, kv_bytes_per_token,
                             kv_bytes_per_token_mha, kv_bytes_per_token_mla, kv_cache_bytes, kv_element_bytes,
                             max_concurrent_sequences, max_context_one_sequence, naive_kv_cache_bytes,
                             paged_tail_waste, param_breakdown, weight_bytes, weight_bytes_breakdown)

CAT = load_catalog()
BF16, FP8 = CAT.format("bf16"), CAT.format("fp8")
GB, GiB = 10**9, 2**30


# --------------------------------------------------------------------------------------------------
# KV per token: the required published figures
# --------------------------------------------------------------------------------------------------

def test_llama_31_70b_kv_per_token():
    # Required figure: 80 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes = 327,680 bytes per token.
    assert 80 * 8 * 128 * 2 * 2 == 327_680
    assert kv_bytes_per_token_mha(80, 8, 128, 2) == 327_680
    assert kv_bytes_per_token(CAT.model("llama-3.1-70b"), BF16) == 327_680


def test_llama_2_70b_naive_vs_gqa():
    # Llama-2-70B, 2,048 tokens x batch 32 in FP16: the naive formula gives ~171.8 GB, the GQA formula
    # (8 KV heads instead of 64) ~21.5 GB (figures from the issue; 2 x 80 x 8192 x 32 x 2048 x 2).
    m = CAT.model("llama-2-70b")
    naive = naive_kv_cache_bytes(80, 8192, 32, 2048, 2)
    gqa = kv_cache_bytes(m, 32, 2048, BF16)
    assert naive / GB == pytest.approx(171.8, abs=0.05)
    assert gqa / GB == pytest.approx(21.5, abs=0.05)
    assert naive / gqa == pytest.approx(64 / 8)


def test_llama_2_7b_kv_at_4k():
    # NVIDIA, "Mastering LLM Techniques: Inference Optimization" (developer.nvidia.com/blog, 2023):
    # Llama 2 7B, batch 1, 4,096 tokens, 16-bit: 1 x 4096 x 2 x 32 x 4096 x 2 bytes, about 2 GB.
    m = CAT.model("llama-2-7b")
    assert kv_cache_bytes(m, 1, 4096, BF16) == 1 * 4096 * 2 * 32 * 4096 * 2 == 2 * GiB


def test_deepseek_v3_mla_kv_per_token():
    # Required figure: DeepSeek-V3 caches 61 x (512 + 64) x 2 bytes per token (DeepSeek-V2 paper,
    # arXiv:2405.04434, Table 1: MLA keeps (d_c + d_h^R) x l elements per token).
    assert kv_bytes_per_token_mla(61, 512, 64, 2) == 61 * 576 * 2 == 70_272
    assert kv_bytes_per_token(CAT.model("deepseek-v3"), BF16) == 70_272
    assert kv_bytes_per_token(CAT.model("deepseek-v3"), FP8) == 61 * 576


def test_mqa_single_head():
    # MQA: one KV head shared by all queries (Shazeer 2019), so heads/kv = num_heads times smaller than MHA.
    assert kv_bytes_per_token_mha(32, 32, 128, 2) / kv_bytes_per_token_mha(32, 1, 128, 2) == 32


# --------------------------------------------------------------------------------------------------
# sliding windows and constant-state layers, by hand
# --------------------------------------------------------------------------------------------------

def test_gemma_2_sliding_window_by_hand():
    # Gemma-2-9B: 21 global + 21 local (4096 window) layers, 8 KV heads x 256, BF16 -> 8,192 bytes per
    # layer per token. At 8,192 tokens: 8192 x (21 x 8192 + 21 x 4096).
    m = CAT.model("gemma-2-9b")
    per_layer = 2 * 8 * 256 * 2
    assert kv_bytes_per_token(m, BF16) == 42 * per_layer
    assert kv_bytes_per_sequence(m, 8192, BF16) == per_layer * (21 * 8192 + 21 * 4096)
    assert kv_bytes_per_sequence(m, 2048, BF16) == per_layer * 42 * 2048  # inside the window: no cap


def test_mistral_v01_cache_stops_growing_at_the_window():
    # Mistral 7B paper (arXiv:2310.06825): with a 4,096-token window and a rolling buffer, the cache is
    # bounded; at 32K tokens it is 8x smaller than a full cache.
    m = CAT.model("mistral-7b-v0.1")
    assert kv_bytes_per_sequence(m, 32768, BF16) == kv_bytes_per_sequence(m, 4096, BF16)
    full = dataclasses.replace(m, sliding_window=None)
    assert kv_bytes_per_sequence(full, 32768, BF16) / kv_bytes_per_sequence(m, 32768, BF16) == 8


def test_linear_attention_state_is_constant():
    # Qwen3-Next: 12 full-attention layers (2 KV heads x 256) + 36 Gated DeltaNet layers with a fixed
    # per-sequence state (catalog state_bytes_per_layer).
    m = CAT.model("qwen3-next-80b-a3b")
    per_token = 12 * 2 * 2 * 256 * 2
    state = 36 * m.linear_attention.state_bytes_per_layer
    assert kv_bytes_per_token(m, BF16) == per_token
    assert kv_bytes_per_sequence(m, 1000, BF16) == per_token * 1000 + state
    assert kv_bytes_per_sequence(m, 0, BF16) == state


def test_kv_dtype_must_be_a_kv_format():
    with pytest.raises(ValueError, match="kv_cache: false"):
        kv_bytes_per_token(CAT.model("llama-3.1-70b"), CAT.format("int4-g128"))
    assert kv_element_bytes(FP8) == 1 and kv_element_bytes(16) == 2


# --------------------------------------------------------------------------------------------------
# weights
# --------------------------------------------------------------------------------------------------

def test_effective_bits_examples():
    # OCP MX v1.0: MXFP4 = 32 FP4 elements + one 8-bit shared scale -> 4.25 bits.
    assert effective_bits_per_weight(4, 32, 8) == 4.25
    # GPTQ/AWQ-style INT4 with FP16 scale per 128 weights (+4-bit zero point): 4.125 (4.15625).
    assert effective_bits_per_weight(4, 128, 16) == 4.125
    assert effective_bits_per_weight(4, 128, 16, zero_bits=4) == 4.15625
    assert effective_bits_per_weight(8) == 8


@pytest.mark.parametrize("key, gib", [
    # gpt-oss model card (arXiv:2508.10925) Table 1: checkpoint sizes 60.8 GiB (120b) and 12.8 GiB (20b),
    # MXFP4 MoE weights with everything else in BF16.
    ("gpt-oss-120b", 60.8),
    ("gpt-oss-20b", 12.8),
])
def test_gpt_oss_mixed_format_checkpoint_size(key, gib):
    m = CAT.model(key)
    nbytes = weight_bytes(m, BF16, expert_fmt=CAT.format("mxfp4"))
    assert nbytes / GiB == pytest.approx(gib, rel=0.01)
    # all-BF16 would be over 3x larger: the mixed format is what lets 120b fit one 80 GB GPU
    assert weight_bytes(m, BF16) / nbytes > 3


def test_llama_31_70b_bf16_weights_by_hand():
    # 70,553,706,496 parameters x 2 bytes = 141,107,412,992 bytes (about 141 GB, the usual "140 GB").
    assert weight_bytes(CAT.model("llama-3.1-70b"), BF16) == 70_553_706_496 * 2


def test_int4_with_16bit_embeddings_by_hand():
    # An AWQ/GPTQ checkpoint keeps embedding and lm_head in 16-bit: Llama-3.1-8B has 2 x 128256 x 4096
    # = 1,050,673,152 embedding parameters at 2 bytes, the other 6,979,588,096 at 4.125/8 bytes.
    m = CAT.model("llama-3.1-8b")
    wb = weight_bytes_breakdown(m, CAT.format("int4-g128"), embed_fmt=BF16)
    assert wb.embeddings == 1_050_673_152 * 2
    assert wb.rest == pytest.approx((8_030_261_248 - 1_050_673_152) * 4.125 / 8)
    assert weight_bytes(m, BF16) / 3 < wb.total < weight_bytes(m, BF16) / 2.5


def test_moe_active_bytes():
    m = CAT.model("deepseek-v3")
    b = param_breakdown(m)
    wb = weight_bytes_breakdown(m, FP8, breakdown=b)
    # 1 byte per parameter in FP8, 2 for the embedding and lm_head, which FP8 checkpoints keep in BF16
    # (DeepSeek-V3's own FP8 release and vLLM's Fp8Config quantize only the linear and MoE layers).
    assert wb.active == pytest.approx(b.active + b.embedding + b.lm_head)
    assert wb.total == pytest.approx(b.total + b.embedding + b.lm_head)


def test_bytes_for_params():
    assert bytes_for_params(1e9, 16) == 2e9
    with pytest.raises(ValueError):
        bytes_for_params(-1, 16)


# --------------------------------------------------------------------------------------------------
# paged blocks and the memory budget, by hand
# --------------------------------------------------------------------------------------------------

def test_blocks_per_sequence():
    # vLLM default block size 16: 8,192 tokens = 512 blocks; 8,193 tokens need a 513th block.
    assert blocks_per_sequence(8192) == 512
    assert blocks_per_sequence(8193) == 513
    assert blocks_per_sequence(1, 16) == 1 and blocks_per_sequence(0) == 0


def test_budget_and_max_sequences_by_hand():
    # Llama-3.1-70B in FP8 weights on 2 x H100 80 GiB, TP 2, BF16 KV, 0.9 utilization,
    # 2 GiB activations + 1 GiB reserve per GPU:
    #   usable 0.9 x 80 GiB = 72 GiB; weights per GPU 70,553,706,496 / 2 bytes;
    #   budget = 72 GiB - 35,276,853,248 - 3 GiB = 38,811,332,608 bytes.
    #   KV per token per GPU = 327,680 / 2 = 163,840; per 8K sequence 8192 x 163,840 = 1,342,177,280.
    #   max sequences = floor(38,811,332,608 / 1,342,177,280) = 28 (28.9...).
    budget = kv_budget_bytes(80 * GiB, 70_553_706_496 / 2, 0.9, 2 * GiB, 1 * GiB)
    assert budget == pytest.approx(38_811_332_608)
    m = CAT.model("llama-3.1-70b")
    per_seq = kv_bytes_per_sequence_paged(m, 8192, BF16, 16, kv_fraction=0.5)
    assert per_seq == 1_342_177_280
    assert max_concurrent_sequences(budget, per_seq) == 28
    # a 8,200-token context rounds up to 513 blocks per sequence
    assert kv_bytes_per_sequence_paged(m, 8200, BF16, 16, 0.5) == 513 * 16 * 163_840


def test_max_context_is_whole_blocks_or_the_model_limit():
    m = CAT.model("llama-3.1-70b")
    budget = 10 * 327_680 * 16 + 5  # room for exactly 10 blocks of 16 tokens
    assert max_context_one_sequence(m, budget, BF16) == (160, "memory")
    assert max_context_one_sequence(m, 1e15, BF16) == (131_072, "max_position_embeddings")
    assert max_context_one_sequence(m, -1, BF16) == (0, "memory")
    assert max_concurrent_sequences(-5, 100) == 0


def test_budget_rejects_nonsense():
    with pytest.raises(ValueError):
        kv_budget_bytes(80 * GiB, 1e9, utilization=1.5)
    with pytest.raises(ValueError):
        kv_budget_bytes(-1, 1e9)
    with pytest.raises(ValueError):
        kv_cache_bytes(CAT.model("llama-3.1-70b"), -1, 10, BF16)
    with pytest.raises(ValueError):
        kv_bytes_per_sequence(CAT.model("llama-3.1-70b"), -10, BF16)


# --------------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------------

MODELS = list(CAT.models.values())
KV_FORMATS = [f for f in CAT.formats.values() if f.kv_cache]
models = st.sampled_from(MODELS)
contexts = st.integers(min_value=0, max_value=1_000_000)
batches = st.integers(min_value=1, max_value=4096)


@given(models, contexts, contexts, batches)
def test_kv_grows_with_context(m, a, b, batch):
    lo, hi = sorted((a, b))
    assert kv_cache_bytes(m, batch, lo, BF16) <= kv_cache_bytes(m, batch, hi, BF16)


@given(models, contexts, batches, batches)
def test_kv_grows_with_batch(m, ctx, a, b):
    lo, hi = sorted((a, b))
    assert kv_cache_bytes(m, lo, ctx, BF16) <= kv_cache_bytes(m, hi, ctx, BF16)


@given(models, st.sampled_from(list(CAT.formats.values())), st.sampled_from(list(CAT.formats.values())))
def test_more_bits_more_weight_bytes(m, f1, f2):
    # Monotone among formats with the same embedding rule; a weight-only INT4 format keeps the
    # embedding and lm_head in 16-bit, so it can outweigh a 4.9-bit format that quantizes them.
    if f1.embedding_bits_per_weight != f2.embedding_bits_per_weight:
        return
    if f1.bits_per_weight <= f2.bits_per_weight:
        assert weight_bytes(m, f1) <= weight_bytes(m, f2)


@given(models, contexts, st.sampled_from(KV_FORMATS), st.sampled_from(KV_FORMATS))
def test_more_bits_more_kv_bytes(m, ctx, f1, f2):
    if f1.bits_per_weight <= f2.bits_per_weight:
        assert kv_bytes_per_sequence(m, ctx, f1) <= kv_bytes_per_sequence(m, ctx, f2)


@given(models, contexts, st.integers(min_value=1, max_value=200_000))
def test_sliding_window_never_exceeds_full_kv(m, ctx, window):
    layers = m.num_hidden_layers
    full = dataclasses.replace(m, sliding_window=None, linear_attention=None)
    n_sliding = max(1, layers // 2)
    windowed = dataclasses.replace(full, sliding_window=SlidingWindow(window, n_sliding, "test"))
    assert kv_bytes_per_sequence(windowed, ctx, BF16) <= kv_bytes_per_sequence(full, ctx, BF16)
    if ctx <= window:
        assert kv_bytes_per_sequence(windowed, ctx, BF16) == kv_bytes_per_sequence(full, ctx, BF16)


@given(models, contexts, st.sampled_from([1, 8, 16, 32]))
def test_paged_is_at_least_exact_and_less_than_one_block_more(m, ctx, block):
    exact = kv_bytes_per_sequence(m, ctx, BF16)
    paged = kv_bytes_per_sequence_paged(m, ctx, BF16, block)
    per_layer = kv_bytes_per_token(m, BF16)  # all caching layers x one token
    assert exact <= paged < exact + block * per_layer + 1e-6


@settings(max_examples=50)
@given(models, st.floats(min_value=1e6, max_value=1e12), st.sampled_from([16, 32]))
def test_max_context_fits_and_the_next_block_does_not(m, budget, block):
    tokens, limit = max_context_one_sequence(m, budget, BF16, block)
    if kv_bytes_per_sequence_paged(m, 0, BF16, block) > budget:  # a constant state alone overflows
        assert (tokens, limit) == (0, "memory")
        return
    assert kv_bytes_per_sequence_paged(m, tokens, BF16, block) <= budget
    if limit == "memory":
        assert kv_bytes_per_sequence_paged(m, tokens + block, BF16, block) > budget


def test_linear_state_block_is_used():
    m = dataclasses.replace(CAT.model("llama-3.1-8b"), linear_attention=LinearAttention(16, 1000.0))
    assert kv_bytes_per_sequence(m, 0, BF16) == 16_000
    assert math.isclose(kv_bytes_per_token(m, BF16), 16 * 2 * 8 * 128 * 2)


def test_kv_tokens_in_budget():
    from macros.formulas import kv_tokens_in_budget
    # 38,811,332,608 bytes / 163,840 bytes per token per GPU = 236,885.5 -> 236,885 tokens
    assert kv_tokens_in_budget(38_811_332_608, 163_840) == 236_885
    assert kv_tokens_in_budget(-1, 163_840) == 0


# --------------------------------------------------------------------------------------------------
# paged KV: internal fragmentation bound
# --------------------------------------------------------------------------------------------------

def test_paged_tail_waste_bound_by_hand():
    # Kwon et al. 2023 (PagedAttention), sec. 4.2: waste is confined to the last block of a sequence.
    # Llama-2-7B (MHA, 32 layers x 32 heads x 128 x 2 x 2 bytes = 524,288 bytes/token), block 16:
    # worst 15 tokens = 7,864,320 bytes per sequence; mean 7.5 tokens = 3,932,160 bytes.
    m = CAT.model("llama-2-7b")
    w = paged_tail_waste(m, 16, BF16, 1)
    assert w.bytes_per_token == 524_288
    assert w.worst_tokens_per_sequence == 15 and w.mean_tokens_per_sequence == 7.5
    assert w.worst_bytes == 7_864_320 and w.mean_bytes == 3_932_160
    # 100 sequences, block 128, FP8 KV (262,144 bytes/token): 100 x 127 x 262,144 = 3,329,228,800 bytes.
    assert paged_tail_waste(m, 128, FP8, 100).worst_bytes == 3_329_228_800
    # block size 1 wastes nothing
    assert paged_tail_waste(m, 1, BF16, 10).worst_bytes == 0
    with pytest.raises(ValueError):
        paged_tail_waste(m, 0, BF16, 1)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["llama-3.1-8b", "mistral-7b-v0.3", "gemma-2-9b", "deepseek-v3"]),
       st.integers(min_value=1, max_value=200_000), st.sampled_from([1, 8, 16, 32, 128, 256]))
def test_paged_tail_waste_matches_paged_minus_exact_for_full_layers(key, ctx, block):
    # For a model without windows or linear layers, the paged sequence minus the exact one is the
    # tail, and it never exceeds the worst-case bound.
    m = CAT.model(key)
    tail = kv_bytes_per_sequence_paged(m, ctx, BF16, block) - kv_bytes_per_sequence(m, ctx, BF16)
    bound = paged_tail_waste(m, block, BF16, 1).worst_bytes
    if m.sliding_window is None and m.linear_attention is None:
        assert tail == pytest.approx(((-ctx) % block) * kv_bytes_per_token(m, BF16))
    assert 0 <= tail <= bound + 1e-6


# --------------------------------------------------------------------------------------------------
# no silent zeros: a capacity of none says why
# --------------------------------------------------------------------------------------------------

def test_sequence_capacity_names_the_weights_when_they_leave_no_budget():
    from macros.formulas import sequence_capacity
    gib = 2**30
    # 80 GiB x 0.9 = 72 GiB the engine may use; 70 GiB of weights + 3 GiB of allowances leave -1 GiB.
    cap = sequence_capacity(80 * gib, 70 * gib, 1 * gib, 0.9, 2 * gib, 1 * gib)
    assert cap.sequences == 0 and cap.limit == "weights" and not cap.loads
    assert cap.usable_per_gpu == 72 * gib and cap.kv_budget == -1 * gib and cap.overhead_per_gpu == 3 * gib


def test_sequence_capacity_names_one_sequence_when_the_budget_is_too_small_for_it():
    from macros.formulas import sequence_capacity
    gib = 2**30
    # 72 - 60 - 3 = 9 GiB of KV budget; one sequence needs 10 GiB: loads, but none fits.
    cap = sequence_capacity(80 * gib, 60 * gib, 10 * gib, 0.9, 2 * gib, 1 * gib)
    assert cap.sequences == 0 and cap.limit == "one_sequence" and cap.loads and cap.kv_budget == 9 * gib
    cap = sequence_capacity(80 * gib, 60 * gib, 3 * gib, 0.9, 2 * gib, 1 * gib)
    assert cap.sequences == 3 and cap.limit == "fits"
