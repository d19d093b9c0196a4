"""Launch overhead of a decode step and the throughput-vs-concurrency roofline (issue 18), by hand."""

from __future__ import annotations

import re

import pytest

from macros.errors import MacroInputError
from macros.formulas.overhead import decode_roofline_point, kernels_per_step, launch_overhead
from macros.render import MACROS


def test_kernels_per_step_by_hand():
    # 32 layers x 10 kernels + 8 outside the stack = 328
    assert kernels_per_step(32, 10, 8) == 328
    with pytest.raises(ValueError):
        kernels_per_step(0, 10)


def test_launch_bound_step_by_hand():
    # 750 us of GPU work, 344 kernels at 5 us each = 1.72 ms of host issue time: launch-bound.
    lo = launch_overhead(750e-6, 344, 5e-6, 10e-6)
    assert lo.host_time_s == pytest.approx(1.72e-3)
    assert lo.launch_bound
    assert lo.eager_best_s == pytest.approx(1.72e-3)           # max(0.75, 1.72) ms
    assert lo.eager_worst_s == pytest.approx(2.47e-3)          # 0.75 + 1.72 ms
    assert lo.graph_s == pytest.approx(760e-6)                 # 0.75 ms + one 10 us launch
    assert lo.saved_best == pytest.approx(1 - 0.76 / 1.72)     # 55.8 %
    assert lo.saved_worst == pytest.approx(1 - 0.76 / 2.47)    # 69.2 %


def test_gpu_bound_step_saves_nothing_with_full_overlap():
    # 20 ms of GPU work hides 1.64 ms of launches when they overlap; without overlap graphs save 1.63 ms.
    lo = launch_overhead(20e-3, 328, 5e-6, 10e-6)
    assert not lo.launch_bound
    assert lo.saved_best == 0.0
    assert lo.saved_worst == pytest.approx((1.64e-3 - 10e-6) / 21.64e-3)


def test_roofline_point_memory_and_compute_regimes():
    # 16.06e9 bytes at 3.35e12 B/s = 4.794 ms; 2 x 8.03e9 FLOPs per token at 989.4e12 FLOP/s:
    # batch 1 is memory-bound at 208.6 tokens/s.
    p = decode_roofline_point(1, 16.06e9, 2 * 8.03e9, 3.35e12, 989.4e12)
    assert p.memory_s == pytest.approx(16.06e9 / 3.35e12)
    assert not p.compute_bound
    assert p.tokens_per_s == pytest.approx(3.35e12 / 16.06e9)
    # batch 1000 on the same bytes: compute 1000 x 16.06e9 / 989.4e12 = 16.2 ms > 4.8 ms memory
    q = decode_roofline_point(1000, 16.06e9, 2 * 8.03e9, 3.35e12, 989.4e12)
    assert q.compute_bound
    assert q.tokens_per_s == pytest.approx(989.4e12 / (2 * 8.03e9))   # the compute ceiling


def test_launch_share_rejects_a_batch_the_kv_cache_cannot_hold():
    with pytest.raises(MacroInputError, match="does not fit"):
        MACROS["launch_share"]("llama-3.1-8b", "h100-sxm", batches=[1, 4096], context="4K")
    with pytest.raises(MacroInputError, match="bw_efficiency"):
        MACROS["launch_share"]("llama-3.1-8b", "h100-sxm", batches=[1], bw_efficiency=1.5)


def test_throughput_curve_svg_is_self_contained_and_accessible():
    out = MACROS["throughput_curve"]("llama-3.1-8b", "h100-sxm", context="4K")
    svg = re.search(r"<svg.*?</svg>", out, re.S).group(0)
    assert 'role="img"' in svg and "<title" in svg and "<desc" in svg
    assert "href" not in svg and "http://" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    # text and axes follow the page colour, so dark mode stays readable
    assert 'fill="currentColor"' in svg
    # the plotted line rises: aggregate throughput grows with concurrency (log-x, SVG y grows downward)
    path = re.search(r'<path d="(M[^"]+)" fill="none" stroke-width', svg).group(1)
    ys = [float(pt.split(",")[1]) for pt in re.findall(r"[ML]([\d.]+,[\d.]+)", path)]
    assert ys == sorted(ys, reverse=True) and ys[0] > ys[-1]
    # the table's first row is the batch-1 bound of decode_tps for the same inputs
    assert MACROS["decode_tps"]("llama-3.1-8b", "h100-sxm", context="4K") in out


