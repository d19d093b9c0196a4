"""Quantization: uniform integer quantization (symmetric and asymmetric, per tensor and per row),
reconstruction error, floating-point format limits from exponent and mantissa widths, SmoothQuant
smoothing factors, and the decode speed-up bound from fewer weight bytes.

Conventions (stated once, used by the worked examples):

- Symmetric (signed, "narrow range"): ``scale = max|x| / (2^(b-1) - 1)``, zero point 0,
  ``q = clamp(round(x / scale), -(2^(b-1) - 1), 2^(b-1) - 1)``. The most negative code ``-2^(b-1)``
  is left unused so that the grid is symmetric about zero.
- Asymmetric (unsigned, affine): the range is widened to include 0, ``scale = (max - min) / (2^b - 1)``,
  ``zero_point = round(-min / scale)`` clamped to ``[0, 2^b - 1]``,
  ``q = clamp(round(x / scale) + zero_point, 0, 2^b - 1)``; reconstruction ``scale * (q - zero_point)``.
  This is the uniform affine scheme of Jacob et al. 2018 (arXiv:1712.05877, eq. 1) and of Nagel et
  al., "A White Paper on Neural Network Quantization" (arXiv:2106.08295, section 2.2).
- Rounding is round-half-to-even, as ``torch.round`` and ``numpy.rint`` do.

Pure Python: nothing here imports MkDocs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from . import _checks as chk

__all__ = [
    "QuantizedRow",
    "Quantized",
    "quantize_symmetric",
    "quantize_asymmetric",
    "quantize_rows",
    "sqnr_db",
    "FloatFormat",
    "FloatLimits",
    "FLOAT_FORMATS",
    "float_limits",
    "Smoothing",
    "smoothquant",
    "decode_speedup_bound",
]


# --------------------------------------------------------------------------------------------------
# integer quantization
# --------------------------------------------------------------------------------------------------

def _bits(bits: int) -> int:
    chk.positive_int("bits", bits)
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be between 2 and 16, got {bits}")
    return bits


def _values(values: Sequence[float], name: str = "values") -> list[float]:
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError(f"{name} must not be empty")
    if not all(math.isfinite(v) for v in vals):
        raise ValueError(f"{name} must be finite numbers, got {values!r}")
    return vals


def _clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


@dataclass(frozen=True)
class QuantizedRow:
    """One group of values quantized with one scale (and zero point)."""

    values: tuple[float, ...]
    scale: float
    zero_point: int
    q: tuple[int, ...]
    dequantized: tuple[float, ...]

    @property
    def max_abs_error(self) -> float:
        return max(abs(a - b) for a, b in zip(self.values, self.dequantized))


def quantize_symmetric(values: Sequence[float], bits: int, amax: float | None = None) -> QuantizedRow:
    """Symmetric signed quantization of ``values`` with ``scale = amax / (2^(b-1) - 1)``.

    ``amax`` defaults to ``max|values|`` (min-max calibration); pass a larger shared one for
    per-tensor quantization of a row. An all-zero input gets scale 1 (any scale is exact).
    """
    vals = _values(values)
    b = _bits(bits)
    qmax = 2 ** (b - 1) - 1
    a = max(abs(v) for v in vals) if amax is None else chk.non_negative("amax", amax)
    scale = a / qmax if a > 0 else 1.0
    q = tuple(_clamp(round(v / scale), -qmax, qmax) for v in vals)
    return QuantizedRow(tuple(vals), scale, 0, q, tuple(scale * x for x in q))


def quantize_asymmetric(values: Sequence[float], bits: int, lo: float | None = None,
                        hi: float | None = None) -> QuantizedRow:
    """Asymmetric (affine) unsigned quantization onto ``[0, 2^b - 1]`` with a zero point.

    The range ``[lo, hi]`` defaults to the values' min and max and is widened to include 0, so that
    zero is represented exactly (zero padding, ReLU outputs).
    """
    vals = _values(values)
    b = _bits(bits)
    qmax = 2 ** b - 1
    lo = min(min(vals) if lo is None else lo, 0.0)
    hi = max(max(vals) if hi is None else hi, 0.0)
    if hi < lo:
        raise ValueError(f"range must satisfy lo <= hi, got [{lo}, {hi}]")
    scale = (hi - lo) / qmax if hi > lo else 1.0
    zp = _clamp(round(-lo / scale), 0, qmax)
    q = tuple(_clamp(round(v / scale) + zp, 0, qmax) for v in vals)
    return QuantizedRow(tuple(vals), scale, zp, q, tuple(scale * (x - zp) for x in q))


def sqnr_db(reference: Sequence[float], approx: Sequence[float]) -> float:
    """Signal-to-quantization-noise ratio ``10 log10(sum x^2 / sum (x - x_hat)^2)`` in dB.

    The per-layer sensitivity signal that ModelOpt-style and Polygraphy-style comparisons use (higher
    is better; every extra bit of a uniform quantizer adds about 6 dB). Infinite when exact.
    """
    ref = _values(reference, "reference")
    app = _values(approx, "approx")
    if len(ref) != len(app):
        raise ValueError(f"reference and approx differ in length ({len(ref)} vs {len(app)})")
    signal = sum(x * x for x in ref)
    noise = sum((x - y) ** 2 for x, y in zip(ref, app))
    if signal == 0:
        raise ValueError("reference is all zeros: SQNR is undefined")
    if noise == 0:
        return math.inf
    return 10 * math.log10(signal / noise)


@dataclass(frozen=True)
class Quantized:
    """A matrix quantized row by row under one scheme."""

    symmetric: bool
    per_channel: bool
    bits: int
    rows: tuple[QuantizedRow, ...]

    @property
    def max_abs_error(self) -> float:
        return max(r.max_abs_error for r in self.rows)

    @property
    def sqnr_db(self) -> float:
        return sqnr_db([v for r in self.rows for v in r.values], [v for r in self.rows for v in r.dequantized])

    def row_sqnr_db(self, i: int) -> float:
        return sqnr_db(self.rows[i].values, self.rows[i].dequantized)


def quantize_rows(rows: Sequence[Sequence[float]], bits: int, symmetric: bool, per_channel: bool) -> Quantized:
    """Quantize a matrix whose rows are output channels: one scale per row (per-channel) or one for all.

    Per-tensor symmetric uses the largest ``max|x|`` of the whole matrix; per-tensor asymmetric the
    matrix's min and max.
    """
    mat = [_values(r, f"row {i}") for i, r in enumerate(rows)]
    if not mat:
        raise ValueError("rows must not be empty")
    flat = [v for r in mat for v in r]
    out = []
    for r in mat:
        if symmetric:
            out.append(quantize_symmetric(r, bits, None if per_channel else max(abs(v) for v in flat)))
        else:
            out.append(quantize_asymmetric(r, bits, *(None, None) if per_channel else (min(flat), max(flat))))
    return Quantized(symmetric, per_channel, bits, tuple(out))


# --------------------------------------------------------------------------------------------------
# floating-point formats
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format by its field widths and how it spends the top exponent.

    ``specials``:
    - ``"ieee"``: the all-ones exponent is reserved for infinities and NaNs (IEEE 754; FP8 E5M2).
    - ``"fn"``: finite-only; the all-ones exponent holds normal numbers except the all-ones mantissa,
      which is NaN (FP8 E4M3 of the NVIDIA/Arm/Intel FP8 proposal, arXiv:2209.05433, Table 1).
    - ``"none"``: no infinities or NaNs at all (FP4 E2M1 of OCP MX v1.0).
    """

    key: str
    name: str
    exponent_bits: int
    mantissa_bits: int
    specials: str
    source: str
    bias: int | None = None  # default 2^(e-1) - 1

    @property
    def bits(self) -> int:
        return 1 + self.exponent_bits + self.mantissa_bits


