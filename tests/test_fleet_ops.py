"""Fleet operation formulas (macros/formulas/fleet_ops.py) and their macros, against hand-computed figures
and the definitions in vLLM 0.11's benchmark (vllm/benchmarks/serve.py)."""

from __future__ import annotations

import re

import pytest

from macros import formulas as F
from macros import units as U
from macros.errors import MacroInputError
from macros.render import MACROS

# The eight requests of the Q142 worked example: (TTFT s, E2E s, output tokens).
Q142 = [[0.2, 4.2, 101], [0.3, 12.3, 301], [0.9, 4.9, 101], [0.25, 1.45, 21], [0.4, 2.4, 51],
        [0.35, 24.35, 601], [1.2, 2.2, 11], [0.15, 3.15, 51]]


def reqs(rows):
    return [F.RequestTiming(*r) for r in rows]


# --- TPOT, ITL, goodput ------------------------------------------------------------------------------

def test_tpot_excludes_the_first_token():
    # (8.4 - 0.4) / 200 = 0.04 s; the naive E2E / tokens would give 8.4 / 201 = 0.0418 s
    assert F.tpot_from_e2e(8.4, 0.4, 201) == pytest.approx(0.04)
    assert F.e2e_latency(0.4, 0.04, 201) == pytest.approx(8.4)


@pytest.mark.parametrize("args, match", [((8.4, 0.4, 1), "at least 2"), ((0.3, 0.4, 10), "shorter than ttft"),
                                         ((8.4, -1, 10), "ttft_s"), ((8.4, 0.4, 2.5), "output_tokens")])
def test_tpot_rejects_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        F.tpot_from_e2e(*args)


def test_goodput_of_the_q142_sample_by_hand():
    # TPOTs: 40, 40, 40, 60, 40, 40, 100, 60 ms. TTFT <= 0.5 s: all but #3 (0.9) and #7 (1.2) -> 6.
    # TPOT <= 50 ms: #1, #2, #3, #5, #6 -> 5. Both: #1, #2, #5, #6 -> 4.
    g = F.goodput(reqs(Q142), 30, 0.5, 0.05)
    assert (g.requests, g.ttft_ok, g.tpot_ok, g.good) == (8, 6, 5, 4)
    assert g.attainment == 0.5
    assert g.rate == pytest.approx(4 / 30) and g.throughput == pytest.approx(8 / 30)


def test_mean_tpot_and_pooled_itl_weigh_differently():
    # mean TPOT = (5 x 0.04 + 2 x 0.06 + 0.1) / 8 = 0.0525 s
    # pooled ITL = (4 + 12 + 4 + 1.2 + 2 + 24 + 1 + 3) / (100 + 300 + 100 + 20 + 50 + 600 + 10 + 50) = 51.2 / 1230
    assert F.mean_tpot(reqs(Q142)) == pytest.approx(0.0525)
    assert F.pooled_mean_itl(reqs(Q142)) == pytest.approx(51.2 / 1230)


def test_goodput_limits_are_inclusive_and_one_token_requests_have_zero_tpot():
    # vLLM 0.11: good when limit >= value; a one-token request counts with TPOT 0.
    g = F.goodput(reqs([[0.5, 0.5, 1], [0.5, 2.5, 3]]), 1, 0.5, 1.0)
    assert g.good == 2
    g = F.goodput(reqs([[0.5, 0.5, 1], [0.5, 2.5, 3]]), 1, 0.5, 0.999)
    assert (g.ttft_ok, g.tpot_ok, g.good) == (2, 1, 1)
    with pytest.raises(ValueError, match="at least one request"):
        F.goodput([], 1, 0.5, 0.05)


def test_goodput_macro_shows_the_table_the_bounds_and_both_means():
    html = MACROS["goodput_example"](Q142, duration_s=30, ttft_ms=500, tpot_ms=50)
    assert "both 4/8 (50.0%)" in html
    # Fréchet bounds from the marginals: 6 + 5 - 8 = 3 up to min(6, 5) = 5
    assert "from 3/8 (37.5%) to 5/8 (62.5%)" in html
    assert "mean TPOT = 52.5 ms; mean ITL (pooled gaps) = 41.6 ms" in html
    assert len(re.findall(r"\*\*yes\*\*", html)) == 4
    assert "the mean ITL (41.6 ms) meets the TPOT limit while the mean TPOT (52.5 ms) misses it" in html


@pytest.mark.parametrize("bad, match", [([], "non-empty"), ([[0.2, 4.2]], "item 1"),
                                        ([[0.2, 4.2, 10], [0.5, 0.4, 3]], "item 2: .*shorter")])
