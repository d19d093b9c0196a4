"""KV caches below FP8 (macros/formulas/kv_lowbit.py, macros/render/kv_lowbit.py): effective bits with scales,
bytes per token and tokens per GB, against hand arithmetic from the engines' slot layouts."""

from __future__ import annotations

import pytest

from macros.errors import MacroInputError
from macros.formulas import kv_lowbit as Q
from macros.render import MACROS


@pytest.mark.parametrize("key, head_dim, bits", [
    ("bf16", 128, 16),
    ("fp8", 128, 8),
    ("nvfp4", 128, 4.5),            # 64 data bytes + 8 scale bytes per 128-wide head vector = 72 bytes
    ("int4-pth", 128, 4.25),        # 64 bytes + one FP32 = 68 bytes per vector
    ("fp8-pth", 64, 8.5),           # 64 bytes + 4 bytes per 64-wide vector
    ("kivi-2", 128, 3),             # 2 bits + 32 bits of FP16 scale and zero per 32
    ("kivi-4", 128, 5),
    ("int2-g128", 128, 2.25),
    # TurboQuant in vLLM 0.33.0, head_dim 128: K = 48 + 2 bytes, V = 48 + 4 bytes: 102 bytes per 256 elements.
    ("tq-3", 128, 102 * 8 / 256),
    ("tq-4", 128, (64 + 2 + 64 + 4) * 8 / 256),
    ("tq-k3v4", 128, (48 + 2 + 64 + 4) * 8 / 256),
])
def test_effective_bits_by_hand(key, head_dim, bits):
    assert Q.scheme_bits(Q.kv_scheme(key), head_dim) == pytest.approx(bits)


def test_tokens_per_gb_by_hand():
    # Llama 3.1 70B: 2 x 80 x 8 x 128 = 163,840 elements per token; at 3 bits 61,440 bytes; 16,276 tokens/GB.
    el = Q.kv_elements_per_token(80, 8, 128)
    assert el == 163_840
    assert Q.lowbit_bytes_per_token(el, 3) == 61_440
    assert int(Q.tokens_per_gb(61_440)) == 16_276
    with pytest.raises(ValueError):
        Q.tokens_per_gb(0)
    with pytest.raises(ValueError):
        Q.kv_scheme("int1")


def test_table_macro_shows_scale_share_and_rejects_mla():
    out = MACROS["kv_lowbit_table"]("llama-3.1-70b", schemes=["bf16", "kivi-2"])
    assert "| 16,276 |" in out and "33.3%" in out and "5.33×" in out
    assert MACROS["kv_scheme_bits"]("nvfp4", "llama-3.1-70b") == "4.5"
    with pytest.raises(MacroInputError, match="MLA"):
        MACROS["kv_lowbit_table"]("deepseek-v3", schemes=["bf16"])
    with pytest.raises(MacroInputError):
        MACROS["kv_lowbit_table"]("llama-3.1-70b", schemes=[])
