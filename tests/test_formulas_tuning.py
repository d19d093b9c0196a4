"""Tuning against targets (macros/formulas/tuning.py, macros/render/tuning.py), checked by hand."""

from __future__ import annotations

import re

import pytest

from macros.errors import MacroInputError
from macros.formulas import concurrency_for_target, dense_batch_ceiling, tpot_batch_limit
from macros.render import MACROS


def test_concurrency_is_littles_law():
    # 3,000 output tokens/s at 25 ms per token: 3000 x 0.025 = 75 sequences decoding at once
    assert concurrency_for_target(3000, 0.025) == 75
    assert concurrency_for_target(1000, 0.05) == 50       # exact product, no float round-up to 51
    assert concurrency_for_target(1001, 0.05) == 51       # 50.05 rounds up
    with pytest.raises(ValueError, match="tpot_s"):
        concurrency_for_target(1000, 0)


def test_dense_ceiling_by_hand():
    # W = 16 GB, KV = 0.5 GB per sequence, 3.35 TB/s, TPOT 20 ms:
    # 0.02 x 3.35e12 = 67e9 bytes per step; (67e9 - 16e9) / 0.5e9 = 102
    assert dense_batch_ceiling(16e9, 0.5e9, 3.35e12, 0.020) == 102
    # the weights alone take 16e9 / 3.35e12 = 4.8 ms > 4 ms: no batch fits
    assert dense_batch_ceiling(16e9, 0.5e9, 3.35e12, 0.004) == 0


def test_search_agrees_with_closed_form():
    w, kv, bw = 16e9, 0.5e9, 3.35e12
    for tpot in (0.006, 0.010, 0.020, 0.040):
        got = tpot_batch_limit(lambda b: (w + b * kv) / bw, tpot, 10_000)
        assert got == dense_batch_ceiling(w, kv, bw, tpot)
    assert tpot_batch_limit(lambda b: 1.0, 0.5, 100) == 0
    assert tpot_batch_limit(lambda b: 0.0, 0.5, 100) == 100   # capped at the limit


def _ceilings(html: str) -> tuple[int, int, int]:
    need = int(re.search(r"required concurrency: .*= ([\d,]+) sequences", html).group(1).replace(",", ""))
    tpot = int(re.search(r"TPOT ceiling: batch ([\d,]+) ", html).group(1).replace(",", ""))
    kv = int(re.search(r"per sequence = ([\d,]+) sequences", html).group(1).replace(",", ""))
    return need, tpot, kv


def test_macro_llama_8b_h100_by_hand():
    # Llama-3.1-8B config.json: 32 layers, hidden 4096, 8 KV heads x head_dim 128, intermediate 14336,
    # vocab 128256, untied embeddings. Parameters: per layer q,o 4096^2 each + k,v 4096 x 1024 each
    # + MLP 3 x 4096 x 14336 + 2 norms x 4096 = 218,112,000; x 32 + 2 x 128256 x 4096 + 4096
    # = 8,030,261,248. BF16 weights = 2 bytes each. A decode step reads all of them except the input
    # embedding table, of which only the batch's rows are read.
    params = 32 * (2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096) + 2 * 128256 * 4096 + 4096
    assert params == 8_030_261_248
    embed = 128256 * 4096 * 2
    kv_seq = 2 * 32 * 8 * 128 * 2 * 4096         # 4,096 tokens, 256 whole blocks of 16
    bw = 3.35e12                                  # H100 SXM5 datasheet, 3.35 TB/s
    tpot = 0.025
    # (2 x params - embed + b x 4096 x 2 + b x kv_seq) / bw <= tpot
    hand = int((tpot * bw - (2 * params - embed)) // (kv_seq + 4096 * 2))
    html = MACROS["tuning_check"]("llama-3.1-8b", "h100-sxm", tpot_ms=25, throughput_tps=3000, context="4K")
    need, tpot_cap, _ = _ceilings(html)
    assert need == 75
    assert tpot_cap == hand
    assert "feasible under the bound" in html


def test_macro_reports_infeasible_targets():
    html = MACROS["tuning_check"]("llama-3.1-8b", "h100-sxm", tpot_ms=20, throughput_tps=6000, context="4K")
    need, tpot_cap, kv_cap = _ceilings(html)
    assert need == 120 and need > min(tpot_cap, kv_cap)
    assert "infeasible" in html and "no scheduler flag meets both targets" in html


def test_macro_rejects_bad_target():
    with pytest.raises(MacroInputError, match="tpot_ms"):
        MACROS["tuning_check"]("llama-3.1-8b", "h100-sxm", tpot_ms=-5, throughput_tps=3000)
