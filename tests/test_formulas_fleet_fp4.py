"""FP4 on Blackwell (macros/formulas/fleet_fp4.py, macros/render/fleet_fp4.py, Q144): effective bits against
the OCP MX v1.0 and NVFP4 block layouts and NVIDIA's published ratios, the prefill and decode bounds against
values worked by hand, the worked example against Llama 3.1 70B's config counted by hand, bad input."""

from __future__ import annotations

import pytest

from macros import formulas as F
from macros import units as U
from macros.errors import MacroInputError
from macros.render import MACROS
from macros.render.inputs import cat


def test_mxfp4_bits_from_the_ocp_block():
    # OCP MX v1.0: 32 FP4 E2M1 elements share one 8-bit E8M0 scale -> 136 bits per 32 elements.
    assert F.block_format_bits(4, 32, 8) == 136 / 32 == 4.25
    # llama.cpp's block_mxfp4: 1 byte of E8M0 + 16 bytes of packed nibbles = 17 bytes per 32 weights.
    assert F.block_format_bits(4, 32, 8) == 17 * 8 / 32


def test_nvfp4_bits_from_the_two_level_block():
    # 16 E2M1 elements + one E4M3 byte = 72 bits per 16; plus one FP32 scale for the whole tensor.
    assert F.block_format_bits(4, 16, 8) == 72 / 16 == 4.5
    with_tensor = F.block_format_bits(4, 16, 8, tensor_scale_bits=32, tensor_elements=1024)
    assert with_tensor == pytest.approx(4.5 + 32 / 1024)


def test_nvfp4_matches_nvidias_published_ratios():
    # NVIDIA's NVFP4 blog (2025-06-24): 3.5x smaller than FP16, 1.8x smaller than FP8.
    bits = cat().format("nvfp4").bits_per_weight
    assert 3.5 <= 16 / bits < 3.6
    assert round(8 / bits, 1) == 1.8


def test_catalog_formats_agree_with_their_layouts():
    for key in ("nvfp4", "mxfp4"):
        f = cat().format(key)
        assert f.bits_per_weight == F.block_format_bits(4, f.group_size, f.scale_bits)


def test_prefill_and_decode_by_hand():
    # 2 x 7e10 x 1,000 / (1e15 x 0.5) = 0.28 s; 8e12 / 4e10 = 200 tokens/s.
    assert F.prefill_seconds(7e10, 1000, 1e15, 0.5) == pytest.approx(0.28)
    assert F.decode_bound_tokens_per_s(4e10, 8e12) == pytest.approx(200.0)


def test_gemm_paths_use_the_rate_of_both_operands():
    assert F.gemm_path("nvfp4-w4a4").rate == "fp4"
    assert F.gemm_path("nvfp4-w4a16").rate == "bf16"
    assert F.gemm_path("fp8").rate == "fp8"
    with pytest.raises(ValueError, match="unknown GEMM path 'int4'.*nvfp4-w4a4"):
        F.gemm_path("int4")


@pytest.mark.parametrize("call, match", [
    (lambda: F.block_format_bits(0, 16, 8), "element_bits"),
    (lambda: F.block_format_bits(4, 0, 8), "block_size"),
    (lambda: F.block_format_bits(4, 16, 8, tensor_scale_bits=32), "tensor_elements is required"),
    (lambda: F.prefill_seconds(7e10, 1000, 1e15, 0), "mfu"),
    (lambda: F.prefill_seconds(7e10, 1000, 1e15, 1.5), "mfu"),
    (lambda: F.decode_bound_tokens_per_s(0, 8e12), "weight_bytes"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# Llama 3.1 70B config.json, counted by hand: vocab 128,256, hidden 8,192, 80 layers, MLP 28,672,
# 64 query heads and 8 KV heads of 128.
_EMB = 128256 * 8192 * 2                                  # embedding + untied lm_head
_LAYER = 2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192
_MATMUL = 80 * _LAYER + 8192                              # + final norm (counted with the rest)


def test_worked_example_against_the_config_by_hand():
    html = MACROS["fp4_tradeoff"]("llama-3.1-70b", "b200", tokens="8K", mfu=0.5)
    nvfp4 = _MATMUL * 4.5 / 8 + _EMB * 2
    fp8 = _MATMUL * 1 + _EMB * 2
    assert f"{_MATMUL:,}" in html
    assert U.fmt_gb(nvfp4) in html and U.fmt_gb(fp8) in html
    # prefill at the FP4 rate (B200: 9 PFLOPS dense) and at BF16 (2.25 PFLOPS) for weight-only
    assert U.fmt_seconds(2 * _MATMUL * 8192 / (9e15 * 0.5)) in html
    assert U.fmt_seconds(2 * _MATMUL * 8192 / (2.25e15 * 0.5)) in html
    # decode bound at 7.7 TB/s
    assert U.fmt_rate(7.7e12 / nvfp4) in html
    # vLLM 0.11's Mxfp4Config quantizes MoE layers only: the MXFP4 row of a dense model is size only
    assert "MoE expert layers alone" in html


def test_block_bits_example_renders_both_formats():
    html = MACROS["fp4_block_bits"]()
    assert "NVFP4 4.5 bits, MXFP4 4.25 bits" in html


def test_gpu_without_fp4_is_rejected_by_name():
    with pytest.raises(MacroInputError, match="H100.*no FP4 tensor rate.*b200, b300"):
        MACROS["fp4_tradeoff"]("llama-3.1-70b", "h100-sxm")


def test_moe_model_is_rejected():
    with pytest.raises(MacroInputError, match="dense model"):
        MACROS["fp4_tradeoff"]("gpt-oss-120b", "b200")
