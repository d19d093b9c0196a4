"""Capacity plan, the self-host vs API cost curve and its chart, LoRA slot memory (macros/formulas/costplan.py,
macros/render/costplan.py, macros/render/costchart.py). Expected figures are worked out by hand in the comments."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from macros.catalog import load_catalog
from macros.errors import MacroInputError
from macros.formulas import (capacity_plan, cascade_breakeven_escalation, cascade_cost, cascade_quality,
                             cheaper_windows, weighted_tokens, first_crossover_volume, keep_warm_tradeoff,
                             lora_slot_params, self_host_monthly_cost, self_host_usd_per_million)
from macros.render import MACROS

SVG = "{http://www.w3.org/2000/svg}"
MONTH_S = 730 * 3600  # 2,628,000 s


def test_capacity_plan_six_steps_by_hand():
    plan = capacity_plan(peak_rps=40, input_tokens=1500, output_tokens=400, latency_s=8.5,
                         per_replica_output_tps=2800, gpus_per_replica=4, usd_per_gpu_hour=2.95,
                         target_utilization=0.7, redundancy=1, average_to_peak=0.5)
    assert (plan.peak_input_tps, plan.peak_output_tps) == (60_000, 16_000)
    assert plan.concurrency == pytest.approx(340)              # 40/s x 8.5 s
    assert (plan.base_replicas, plan.replicas, plan.gpus) == (9, 10, 40)  # ceil(16000/1960) = 9
    assert plan.monthly_usd == pytest.approx(86_140)            # 40 x 2.95 x 730
    assert plan.monthly_tokens == pytest.approx(99_864_000_000)  # 76,000 x 0.5 x 2,628,000
    assert plan.usd_per_million == pytest.approx(86_140 / 99_864, rel=1e-9)  # $0.8626
    assert plan.fleet_utilization == pytest.approx(8_000 / 28_000)
    # busy: 10 x 2,800 output tok/s x (1,900 / 400) total/output = 133,000 tok/s all month
    assert plan.busy_usd_per_million == pytest.approx(86_140 / (133_000 * MONTH_S) * 1e6)


def test_capacity_plan_rejects_nonsense():
    with pytest.raises(ValueError, match="average_to_peak"):
        capacity_plan(peak_rps=1, input_tokens=1, output_tokens=1, latency_s=1, per_replica_output_tps=1,
                      gpus_per_replica=1, usd_per_gpu_hour=1, average_to_peak=1.5)
    with pytest.raises(ValueError, match="per_replica_output_tps"):
        capacity_plan(peak_rps=1, input_tokens=1, output_tokens=1, latency_s=1, per_replica_output_tps=0,
                      gpus_per_replica=1, usd_per_gpu_hour=1)


# One H100 at $2.95/h = $2,153.50 a month; 5,000 tok/s x 0.6 = 7.884e9 tokens a month per replica;
# API $0.28 in / $0.83 out blended at 75% input = $0.4175 per million.
R, C, P = 2.95 * 730, 5000 * 0.6 * MONTH_S, 0.28 * 0.75 + 0.83 * 0.25


def test_self_host_cost_steps_with_whole_replicas():
    assert self_host_monthly_cost(0, R, C) == pytest.approx(R)            # the floor: one replica
    assert self_host_monthly_cost(C, R, C) == pytest.approx(R)            # exactly full
    assert self_host_monthly_cost(C * 1.001, R, C) == pytest.approx(2 * R)
    assert self_host_usd_per_million(1e9, R, C) == pytest.approx(2153.5 / 1000)


def test_first_crossover_by_hand_and_never_cheaper():
    assert first_crossover_volume(R, C, P) == pytest.approx(2153.5 / 0.4175 * 1e6)  # 5,158,083,832 tokens
    # a replica that serves only 1e9 tokens a month costs $2.15 per million when full: never below the API
    assert first_crossover_volume(R, 1e9, P) is None
    assert cheaper_windows(R, 1e9, P, 5) == []


def test_cheaper_windows_reopen_after_each_replica():
    w = cheaper_windows(R, C, P, 3)
    v1 = 2153.5 / 0.4175 * 1e6
    assert w[0] == pytest.approx((v1, C))
    assert w[1] == pytest.approx((2 * v1, 2 * C))          # 2R/p = 10.3e9 > C: the API wins again just past C
    assert w[2] == pytest.approx((max(3 * v1, 2 * C), 3 * C))


def _chart(**kw):
    cat = load_catalog()
    from macros.render.costchart import cost_curve_svg
    args = dict(n_gpus=1, tokens_per_s=5000, utilization=0.6, input_share=0.75)
    args.update(kw)
    return ET.fromstring(cost_curve_svg(cat.gpu("h100-sxm"), cat.api_price("llama-3.1-8b-hosted"), **args))


def test_chart_marks_the_crossing_where_the_formula_puts_it():
    svg = _chart()
    x0, y0, x1, y1 = (float(v) for v in svg.get("data-plot").split())
    lx0, lx1 = math.log10(float(svg.get("data-x-min"))), math.log10(float(svg.get("data-x-max")))
    ly0, ly1 = math.log10(float(svg.get("data-y-min"))), math.log10(float(svg.get("data-y-max")))
    mark = svg.find(f"{SVG}circle[@class='crossing']")
    cx, cy = float(mark.get("cx")), float(mark.get("cy"))
    volume = 10 ** (lx0 + (cx - x0) / (x1 - x0) * (lx1 - lx0))
    price = 10 ** (ly0 + (y1 - cy) / (y1 - y0) * (ly1 - ly0))
    # the crossover formula: $/h x GPUs / 3600 / (p / 1e6) tokens/s, times the seconds of a 730 h month
    assert volume == pytest.approx(2.95 / 3600 / (P / 1e6) * MONTH_S, rel=2e-3)
    assert price == pytest.approx(P, rel=2e-3)
    # the marker sits on both plotted curves
    api = svg.find(f"{SVG}line[@class='api']")
    assert float(api.get("y1")) == pytest.approx(cy, abs=0.06)  # coordinates are written to 0.1 px
    pts = [tuple(map(float, p.split(","))) for p in svg.find(f"{SVG}polyline").get("points").split()]
    assert min(math.hypot(px - cx, py - cy) for px, py in pts) < 0.5


def test_chart_is_accessible_and_theme_neutral():
    svg = _chart()
    assert svg.get("role") == "img"
    t, d = svg.find(f"{SVG}title"), svg.find(f"{SVG}desc")
    assert svg.get("aria-labelledby") == f"{t.get('id')} {d.get('id')}"
    assert "2026-11-30" in d.text or load_catalog().prices.as_of in d.text
    assert svg.get("fill") == "currentColor"
    # Material sizes figures to fit their content: without an intrinsic width the chart collapses to 0 px
    assert svg.get("width") and svg.get("height") and "max-width" in svg.get("style")
    colours = [el.get(a) for el in svg.iter() for a in ("fill", "stroke") if el.get(a)]
    assert all(c in ("none", "currentColor") or c.startswith("var(--md-") for c in colours), colours


def test_chart_without_a_crossing_has_no_marker():
    svg = _chart(tokens_per_s=300, utilization=0.5)  # 3.9e8 tokens a month per replica: never cheaper
    assert svg.find(f"{SVG}circle[@class='crossing']") is None
    assert "never falls below" in svg.find(f"{SVG}desc").text


def test_lora_slot_params_by_hand():
    cat = load_catalog()
    # Llama-3.1-8B: h 4096, q 4096, kv 1024, MLP 14336, 32 layers. Per layer at rank 16:
    # 16 x [(4096+4096) + 2 x (4096+1024) + (4096+4096) + 2 x (4096+14336) + (14336+4096)] = 16 x 81,920
    assert lora_slot_params(cat.model("llama-3.1-8b"), 16) == 16 * 81_920 * 32  # 41,943,040
    with pytest.raises(ValueError, match="mixture-of-experts"):
        lora_slot_params(cat.model("deepseek-v3"), 16)


def test_adapter_budget_rejects_a_rank_vllm_refuses():
    with pytest.raises(MacroInputError, match="max-lora-rank"):
        MACROS["adapter_budget"]("llama-3.1-8b", "h100-sxm", rank=24)


def test_cost_curve_rejects_bad_utilization():
    with pytest.raises(MacroInputError, match="utilization"):
        MACROS["cost_curve"]("h100-sxm", "llama-3.1-8b-hosted", utilization=1.5)


def test_keep_warm_tradeoff_by_hand():
    # 2 requests an hour, 15-minute idle timeout: lambda x T = 2/3600 x 900 = 0.5; e^-0.5 = 0.60653
    cold, loaded = keep_warm_tradeoff(2, 900)
    assert cold == pytest.approx(0.60653, abs=1e-5) and loaded == pytest.approx(0.39347, abs=1e-5)
    assert keep_warm_tradeoff(0, 900) == (1.0, 0.0)        # no traffic: every request is cold, never loaded
    with pytest.raises(ValueError, match="keep_warm_s"):
        keep_warm_tradeoff(2, -1)


def test_residency_table_rows_and_errors():
    out = MACROS["residency_table"]("h100-sxm", models=["llama-3.1-8b", "llama-3.1-70b"], fmts=["bf16", "fp8"],
                                    rates_per_hour=[2, 600], storage_gb_per_s=2, keep_warm_s=900)
    rows = [r for r in out.splitlines() if r.startswith("| [")]
    assert "| 60.7% | 39.3% | on demand |" in rows[0]
    # 70B in FP8 is more than 0.6 x one H100 -> 2 GPUs; 600/h x 900 s = 150 requests per timeout: pinned
    assert "| 2 |" in rows[1] and rows[1].endswith("| resident |")
    with pytest.raises(MacroInputError, match="same non-zero length"):
        MACROS["residency_table"]("h100-sxm", models=["llama-3.1-8b"], fmts=["bf16", "fp8"], rates_per_hour=[1],
                                  storage_gb_per_s=2)


def test_cascade_by_hand():
    # small $0.40, large $0.75 per 1,000 requests; 30% escalate: 0.40 + 0.3 x 0.75 = 0.625
    assert cascade_cost(0.40, 0.75, 0.3) == pytest.approx(0.625)
    assert cascade_cost(0.40, 0.75, 0.3, router_usd=0.01) == pytest.approx(0.635)
    # break-even: 0.40 + d x 0.75 = 0.75 -> d = 0.4667
    assert cascade_breakeven_escalation(0.40, 0.75) == pytest.approx(1 - 0.40 / 0.75)
    assert cascade_breakeven_escalation(0.80, 0.75) == 0.0   # small dearer than large: never saves
    assert cascade_quality(0.9, 0.85, 0.3) == pytest.approx(0.7 * 0.9 + 0.3 * 0.85)  # 0.885
    with pytest.raises(ValueError, match="escalation_rate"):
        cascade_cost(0.4, 0.75, 1.2)


def test_cascade_macro_says_when_it_costs_more():
    out = MACROS["cascade"]("llama-3.1-8b-hosted", "deepseek-v3-hosted", input_tokens=1500, output_tokens=300,
                            escalation_rate=0.3, kept_accuracy=0.9, escalated_accuracy=0.85, quality_floor=0.87)
    assert "more than sending everything to the large model" in out and "meets the floor" in out
    with pytest.raises(MacroInputError, match="quality_floor"):
        MACROS["cascade"]("llama-3.1-8b-hosted", "deepseek-v3-hosted", input_tokens=1, output_tokens=1,
                          escalation_rate=0.3, kept_accuracy=0.9, escalated_accuracy=0.85, quality_floor=1.5)


def test_weighted_tokens_and_tenant_table_by_hand():
    assert weighted_tokens(6000, 300) == 6300
    assert weighted_tokens(6000, 300, input_weight=0.1) == pytest.approx(900)
    with pytest.raises(ValueError, match="at least one"):
        weighted_tokens(0, 0)
    out = MACROS["tenant_limits"](names=["chat", "summarize"], input_tokens=[800, 20000], output_tokens=[200, 1000],
                                  request_limit=10, capacity_tps=150000)
    rows = [r for r in out.splitlines() if r.startswith("| chat") or r.startswith("| summarize")]
    # chat: 10/s x 1,000 = 10,000 tokens/s = 6.67% of 150,000; budget 75,000 / 1,000 = 75 requests/s
    assert "| 10,000.0 tokens/s | 6.67% | 75 |" in rows[0]
    # summarize: 10/s x 21,000 = 210,000 tokens/s = 140% of capacity; 75,000 / 21,000 = 3.57 requests/s
    assert "| 210,000.0 tokens/s | 140.0% | 3.57 |" in rows[1]
    assert "summarize alone may send 140.0%" in out
