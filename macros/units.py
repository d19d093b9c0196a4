"""Unit constants, conversions and the number formatting used by every rendered figure.

Conversions are pure arithmetic (tested). Formatting turns a number into the text a page shows; the
renderer uses only these helpers, so a change of presentation happens in one place.

Conventions (the site's page standard):
- GB = 10**9 bytes, GiB = 2**30 bytes (and KB/KiB, MB/MiB, TB/TiB likewise). Memory results are shown
  in both.
- Bandwidth is decimal bytes per second (datasheets use decimal units: 3.35 TB/s = 3.35e12 B/s).
- FLOPS are decimal (989.4 TFLOPS = 989.4e12 FLOP/s).
"""

from __future__ import annotations

import math

KB = 10**3
MB = 10**6
GB = 10**9
TB = 10**12
KiB = 2**10
MiB = 2**20
GiB = 2**30
TiB = 2**40

SECONDS_PER_HOUR = 3600
HOURS_PER_MONTH = 730  # 8,760 h a year / 12: the convention cloud price pages use for "per month"


# --------------------------------------------------------------------------------------------------
# conversions (pure)
# --------------------------------------------------------------------------------------------------

def bytes_to_gb(n_bytes: float) -> float:
    """Bytes -> decimal gigabytes (1 GB = 10**9 bytes)."""
    return n_bytes / GB


def bytes_to_gib(n_bytes: float) -> float:
    """Bytes -> binary gibibytes (1 GiB = 2**30 bytes)."""
    return n_bytes / GiB


def gb_to_bytes(gb: float) -> float:
    """Decimal gigabytes -> bytes."""
    return gb * GB


def gib_to_bytes(gib: float) -> float:
    """Binary gibibytes -> bytes."""
    return gib * GiB


def gb_to_gib(gb: float) -> float:
    """Decimal GB -> GiB (a GB is about 0.931 GiB)."""
    return gb * GB / GiB


def gib_to_gb(gib: float) -> float:
    """GiB -> decimal GB (a GiB is about 1.074 GB)."""
    return gib * GiB / GB


# --------------------------------------------------------------------------------------------------
# formatting
# --------------------------------------------------------------------------------------------------

def fmt_int(n: float) -> str:
    """An integer with thousands separators: 327680 -> '327,680'. Rounds half away from zero."""
    value = int(math.floor(abs(n) + 0.5)) * (1 if n >= 0 else -1)
    return f"{value:,}"


def fmt_num(x: float) -> str:
    """A real number at a readable precision, with thousands separators.

    >= 10: one decimal ('171.8', '1,342.4'); >= 1: two decimals ('2.63'); below 1: three significant
    digits ('0.328', '0.00412'). Integers that are exact stay integers ('8' not '8.00') only through
    :func:`fmt_int`; this function always shows the decimals so columns line up.
    """
    if x != x:  # NaN
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 10:
        return f"{x:,.1f}"
    if a >= 1:
        return f"{x:,.2f}"
    digits = 2 - int(math.floor(math.log10(a)))
    return f"{x:.{digits}f}"


def _strip(s: str) -> str:
    return s.rstrip("0").rstrip(".") if "." in s else s


def fmt_gb(n_bytes: float) -> str:
    """Bytes shown in decimal GB and binary GiB: 85899345920 -> '85.9 GB (80.0 GiB)'."""
    return f"{fmt_num(bytes_to_gb(n_bytes))} GB ({fmt_num(bytes_to_gib(n_bytes))} GiB)"


def fmt_bytes(n_bytes: float) -> str:
    """Bytes at a scale that fits, always decimal and binary side by side.

    >= 1 GB: '171.8 GB (160.0 GiB)'; >= 1 MB: '37.7 MB (36.0 MiB)'; smaller:
    '327,680 bytes (320 KiB)'.
    """
    a = abs(n_bytes)
    if a >= GB:
        return fmt_gb(n_bytes)
    if a >= MB:
        return f"{fmt_num(n_bytes / MB)} MB ({fmt_num(n_bytes / MiB)} MiB)"
    kib = _strip(f"{n_bytes / KiB:,.2f}")
    return f"{fmt_int(n_bytes)} bytes ({kib} KiB)"


def fmt_params(n: float) -> str:
    """A parameter count in billions (or millions below 1e9): 70553706496 -> '70.55B'."""
    if abs(n) >= 1e9:
        return f"{n / 1e9:,.2f}B"
    if abs(n) >= 1e6:
        return f"{n / 1e6:,.2f}M"
    return fmt_int(n)


def fmt_bandwidth(bytes_per_s: float) -> str:
    """Decimal bytes per second: 3.35e12 -> '3.35 TB/s', 4.5e11 -> '450 GB/s'."""
    a = abs(bytes_per_s)
    if a >= TB:
        return f"{_strip(f'{bytes_per_s / TB:,.3f}')} TB/s"
    if a >= GB:
        return f"{_strip(f'{bytes_per_s / GB:,.1f}')} GB/s"
    return f"{_strip(f'{bytes_per_s / MB:,.1f}')} MB/s"


def fmt_flops(flops_per_s: float) -> str:
    """Decimal FLOP/s in TFLOPS: 989.4e12 -> '989.4 TFLOPS'."""
    return f"{_strip(f'{flops_per_s / 1e12:,.1f}')} TFLOPS"


def fmt_ops(ops_per_s: float) -> str:
    """Decimal integer operations per second in TOPS: 624e12 -> '624 TOPS' (INT8 rates are not FLOPs)."""
    return f"{_strip(f'{ops_per_s / 1e12:,.1f}')} TOPS"


def fmt_seconds(s: float) -> str:
    """A duration: '850 µs', '12.3 ms', '1.24 s', '3.2 min', '2.5 h'."""
    a = abs(s)
    if a == 0:
        return "0 s"
    if a < 1e-3:
        return f"{fmt_num(s * 1e6)} µs"
    if a < 1:
        return f"{fmt_num(s * 1e3)} ms"
    if a < 120:
        return f"{fmt_num(s)} s"
    if a < 7200:
        return f"{fmt_num(s / 60)} min"
    return f"{fmt_num(s / 3600)} h"


def fmt_usd(x: float) -> str:
    """Dollars: '$2.50', '$1,825.00', small amounts to three significant digits: '$0.0123'."""
    if abs(x) >= 1 or x == 0 or (abs(x) >= 0.01 and round(x, 2) == x):
        return f"${x:,.2f}"
    return f"${fmt_num(x)}"


def fmt_pct(fraction: float) -> str:
    """A fraction as a percentage: 0.0038 -> '0.38%'."""
    pct = fraction * 100
    if abs(pct) >= 10:
        return f"{pct:,.1f}%"
    return f"{pct:.2f}%"


def fmt_rate(per_s: float, unit: str = "tokens/s") -> str:
    """A rate with its unit: 1234.5 -> '1,234.5 tokens/s'."""
    return f"{fmt_num(per_s)} {unit}"


def fmt_tokens(n: float) -> str:
    """A token count: 131072 -> '131,072'."""
    return fmt_int(n)