def test_goodput_macro_names_the_bad_request(bad, match):
    with pytest.raises(MacroInputError, match=match):
        MACROS["goodput_example"](bad, duration_s=30, ttft_ms=500, tpot_ms=50)


def test_tpot_macro():
    html = MACROS["tpot_example"](8.4, 0.4, 201)
    assert "8.00 s / 200 = 40.0 ms" in html and "25 tokens/s" in html
    with pytest.raises(MacroInputError, match="output_tokens"):
        MACROS["tpot_example"](8.4, 0.4, 1)


# --- Q141: reasoning requests ------------------------------------------------------------------------

def test_kv_byte_seconds_is_exact_across_a_bend():
    # KV grows 100 B/token up to 15 tokens, 50 B/token after (a window bend). Prompt 10, output 10, TPOT 1 s:
    # from the first token (11 tokens held) to the last (20 tokens), 9 s.
    # Trapezoids: (1100 + 1500) / 2 x 4 + (1500 + 1750) / 2 x 5 = 13,325.
    def kv(t):
        return 100 * t if t <= 15 else 1500 + 50 * (t - 15)
    assert F.kv_byte_seconds(kv, 10, 10, 0.5, 1.0, kinks=(15,)) == pytest.approx(13325)
    # without the bend the straight line from 11 to 20 tokens would give (1100 + 1750) / 2 x 9 = 12,825
    assert F.kv_byte_seconds(kv, 10, 10, 0.5, 1.0) == pytest.approx(12825)


def test_kv_byte_seconds_of_gpt_oss_equals_the_step_by_step_sum():
    from macros.render.inputs import cat
    m, kvd = cat().model("gpt-oss-120b"), cat().format("bf16")
    def kv(t):
        return F.kv_bytes_per_sequence(m, t, kvd)
    p, n, tpot = 60, 200, 0.02   # crosses the 128-token window at token 128
    brute = sum((kv(t) + kv(t + 1)) / 2 * tpot for t in range(p + 1, p + n))
    assert F.kv_byte_seconds(kv, p, n, 0.3, tpot, kinks=(128,)) == pytest.approx(brute, rel=1e-12)


def test_cost_per_request_by_hand():
    # $3.60 per replica-hour = $0.001/s; a 20 s request sharing the replica with 9 others: 0.001 x 20 / 10
    assert F.cost_per_request(3.6, 20, 10) == pytest.approx(0.002)


def test_reasoning_request_macro():
    html = MACROS["reasoning_request"]("gpt-oss-120b", prompt=2000, answer=500, reasoning="8K", ttft_s=0.5,
                                       tpot_s=0.02)
    # E2E = 0.5 + 8,691 x 0.02 = 174.32 s = 2.91 min; first answer = 0.5 + 8,192 x 0.02 = 164.34 s = 2.74 min
    assert "= 2.91 min (without reasoning: 10.5 s)" in html
    assert "first answer token = 500.0 ms + 8,192 × 20.0 ms = 2.74 min" in html


def _ticks(svg):
    """Axis tick labels read from the drawing: (x value -> pixel, y value -> pixel)."""
    def read(anchor, attr):
        return {float(t.text.replace(",", "")): float(t.get(attr)) for t in svg.iter("text")
                if t.get("text-anchor") == anchor and re.fullmatch(r"[\d,.]+", t.text or "")}
    return read("middle", "x"), read("end", "y")


def val(ticks, pixel):
    """The value at ``pixel`` on a linear axis, from its outermost labelled ticks."""
    (v0, p0), (v1, p1) = min(ticks.items()), max(ticks.items())
    return v0 + (pixel - p0) / (p1 - p0) * (v1 - v0)


def _svg(html):
    import xml.etree.ElementTree as ET
    return ET.fromstring(re.search(r"<svg\b.*?</svg>", html, re.S).group(0))


