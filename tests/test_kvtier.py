"""KV tiers (macros/formulas/kvtier.py, macros/render/kvtier.py): reload time, tier capacity, retention and
the break-even hit rate against hand computation, and the figure against the same formulas as its table."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from macros import formulas as F
from macros.errors import MacroInputError
from macros.formulas import kvtier as K
from macros.render import MACROS
from macros.render.inputs import cat
from macros.render.kvtier import recompute_s

TIERS = dict(tier_names=["CPU memory", "local NVMe", "remote pool"], tier_gb_per_s=[50, 6, 40],
             tier_capacity_gb=[500, 8000, 20000], tier_latency_ms=[0.1, 1, 2])


def test_reload_capacity_and_retention_by_hand():
    # Llama-3.1-70B, FP8 KV: 160 KiB per token. A 32,768-token prefix is 5,368,709,120 bytes; at 100 GB/s with
    # 0.1 ms of latency it reloads in 0.1 ms + 53.687 ms.
    assert K.reload_time(32768, 163840, 100e9, 1e-4) == pytest.approx(1e-4 + 5_368_709_120 / 1e11)
    # 1 TB of host memory holds 10^12 / 163,840 = 6,103,515.6 tokens; at 100,000 new tokens/s that is 61 s.
    assert K.tier_tokens(1e12, 163840) == 6_103_515
    assert K.retention_s(6_103_515, 1e5) == pytest.approx(61.03515)
    assert K.tier_tokens(163840 * 3, 163840) == 3   # exactly three, not two from float noise
    for bad in ((-1, 1, 1), (1, 0, 1), (1, 1, 0)):
        with pytest.raises(ValueError):
            K.reload_time(*bad)


@pytest.mark.parametrize("call", [
    lambda: K.reload_time(1024, 1, math.nan), lambda: K.reload_time(1024, 1, math.inf),
    lambda: K.reload_time(1024, math.nan, 1), lambda: K.reload_time(1.5, 1, 1), lambda: K.reload_time(True, 1, 1),
    lambda: K.reload_time(1024, 1, 1, -1e-3), lambda: K.reload_time(1024, 1, 1, math.inf),
    lambda: K.tier_tokens(math.inf, 1), lambda: K.tier_tokens(-1, 1), lambda: K.tier_tokens(1e12, 0),
    lambda: K.tier_tokens(1e12, 1e-300),  # the quotient overflows to inf
    lambda: K.retention_s(math.nan, 1), lambda: K.retention_s(10, 0), lambda: K.retention_s(10, math.inf),
    lambda: K.break_even_hit_rate(0, 0), lambda: K.break_even_hit_rate(math.nan, 0.1),
    lambda: K.break_even_hit_rate(1, math.inf), lambda: K.break_even_hit_rate(1, 0.1, -1),
])
def test_bad_inputs_raise_value_errors_naming_the_input(call):
    with pytest.raises(ValueError, match=r"_s\b|_bytes|tokens|capacity"):
        call()


def test_break_even_hit_rate_by_hand():
    # Recompute 1 s, reload 0.2 s, a miss costs 10 ms: h* = 0.01 / (0.8 + 0.01).
    assert K.break_even_hit_rate(1.0, 0.2, 0.01) == pytest.approx(0.01 / 0.81)
    # At h*, the expected saving h (R - L) - (1 - h) m is zero.
    h = K.break_even_hit_rate(1.0, 0.2, 0.01)
    assert h * 0.8 - (1 - h) * 0.01 == pytest.approx(0, abs=1e-12)
    assert K.break_even_hit_rate(1.0, 0.5) == 0            # free misses: any hit pays
    assert K.break_even_hit_rate(1.0, 1.0, 0.01) == math.inf  # reload no faster: never pays
    assert K.break_even_hit_rate(1.0, 1.5) == math.inf


def test_plan_table_uses_the_formulas():
    m, g = cat().model("llama-3.1-70b"), cat().gpu("h100-sxm")
    html = MACROS["kv_tier_plan"]("llama-3.1-70b", "h100-sxm", tokens="32K", fmt="fp8", kv_dtype="fp8", n_gpus=4,
                                  miss_ms=1, new_tokens_per_s=100000, **TIERS)
    rec = recompute_s(m, g, cat().format("fp8"), 4, 32768, 0.5)
    flops = F.prefill_matmul_flops(m, 32768, 0) + F.prefill_attention_flops(m, 32768)
    assert rec == pytest.approx(flops / (4 * g.fp8_dense_flops * 0.5))
    bpt = F.kv_bytes_per_token(m, cat().format("fp8"))
    assert bpt == 163840
    row = next(r for r in html.splitlines() if r.startswith("| CPU memory |"))
    assert f"| {K.tier_tokens(500e9, bpt):,} |" in row
    with pytest.raises(MacroInputError, match="same, non-zero length"):
        MACROS["kv_tier_plan"]("llama-3.1-8b", "h100-sxm", tokens=1024, tier_names=["a"], tier_gb_per_s=[1, 2],
                               tier_capacity_gb=[1], tier_latency_ms=[0])
    with pytest.raises(MacroInputError, match="above 0"):
        MACROS["kv_tier_plan"]("llama-3.1-8b", "h100-sxm", tokens=1024, tier_names=["a"], tier_gb_per_s=[0],
                               tier_capacity_gb=[1], tier_latency_ms=[0])


def test_tier_figure_points_are_the_formula_ratios_where_the_axes_say():
    lengths = [1024, 2048, 4096, 8192, 16384, 32768, 65536]
    html = MACROS["kv_tier_svg"]("llama-3.1-8b", "h100-sxm", lengths=lengths, **TIERS)
    svg = ET.fromstring(re.search(r"<svg\b.*?</svg>", html, re.S).group(0))
    m, g, bf16 = cat().model("llama-3.1-8b"), cat().gpu("h100-sxm"), cat().format("bf16")
    bpt = F.kv_bytes_per_token(m, bf16)
    yt = {float(t.text): float(t.get("y")) for t in svg.iter("text")
          if t.get("text-anchor") == "end" and re.fullmatch(r"[\d.]+", t.text or "")}
    (v0, p0), (v1, p1) = min(yt.items()), max(yt.items())
    pts = [e for e in svg.iter("circle") if e.get("class") == "point"]
    assert len(pts) == 3 * len(lengths)
    specs = dict(zip(TIERS["tier_names"], zip(TIERS["tier_gb_per_s"], TIERS["tier_latency_ms"], strict=True),
                     strict=True))
    for el in pts:
        L = int(float(el.get("data-x")))
        gbs, lat = specs[el.get("data-series")]
        want = K.reload_time(L, bpt, gbs * 1e9, lat / 1e3) / recompute_s(m, g, bf16, 1, L, 0.5)
        assert float(el.get("data-y")) == pytest.approx(want, rel=1e-12)
        assert v0 + (float(el.get("cy")) - p0) / (p1 - p0) * (v1 - v0) == pytest.approx(want, abs=0.01)
    line = next(e for e in svg.iter("path") if e.get("class") == "hline")
    y_line = float(re.search(r"M[\d.]+,([\d.]+)H", line.get("d")).group(1))
    assert v0 + (y_line - p0) / (p1 - p0) * (v1 - v0) == pytest.approx(1, abs=0.01)
    assert svg.get("role") == "img" and "faster than computing it again" in svg.find("desc").text
    with pytest.raises(MacroInputError, match="ascending"):
        MACROS["kv_tier_svg"]("llama-3.1-8b", "h100-sxm", lengths=[4096, 1024], **TIERS)