@dataclass(frozen=True)
class FloatLimits:
    fmt: FloatFormat
    bias: int
    max_finite: float
    min_normal: float
    min_subnormal: float
    epsilon: float          # 2^-m: the gap between 1 and the next representable number
    has_infinity: bool
    nan_encodings: int      # bit patterns that decode to NaN (both signs)

    @property
    def dynamic_range_binades(self) -> float:
        """log2(max finite / min subnormal): how many powers of two the format spans."""
        return math.log2(self.max_finite / self.min_subnormal)


#: The element formats a quantization answer compares. Widths are definitions from the cited specs.
FLOAT_FORMATS: tuple[FloatFormat, ...] = (
    FloatFormat("fp32", "FP32 (IEEE binary32)", 8, 23, "ieee", "IEEE 754-2019, 3.6"),
    FloatFormat("fp16", "FP16 (IEEE binary16)", 5, 10, "ieee", "IEEE 754-2019, 3.6"),
    FloatFormat("bf16", "BF16 (bfloat16)", 8, 7, "ieee", "Kalamkar et al., arXiv:1905.12322"),
    FloatFormat("fp8-e5m2", "FP8 E5M2", 5, 2, "ieee", "Micikevicius et al., arXiv:2209.05433, Table 1"),
    FloatFormat("fp8-e4m3", "FP8 E4M3", 4, 3, "fn", "Micikevicius et al., arXiv:2209.05433, Table 1"),
    FloatFormat("fp4-e2m1", "FP4 E2M1 (MX element)", 2, 1, "none", "OCP Microscaling Formats v1.0, 5.3.3"),
)