def test_chat_vs_reasoning_figure_ends_where_the_table_says():
    from macros.render.reasoning import chat_vs_reasoning_data
    from macros.render.inputs import cat
    kw = dict(fmt="bf16", expert_fmt="mxfp4", prompt=2000, chat_output=500, reasoning_output=8692, ttft_s=0.5,
              tpot_s=0.02)
    svg = _svg(MACROS["chat_vs_reasoning_svg"]("gpt-oss-120b", "h100-sxm", **kw))
    table = MACROS["chat_vs_reasoning"]("gpt-oss-120b", "h100-sxm", **kw)
    m, kvd = cat().model("gpt-oss-120b"), cat().format("bf16")
    xt, yt = _ticks(svg)

    lines = [e for e in svg.iter() if e.get("class") == "regime"]
    assert [e.get("data-label") for e in lines] == ["chat", "reasoning"]
    for el, n in zip(lines, (500, 8692), strict=True):
        e2e, peak = F.e2e_latency(0.5, 0.02, n), F.kv_bytes_per_sequence(m, 2000 + n, kvd)
        assert float(el.get("data-e2e")) == pytest.approx(e2e) and float(el.get("data-peak")) == pytest.approx(peak)
        x, y = map(float, el.get("points").split()[-1].split(","))
        assert val(xt, x) == pytest.approx(e2e, rel=0.01)
        assert val(yt, y) * 1e6 == pytest.approx(peak, rel=0.01)
        assert f"| {U.fmt_seconds(e2e)} | {U.fmt_bytes(peak)} |" in table
    d = chat_vs_reasoning_data(m, cat().gpu("h100-sxm"), cat().format("bf16"), cat().format("mxfp4"), kvd, 2000, 500,
                               8692, 0.5, 0.02)
    # the cost is the KV share of the GPU's price: price/s x byte-seconds / pool
    for r in d.regimes:
        assert r.cost == pytest.approx(d.price / 3600 * r.kv_byte_seconds / d.pool)
    assert svg.get("role") == "img" and svg.find("title") is not None and svg.find("desc") is not None


def test_chat_vs_reasoning_rejects_a_model_that_does_not_fit():
    with pytest.raises(MacroInputError, match="does not fit"):
        MACROS["chat_vs_reasoning"]("llama-3.1-70b", "l4", fmt="bf16")


# --- Q143: admission ---------------------------------------------------------------------------------

def test_shed_threshold_and_wait_by_hand():
    # (2 - 0.05) s x 1,000 tokens/s - 300 own tokens = 1,650 tokens may wait ahead
    assert F.shed_threshold_tokens(2, 300, 1000, 0.05) == 1650
    assert F.shed_threshold_tokens(0.2, 300, 1000) == 0        # own prefill alone misses the SLO
    assert F.predicted_wait(5000, 1000) == 5
    assert F.prefill_rate_under_budget(8192, 192, 0.1) == pytest.approx(80000)
    with pytest.raises(ValueError, match="no tokens are left"):
        F.prefill_rate_under_budget(256, 256, 0.1)


def test_admission_example_step_time_from_the_llama_architecture():
    # Llama 3.1 8B: 32 layers of q, o (4096 x 4096), k, v (4096 x 1024), MLP 3 x 4096 x 14336; LM head
    # 128256 x 4096. Step of 8,192 tokens, LM head at 129 positions, on 989.5e12 FLOP/s x 0.5.
    layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336
    # plus the 65 RMSNorm weight vectors (two per layer, one final), which prefill_matmul_flops counts as params
    flops = 2 * (32 * layer + 65 * 4096) * 8192 + 2 * 128256 * 4096 * 129
    step = flops / (989.5e12 * 0.5)
    rate = (8192 - 128) / step
    html = MACROS["admission_example"]("llama-3.1-8b", "h100-sxm", token_budget=8192, decode_seqs=128, mfu=0.5,
                                       mean_prompt=3000, prompt=3000, ttft_slo_s=2, overhead_s=0.05,
                                       queued=[0, 40])
    assert f"{rate:,.1f} prompt tokens/s" in html
    limit = int((2 - 0.05) * rate - 3000)
    assert f"= {limit:,} tokens" in html
    assert "| 40 | 120,000 |" in html and "**shed**" in html
    with pytest.raises(MacroInputError, match="queued"):
        MACROS["admission_example"]("llama-3.1-8b", "h100-sxm", queued=[])


# --- Q145: failure domains -----------------------------------------------------------------------------

def test_instance_availability_and_rates_by_hand():
    # 0.99^32 = exp(32 ln 0.99) = 0.72498; four 8-GPU instances: 4 x 0.99^8 = 4 x 0.922745
    assert F.instance_availability(0.99, 32) == pytest.approx(0.72498, abs=1e-5)
    assert F.expected_serving_instances(0.99, 8, 4) == pytest.approx(3.69098, abs=1e-5)
    assert F.instance_failure_rate(0.1, 32) == pytest.approx(3.2)
    # 60 + 120 + 20 GB / 2 GB/s + 180 = 370 s
    assert F.recovery_time(60, 120, 20e9, 2e9, 180) == pytest.approx(370)
    with pytest.raises(ValueError, match="gpu_availability"):
        F.instance_availability(1.2, 8)