def test_ep_layer_step_by_hand():
    from macros.formulas.overhead import ep_layer_step
    # 256 tokens, EP 8, all 256 experts touched, 44e6 bytes each, 1e9 FLOPs per token; 4.8e12 B/s HBM,
    # 1.979e15 FLOP/s, 450e9 B/s link; 2 x 256 x 8 x 7168 x 2 bytes = 58,720,256 bytes of dispatch + combine.
    st = ep_layer_step(256, 8, 256.0, 44e6, 1e9, 2 * 256 * 8 * 7168 * 2, 4.8e12, 1.979e15, 450e9)
    assert st.expert_bytes_per_rank == pytest.approx(32 * 44e6)          # 32 experts per rank
    assert st.read_s == pytest.approx(32 * 44e6 / 4.8e12)               # 293 us
    assert st.compute_s == pytest.approx(32 * 1e9 / 1.979e15)            # 32 tokens per rank
    remote = 58_720_256 * 7 / 8 / 8                                      # crosses the link, per rank
    assert st.a2a_bytes_per_rank == pytest.approx(remote)
    assert st.layer_s == pytest.approx(max(st.read_s, st.compute_s) + remote / 450e9)
    # imbalance 1.5: the busiest rank receives 1.5x the traffic; its reads do not grow
    hot = ep_layer_step(256, 8, 256.0, 44e6, 1e9, 58_720_256, 4.8e12, 1.979e15, 450e9, imbalance=1.5)
    assert hot.a2a_s_hot == pytest.approx(1.5 * remote / 450e9)
    assert hot.expert_s_hot == pytest.approx(st.read_s)                  # still memory-bound
    with pytest.raises(ValueError, match="imbalance"):
        ep_layer_step(256, 8, 256.0, 44e6, 1e9, 1.0, 4.8e12, 1.979e15, 450e9, imbalance=0.5)
    # one rank: nothing crosses a link
    assert ep_layer_step(16, 1, 8.0, 1e6, 1e9, 1e6, 1e12, 1e15, 1e11).a2a_s == 0.0


def test_ep_step_macro_rejects_dense_models_and_uneven_splits():
    with pytest.raises(MacroInputError, match="dense"):
        MACROS["ep_step"]("llama-3.1-8b", "h100-sxm")
    with pytest.raises(MacroInputError, match="divide"):
        MACROS["ep_step"]("gpt-oss-20b", "h100-sxm", fmt="mxfp4", n_gpus=3)


def test_pd_coupling_by_hand():
    from macros.formulas.overhead import pd_coupling
    # 1,342,177,280 bytes of KV (Llama-3.1-70B, 8,192 tokens at 160 KiB/token in FP8) after a 0.3 s prefill,
    # over a 400 Gbit/s NIC (5e10 B/s): 26.84 ms transfer, 8.95 % of the prefill, 4.47 GB/s sustained.
    c = pd_coupling(8192 * 160 * 1024, 0.3, 400e9 / 8)
    assert c.transfer_s == pytest.approx(1_342_177_280 / 5e10)
    assert c.transfer_to_prefill == pytest.approx(0.026843545 / 0.3)
    assert c.sustained_bytes_per_s == pytest.approx(1_342_177_280 / 0.3)
    assert c.link_share == pytest.approx(c.transfer_to_prefill)   # the same ratio, read two ways
    with pytest.raises(ValueError):
        pd_coupling(1.0, 0.0, 1.0)


def test_speedup_with_verify_cost_by_hand():
    from macros.formulas.overhead import speedup_with_verify_cost
    # a = 0.7, g = 3: E = (1 - 0.7^4) / 0.3 = 2.533; c = 0.05
    e = (1 - 0.7 ** 4) / 0.3
    assert speedup_with_verify_cost(e, 3, 0.05, 1.0) == pytest.approx(e / 1.15)      # Leviathan et al.
    assert speedup_with_verify_cost(e, 3, 0.05, 4.0) == pytest.approx(e / 4.15)      # compute-bound: v = g + 1
    assert MACROS["spec_speedup_at"](0.7, 3, 0.05, 4) == "0.610×"


def test_spec_decode_verify_dense_costs_one_step_and_moe_more():
    dense = MACROS["spec_decode_verify"]("llama-3.1-8b", "h100-sxm", acceptance_rate=0.7, draft_length=3)
    assert "v = 1.00" in dense       # memory-bound dense: verifying 4 tokens reads the same bytes as 1
    moe = MACROS["spec_decode_verify"]("gpt-oss-120b", "h100-sxm", fmt="mxfp4", acceptance_rate=0.7,
                                       draft_length=3)
    # batch 1, top-4 of 128: 4 tokens touch 128 x (1 - (124/128)^4) = 15.3 experts per layer instead of 4
    assert "15.3 for 4 tokens" in moe and "v = 1.00" not in moe
