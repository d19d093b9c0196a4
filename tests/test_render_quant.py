"""The quantization macros: figures worked by hand, the widest-fit choice, and bad input."""

from __future__ import annotations

import pytest

from macros.errors import MacroInputError
from macros.render import MACROS


def test_quant_example_shows_per_tensor_collapse_by_hand():
    # Per tensor, INT4 symmetric: scale = 2.0 / 7 = 0.2857; row 0 (|x| <= 0.12) rounds to all zeros.
    out = MACROS["quant_example"]([[0.12, -0.05, 0.03, 0.07], [2.0, -0.6, 0.2, 0.1]], bits=4)
    assert "| symmetric, per tensor | 0 | 0.2857 | 0 | [0, 0, 0, 0] |" in out
    # Per channel, row 0: scale 0.12 / 7 = 0.01714; q = round([7, -2.92, 1.75, 4.08]) = [7, -3, 2, 4].
    assert "| symmetric, per channel | 0 | 0.01714 | 0 | [7, -3, 2, 4] |" in out


def test_float_limits_inline_match_the_specs():
    assert MACROS["float_limit"]("fp8-e4m3", "max_finite") == "448"
    assert MACROS["float_limit"]("fp8-e5m2", "max_finite") == "57,344"
    assert MACROS["float_limit"]("fp16", "max_finite") == "65,504"
    assert MACROS["float_limit"]("fp8-e4m3", "epsilon").startswith("2^-3")
    table = MACROS["float_format_table"]()
    assert "| FP8 E4M3 | 8 (1/4/3) | 7 | 448 |" in table


def test_tensor_rate_table_ratios_from_the_catalog():
    out = MACROS["tensor_rate_table"](["a100-80gb-sxm", "h100-sxm"])
    # A100: INT8 624 / BF16 312 = 2, no FP8. H100 SXM: FP8 1979 / 989.5 = 2.
    assert "| 312 TFLOPS | none | 624 TOPS | n/a | 2× | 1× |" in out
    assert "| 989.5 TFLOPS | 1,979 TFLOPS | 1,979 TOPS | 2× | 2× | 1× |" in out


def test_bitwidth_fit_marks_the_widest_format_that_fits():
    # Llama-2-7B (MHA, 32 KV heads): KV per 4K sequence = 2 x 32 x 32 x 128 x 2 bytes x 4096 = 2 GiB;
    # four of them (8 GiB) do not fit beside 8-bit weights in 15 GiB x 0.9 - 1.5 GiB, but do beside INT4.
    out = MACROS["bitwidth_fit"]("llama-2-7b", ["bf16", "int8", "int4-g128-zp"], memory_gib=15, context="4K", batch=4)
    assert "2.15 GB (2.00 GiB)" in out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| [")}
    assert rows["[INT8 (per-channel)](/reference/formats.md#format-int8)"].endswith("| no |")
    assert "widest that fits" in rows[
        "[INT4, group 128, FP16 scale + 4-bit zero point (asymmetric)](/reference/formats.md#format-int4-g128-zp)"]


def test_decode_speedup_is_one_for_bf16_and_below_the_byte_ratio():
    out = MACROS["quant_decode_speedup"]("llama-3.1-8b", "h100-sxm", ["bf16", "int4-g128"], batch=1, context="4K")
    assert "| 1× |" in out
    with pytest.raises(MacroInputError, match="mixture-of-experts"):
        MACROS["quant_decode_speedup"]("mixtral-8x7b", "h100-sxm", ["bf16"])


def test_smoothquant_example_by_hand():
    # alpha 0.5, channel 0: s = sqrt(16 / 1) = 4, both maxima become 4.
    out = MACROS["smoothquant_example"]([16.0, 1.0], [1.0, 4.0], alpha=0.5)
    assert "| 0 | 16 | 1 | 4 | 4 | 4 |" in out


@pytest.mark.parametrize("call, message", [
    (lambda: MACROS["float_limit"]("fp7", "max_finite"), "unknown float format 'fp7'"),
    (lambda: MACROS["float_limit"]("fp16", "maximum"), "unknown field 'maximum'"),
    (lambda: MACROS["quant_example"]([[1.0, 2.0]], bits=1), "bits must be between 2 and 16"),
    (lambda: MACROS["smoothquant_example"]([1.0, 2.0], [1.0], alpha=0.5), "differ in length"),
    (lambda: MACROS["smoothquant_example"]([1.0], [1.0], alpha=2), "alpha"),
    (lambda: MACROS["bitwidth_fit"]("llama-2-7b", ["int4-g128"], memory_gib=-1), "memory_gib"),
    (lambda: MACROS["tensor_rate_table"](["h100"]), "unknown GPU 'h100'"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(MacroInputError, match=message):
        call()


def test_sqnr_table_shows_about_six_db_per_bit():
    ramp = [i / 50 - 1 for i in range(101)]
    out = MACROS["quant_sqnr_table"](ramp, bits=[8, 4])
    # A full-scale ramp loses close to 20 log10(2) = 6.02 dB per bit: 4 bits fewer, about 24 dB.
    per_bit = float(out.split("about ")[1].split(" dB per bit")[0])
    assert 5.5 <= per_bit <= 6.5
    with pytest.raises(MacroInputError, match="bits must be between 2 and 16"):
        MACROS["quant_sqnr_table"]([1.0], bits=[1])


def test_sparse_24_example_by_hand():
    # BF16 2:4: 9 bits per weight; with no KV the linear-layer byte ratio is 16 / 9 = 1.78.
    out = MACROS["sparse_24_example"]("llama-3.1-8b", "a100-80gb-sxm", fmt="bf16", batch=1, context="4K")
    assert "(2 × 16 + 2 × 2) / 4 = 9 bits per weight" in out
    assert "is 1.78× on the linear layers" in out
    # A100 dense INT8 624 TOPS, sparse 1,248 TOPS (datasheet pair).
    out = MACROS["sparse_24_example"]("llama-3.1-8b", "a100-80gb-sxm", fmt="int8")
    assert "1,248 TOPS sparse vs 624 TOPS dense" in out
    with pytest.raises(MacroInputError, match="no 2:4 sparse tensor-core path"):
        MACROS["sparse_24_example"]("llama-3.1-8b", "a100-80gb-sxm", fmt="int4-g128")
