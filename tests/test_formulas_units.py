"""Unit conversions (GB = 1e9, GiB = 2**30) and the formatting every page shows."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from macros import units as U


def test_constants():
    assert U.GB == 1_000_000_000 and U.GiB == 1_073_741_824
    assert U.gib_to_gb(1) == pytest.approx(1.073741824)
    assert U.gb_to_gib(1) == pytest.approx(0.9313225746)
    # An "80GB" H100 is 80 GiB = 85.9 GB (nvidia-smi: 81,920 MiB on the A100 80GB)
    assert U.bytes_to_gb(80 * 2**30) == pytest.approx(85.899345920)


@given(st.floats(min_value=0, max_value=1e15, allow_nan=False))
def test_round_trips(x):
    assert U.gib_to_gb(U.gb_to_gib(x)) == pytest.approx(x)
    assert U.bytes_to_gb(U.gb_to_bytes(x)) == pytest.approx(x)
    assert U.bytes_to_gib(U.gib_to_bytes(x)) == pytest.approx(x)
    # a GiB is larger than a GB, so the same bytes are fewer GiB
    assert U.bytes_to_gib(x) <= U.bytes_to_gb(x)


def test_formatting():
    assert U.fmt_bytes(327_680) == "327,680 bytes (320 KiB)"
    assert U.fmt_bytes(70_272) == "70,272 bytes (68.62 KiB)"
    assert U.fmt_gb(80 * 2**30) == "85.9 GB (80.0 GiB)"
    assert U.fmt_bytes(171.8e9) == "171.8 GB (160.0 GiB)"
    assert U.fmt_bytes(37_748_736) == "37.7 MB (36.0 MiB)"
    assert U.fmt_int(1234567.5) == "1,234,568"
    assert U.fmt_params(70_553_706_496) == "70.55B"
    assert U.fmt_bandwidth(3.35e12) == "3.35 TB/s" and U.fmt_bandwidth(450e9) == "450 GB/s"
    assert U.fmt_flops(989.5e12) == "989.5 TFLOPS"
    assert U.fmt_ops(624e12) == "624 TOPS" and U.fmt_ops(1248e12) == "1,248 TOPS"
    assert U.fmt_seconds(0.0537) == "53.7 ms" and U.fmt_seconds(70.55) == "70.5 s"
    assert U.fmt_usd(2.95) == "$2.95" and U.fmt_usd(17228) == "$17,228.00"
    assert U.fmt_usd(0.15) == "$0.15" and U.fmt_usd(0.375) == "$0.375" and U.fmt_usd(0.0123) == "$0.0123"
    assert U.fmt_pct(0.0079) == "0.79%"


@given(st.floats(min_value=1e9, max_value=1e14))
def test_gb_format_shows_both_units(x):
    s = U.fmt_bytes(x)
    assert " GB (" in s and s.endswith(" GiB)")
