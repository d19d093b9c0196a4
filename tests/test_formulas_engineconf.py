"""Engine configuration formulas, checked against vLLM's own worked figures and hand arithmetic:

- the start-up ledger against the quantitative example in vLLM 0.11's ``memory_profiling`` docstring
  (vllm/utils/__init__.py: 2 GiB weights + 2 GiB peak activation + 1 GiB non-torch = 5 GiB non-KV), and
  against vLLM 0.33's log message that a CUDA-graph-profiled ``--gpu-memory-utilization`` u equals
  ``u - graph bytes / total`` without graph profiling (vllm/v1/worker/gpu_worker.py);
- the profiling-pass tensors, the TPOT batch limit and the smallest fitting TP degree by hand.
"""

from __future__ import annotations

import pytest

from macros.catalog import load_catalog
from macros.errors import MacroInputError
from macros.formulas import (profile_peak_tensors, smallest_fitting_tp, startup_ledger, tpot_batch_limit)
from macros.render import MACROS

GiB = 2**30
CAT = load_catalog()
BF16 = CAT.format("bf16")
L8 = CAT.model("llama-3.1-8b")
L70 = CAT.model("llama-3.1-70b")
H100 = CAT.gpu("h100-sxm")


def test_ledger_matches_the_vllm_docstring_example():
    # vLLM 0.11 memory_profiling docstring: weights 2 GiB, peak activation 2 GiB, non-torch 1 GiB,
    # "non-kv cache takes 5 GiB in total". On an 80 GiB GPU at 0.9 the KV pool is 72 - 5 = 67 GiB.
    led = startup_ledger(80 * GiB, 0.9, 2 * GiB, 2 * GiB, 1 * GiB, cudagraph=0.5 * GiB, in_use_before=1 * GiB)
    assert led.non_kv == 5 * GiB
    assert led.requested == pytest.approx(72 * GiB)
    assert led.kv_pool == pytest.approx(67 * GiB)
    # 0.11 captures graphs after the KV cache: they come out of the 8 GiB outside the share.
    assert led.outside_left == pytest.approx(8 * GiB - 1 * GiB - 0.5 * GiB)


def test_graph_profiling_equals_a_lower_fraction():
    # vLLM 0.33 logs: "--gpu-memory-utilization=u is equivalent to --gpu-memory-utilization=
    # u - graph/total without CUDA graph memory profiling". Same KV pool both ways.
    total, graph = 80 * GiB, 2.4 * GiB
    new = startup_ledger(total, 0.92, 30 * GiB, 3 * GiB, 0.6 * GiB, graph, graphs_in_budget=True)
    old = startup_ledger(total, 0.92 - graph / total, 30 * GiB, 3 * GiB, 0.6 * GiB, graph)
    assert new.kv_pool == pytest.approx(old.kv_pool)
    assert new.non_kv - old.non_kv == pytest.approx(graph)
    # with graphs inside the share, nothing but the pre-start-up memory sits outside it
    assert new.outside_left == pytest.approx(total * 0.08)


def test_ledger_signals_both_failures():
    assert startup_ledger(80 * GiB, 0.9, 75 * GiB, 2 * GiB, 0.5 * GiB, 1 * GiB).kv_pool < 0
    assert startup_ledger(80 * GiB, 0.99, 30 * GiB, 2 * GiB, 0.5 * GiB, 1 * GiB, 0.5 * GiB).outside_left < 0
    with pytest.raises(ValueError):
        startup_ledger(80 * GiB, 1.2, 30 * GiB, 2 * GiB, 0.5 * GiB, 1 * GiB)
    with pytest.raises(ValueError):
        startup_ledger(80 * GiB, 0.9, -1, 2 * GiB, 0.5 * GiB, 1 * GiB)


def test_profile_tensors_by_hand():
    # Llama-3.1-8B: intermediate 14,336, vocab 128,256.
    p = profile_peak_tensors(L8, 8192, 1024)
    assert p.mlp_bytes == 8192 * 2 * 14336 * 2 == 469_762_048
    assert p.logits_bytes == 1024 * 128256 * 4 == 525_336_576
    assert p.floor == p.logits_bytes
    # TP splits the column-parallel MLP output, not the all-gathered logits
    p2 = profile_peak_tensors(L8, 8192, 1024, tp=2)
    assert p2.mlp_bytes == p.mlp_bytes / 2 and p2.logits_bytes == p.logits_bytes
    # rows are capped by the token budget: a 512-token pass has at most 512 requests
    assert profile_peak_tensors(L8, 512, 1024).rows == 512
    with pytest.raises(ValueError, match="dense"):
        profile_peak_tensors(CAT.model("gpt-oss-20b"), 8192, 256)


