"""Fleet-scale sizing (macros/formulas/disagg.py, macros/render/disagg.py): the M/D/1 prefill pool and the
Little's-law decode pool against hand computation, the split from measured throughput against DeepSeek's
published node count, and the pools figure against the same sizing as its table."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from macros.errors import MacroInputError
from macros.formulas import disagg as D
from macros.render import MACROS
from macros.render.disagg import pd_rows
from macros.render.inputs import cat

PLAN = dict(arrival_rate=40, input_tokens=2000, fmt="fp8", kv_dtype="fp8", prefill_gpus=4, decode_gpus=4,
            ttft_ms=500, tpot_ms=25)


# ---------------------------------------------------------------- formulas, by hand

def test_md1_wait_is_half_the_mm1_wait():
    # lambda = 5/s, D = 0.1 s: rho = 0.5; M/D/1 Wq = 0.5 x 0.1 / (2 x 0.5) = 0.05 s.
    assert D.md1_wait(5, 0.1) == pytest.approx(0.05)
    # The textbook relation: deterministic service halves the M/M/1 wait rho / (mu (1 - rho)) = 0.1 s.
    mm1 = 0.5 / (10 * (1 - 0.5))
    assert D.md1_wait(5, 0.1) == pytest.approx(mm1 / 2)
    assert D.md1_ttft(5, 0.1) == pytest.approx(0.15)
    assert D.md1_wait(0, 0.1) == 0


def test_md1_ttft_is_distserves_equation_1_with_replicas():
    # DistServe (OSDI 2024) eq. 1: Avg_TTFT = D + R D^2 / (2 (1 - R D)); R = 3/s, D = 0.2 s: 0.2 + 0.12 / 0.8 = 0.35 s.
    # The same wait in the textbook form rho / (2 mu (1 - rho)), mu = 1/D = 5/s, rho = 0.6: 0.6 / 4 = 0.15 s.
    assert D.md1_ttft(3, 0.2) == pytest.approx(0.35)
    assert D.md1_wait(3, 0.2) == pytest.approx(0.6 / (2 * 5 * (1 - 0.6)))
    # N replicas sharing the traffic evenly: R becomes lambda / N (DistServe section 3.2). lambda = 9/s over 3 replicas.
    n = D.prefill_instances(9, 0.2, 0.35)
    assert n == 3 and D.md1_ttft(9 / n, 0.2) == pytest.approx(0.35)
    # two replicas: rho = 0.9, wait 0.9 x 0.2 / (2 x 0.1) = 0.9 s, TTFT 1.1 s: too slow, so three are needed.
    assert D.md1_ttft(9 / 2, 0.2) == pytest.approx(1.1)


def test_md1_refuses_a_saturated_queue():
    with pytest.raises(ValueError, match="must be below 1"):
        D.md1_wait(10, 0.1)
    with pytest.raises(ValueError, match="service_s"):
        D.md1_wait(1, 0)


def test_prefill_instances_by_hand():
    # lambda = 20/s, D = 0.1 s: 2 instances saturate (rho = 1); 3 give rho = 2/3 and
    # TTFT = 0.1 + (2/3)(0.1) / (2/3) = 0.2 s; 4 give rho = 1/2 and 0.15 s.
    assert D.prefill_instances(20, 0.1, 0.2) == 3
    assert D.prefill_instances(20, 0.1, 0.19) == 4
    assert D.prefill_instances(20, 0.1, 0.15) == 4
    assert D.prefill_instances(0.5, 0.1, 5) == 1
    with pytest.raises(ValueError, match="more instances cannot meet it"):
        D.prefill_instances(20, 0.1, 0.1)
    with pytest.raises(ValueError, match="arrival_rate"):
        D.prefill_instances(-1, 0.1, 1)


def test_decode_pool_by_littles_law():
    # 40 requests/s x 500 output tokens x 25 ms = 500 sequences in decode; 509 per instance -> 1 instance.
    assert D.decode_concurrency(40, 500, 0.025) == pytest.approx(500)
    assert D.decode_instances(500, 509) == 1
    assert D.decode_instances(1500, 387) == 4     # 3.88 -> 4
    assert D.decode_instances(774, 387) == 2      # exactly 2, not 3 from float noise
    with pytest.raises(ValueError, match="batch_per_instance"):
        D.decode_instances(10, 0)
    p = D.pd_pools(20, 0.1, 0.2, 500, 0.025, 100, gpus_per_prefill=2, gpus_per_decode=4)
    assert (p.prefill_instances, p.prefill_gpus, p.decode_instances, p.decode_gpus) == (3, 6, 3, 12)
    assert p.ttft_s == pytest.approx(0.2) and p.decode_to_prefill == 2 and p.total_gpus == 18


def test_outputs_triple_decode_triples_prefill_does_not_move():
    short = D.pd_pools(20, 0.1, 0.2, 300, 0.02, 50)
    long = D.pd_pools(20, 0.1, 0.2, 900, 0.02, 50)
    assert long.prefill_gpus == short.prefill_gpus
    assert long.decode_concurrency == pytest.approx(3 * short.decode_concurrency)


# ---------------------------------------------------------------- the worked example and the figure

def test_plan_table_matches_the_formulas():
    m, g, f = cat().model("llama-3.1-70b"), cat().gpu("h100-sxm"), cat().format("fp8")
    t_pre, rows = pd_rows(m, g, 40, 2000, [500, 1500], f, f, 4, 4, 0.5, 0.025, 0.5, 0.9)
    # Prefill time is the prefill_time formula at MFU 0.5 on 4 GPUs' FP8 peak.
    from macros import formulas as F
    flops = F.prefill_matmul_flops(m, 2000, 1) + F.prefill_attention_flops(m, 2000)
    assert t_pre == pytest.approx(flops / (4 * g.fp8_dense_flops * 0.5))
    for r in rows:
        assert r.tpot_s <= 0.025
        assert r.context == 2000 + r.output_tokens // 2
        assert r.pools.decode_concurrency == pytest.approx(40 * r.output_tokens * r.tpot_s)
        assert r.pools.prefill_instances == D.prefill_instances(40, t_pre, 0.5)
    assert rows[0].pools.prefill_gpus == rows[1].pools.prefill_gpus
    assert rows[1].pools.decode_gpus >= 3 * rows[0].pools.decode_gpus
    html = MACROS["pd_pools_plan"]("llama-3.1-70b", "h100-sxm", outputs=[500, 1500], **PLAN)
    for r in rows:
        assert f"| {r.pools.decode_gpus} ({r.pools.decode_instances} × 4) |" in html


def test_plan_refuses_impossible_targets():
    with pytest.raises(MacroInputError, match="below the decode step"):
        MACROS["pd_pools_plan"]("llama-3.1-70b", "h100-sxm", outputs=[500], **{**PLAN, "tpot_ms": 1})
    with pytest.raises(MacroInputError, match="more instances cannot meet it"):
        MACROS["pd_pools_plan"]("llama-3.1-70b", "h100-sxm", outputs=[500], **{**PLAN, "ttft_ms": 10})
    with pytest.raises(MacroInputError, match="at least one"):
        MACROS["pd_pools_plan"]("llama-3.1-70b", "h100-sxm", outputs=[], **PLAN)
    with pytest.raises(MacroInputError, match="ascending"):
        MACROS["pd_pools_svg"]("llama-3.1-70b", "h100-sxm", outputs=[900, 300], **PLAN)


OUTS = [250, 500, 750, 1000, 1500, 2000]


def test_pools_figure_points_are_the_table_values_where_the_axes_say():
    html = MACROS["pd_pools_svg"]("llama-3.1-70b", "h100-sxm", outputs=OUTS, **PLAN)
    svg = ET.fromstring(re.search(r"<svg\b.*?</svg>", html, re.S).group(0))
    m, g, f = cat().model("llama-3.1-70b"), cat().gpu("h100-sxm"), cat().format("fp8")
    _, rows = pd_rows(m, g, 40, 2000, OUTS, f, f, 4, 4, 0.5, 0.025, 0.5, 0.9)
    yt = {float(t.text): float(t.get("y")) for t in svg.iter("text") if t.get("text-anchor") == "end"
          and (t.text or "").isdigit()}
    xt = {float(t.text.replace(",", "")): float(t.get("x")) for t in svg.iter("text")
          if t.get("text-anchor") == "middle" and re.fullmatch(r"[\d,]+", t.text or "")}
    (y0, p0), (y1, p1) = min(yt.items()), max(yt.items())
    for pool in ("prefill", "decode"):
        pts = [e for e in svg.iter("circle") if e.get("data-series") == pool]
        assert len(pts) == len(OUTS)
        for el, r in zip(pts, rows, strict=True):
            want = r.pools.prefill_gpus if pool == "prefill" else r.pools.decode_gpus
            assert float(el.get("data-y")) == want and float(el.get("data-x")) == r.output_tokens
            value = y0 + (float(el.get("cy")) - p0) / (p1 - p0) * (y1 - y0)
            assert value == pytest.approx(want, abs=0.05)
            assert float(el.get("cx")) == pytest.approx(xt[r.output_tokens], abs=0.1)
    assert svg.get("role") == "img" and "prefill pool does not depend" in svg.find("desc").text
    assert not re.search(r"#[0-9a-fA-F]{3,6}\b|\brgb\(", html)


def test_measured_split_reproduces_deepseeks_published_node_count():
    # DeepSeek's V3/R1 inference overview (Feb 2025): 608B input and 168B output tokens in 24 h; a node does
    # ~73.7k input tokens/s in prefill or ~14.8k output tokens/s in decode; average occupancy 226.75 nodes.
    p, d = D.pools_from_throughput(608e9 / 86400, 168e9 / 86400, 73.7e3, 14.8e3)
    assert p + d == pytest.approx(226.75, rel=0.002)
    # 20-22 tokens/s per sequence: about 92,600 sequences decoding at once at 21 tokens/s.
    assert D.sequences_in_decode(168e9 / 86400, 21) == pytest.approx(92593, abs=1)
    html = MACROS["pd_split_measured"](input_tokens_per_day=608e9, output_tokens_per_day=168e9,
                                       prefill_tps_per_node=73.7e3, decode_tps_per_node=14.8e3,
                                       tokens_per_s_per_sequence=21)
    assert "| as measured | 95.5 | 131.4 | 226.9 | 1.38 |" in html
    assert "| outputs × 3 | 95.5 | 394.1 | 489.6 | 4.13 |" in html
    with pytest.raises(ValueError):
        D.pools_from_throughput(1, 1, 0, 1)