def test_failure_domains_macro_by_hand():
    # λ = 256 / (16,384 x 54 / 365) per GPU-year; DeepSeek-V3 FP8 weights from the catalog split over N GPUs
    from macros.render.inputs import cat
    w = F.weight_bytes(cat().model("deepseek-v3"), cat().format("fp8"))
    lam = 256 / (16384 * 54 / 365)
    html = MACROS["failure_domains"]("deepseek-v3", "h200-sxm", fmt="fp8", total_gpus=32, sizes=[8, 32],
                                     failures=256, gpus_observed=16384, days=54, detect_s=60, reschedule_s=120,
                                     load_gb_per_s=2, warmup_s=180)
    for n in (8, 32):
        rec = 60 + 120 + w / n / 2e9 + 180
        p = 1 / (1 + lam * rec / (365 * 86400))
        assert f"| {p ** n:.6%} |" in html
        lost = 32 * lam * n * rec / 3600          # GPU-hours idle per year: failures x N GPUs x recovery
        assert f"| {U.fmt_num(lost)} |" in html
    assert "3.38 |" in html                        # 32 x λ instance failures per year for N = 32
    with pytest.raises(MacroInputError, match="does not divide"):
        MACROS["failure_domains"]("deepseek-v3", "h200-sxm", total_gpus=32, sizes=[12])
    with pytest.raises(MacroInputError, match="more than a"):
        MACROS["failure_domains"]("deepseek-v3", "h200-sxm", total_gpus=32, sizes=[4, 32])


# --- Q140: KV across a tool call -------------------------------------------------------------------------

def test_session_prefill_tokens_by_hand():
    # system 100, new 10, output 5, three turns: 110, 100 + 15 + 10, 100 + 30 + 10
    assert F.session_prefill_tokens(100, 10, 5, 3, cached=False) == [110, 125, 140]
    assert F.session_prefill_tokens(100, 10, 5, 3, cached=True) == [110, 10, 10]
    with pytest.raises(ValueError, match="turns"):
        F.session_prefill_tokens(100, 10, 5, 0, cached=True)


def test_hold_cost_and_break_even_by_hand():
    # 4 GB idle in a 40 GB pool for 20 s at $0.001/s: 0.001 x 0.1 x 20 = $0.002; a 1.5 s recompute costs $0.0015,
    # so the break-even idle time is 1.5 x 40 / 4 = 15 s
    assert F.kv_hold_cost(4e9, 20, 40e9, 0.001) == pytest.approx(0.002)
    assert F.break_even_hold_seconds(1.5, 4e9, 40e9) == pytest.approx(15)
    assert F.kv_hold_cost(4e9, 15, 40e9, 0.001) == pytest.approx(0.001 * 1.5)
    with pytest.raises(ValueError, match="exceeds the KV pool"):
        F.kv_hold_cost(50e9, 1, 40e9, 0.001)


def test_kv_hold_figure_crosses_at_the_break_even_of_the_table():
    from macros.render.agentic import hold_vs_recompute_data
    from macros.render.inputs import cat
    m, g, f = cat().model("llama-3.1-8b"), cat().gpu("h100-sxm"), cat().format("bf16")
    d = hold_vs_recompute_data(m, g, f, f, 32768, 0.5, 25)
    # independent: KV = 2 x 32 layers x 8 heads x 128 x 2 bytes x 32,768 tokens
    assert d.kv == 2 * 32 * 8 * 128 * 2 * 32768
    assert d.break_even_s == pytest.approx(d.prefill_s * d.pool / d.kv)
    svg = _svg(MACROS["kv_hold_svg"]("llama-3.1-8b", "h100-sxm", context="32K", mfu=0.5, link_gb_per_s=25))
    xt, yt = _ticks(svg)

    be = next(e for e in svg.iter() if e.get("class") == "break-even")
    x = float(re.match(r"M([\d.]+),", be.get("d")).group(1))
    assert val(xt, x) == pytest.approx(d.break_even_s, rel=0.01)
    rec = next(e for e in svg.iter() if e.get("class") == "recompute")
    y = float(rec.get("points").split()[0].split(",")[1])
    assert val(yt, y) == pytest.approx(d.prefill_s, rel=0.01)
    # the hold line reaches the recompute level exactly at the break-even gap
    hold = next(e for e in svg.iter() if e.get("class") == "hold")
    assert float(hold.get("data-slope")) * d.break_even_s == pytest.approx(d.prefill_s)
    html = MACROS["kv_between_turns"]("llama-3.1-8b", "h100-sxm", context="32K", mfu=0.5, gap_s=30,
                                      link_gb_per_s=25)
    assert f"break-even {U.fmt_seconds(d.break_even_s)}" in html and "recomputing is cheaper" in html
