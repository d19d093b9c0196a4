"""vLLM 0.11's per-request KV plan for hybrid models (sliding-window and linear-attention layers),
checked against hand arithmetic that follows vllm/v1/kv_cache_interface.py at v0.11.0."""

from __future__ import annotations

import pytest

from macros.catalog import load_catalog
from macros.formulas import kv_bytes_per_request_reserved, kv_bytes_per_sequence_paged

CAT = load_catalog()
BF16 = CAT.format("bf16")


def test_gpt_oss_120b_128k_by_hand():
    # Per layer per token: 2 (K, V) x 8 KV heads x 64 dims x 2 bytes = 2,048 bytes; block = 16 tokens.
    # Full layers: 131,072 / 16 = 8,192 blocks. Sliding layers (window 128), SlidingWindowSpec:
    # min(128 - 1 + 8,192, 131,072) = 8,319 tokens -> ceil(8,319 / 16) = 520 blocks, + 1 = 521.
    m = CAT.model("gpt-oss-120b")
    on = kv_bytes_per_request_reserved(m, 131072, BF16, 16, 8192, hybrid=True)
    assert on == 2048 * 16 * (18 * 8192 + 18 * 521) == 5_139_136_512
    off = kv_bytes_per_request_reserved(m, 131072, BF16, 16, 8192, hybrid=False)
    assert off == 2048 * 16 * 36 * 8192 == 9_663_676_416


def test_short_context_saves_nothing_and_costs_a_block():
    # Gemma 2 9B at 8,192 tokens: the sliding layers keep min(4,095 + 8,192, 8,192) = 8,192 tokens,
    # i.e. all of them, plus vLLM's one extra block, so "on" is one block per sliding layer above "off".
    m = CAT.model("gemma-2-9b")
    per_block = 2 * 8 * 256 * 2 * 16
    on = kv_bytes_per_request_reserved(m, 8192, BF16, 16, 8192, hybrid=True)
    off = kv_bytes_per_request_reserved(m, 8192, BF16, 16, 8192, hybrid=False)
    assert off == per_block * 42 * 512
    assert on - off == per_block * 21


def test_linear_layers_add_one_state_and_tp_share_scales():
    m = CAT.model("qwen3-next-80b-a3b")
    # 12 full layers x 2 KV heads x 256 x 2 x 2 bytes per token; 36 states of 1,097,728 bytes.
    expected = 2 * 2 * 256 * 2 * 16 * 12 * (32768 // 16) + 36 * 1_097_728
    assert kv_bytes_per_request_reserved(m, 32768, BF16) == expected
    assert kv_bytes_per_request_reserved(m, 32768, BF16, kv_fraction=0.5) == expected / 2


@pytest.mark.parametrize("key", ["llama-3.1-8b", "deepseek-v3"])
def test_uniform_models_match_the_paged_sequence(key):
    m = CAT.model(key)
    assert kv_bytes_per_request_reserved(m, 10000, BF16) == kv_bytes_per_sequence_paged(m, 10000, BF16)


def test_bad_batch_budget_is_refused():
    with pytest.raises(ValueError, match="max_num_batched_tokens"):
        kv_bytes_per_request_reserved(CAT.model("gpt-oss-120b"), 1024, BF16, max_num_batched_tokens=0)
