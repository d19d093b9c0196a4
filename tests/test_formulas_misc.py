"""Speculative decoding, LoRA size, vision tokens, KV transfer and model load time."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from macros.catalog import load_catalog
from macros.formulas import (expected_tokens_per_step, kv_bytes_per_sequence, kv_transfer_time, lora_adapter_bytes,
                             lora_params, lora_params_per_matrix, lora_target_shapes, model_load_time,
                             speculative_speedup, transfer_time, vision_tokens)

CAT = load_catalog()


def test_speculative_expected_tokens_by_hand():
    # Leviathan et al. 2023 (arXiv:2211.17192), eq. 1: E = (1 - a^(g+1)) / (1 - a).
    # a = 0.8, g = 4: (1 - 0.32768) / 0.2 = 3.3616.
    assert expected_tokens_per_step(0.8, 4) == pytest.approx(3.3616)
    # a = 0.5, g = 2: (1 - 0.125) / 0.5 = 1.75 (= 1 + 0.5 + 0.25).
    assert expected_tokens_per_step(0.5, 2) == pytest.approx(1.75)
    assert expected_tokens_per_step(0.0, 5) == 1
    assert expected_tokens_per_step(1.0, 5) == 6
    assert expected_tokens_per_step(0.9, 0) == 1


def test_speculative_speedup_by_hand():
    # Theorem 3.8: improvement factor E / (g c + 1). a = 0.8, g = 4, c = 0.05: 3.3616 / 1.2 = 2.8013.
    assert speculative_speedup(0.8, 4, 0.05) == pytest.approx(3.3616 / 1.2)
    # a bad draft (a = 0.2) with an expensive draft model (c = 0.5) slows decoding: 1.2496 / 3 < 1.
    assert speculative_speedup(0.2, 4, 0.5) < 1
    with pytest.raises(ValueError):
        expected_tokens_per_step(1.2, 4)


@given(st.floats(min_value=0, max_value=1), st.integers(min_value=0, max_value=64))
def test_expected_tokens_bounds(a, g):
    e = expected_tokens_per_step(a, g)
    assert 1 - 1e-9 <= e <= g + 1 + 1e-9
    assert expected_tokens_per_step(a, g + 1) >= e - 1e-9


def _gpt3():
    # GPT-3 175B shape, GPT-3 paper (arXiv:2005.14165) Table 2.1: 96 layers, d_model 12288, 96 heads of 128.
    return dataclasses.replace(CAT.model("llama-2-7b"), key="gpt-3", num_hidden_layers=96, hidden_size=12288,
                               num_attention_heads=96, num_key_value_heads=96, head_dim=128,
                               intermediate_size=49152)


def test_lora_gpt3_budget_from_the_paper():
    # LoRA paper (arXiv:2106.09685) section 7.1: "a parameter budget of 18M (roughly 35MB if stored in
    # FP16) on GPT-3 175B, which corresponds to r = 8 if we adapt one type of attention weights or r = 4
    # if we adapt two types, for all 96 layers" (and r = 2 for all four).
    m = _gpt3()
    for rank, targets in ((8, ("q_proj",)), (4, ("q_proj", "v_proj")), (2, ("q_proj", "k_proj", "v_proj", "o_proj"))):
        params = lora_params(m, rank, targets)
        assert params == 18_874_368
        assert lora_adapter_bytes(params, 2) / 2**20 == pytest.approx(36, abs=1)  # "roughly 35MB"


def test_lora_shapes_and_errors():
    m = CAT.model("llama-3.1-8b")
    assert lora_target_shapes(m, "q_proj,k_proj") == [("q_proj", 4096, 4096), ("k_proj", 4096, 1024)]
    assert lora_params_per_matrix(16, 4096, 14336) == 16 * (4096 + 14336)
    with pytest.raises(ValueError, match="valid targets"):
        lora_target_shapes(m, "qkv")
    with pytest.raises(ValueError):
        lora_target_shapes(CAT.model("deepseek-v3"), "q_proj")
    with pytest.raises(ValueError):
        lora_target_shapes(CAT.model("mixtral-8x7b"), "gate_proj")


def test_vision_tokens():
    # Qwen2-VL (arXiv:2409.12191): 14-px patches, 2x2 merge, so each token covers 28x28 pixels; its
    # processor's min_pixels = 256 x 28 x 28 corresponds to 256 tokens, e.g. a 448 x 448 image.
    assert vision_tokens(448, 448, 14, 2) == 256
    assert vision_tokens(28 * 36, 28 * 20, 14, 2) == 720
    # ViT (arXiv:2010.11929): a 224 x 224 image with 16-px patches is N = HW/P^2 = 196 patches.
    assert vision_tokens(224, 224, 16, 1) == 196
    # a side that is not a multiple rounds up to a whole merged patch
    assert vision_tokens(449, 448, 14, 2) == 17 * 16
    with pytest.raises(ValueError):
        vision_tokens(0, 448, 14, 2)


def test_kv_transfer_by_hand():
    # An 8,192-token Llama-3.1-70B prompt in BF16: 8192 x 327,680 = 2,684,354,560 bytes; over a
    # 400 Gb/s link (50e9 B/s) = 53.7 ms.
    nbytes = kv_bytes_per_sequence(CAT.model("llama-3.1-70b"), 8192, CAT.format("bf16"))
    assert nbytes == 2_684_354_560
    assert kv_transfer_time(nbytes, 400e9 / 8) == pytest.approx(2_684_354_560 / 50e9)
    assert transfer_time(100, 10, latency_s=1) == 11


def test_model_load_time_by_hand():
    # 141.1 GB through storage 2 GB/s, network 12.5 GB/s, PCIe 25 GB/s: storage bounds it, 70.55 s.
    assert model_load_time(141.1e9, 2e9, 12.5e9, 25e9) == pytest.approx(70.55)
    assert model_load_time(141.1e9, 20e9, 12.5e9) == pytest.approx(141.1e9 / 12.5e9)
    with pytest.raises(ValueError):
        model_load_time(1e9, 0)


def test_image_pull_time_by_hand():
    from macros.formulas import image_pull_time
    # 10 GB compressed over 10 Gbit/s (1.25 GB/s) = 8 s; 20 GB unpacked at 0.5 GB/s = 40 s; 48 s in all.
    assert image_pull_time(10e9, 20e9, 1.25e9, 0.5e9) == pytest.approx(48.0)
    # an incompressible 16.06 GB layer: 16.06 / 1.25 + 16.06 / 0.5 = 12.848 + 32.12 = 44.968 s
    assert image_pull_time(16.06e9, 16.06e9, 1.25e9, 0.5e9) == pytest.approx(44.968)
    with pytest.raises(ValueError, match="compressed_bytes .* exceeds unpacked_bytes"):
        image_pull_time(2e9, 1e9, 1e9, 1e9)
    with pytest.raises(ValueError, match="unpack_bytes_per_s must be a positive number"):
        image_pull_time(1e9, 1e9, 1e9, 0)