def float_limits(fmt: FloatFormat) -> FloatLimits:
    """Largest finite value, smallest normal and subnormal, and epsilon, from the field widths.

    With bias ``B`` and ``m`` mantissa bits: smallest normal ``2^(1-B)``, smallest subnormal
    ``2^(1-B-m)``, epsilon ``2^-m``. Largest finite: ``(2 - 2^-m) * 2^(2^e - 2 - B)`` when the top
    exponent is reserved (``ieee``); ``(2 - 2^(1-m)) * 2^(2^e - 1 - B)`` when only the all-ones
    pattern is NaN (``fn``); ``(2 - 2^-m) * 2^(2^e - 1 - B)`` when nothing is reserved (``none``).
    """
    e = chk.positive_int("exponent_bits", fmt.exponent_bits)
    m = chk.positive_int("mantissa_bits", fmt.mantissa_bits)
    bias = fmt.bias if fmt.bias is not None else 2 ** (e - 1) - 1
    top = 2 ** e - 1
    if fmt.specials == "ieee":
        max_finite = (2 - 2.0 ** -m) * 2.0 ** (top - 1 - bias)
        has_inf, nans = True, 2 * (2 ** m - 1)
    elif fmt.specials == "fn":
        max_finite = (2 - 2.0 ** (1 - m)) * 2.0 ** (top - bias)
        has_inf, nans = False, 2
    elif fmt.specials == "none":
        max_finite = (2 - 2.0 ** -m) * 2.0 ** (top - bias)
        has_inf, nans = False, 0
    else:
        raise ValueError(f"specials must be 'ieee', 'fn' or 'none', got {fmt.specials!r} ({fmt.key})")
    return FloatLimits(fmt, bias, max_finite, 2.0 ** (1 - bias), 2.0 ** (1 - bias - m), 2.0 ** -m, has_inf, nans)


def float_format(key: str) -> FloatFormat:
    for f in FLOAT_FORMATS:
        if f.key == key:
            return f
    raise ValueError(f"unknown float format {key!r}; valid: {', '.join(f.key for f in FLOAT_FORMATS)}")


__all__.append("float_format")


# --------------------------------------------------------------------------------------------------
# SmoothQuant
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Smoothing:
    alpha: float
    act_absmax: tuple[float, ...]      # max|X_j| per input channel, before
    weight_absmax: tuple[float, ...]   # max|W_j| per input channel, before
    factors: tuple[float, ...]         # s_j
    act_after: tuple[float, ...]       # max|X_j| / s_j
    weight_after: tuple[float, ...]    # max|W_j| * s_j

    @staticmethod
    def spread(xs: Sequence[float]) -> float:
        """Largest over smallest channel maximum: how much one per-tensor scale has to span."""
        return max(xs) / min(xs)


def smoothquant(act_absmax: Sequence[float], weight_absmax: Sequence[float], alpha: float = 0.5) -> Smoothing:
    """SmoothQuant (Xiao et al., arXiv:2211.10438, eq. 4): ``s_j = max|X_j|^a / max|W_j|^(1-a)``.

    ``X diag(s)^-1`` and ``diag(s) W`` multiply to the same product. After smoothing, channel j's
    activation maximum is ``max|X_j| / s_j = (max|X_j| * max|W_j|)^(1-a)`` and its weight maximum
    ``max|W_j| * s_j = (max|X_j| * max|W_j|)^a``; at ``a = 0.5`` both are ``sqrt(max|X_j| max|W_j|)``.
    """
    acts = _values(act_absmax, "act_absmax")
    ws = _values(weight_absmax, "weight_absmax")
    if len(acts) != len(ws):
        raise ValueError(f"act_absmax and weight_absmax differ in length ({len(acts)} vs {len(ws)})")
    if min(acts) <= 0 or min(ws) <= 0:
        raise ValueError("channel maxima must be > 0")
    a = chk.fraction("alpha", alpha, allow_zero=True)
    s = tuple(x ** a / w ** (1 - a) for x, w in zip(acts, ws))
    return Smoothing(a, tuple(acts), tuple(ws), s, tuple(x / f for x, f in zip(acts, s)),
                     tuple(w * f for w, f in zip(ws, s)))