def test_tpot_limit_matches_the_closed_form():
    # step(b) = 5 ms + 0.25 ms x b; within 20 ms: b <= 60.
    step = lambda b: 0.005 + 0.00025 * b  # noqa: E731
    assert tpot_batch_limit(step, 0.020, 4096) == 60
    assert tpot_batch_limit(step, 0.020, 32) == 32          # capped
    assert tpot_batch_limit(step, 0.004, 4096) == 0         # batch 1 already misses
    with pytest.raises(ValueError):
        tpot_batch_limit(step, 0, 10)


def test_smallest_fitting_tp_by_hand():
    # Llama-3.1-70B BF16 on H100 (85.52 GB): TP 2 leaves 85.52 x 0.9 - 70.6 - 3 GiB ~= 3.2 GB per GPU;
    # one 8,192-token sequence holds 8,192 x 327,680 / 2 = 1.34 GB per GPU there, so two fit, not 16.
    args = (BF16, H100.memory_bytes)
    assert smallest_fitting_tp(L70, BF16, *args, sequences=2, context=8192, utilization=0.9,
                               activation_bytes=2 * GiB, reserve_bytes=1 * GiB) == 2
    assert smallest_fitting_tp(L70, BF16, *args, sequences=16, context=8192, utilization=0.9,
                               activation_bytes=2 * GiB, reserve_bytes=1 * GiB) == 4
    assert smallest_fitting_tp(L70, BF16, *args, sequences=100_000, context=8192, utilization=0.9,
                               activation_bytes=2 * GiB, reserve_bytes=1 * GiB) is None


def test_startup_macro_reports_failures_and_bad_input():
    out = MACROS["startup_memory"]("llama-3.1-70b", "h100-sxm")
    assert "refuses to start" in out
    out = MACROS["startup_memory"]("llama-3.1-8b", "h100-sxm", gpu_util=0.99, graph_gib=2)
    assert "out of memory at graph capture" in out
    with pytest.raises(MacroInputError, match="0.11, 0.33"):
        MACROS["startup_memory"]("llama-3.1-8b", "h100-sxm", release="0.12")
    with pytest.raises(MacroInputError, match="dense"):
        MACROS["startup_memory"]("gpt-oss-20b", "h100-sxm")


def test_format_plan_and_concurrency_plan_render():
    plan = MACROS["format_plan"]("llama-3.1-70b", "a100-80gb-sxm", ["bf16", "fp8"])
    assert "weight-only FP8" in plan        # Ampere has no FP8 tensor cores
    assert "| 4 |" in plan and "| 2 |" in plan
    cp = MACROS["concurrency_plan"]("llama-3.1-8b", "h100-sxm", context="4K", tpot_ms=20)
    assert "TPOT limit" in cp
    with pytest.raises(MacroInputError):
        MACROS["concurrency_plan"]("llama-3.1-8b", "h100-sxm", utils=[1.5])


def test_concurrency_plan_tpot_limit_by_hand():
    # Llama-3.1-8B BF16 on one H100 (3.35 TB/s), 2,048 tokens held per sequence, 15 ms TPOT at 0.7 of peak
    # bandwidth. By hand: a step may read 0.015 x 3.35e12 x 0.7 = 35.175 GB. Weights read per step = 8.03e9
    # parameters x 2 bytes less the untied input-embedding table (128,256 x 4,096 x 2 bytes, only looked up);
    # KV per sequence = 2,048 x 131,072 bytes (32 layers x 8 KV heads x 128 x 2 x 2 bytes). Compute is far
    # from binding at this batch, so limit = floor((35.175e9 - weights) / KV).
    from macros.formulas import weight_bytes
    weights = weight_bytes(L8, BF16) - 128_256 * 4096 * 2
    assert weights == pytest.approx(15.0e9, rel=0.01)
    by_hand = int((0.015 * 3.35e12 * 0.7 - weights) // (2048 * 131_072))
    out = MACROS["concurrency_plan"]("llama-3.1-8b", "h100-sxm", context="2K", tpot_ms=15, utils=[0.9])
    assert f"TPOT limit: {by_hand} sequences" in out
