"""Decode bandwidth bound, prefill compute time, arithmetic intensity and the ridge point."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from macros.catalog import load_catalog
from macros.formulas import (active_params, attention_pairs, decode_arithmetic_intensity, decode_bound,
                             expected_experts_touched, gemm_arithmetic_intensity, gemm_m_to_reach_ridge,
                             prefill_attention_flops, prefill_flops, prefill_time, ridge_point, roofline_time)

CAT = load_catalog()


def test_decode_bound_by_hand():
    # Llama-3.1-8B in BF16 (8,030,261,248 x 2 = 16,060,522,496 bytes) on one H100 SXM (3.35e12 B/s),
    # batch 1, KV ignored: 16,060,522,496 / 3.35e12 = 4.794 ms per step -> 208.6 tokens/s.
    b = decode_bound(16_060_522_496, 0, 1, 3.35e12)
    assert b.step_time_s == pytest.approx(16_060_522_496 / 3.35e12)
    assert b.tokens_per_s_per_sequence == pytest.approx(208.58, abs=0.01)
    # batch 8 with 8,192-token contexts at 131,072 bytes/token: KV adds 8 x 8192 x 131072 bytes
    b8 = decode_bound(16_060_522_496, 8192 * 131_072, 8, 3.35e12)
    total = 16_060_522_496 + 8 * 8192 * 131_072
    assert b8.step_time_s == pytest.approx(total / 3.35e12)
    assert b8.tokens_per_s_aggregate == pytest.approx(8 * 3.35e12 / total)


def test_experts_touched():
    # batch 1 touches exactly top-k; a huge batch touches (almost) all experts.
    assert expected_experts_touched(256, 8, 1) == pytest.approx(8)
    assert expected_experts_touched(256, 8, 10_000) == pytest.approx(256)
    # by hand: 8 experts, top-2, batch 2 -> 8 x (1 - (6/8)^2) = 3.5
    assert expected_experts_touched(8, 2, 2) == pytest.approx(3.5)
    with pytest.raises(ValueError):
        expected_experts_touched(8, 9, 1)


def test_prefill_by_hand():
    # 2 x 70.55e9 x 8192 FLOPs at 989.5e12 x 0.5: 1.1683 s
    flops = prefill_flops(70_553_706_496, 8192)
    assert flops == 2 * 70_553_706_496 * 8192
    assert prefill_time(flops, 989.5e12, 0.5) == pytest.approx(flops / (989.5e12 * 0.5))
    with pytest.raises(ValueError):
        prefill_time(flops, 989.5e12, 1.5)


def test_attention_pairs():
    assert attention_pairs(4) == 10               # 1 + 2 + 3 + 4
    assert attention_pairs(6, window=2) == 3 + 4 * 2  # 1 + 2, then 2 each
    assert attention_pairs(0) == 0


def test_prefill_attention_flops_by_hand():
    # Llama-3.1-70B, 1,000 tokens: 80 layers x 2 x 64 heads x (128 + 128) x 500,500 pairs.
    m = CAT.model("llama-3.1-70b")
    assert prefill_attention_flops(m, 1000) == 80 * 2 * 64 * 256 * 500_500
    # windowed layers score fewer pairs
    g = CAT.model("gemma-2-9b")
    full = dataclasses.replace(g, sliding_window=None)
    assert prefill_attention_flops(g, 8192) < prefill_attention_flops(full, 8192)


def test_ridge_point_h100():
    # H100 SXM: 989.5 TFLOPS dense BF16 / 3.35 TB/s = about 295 FLOP/byte (hand arithmetic from the
    # datasheet figures in the catalog).
    g = CAT.gpu("h100-sxm")
    assert ridge_point(g.bf16_dense_flops, g.memory_bandwidth_bytes_per_s) == pytest.approx(295.4, abs=0.1)
    # NVIDIA "GPU Performance Background User's Guide": V100 125 TFLOPS / 900 GB/s = 138.9 FLOPS:B.
    assert ridge_point(125e12, 900e9) == pytest.approx(138.9, abs=0.05)


def test_gemm_intensity_by_hand():
    # 1 x 4096 @ 4096 x 4096 in BF16: 2 x 4096^2 FLOPs over 2 x (4096 + 4096^2 + 4096) bytes ~ 0.9995
    ai = gemm_arithmetic_intensity(1, 4096, 4096, 2)
    assert ai == pytest.approx(2 * 4096 * 4096 / (2 * (4096 + 4096 * 4096 + 4096)))
    assert decode_arithmetic_intensity(1, 2) == 1
    assert decode_arithmetic_intensity(64, 1) == 128
    # with KV reads the intensity drops
    assert decode_arithmetic_intensity(8, 2, kv_bytes_per_sequence=1e9, params=8e9) < decode_arithmetic_intensity(8, 2)
    with pytest.raises(ValueError):
        decode_arithmetic_intensity(8, 2, kv_bytes_per_sequence=1e9)


@given(st.floats(min_value=0, max_value=1e12), st.floats(min_value=0, max_value=1e11),
       st.floats(min_value=0, max_value=1e11), st.integers(min_value=1, max_value=1024))
def test_decode_bound_falls_as_kv_grows(weights, kv_a, kv_b, batch):
    lo, hi = sorted((kv_a, kv_b))
    if weights + batch * lo < 1:
        with pytest.raises(ValueError):
            decode_bound(weights, lo, batch, 3.35e12)
        return
    a = decode_bound(weights, lo, batch, 3.35e12)
    b = decode_bound(weights, hi, batch, 3.35e12)
    assert b.tokens_per_s_per_sequence <= a.tokens_per_s_per_sequence


@given(st.floats(min_value=1e6, max_value=1e12), st.floats(min_value=1, max_value=1e10),
       st.integers(min_value=1, max_value=512))
def test_decode_per_sequence_falls_with_batch_when_kv_is_nonzero(weights, kv, batch):
    a = decode_bound(weights, kv, batch, 3.35e12)
    b = decode_bound(weights, kv, batch + 1, 3.35e12)
    assert b.tokens_per_s_per_sequence <= a.tokens_per_s_per_sequence
    assert b.tokens_per_s_aggregate >= a.tokens_per_s_aggregate - 1e-9


@given(st.integers(min_value=1, max_value=512), st.integers(min_value=1, max_value=16),
       st.integers(min_value=1, max_value=4096))
def test_experts_touched_grows_with_batch_and_is_bounded(e, k, b):
    if k > e:
        return
    t = expected_experts_touched(e, k, b)
    assert k - 1e-9 <= t <= e + 1e-9
    assert expected_experts_touched(e, k, b + 1) >= t - 1e-9


def test_active_params_feed_prefill():
    m = CAT.model("deepseek-v3")
    assert prefill_flops(active_params(m), 1) < prefill_flops(3.8e10, 1)


def test_weight_bytes_read_per_step():
    from macros.formulas import weight_bytes, weight_bytes_breakdown, weight_bytes_read_per_step
    bf16 = CAT.format("bf16")
    dense = CAT.model("llama-3.1-8b")
    # Llama 3.1 8B holds 8,030,261,248 parameters (the checkpoint's safetensors count); its untied
    # input table is 128,256 x 4,096 = 525,336,576 of them, of which a step reads one row per sequence.
    # By hand, in BF16: (8,030,261,248 - 525,336,576) x 2 + batch x 4,096 x 2 bytes.
    assert weight_bytes(dense, bf16) == 8_030_261_248 * 2
    assert weight_bytes_read_per_step(dense, bf16, 1) == 15_009_849_344 + 8_192
    assert weight_bytes_read_per_step(dense, bf16, 64) == 15_009_849_344 + 64 * 8_192
    # A tied table (Gemma 2) is read in full as the output projection: the step reads every weight.
    tied = CAT.model("gemma-2-9b")
    assert tied.tie_word_embeddings
    assert weight_bytes_read_per_step(tied, bf16, 1) == weight_bytes(tied, bf16)
    # Mixtral at batch 1 reads its non-expert weights (less the untied input table, bar one row) plus
    # 2 of 8 experts in each of 32 layers: a quarter of the expert bytes.
    moe = CAT.model("mixtral-8x7b")
    wb = weight_bytes_breakdown(moe, bf16)
    table = (32_000 - 1) * 4_096 * 2
    assert weight_bytes_read_per_step(moe, bf16, 1) == pytest.approx(wb.non_expert - table + wb.routed_experts / 4)
    # A batch larger than the vocabulary touches every row and every expert.
    assert weight_bytes_read_per_step(moe, bf16, 100_000) == pytest.approx(wb.total)


def test_batch_to_reach_ridge():
    from macros.formulas import batch_to_reach_ridge
    # H100 BF16 ridge 295.4 FLOP/byte with 2-byte weights: 2B/2 >= 295.4 -> B = 296;
    # with 0.515625-byte INT4-g128 weights: 2B/0.515625 >= 295.4 -> B = ceil(76.2) = 77.
    assert batch_to_reach_ridge(295.4, 2) == 296
    assert batch_to_reach_ridge(295.4, 0.515625) == 77
    assert batch_to_reach_ridge(100, 2) == 100


def test_gemm_intensity_prefill_and_decode_by_hand():
    # k = n = 8192, all BF16. Prefill chunk m = 4096:
    # 2 x 4096 x 8192^2 / (2 x (4096 x 8192 + 8192^2 + 4096 x 8192)) = 4096 x 8192 / 16384 = 2048 exactly.
    assert gemm_arithmetic_intensity(4096, 8192, 8192, 2) == pytest.approx(2048)
    # Decode step m = 32: 32 x 8192 / (8192 + 64) = 262144 / 8256 = 31.7519...
    assert gemm_arithmetic_intensity(32, 8192, 8192, 2) == pytest.approx(262144 / 8256)
    # Square m = k = n = 1024 in 1-byte elements: 2 x 1024^3 / (3 x 1024^2) = 2048 / 3 = 682.67
    assert gemm_arithmetic_intensity(1024, 1024, 1024, 1) == pytest.approx(2048 / 3)


def test_gemm_intensity_with_narrower_weights_by_hand():
    # m = 1, k = n = 8192, BF16 activations (2 bytes), INT4-g128 weights (4.125 / 8 = 0.515625 bytes):
    # 2 x 8192^2 / (2 x (8192 + 8192) + 0.515625 x 8192^2) = 134,217,728 / 34,635,776 = 3.8752
    ai = gemm_arithmetic_intensity(1, 8192, 8192, 2, weight_bytes=0.515625)
    assert ai == pytest.approx(134_217_728 / 34_635_776)
    # the default weight bytes equal the activation bytes
    assert gemm_arithmetic_intensity(7, 300, 500, 2) == gemm_arithmetic_intensity(7, 300, 500, 2, weight_bytes=2)
    with pytest.raises(ValueError):
        gemm_arithmetic_intensity(1, 8192, 8192, 2, weight_bytes=0)


def test_gemm_m_to_reach_ridge_by_hand():
    # ridge 300, k = n = 8192, 2 bytes: m* = 300 x 2 x 8192^2 / (2 x 8192^2 - 300 x 2 x 16384)
    # = 40,265,318,400 / (134,217,728 - 9,830,400) = 40,265,318,400 / 124,387,328 = 323.7 -> 324
    assert gemm_m_to_reach_ridge(300, 8192, 8192, 2) == 324
    # check it is the first m at or above the ridge
    assert gemm_arithmetic_intensity(324, 8192, 8192, 2) >= 300 > gemm_arithmetic_intensity(323, 8192, 8192, 2)
    # k = n = 256 in BF16: the limit 2 x 256^2 / (2 x 512) = 128 < 300, so never
    assert gemm_m_to_reach_ridge(300, 256, 256, 2) is None
    # exactly at the limit counts as never (the intensity only approaches it)
    assert gemm_m_to_reach_ridge(128, 256, 256, 2) is None


@given(st.floats(min_value=10, max_value=1000), st.integers(min_value=64, max_value=16384),
       st.integers(min_value=64, max_value=16384), st.sampled_from([1.0, 2.0]))
def test_gemm_m_to_reach_ridge_is_the_crossover(ridge, k, n, b):
    m = gemm_m_to_reach_ridge(ridge, k, n, b)
    if m is None:
        assert 2 * k * n / (b * (k + n)) <= ridge
        return
    assert gemm_arithmetic_intensity(m, k, n, b) >= ridge * (1 - 1e-9)
    if m > 1:
        assert gemm_arithmetic_intensity(m - 1, k, n, b) < ridge


def test_roofline_time_by_hand():
    # 1e12 FLOPs and 1e9 bytes on 1e15 FLOP/s and 1e12 B/s: compute 1 ms, memory 1 ms -> 1 ms
    assert roofline_time(1e12, 1e9, 1e15, 1e12) == pytest.approx(1e-3)
    # memory-bound: 1e9 FLOPs, 1e9 bytes -> max(1 us, 1 ms) = 1 ms
    assert roofline_time(1e9, 1e9, 1e15, 1e12) == pytest.approx(1e-3)
    # compute-bound: 1e13 FLOPs, 1e9 bytes -> 10 ms
    assert roofline_time(1e13, 1e9, 1e15, 1e12) == pytest.approx(1e-2)
    with pytest.raises(ValueError):
        roofline_time(1, 1, 0, 1)
