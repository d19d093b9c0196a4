"""Quantization formulas against figures published in the format specs and papers, and against
values worked out by hand in the comments."""

from __future__ import annotations

import math

import struct
import pytest

from macros.formulas import (decode_speedup_bound, fit, float_format, float_limits, quantize_asymmetric,
                             quantize_rows, quantize_symmetric, smoothquant, sqnr_db)


# ---- float formats: the specs' own figures ----

def test_fp8_limits_match_the_fp8_paper_table_1():
    # Micikevicius et al., "FP8 Formats for Deep Learning" (arXiv:2209.05433), Table 1:
    # E4M3: bias 7, max normal S.1111.110 = 1.75 x 2^8 = 448, min normal 2^-6, min subnormal 2^-9,
    # no infinities, NaN only S.1111.111. E5M2: bias 15, max normal 1.75 x 2^15 = 57344,
    # min normal 2^-14, min subnormal 2^-16, infinities S.11111.00, NaN S.11111.{01, 10, 11}.
    e4m3 = float_limits(float_format("fp8-e4m3"))
    assert (e4m3.bias, e4m3.max_finite, e4m3.min_normal, e4m3.min_subnormal) == (7, 448, 2**-6, 2**-9)
    assert not e4m3.has_infinity and e4m3.nan_encodings == 2
    e5m2 = float_limits(float_format("fp8-e5m2"))
    assert (e5m2.bias, e5m2.max_finite, e5m2.min_normal, e5m2.min_subnormal) == (15, 57344, 2**-14, 2**-16)
    assert e5m2.has_infinity and e5m2.nan_encodings == 6


def _decode(code: str, pattern: int) -> float:
    size = struct.calcsize(code)
    return struct.unpack("<" + code, pattern.to_bytes(size, "little"))[0]


def test_ieee_formats_match_the_bit_patterns_python_decodes():
    # struct decodes IEEE binary16 ('e') and binary32 ('f') bit patterns independently of this module:
    # largest finite 0x7BFF / 0x7F7FFFFF, smallest normal 0x0400 / 0x00800000, smallest subnormal 0x0001,
    # and 1 + epsilon is 0x3C01 / 0x3F800001.
    for key, code, top, normal, one_up in (("fp16", "e", 0x7BFF, 0x0400, 0x3C01),
                                           ("fp32", "f", 0x7F7FFFFF, 0x00800000, 0x3F800001)):
        lim = float_limits(float_format(key))
        assert lim.max_finite == _decode(code, top)
        assert lim.min_normal == _decode(code, normal)
        assert lim.min_subnormal == _decode(code, 0x0001)
        assert lim.epsilon == _decode(code, one_up) - 1
    assert float_limits(float_format("fp16")).max_finite == 65504


def test_bf16_and_fp4_limits_from_their_specs():
    # bfloat16 keeps FP32's 8-bit exponent: max (2 - 2^-7) x 2^127 = 3.3895e38, min normal 2^-126,
    # epsilon 2^-7 (Kalamkar et al., arXiv:1905.12322, section 2).
    bf = float_limits(float_format("bf16"))
    assert bf.max_finite == pytest.approx(3.3895313892515355e38)
    assert (bf.min_normal, bf.epsilon) == (2**-126, 2**-7)
    # OCP MX v1.0, 5.3.3, FP4 E2M1: max normal +-6.0, min normal +-1.0, min subnormal +-0.5, no Inf/NaN.
    fp4 = float_limits(float_format("fp4-e2m1"))
    assert (fp4.max_finite, fp4.min_normal, fp4.min_subnormal, fp4.nan_encodings) == (6, 1, 0.5, 0)


def test_float_format_errors_name_the_problem():
    with pytest.raises(ValueError, match="unknown float format 'fp7'"):
        float_format("fp7")


# ---- integer quantization: worked by hand ----

def test_symmetric_int8_by_hand():
    # x = [-1, 0, 0.5, 2]; scale = 2 / 127; x / scale = [-63.5, 0, 31.75, 127];
    # round half to even: -64, 0, 32, 127.
    r = quantize_symmetric([-1.0, 0.0, 0.5, 2.0], 8)
    assert r.scale == pytest.approx(2 / 127)
    assert r.q == (-64, 0, 32, 127) and r.zero_point == 0
    assert r.dequantized[0] == pytest.approx(-128 / 127)


def test_asymmetric_int4_by_hand():
    # x = [0.1, 0.4, 1.6]: range widened to [0, 1.6]; scale = 1.6 / 15; zero point 0;
    # x / scale = [0.9375, 3.75, 15] -> 1, 4, 15.
    r = quantize_asymmetric([0.1, 0.4, 1.6], 4)
    assert r.scale == pytest.approx(1.6 / 15)
    assert (r.zero_point, r.q) == (0, (1, 4, 15))
    # x = [-1, 2]: scale = 3 / 15 = 0.2; zero point round(1 / 0.2) = 5; q = [-5 + 5, 10 + 5] = [0, 15].
    r = quantize_asymmetric([-1.0, 2.0], 4)
    assert (r.zero_point, r.q) == (5, (0, 15))
    assert r.dequantized == pytest.approx((-1.0, 2.0))