# --------------------------------------------------------------------------------------------------
# speed-up
# --------------------------------------------------------------------------------------------------

def decode_speedup_bound(base_weight_bytes: float, quant_weight_bytes: float, kv_bytes_per_step: float = 0.0) -> float:
    """Upper bound on the decode speed-up from fewer weight bytes when decode is bandwidth-bound.

    ``(W_base + KV) / (W_quant + KV)``: a bandwidth-bound step reads all weights once plus the KV
    cache of the batch, and quantizing the weights leaves the KV bytes unchanged. Tends to
    ``W_base / W_quant`` as the KV share goes to zero and to 1 as it dominates.
    """
    chk.positive("base_weight_bytes", base_weight_bytes)
    chk.positive("quant_weight_bytes", quant_weight_bytes)
    chk.non_negative("kv_bytes_per_step", kv_bytes_per_step)
    return (base_weight_bytes + kv_bytes_per_step) / (quant_weight_bytes + kv_bytes_per_step)


@dataclass(frozen=True)
class Fit:
    """Whether weights plus a KV cache fit on one card under the vLLM-style budget."""

    kv_budget: float     # memory x utilization - weights - activations - reserve
    kv_needed: float     # KV bytes for the stated batch and context
    headroom: float      # kv_budget - kv_needed

    @property
    def fits(self) -> bool:
        return self.headroom >= 0


def fit(memory_bytes: float, weight_bytes_total: float, kv_needed: float, utilization: float,
        activation_bytes: float, reserve_bytes: float) -> Fit:
    """Memory check for one card: does the KV the workload needs fit in what the weights leave?"""
    from .kvbudget import kv_budget_bytes

    chk.non_negative("kv_needed", kv_needed)
    budget = kv_budget_bytes(memory_bytes, weight_bytes_total, utilization, activation_bytes, reserve_bytes)
    return Fit(budget, kv_needed, budget - kv_needed)


__all__ += ["Fit", "fit"]


def dense_weight_bytes_read(model, fmt, embed_fmt, batch: int) -> float:
    """Weight bytes one decode step of a dense model reads, with embeddings / lm_head in ``embed_fmt``.

    As :func:`macros.formulas.speed.weight_bytes_read_per_step`, for the common quantized layout
    (linear layers in ``fmt``, embedding and lm_head kept in 16-bit): every weight once per step,
    except that an untied input embedding contributes only the ``batch`` rows it looks up.
    """
    from .memory import bits_of, weight_bytes_breakdown
    from .params import param_breakdown

    if model.moe is not None:
        raise ValueError(f"{model.key} is a mixture-of-experts model; use a dense model for this bound")
    chk.positive_int("batch", batch)
    b = param_breakdown(model)
    wb = weight_bytes_breakdown(model, fmt, None, embed_fmt, breakdown=b)
    lookup_only = 0.0
    if b.lm_head:
        rows = min(batch, model.vocab_size)
        lookup_only = (b.embedding - rows * model.hidden_size) * bits_of(embed_fmt) / 8
    return wb.total - lookup_only


__all__.append("dense_weight_bytes_read")


def sparse_24_bits_per_weight(element_bits: float, metadata_bits_per_kept: float = 2.0) -> float:
    """Storage bits per original weight of a 2:4 semi-structured sparse matrix.

    Two of every four values are kept, each with a position index among the four (2 bits, the
    metadata layout of NVIDIA's sparse tensor cores): ``(2 x element_bits + 2 x metadata) / 4``.
    """
    chk.positive("element_bits", element_bits)
    chk.non_negative("metadata_bits_per_kept", metadata_bits_per_kept)
    return (2 * element_bits + 2 * metadata_bits_per_kept) / 4


__all__.append("sparse_24_bits_per_weight")
