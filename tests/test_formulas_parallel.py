"""Tensor-parallel validity, per-GPU shards, and TP/EP communication volume."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from macros.catalog import load_catalog
from macros.formulas import (check_tp, ep_all_to_all_bytes, kv_fraction_per_gpu, kv_heads_per_gpu,
                             ring_allreduce_bytes_per_gpu, tp_allreduce_bytes_per_token,
                             tp_allreduce_bytes_per_token_per_layer, tp_problem, tp_shard, valid_tp_degrees)

CAT = load_catalog()


# vLLM QKVParallelLinear (vllm/model_executor/layers/linear.py): num_heads = divide(total_heads, tp);
# if tp >= total_kv_heads: num_kv_heads = 1, replicas = divide(tp, total_kv_heads); else
# num_kv_heads = divide(total_kv_heads, tp). `divide` asserts exact division.
@pytest.mark.parametrize("heads, kv, tp, ok", [
    (64, 8, 8, True),     # Llama-3.1-70B at TP 8: 8 query heads, 1 KV head per GPU
    (64, 8, 16, True),    # TP 16 > 8 KV heads: each KV head replicated twice
    (64, 8, 3, False),    # 64 % 3
    (28, 4, 8, False),    # Qwen2.5-7B: 28 heads do not divide by 8
    (28, 4, 2, True),
    (40, 8, 5, False),    # 40 % 5 == 0 but 8 KV heads % 5 != 0
    (48, 8, 12, False),   # 48 % 12 == 0, 12 > 8 but 12 % 8 != 0: KV heads cannot replicate evenly
    (32, 1, 8, True),     # MQA: the single KV head replicated 8 times
])
def test_vllm_tp_rule(heads, kv, tp, ok):
    assert (tp_problem(heads, kv, tp) is None) is ok


def test_valid_tp_degrees_of_catalog_models():
    assert valid_tp_degrees(CAT.model("llama-3.1-70b"), 16) == [1, 2, 4, 8, 16]
    assert valid_tp_degrees(CAT.model("qwen2.5-7b"), 16) == [1, 2, 4]      # 28 heads, 4 KV heads
    assert valid_tp_degrees(CAT.model("qwen2.5-0.5b"), 16) == [1, 2]       # 14 heads, 2 KV heads
    assert valid_tp_degrees(CAT.model("gemma-2-9b"), 16) == [1, 2, 4, 8, 16]


def test_check_tp_message_lists_valid_degrees():
    with pytest.raises(ValueError) as info:
        check_tp(CAT.model("qwen2.5-7b"), 8)
    msg = str(info.value)
    assert "28" in msg and "8" in msg and "1, 2, 4" in msg


def test_kv_heads_per_gpu_and_fraction():
    assert kv_heads_per_gpu(8, 4) == 2
    assert kv_heads_per_gpu(8, 16) == 1
    m = CAT.model("llama-3.1-70b")
    assert kv_fraction_per_gpu(m, 4) == 1 / 4
    assert kv_fraction_per_gpu(m, 16) == 1 / 8   # replicated: each GPU still holds one of 8 heads
    # MLA latent is replicated on every TP rank (vLLM keeps the full latent cache per GPU).
    assert kv_fraction_per_gpu(CAT.model("deepseek-v3"), 8) == 1.0
    with pytest.raises(ValueError):
        kv_heads_per_gpu(8, 3)


def test_tp_shard_weights():
    bf16 = CAT.format("bf16")
    s = tp_shard(CAT.model("llama-3.1-70b"), 8, bf16)
    # TP 8 = KV heads: only the RMSNorm weights ((2 x 80 + 1) x 8,192) are replicated.
    assert s.weights_per_gpu == pytest.approx(s.weights_total / 8 + 161 * 8192 * 2 * 7 / 8)
    assert s.kv_heads_per_gpu == 1 and s.kv_head_replicas == 1
    s16 = tp_shard(CAT.model("llama-3.1-70b"), 16, bf16)
    assert s16.kv_head_replicas == 2
    with pytest.raises(ValueError):
        tp_shard(CAT.model("qwen2.5-7b"), 8, bf16)


def test_ring_allreduce_factor():
    # nccl-tests doc/PERFORMANCE.md: for AllReduce, bus bandwidth = algorithm bandwidth x 2(n-1)/n,
    # i.e. each rank moves 2(n-1)/n of the buffer. 8 GPUs: 1.75 x the buffer; 2 GPUs: 1 x.
    assert ring_allreduce_bytes_per_gpu(1000, 8) == pytest.approx(1750)
    assert ring_allreduce_bytes_per_gpu(1000, 2) == pytest.approx(1000)
    assert ring_allreduce_bytes_per_gpu(1000, 1) == 0


def test_tp_allreduce_per_token_by_hand():
    # Llama-3.1-70B, TP 8, BF16: per layer 2 all-reduces x 1.75 x 8192 x 2 bytes = 57,344 bytes;
    # x 80 layers = 4,587,520 bytes per token.
    assert tp_allreduce_bytes_per_token_per_layer(8192, 2, 8) == pytest.approx(57_344)
    assert tp_allreduce_bytes_per_token(CAT.model("llama-3.1-70b"), 2, 8) == pytest.approx(4_587_520)


def test_ep_all_to_all_by_hand():
    # DeepSeek-V3 decode step of 256 tokens, top-8, hidden 7168, BF16: dispatch 256 x 8 x 7168 x 2 bytes
    # = 29,360,128; dispatch + combine = 58,720,256 bytes per MoE layer.
    assert ep_all_to_all_bytes(256, 8, 7168, 2) == 58_720_256
    assert ep_all_to_all_bytes(256, 8, 7168, 2, include_combine=False) == 29_360_128
    with pytest.raises(ValueError):
        ep_all_to_all_bytes(-1, 8, 7168, 2)


@given(st.floats(min_value=0, max_value=1e12), st.integers(min_value=1, max_value=1024))
def test_ring_allreduce_bounds(buf, p):
    # never more than twice the buffer, and growing with p
    v = ring_allreduce_bytes_per_gpu(buf, p)
    assert 0 <= v < 2 * buf + 1e-6
    assert v <= ring_allreduce_bytes_per_gpu(buf, p + 1) + 1e-6
