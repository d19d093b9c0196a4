"""The image_pull worked example (Q50): download plus unpack, with and without baked-in weights.

Expected values are hand arithmetic, not output of the code under test.
"""
import pytest

from macros.errors import MacroInputError
from macros.render import MACROS


def _render(**kw):
    return MACROS["image_pull"](image_gb=6, image_unpacked_gb=14, network_gbit_per_s=10, unpack_gb_per_s=0.5, **kw)


def test_image_without_weights():
    # 6 GB / 1.25 GB/s = 4.8 s download; 14 GB / 0.5 GB/s = 28 s unpack; 32.8 s in all.
    out = _render()
    assert "download: 6.00 GB (5.59 GiB) / 1.2 GB/s = 4.80 s" in out
    assert "unpack: 14.0 GB (13.0 GiB) / 500 MB/s = 28.0 s" in out
    assert "**Result:** 32.8 s" in out


def test_baked_weights_count_on_both_sides():
    # Llama-3.1-8B: 8,030,261,248 parameters x 2 bytes = 16.06 GB, taken as incompressible.
    # download (6 + 16.06) GB / 1.25 GB/s = 17.65 s; unpack (14 + 16.06) GB / 0.5 GB/s = 60.12 s; 77.77 s.
    out = _render(model="llama-3.1-8b")
    assert "weights layer (taken as incompressible) | 16.1 GB" in out
    assert "= 17.6 s" in out and "= 60.1 s" in out
    assert "**Result:** 77.8 s" in out


def test_compressed_larger_than_unpacked_is_rejected():
    with pytest.raises(MacroInputError, match="image_gb .* cannot exceed image_unpacked_gb"):
        MACROS["image_pull"](image_gb=16, image_unpacked_gb=14, network_gbit_per_s=10, unpack_gb_per_s=0.5)
