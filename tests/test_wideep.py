"""Wide expert parallelism (macros/formulas/wideep.py, macros/render/wideep.py): dispatch and combine bytes
against DeepEP's published latency and bandwidth, the layout against DeepSeek's deployment units, EPLB's
replication against the EPLB README's example, and the figure against the same sizing as its table."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from macros import formulas as F
from macros.errors import MacroInputError
from macros.formulas import wideep as WE
from macros.render import MACROS
from macros.render.inputs import cat
from macros.render.wideep import ep_point

README_LOADS = [90, 132, 40, 61, 104, 165, 39, 4, 73, 56, 183, 86]   # EPLB README, layer 0


@pytest.mark.parametrize("ep, dispatch_us, dispatch_gbs, combine_us, combine_gbs", [
    (8, 77, 98, 114, 127), (128, 192, 39, 369, 39), (256, 194, 39, 360, 40)])
def test_dispatch_bytes_reproduce_deepeps_low_latency_table(ep, dispatch_us, dispatch_gbs, combine_us, combine_gbs):
    # DeepEP v1.2.1 README: 128 tokens per batch, hidden 7168, top-8, FP8 dispatch, BF16 combine; its "RDMA
    # bandwidth" column is the bytes moved over the latency column. FP8 carries a float32 scale per 128 channels.
    disp = WE.ep_dispatch_bytes(128, 8, 7168, 1, scale_group=128)
    comb = WE.ep_dispatch_bytes(128, 8, 7168, 2)
    assert disp == 128 * 8 * (7168 + 56 * 4) and comb == 128 * 8 * 7168 * 2
    assert disp / (dispatch_us * 1e-6) / 1e9 == pytest.approx(dispatch_gbs, rel=0.03)
    assert comb / (combine_us * 1e-6) / 1e9 == pytest.approx(combine_gbs, rel=0.03)


def test_layout_matches_deepseeks_deployment_units():
    # DeepSeek's V3/R1 inference overview (Feb 2025): prefill EP32 with 32 redundant experts, 9 routed experts per
    # GPU; decode EP144 with 32 redundant, 2 per GPU. The V3 report's decode unit: EP320, one expert per GPU, with
    # 64 of the 320 GPUs holding the redundant and shared experts (modelled here as 64 redundant copies).
    assert WE.expert_layout(256, 8, 32, 32 * 256, redundant=32).slots_per_gpu == 9
    assert WE.expert_layout(256, 8, 144, 144 * 128, redundant=32).slots_per_gpu == 2
    assert WE.expert_layout(256, 8, 320, 320 * 64, redundant=64).slots_per_gpu == 1
    # 128 tokens per GPU over EP144: 18,432 tokens x 8 = 147,456 pairs over 288 copies = 512 per copy.
    dec = WE.expert_layout(256, 8, 144, 144 * 128, redundant=32)
    assert dec.tokens_per_slot == 512 and dec.tokens_per_gpu == 1024
    assert WE.tokens_per_expert(4096, 8, 256) == 128


def test_layout_hot_expert_and_its_copies():
    # EP 8, 64 experts, top-2, 1,024 tokens: fair share 32 per expert, 256 per GPU. A hot expert at 4x its fair
    # share adds 96 to its GPU: 352, imbalance 1.375; with a second copy on another GPU, 48 each: 304, 1.1875.
    one = WE.expert_layout(64, 2, 8, 1024, hot_factor=4)
    assert one.hot_tokens_per_gpu == 352 and one.imbalance == pytest.approx(1.375)
    two = WE.expert_layout(64, 2, 8, 1024, redundant=8, hot_factor=4, hot_copies=2)
    assert two.hot_tokens_per_gpu == 304 and two.imbalance == pytest.approx(1.1875)
    with pytest.raises(ValueError, match="do not divide over EP 8"):
        WE.expert_layout(64, 2, 8, 1024, redundant=3)
    with pytest.raises(ValueError, match="only 0 exist"):
        WE.expert_layout(64, 2, 8, 1024, hot_factor=2, hot_copies=2)
    with pytest.raises(ValueError, match="hot_factor"):
        WE.expert_layout(64, 2, 8, 1024, hot_factor=0.5)


def test_eplb_replicates_the_experts_the_readme_copies():
    # README: 12 experts, 16 physical copies; layer 0's plan duplicates experts 5, 4, 10 and 1
    # (phy2log [5, 6, 5, 7, 8, 4, 3, 4, 10, 9, 10, 2, 0, 1, 11, 1]). The README's plan comes from the hierarchical
    # policy (4 groups, 2 nodes, 8 GPUs); the global replication picks the same four experts for this layer.
    readme_phy2log = [5, 6, 5, 7, 8, 4, 3, 4, 10, 9, 10, 2, 0, 1, 11, 1]
    counts = WE.eplb_replicate(README_LOADS, 16)
    assert {e for e, c in enumerate(counts) if c > 1} == {e for e in readme_phy2log if readme_phy2log.count(e) > 1}
    # By hand: 183 -> 2 copies (91.5), 165 -> 2 (82.5), 132 -> 2 (66), then the largest is 104.
    assert counts == [1, 2, 1, 1, 2, 2, 1, 1, 1, 1, 2, 1]
    with pytest.raises(ValueError, match="every expert needs a copy"):
        WE.eplb_replicate(README_LOADS, 11)
    with pytest.raises(ValueError, match=r"loads\[1\]"):
        WE.eplb_replicate([1, -1], 2)


def test_eplb_pack_by_hand_and_imbalance():
    # Loads 4, 3, 2, 1 on two GPUs of two copies: 4 -> A, 3 -> B, 2 -> B (3 < 4), 1 -> A: [5, 5].
    assert WE.eplb_pack([4, 3, 2, 1], [1, 1, 1, 1], 2) == [5, 5]
    # One expert per GPU: the busiest GPU is the hottest expert, 183 against a mean of 1033 / 12.
    one_each = WE.eplb_pack(README_LOADS, [1] * 12, 12)
    assert WE.gpu_imbalance(one_each) == pytest.approx(183 / (1033 / 12))
    doubled = WE.eplb_pack(README_LOADS, WE.eplb_replicate(README_LOADS, 24), 12)
    assert sum(doubled) == pytest.approx(1033) and WE.gpu_imbalance(doubled) < 1.1
    with pytest.raises(ValueError, match="do not divide over 5 GPUs"):
        WE.eplb_pack(README_LOADS, [1] * 12, 5)
    with pytest.raises(ValueError, match="all be zero"):
        WE.gpu_imbalance([0, 0])


def test_ep_point_by_hand():
    m, g = cat().model("deepseek-v3"), cat().gpu("h200-sxm")
    p = ep_point(m, g, 144, 128, link_gb_per_s=40)
    b = F.param_breakdown(m)
    assert p.redundant == 32 and p.layout.slots_per_gpu == 2
    assert p.layer.compute_s == pytest.approx(1024 * 2 * b.params_per_expert / g.fp8_dense_flops)
    assert p.layer.dispatch_s == pytest.approx(128 * 8 * 7392 / 40e9)
    assert p.layer.combine_s == pytest.approx(128 * 8 * 7168 * 2 / 40e9)
    assert p.layer.overlapped_s == max(p.layer.expert_s, p.layer.comm_s) < p.layer.serial_s
    inside = ep_point(m, g, 8, 128)
    assert inside.link == "NVLink" and inside.layer.dispatch_s == pytest.approx(
        128 * 8 * 7392 / g.interconnect_bytes_per_s_per_direction)
    with pytest.raises(MacroInputError, match="give link_gb_per_s"):
        ep_point(m, g, 16, 128)
    with pytest.raises(MacroInputError, match="dense model"):
        ep_point(cat().model("llama-3.1-8b"), g, 8, 128)


def test_wide_ep_figure_points_are_the_table_values_where_the_axes_say():
    eps = [8, 16, 32, 64, 144, 256]
    html = MACROS["wide_ep_svg"]("deepseek-v3", "h200-sxm", eps=eps, batch=128, link_gb_per_s=40)
    svg = ET.fromstring(re.search(r"<svg\b.*?</svg>", html, re.S).group(0))
    m, g = cat().model("deepseek-v3"), cat().gpu("h200-sxm")
    yt = {float(t.text): float(t.get("y")) for t in svg.iter("text")
          if t.get("text-anchor") == "end" and (t.text or "").isdigit()}
    xt = {int(t.text): float(t.get("x")) for t in svg.iter("text")
          if t.get("text-anchor") == "middle" and (t.text or "").isdigit()}
    (v0, p0), (v1, p1) = min(yt.items()), max(yt.items())
    pts = [e for e in svg.iter("circle") if e.get("class") == "point"]
    assert len(pts) == 2 * len(eps)
    for el in pts:
        ep = int(float(el.get("data-x")))
        want = ep_point(m, g, ep, 128, link_gb_per_s=40).layer
        us = (want.expert_s if el.get("data-series") == "expert time" else want.comm_s) * 1e6
        assert float(el.get("data-y")) == pytest.approx(us, rel=1e-12)
        assert v0 + (float(el.get("cy")) - p0) / (p1 - p0) * (v1 - v0) == pytest.approx(us, abs=0.5)
        assert float(el.get("cx")) == pytest.approx(xt[ep], abs=0.1)
    # log-2 x axis: EP 16 sits midway between 8 and 32
    assert xt[16] - xt[8] == pytest.approx(xt[32] - xt[16], abs=0.2)
    assert svg.get("role") == "img" and "leaves NVLink" in svg.find("desc").text
    with pytest.raises(MacroInputError, match="ascending"):
        MACROS["wide_ep_svg"]("deepseek-v3", "h200-sxm", eps=[32, 8], link_gb_per_s=40)
    assert math.isfinite(float(pts[0].get("data-y")))
