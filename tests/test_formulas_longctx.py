"""One very long sequence: prefill MLP activation, chunk count and footprint, checked against the figures
Qwen published for Qwen2.5-7B/14B-Instruct-1M (blog "Qwen2.5-1M: Deploy Your Own Qwen with Context
Length up to 1M Tokens", dated 2025-01-27) and against hand arithmetic."""

from __future__ import annotations

import pytest

from macros.catalog import load_catalog
from macros.errors import MacroInputError
from macros.formulas import (kv_bytes_per_token, long_context_footprint, naive_kv_cache_bytes,
                             prefill_chunks, prefill_mlp_activation_bytes)
from macros.render import MACROS

CAT = load_catalog()
BF16 = CAT.format("bf16")
Q7 = CAT.model("qwen2.5-7b-instruct-1m")
Q14 = CAT.model("qwen2.5-14b-instruct-1m")


def test_mlp_activation_matches_the_blog():
    # Blog: an unchunked 1M-token prefill of Qwen2.5-7B stores "71GB" of MLP activations, and
    # 32,768-token chunks cut that by 96.7%. By hand: 1,000,000 x 2 x 18,944 x 2 bytes
    # = 75,776,000,000 bytes = 70.57 GiB; 1 - 32,768 / 1,000,000 = 0.9672.
    full = prefill_mlp_activation_bytes(Q7, 1_000_000)
    assert full == 75_776_000_000
    assert full / 2**30 == pytest.approx(71, rel=0.01)
    chunk = prefill_mlp_activation_bytes(Q7, 32_768)
    assert 1 - chunk / full == pytest.approx(0.967, abs=0.0005)


def test_kv_per_token_by_hand():
    # 2 (K, V) x 28 layers x 4 KV heads x 128 dims x 2 bytes; 2 x 48 x 8 x 128 x 2 for the 14B.
    assert kv_bytes_per_token(Q7, BF16) == 57_344
    assert kv_bytes_per_token(Q14, BF16) == 196_608


@pytest.mark.parametrize("model, published_bytes", [(Q7, 120e9), (Q14, 320e9)])
def test_footprint_sits_under_the_published_minimum(model, published_bytes):
    # Blog: at least 120 GB (7B) and 320 GB (14B) in total across GPUs for a 1M-token sequence, with
    # --max-model-len 1010000 and --max-num-batched-tokens 131072. Weights + KV + one chunk's
    # activation is a floor below that, and the KV is the largest term.
    fp = long_context_footprint(model, BF16, BF16, 1_010_000, 131_072)
    assert 0.6 * published_bytes < fp.total < published_bytes
    assert fp.kv > fp.weights > fp.activation_chunk


def test_hidden_size_formula_contradicts_the_published_minimum():
    # The MHA-only formula 2 x layers x hidden x context x bytes puts the 7B's KV alone above the blog's
    # 120 GB, so it cannot be how the model is served: with 4 KV heads the cache is 7x smaller.
    naive = naive_kv_cache_bytes(28, 3584, 1, 1_010_000, 2)
    assert naive > 120e9
    assert naive / long_context_footprint(Q7, BF16, BF16, 1_010_000, 131_072).kv == pytest.approx(7)


def test_prefill_chunks():
    assert prefill_chunks(1_010_000, 131_072) == 8
    assert prefill_chunks(131_072, 131_072) == 1
    assert prefill_chunks(1, 8192) == 1
    with pytest.raises(ValueError):
        prefill_chunks(0, 8192)
    with pytest.raises(ValueError):
        prefill_chunks(1000, 0)


def test_chunk_longer_than_context_is_capped():
    fp = long_context_footprint(Q7, BF16, BF16, 4096, 131_072)
    assert fp.activation_chunk == fp.activation_unchunked == 4096 * 2 * 18944 * 2


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="dense MLPs only"):
        prefill_mlp_activation_bytes(CAT.model("deepseek-v3"), 1024)
    with pytest.raises(ValueError, match="tokens"):
        prefill_mlp_activation_bytes(Q7, -1)


def test_macro_renders_the_published_comparison_and_refuses_moe():
    out = MACROS["long_context_memory"]("qwen2.5-7b-instruct-1m", "h100-sxm", n_gpus=4, context=1010000,
                                        tokens=131072, published_gb=120)
    assert "57,344 × 1,010,000 = 57.9 GB" in out
    assert "published minimum: 120.0 GB" in out
    assert "fits in 4 ×" in out
    one = MACROS["long_context_memory"]("qwen2.5-14b-instruct-1m", "h100-sxm", n_gpus=1, context=1010000)
    assert "does not fit" in one
    with pytest.raises(MacroInputError, match="dense models only"):
        MACROS["long_context_memory"]("gpt-oss-120b", "h100-sxm", n_gpus=1)