def test_asymmetric_per_tensor_shares_one_range_by_hand():
    # Rows [0, 1] and [-1, 3] at 2 bits, one range for the matrix: [-1, 3], scale 4 / 3, zero point
    # round(1 / (4/3)) = round(0.75) = 1. Row 0: round(0) + 1 = 1, round(0.75) + 1 = 2. Row 1:
    # round(-0.75) + 1 = 0, round(2.25) + 1 = 3. Per channel, row 0 gets its own range [0, 1], scale 1/3.
    tensor = quantize_rows([[0.0, 1.0], [-1.0, 3.0]], 2, symmetric=False, per_channel=False)
    assert [r.zero_point for r in tensor.rows] == [1, 1]
    assert [r.q for r in tensor.rows] == [(1, 2), (0, 3)]
    assert tensor.rows[0].scale == pytest.approx(4 / 3)
    channel = quantize_rows([[0.0, 1.0], [-1.0, 3.0]], 2, symmetric=False, per_channel=True)
    assert channel.rows[0].scale == pytest.approx(1 / 3) and channel.rows[0].q == (0, 3)


def test_per_channel_beats_per_tensor_on_a_row_with_small_range():
    # Row 0 spans +-0.1, row 1 has a 10.0 outlier. Per tensor, 4-bit symmetric: scale 10/7 = 1.43,
    # so every value of row 0 rounds to 0 and its SQNR is 0 dB; per channel row 0 gets scale 0.1/7.
    rows = [[0.1, -0.05, 0.02, 0.07], [10.0, -3.0, 1.0, 0.5]]
    tensor = quantize_rows(rows, 4, symmetric=True, per_channel=False)
    channel = quantize_rows(rows, 4, symmetric=True, per_channel=True)
    assert tensor.rows[0].q == (0, 0, 0, 0)
    assert tensor.row_sqnr_db(0) == pytest.approx(0.0)
    assert channel.rows[0].scale == pytest.approx(0.1 / 7)
    assert channel.row_sqnr_db(0) > 20
    assert channel.sqnr_db >= tensor.sqnr_db


def test_sqnr_by_hand_and_six_db_per_bit():
    # signal 1^2 + 1^2 = 2, noise 0.1^2 + 0.1^2 = 0.02: 10 log10(100) = 20 dB.
    assert sqnr_db([1.0, 1.0], [1.1, 0.9]) == pytest.approx(20.0)
    # A uniform quantizer gains about 6.02 dB per bit on a full-scale ramp.
    ramp = [i / 1000 - 0.5 for i in range(1001)]
    gain = quantize_rows([ramp], 8, True, True).sqnr_db - quantize_rows([ramp], 7, True, True).sqnr_db
    assert gain == pytest.approx(20 * math.log10(2), abs=0.3)
    with pytest.raises(ValueError, match="all zeros"):
        sqnr_db([0.0], [0.0])


def test_quantize_rejects_bad_input():
    with pytest.raises(ValueError, match="bits must be between 2 and 16"):
        quantize_symmetric([1.0], 1)
    with pytest.raises(ValueError, match="must not be empty"):
        quantize_asymmetric([], 8)


# ---- SmoothQuant ----

def test_smoothquant_alpha_half_equalizes_channel_maxima():
    # SmoothQuant (arXiv:2211.10438), eq. 4 with alpha = 0.5: s_j = sqrt(max|X_j| / max|W_j|), and the
    # smoothed maxima of activation and weight channel j are both sqrt(max|X_j| * max|W_j|).
    # Channel 0: X 16, W 1 -> s = 4, both become 4. Channel 1: X 1, W 4 -> s = 0.5, both become 2.
    sm = smoothquant([16.0, 1.0], [1.0, 4.0], 0.5)
    assert sm.factors == pytest.approx((4.0, 0.5))
    assert sm.act_after == pytest.approx((4.0, 2.0))
    assert sm.weight_after == pytest.approx((4.0, 2.0))
    # alpha = 0 leaves activations alone up to the weight maximum: s_j = 1 / max|W_j|.
    assert smoothquant([16.0, 1.0], [1.0, 4.0], 0.0).act_after == pytest.approx((16.0, 4.0))
    with pytest.raises(ValueError, match="alpha"):
        smoothquant([1.0], [1.0], 1.5)


# ---- speed-up and fit ----

def test_decode_speedup_bound_by_hand():
    # 16 GB of BF16 weights vs 4 GB in INT4, plus 4 GB of KV per step: 20 / 8 = 2.5; without KV 4.
    assert decode_speedup_bound(16e9, 4e9, 4e9) == pytest.approx(2.5)
    assert decode_speedup_bound(16e9, 4e9) == pytest.approx(4.0)


def test_fit_by_hand():
    # 16 GiB x 0.9 = 14.4 GiB; minus 8 GiB weights, 1 GiB activations, 0.5 GiB reserve = 4.9 GiB of KV room.
    gib = 2**30
    f = fit(16 * gib, 8 * gib, 4 * gib, 0.9, 1 * gib, 0.5 * gib)
    assert f.kv_budget == pytest.approx(4.9 * gib)
    assert f.fits and f.headroom == pytest.approx(0.9 * gib)
    assert not fit(16 * gib, 14 * gib, 1, 0.9, 1 * gib, 0.5 * gib).fits


def test_sparse_24_storage_by_hand():
    # FP16 2:4: per group of four, two 16-bit values + two 2-bit indices = 36 bits -> 9 bits per weight.
    from macros.formulas import sparse_24_bits_per_weight
    assert sparse_24_bits_per_weight(16) == 9
    # INT8: 2 x 8 + 2 x 2 = 20 bits per four -> 5 bits per weight.
    assert sparse_24_bits_per_weight(8) == 5
    with pytest.raises(ValueError):
        sparse_24_bits_per_weight(0)
