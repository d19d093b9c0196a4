"""Fleet routing (macros/formulas/fleet_routing.py, macros/render/fleet_routing.py, Q135): the session hit rate
and the endpoint-picker score against values worked by hand, the figure against the same formula, bad input."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from macros import formulas as F
from macros.errors import MacroInputError
from macros.render import MACROS

ROOT = Path(__file__).resolve().parents[1]
Q135 = ROOT / "docs" / "fleet-scale" / "routing" / "prefix-affinity-vs-load.md"


# --- session hit rate ---------------------------------------------------------------------------------

def test_two_turns_two_replicas_by_hand():
    # turn 1: 16 tokens, nothing cached (no system prompt); turn 2: 16 + 16 history + 16 = 48 tokens.
    # Affinity finds the 32 history tokens; spread over 2 replicas finds them half the time: 16.
    r = F.session_hit_rate(turns=2, system_tokens=0, user_tokens=16, output_tokens=16, replicas=2, block_size=16)
    assert r.prompt_tokens == 64
    assert r.cached_affinity == 32 and r.affinity == 0.5
    assert r.cached_spread == 16 and r.spread == 0.25


def test_three_turns_two_replicas_by_hand():
    # S = u = o = 16: prompts 32, 64, 96 (sum 192); c(0) = 16, c(1) = 48, c(2) = 80.
    # Affinity: 16 + 48 + 80 = 144. Spread, N = 2: turn 1 16; turn 2 0.5*16 + 0.5*48 = 32;
    # turn 3 0.5*c(2) + 0.25*c(1) + 0.25*c(0) = 40 + 12 + 4 = 56; sum 104.
    r = F.session_hit_rate(turns=3, system_tokens=16, user_tokens=16, output_tokens=16, replicas=2, block_size=16)
    assert r.prompt_tokens == 192
    assert r.cached_affinity == 144 and r.affinity == pytest.approx(0.75)
    assert r.cached_spread == pytest.approx(104) and r.spread == pytest.approx(104 / 192)


def test_only_full_blocks_count():
    # 10 + 10 tokens never fill a 16-token block: nothing is cached on turn 2 either way.
    r = F.session_hit_rate(turns=2, system_tokens=10, user_tokens=10, output_tokens=0, replicas=1, block_size=16)
    assert r.cached_affinity == 16  # c(1) = full blocks of 20 = 16
    assert F.cached_full_blocks(15, 16) == 0 and F.cached_full_blocks(32, 16) == 32


def test_one_replica_is_affinity_and_many_replicas_tend_to_the_system_prompt_share():
    one = F.session_hit_rate(6, 1024, 128, 256, replicas=1)
    assert one.spread == pytest.approx(one.affinity)
    many = F.session_hit_rate(6, 1024, 128, 256, replicas=10**9)
    system_only = 6 * 1024 / many.prompt_tokens
    assert many.spread == pytest.approx(system_only, rel=1e-6)
    rates = [F.session_hit_rate(6, 1024, 128, 256, replicas=n).spread for n in range(1, 20)]
    assert all(a > b for a, b in zip(rates, rates[1:])), "round-robin hit rate must fall as replicas grow"


def test_turn_prompt_tokens():
    assert F.turn_prompt_tokens(1, 1500, 200, 400) == 1700
    assert F.turn_prompt_tokens(8, 1500, 200, 400) == 1500 + 7 * 600 + 200


@pytest.mark.parametrize("kw", [
    {"turns": 0}, {"turns": 1.5}, {"replicas": 0}, {"user_tokens": 0}, {"system_tokens": -1},
    {"output_tokens": math.nan}, {"system_tokens": math.inf}, {"block_size": 0},
])
def test_session_hit_rate_rejects_bad_input(kw):
    args = {"turns": 4, "system_tokens": 100, "user_tokens": 50, "output_tokens": 50, "replicas": 4,
            "block_size": 16, **kw}
    with pytest.raises(ValueError, match=next(iter(kw))):
        F.session_hit_rate(**args)


# --- per-candidate TTFT and the GAIE v1.5.0 default score ---------------------------------------------

CANDS = [F.Candidate("A", 6, 30000, 0.85, 2900), F.Candidate("B", 0, 0, 0.30, 0), F.Candidate("C", 2, 6000, 0.60, 2048)]


def test_candidate_ttft_by_hand():
    assert F.candidate_ttft(3000, 2900, 30000, 12000) == pytest.approx(30100 / 12000)
    assert F.candidate_ttft(3000, 0, 0, 12000) == pytest.approx(0.25)


def test_default_profile_scores_by_hand():
    # hashed blocks: floor(3000 / 16) = 187; A matches floor(2900 / 16) = 181, C 128.
    # queue: max 6, min 0 -> A 0, B 1, C 4/6. KV: 1 - usage. Weights 2, 2, 3 (defaults.go, v1.5.0).
    a, b, c = F.gaie_default_scores(CANDS, 3000, 12000)
    assert a.total == pytest.approx(2 * 0 + 2 * 0.15 + 3 * 181 / 187)
    assert b.total == pytest.approx(2 * 1 + 2 * 0.70 + 0)
    assert c.total == pytest.approx(2 * 4 / 6 + 2 * 0.40 + 3 * 128 / 187)
    assert max((a, b, c), key=lambda s: s.total) is c
    assert min((a, b, c), key=lambda s: s.ttft) is b


def test_equal_queues_score_one_and_long_prompts_are_capped_at_256_blocks():
    same = [F.Candidate("x", 3, 0, 0.5, 4096), F.Candidate("y", 3, 0, 0.5, 8192)]
    x, y = F.gaie_default_scores(same, 8192, 10000)
    assert x.queue_score == y.queue_score == 1.0
    # the picker hashes at most 256 blocks (4,096 tokens at 16): both prefixes look like full matches
    assert x.prefix_score == y.prefix_score == 1.0


def test_prompt_shorter_than_a_block_scores_no_prefix():
    (s,) = F.gaie_default_scores([F.Candidate("x", 0, 0, 0.1, 0)], 10, 1000)
    assert s.prefix_score == 0.0


@pytest.mark.parametrize("cand, msg", [
    (F.Candidate("bad", 0, 0, 1.5, 0), "bad: kv_usage"),
    (F.Candidate("bad", -1, 0, 0.5, 0), "bad: waiting_requests"),
    (F.Candidate("bad", 0, math.nan, 0.5, 0), "bad: queued_tokens"),
    (F.Candidate("bad", 0, 0, 0.5, math.inf), "bad: cached_tokens"),
    (F.Candidate("bad", 0, 0, 0.5, 5000), "cannot exceed prompt_tokens"),
])
def test_scores_reject_bad_candidates(cand, msg):
    with pytest.raises(ValueError, match=msg):
        F.gaie_default_scores([cand], 3000, 12000)


def test_scores_reject_empty_and_bad_rate():
    with pytest.raises(ValueError, match="candidates"):
        F.gaie_default_scores([], 3000, 12000)
    with pytest.raises(ValueError, match="prefill_rate"):
        F.gaie_default_scores(CANDS, 3000, 0)


@pytest.mark.parametrize("rows, msg", [
    ([], "non-empty list"),
    ([["A", 1, 2, 0.5]], "each candidate"),
    ([["A", 1, "2", 0.5, 0]], "queued_tokens must be a number"),
    ([[3, 1, 2, 0.5, 0]], "each candidate"),
    ([["A", 1, 2, 2.0, 0]], "kv_usage"),
])
def test_route_candidates_macro_names_the_bad_row(rows, msg):
    with pytest.raises(MacroInputError, match=msg):
        MACROS["route_candidates"](prompt_tokens=3000, prefill_rate=12000, candidates=rows)


# --- the figure: the plotted points are the formula's values where the axis says ----------------------

def _svg(html: str) -> ET.Element:
    m = re.search(r'<svg class="hit-rate".*?</svg>', html, re.S)
    assert m, "no hit-rate figure"
    return ET.fromstring(m.group(0))


def test_hit_rate_figure_points_are_the_formula_values():
    kw = dict(turns=8, system_tokens=1500, user_tokens=200, output_tokens=400)
    svg = _svg(MACROS["affinity_hit_rate"](**kw, max_replicas=12))
    # a y tick label's y is its tick's position (dy shifts the text onto it)
    yt = {float(t.text.rstrip("%")) / 100: float(t.get("y")) for t in svg.iter("text")
          if re.fullmatch(r"\d+%", t.text or "")}
    assert set(yt) == {0, 0.25, 0.5, 0.75, 1.0}
    (v0, p0), (v1, p1) = min(yt.items()), max(yt.items())
    points = [e for e in svg.iter("circle") if "point" in (e.get("class") or "")]
    assert len(points) == 2 * 12
    assert {el.get("data-series") for el in points} == {"prefix affinity", "round-robin"}
    for el in points:
        n = int(float(el.get("data-x")))
        r = F.session_hit_rate(replicas=n, **kw)
        want = r.affinity if el.get("data-series") == "prefix affinity" else r.spread
        assert float(el.get("data-y")) == pytest.approx(want, rel=1e-12)
        assert v0 + (float(el.get("cy")) - p0) / (p1 - p0) * (v1 - v0) == pytest.approx(want, abs=0.003)
    assert svg.find("{*}title") is not None or svg.find("title") is not None


def test_table_rows_match_the_formula():
    html = MACROS["affinity_hit_rate"](turns=8, system_tokens=1500, user_tokens=200, output_tokens=400,
                                       replicas=[1, 4])
    r4 = F.session_hit_rate(8, 1500, 200, 400, 4)
    assert f"| 4 | 25.0% | {r4.spread * 100:.1f}% | {r4.affinity * 100:.1f}% |" in html


def test_q135_page_uses_both_worked_examples():
    text = Q135.read_text(encoding="utf-8")
    assert "affinity_hit_rate(" in text and "route_candidates(" in text


# --- Q136: ramp headroom and weight distribution -------------------------------------------------------

Q136 = ROOT / "docs" / "fleet-scale" / "routing" / "autoscaling-llm-fleet.md"


def test_ramp_headroom_by_hand():
    # +0.5 requests/s every second for 10 s of detection and 30 s of cold start: +20 requests/s.
    h = F.ramp_headroom(ramp=0.5, detect_s=10, cold_start_s=30, replica_capacity=4, base_load=20)
    assert (h.window, h.extra_load, h.spare_replicas) == (40, 20, 5)  # an exact multiple: 5, not 6
    assert h.max_target == pytest.approx(0.5)  # 20 / (20 + 20)
    h = F.ramp_headroom(ramp=0.5, detect_s=10, cold_start_s=31, replica_capacity=4, base_load=20)
    assert h.spare_replicas == 6 and h.max_target == pytest.approx(20 / 40.5)
    assert F.ramp_headroom(0, 10, 30, 4, 20).spare_replicas == 0


def test_weight_distribution_by_hand():
    # W = 100, node link 10/s, store 20/s, 4 nodes: naive 100 x max(1/10, 4/20) = 20 s;
    # tree 100/10 + 2 rounds x 10 = 30 s (a fast store beats the tree at small N); chain 10 + 3 x 1/10.
    d = F.weight_distribution(nodes=4, node_bytes=100, node_bytes_per_s=10, store_bytes_per_s=20, chunk_bytes=1)
    assert (d.naive, d.tree) == (20, 30) and d.pipelined == pytest.approx(10.3)
    one = F.weight_distribution(1, 100, 10, 20, 1)
    assert one.naive == one.tree == one.pipelined == 10
    # store slower than one link: the first read is store-bound in every scheme
    slow = F.weight_distribution(3, 100, 10, 5, 1)
    assert slow.naive == 60 and slow.tree == 20 + 2 * 10 and slow.pipelined == pytest.approx(20 + 2 * 0.1)


@pytest.mark.parametrize("kw, msg", [
    ({"nodes": 0}, "nodes"), ({"node_bytes": math.nan}, "node_bytes"), ({"store_bytes_per_s": math.inf}, "store"),
    ({"chunk_bytes": 200}, "cannot exceed"), ({"node_bytes_per_s": -1}, "node_bytes_per_s"),
])
def test_weight_distribution_rejects_bad_input(kw, msg):
    args = {"nodes": 4, "node_bytes": 100, "node_bytes_per_s": 10, "store_bytes_per_s": 20, "chunk_bytes": 1, **kw}
    with pytest.raises(ValueError, match=msg):
        F.weight_distribution(**args)


@pytest.mark.parametrize("kw", [{"replica_capacity": 0}, {"base_load": math.nan}, {"ramp": -1}, {"detect_s": math.inf}])
def test_ramp_headroom_rejects_bad_input(kw):
    args = {"ramp": 0.5, "detect_s": 10, "cold_start_s": 30, "replica_capacity": 4, "base_load": 20, **kw}
    with pytest.raises(ValueError, match=next(iter(kw))):
        F.ramp_headroom(**args)


def test_cold_start_macro_adds_the_stages():
    from macros.render.inputs import cat
    html = MACROS["cold_start_headroom"]("llama-3.1-70b", fmt="fp8", provision_s=180, image_gb=8,
                                         image_unpacked_gb=20, registry_gbit_per_s=10, unpack_gb_per_s=0.5,
                                         storage_gb_per_s=1, init_s=90, detect_s=60, ramp_per_min=2,
                                         replica_rps=4, base_rps=20)
    assert "GB/s = 46.4 s" in html  # 8 GB / 1.25 GB/s + 20 GB / 0.5 GB/s = 6.4 + 40
    assert "/ 1.25 GB/s + " in html  # 10 Gbit/s shown as it is used, not rounded to 1.2 GB/s
    w = F.weight_bytes(cat().model("llama-3.1-70b"), cat().format("fp8"))
    cold = 180 + 46.4 + w / 1e9 + 90
    h = F.ramp_headroom(2 / 60, 60, cold, 4, 20)
    assert f"ceil({h.extra_load:.1f} / 4) = {h.spare_replicas} replicas" in html


@pytest.mark.parametrize("call, msg", [
    (lambda: MACROS["cold_start_headroom"]("llama-3.1-8b", image_gb=30, image_unpacked_gb=20), "compressed size"),
    (lambda: MACROS["weight_fanout"]("llama-3.1-8b", nodes=[4, 2]), "increasing"),
    (lambda: MACROS["weight_fanout"]("llama-3.1-8b", nodes=[0, 2]), "nodes"),
    (lambda: MACROS["weight_fanout"]("llama-3.1-8b", chunk_mb=math.nan), "chunk_mb"),
])
def test_scaling_macros_name_bad_input(call, msg):
    with pytest.raises(MacroInputError, match=msg):
        call()


def test_fanout_figure_points_are_the_formula_values():
    from macros.render.inputs import cat
    html = MACROS["weight_fanout"]("llama-3.1-70b", fmt="fp8", node_gbit_per_s=400, store_gb_per_s=10)
    m = re.search(r'<svg class="fanout".*?</svg>', html, re.S)
    svg = ET.fromstring(m.group(0))
    # a y tick label's y is its tick's position (dy shifts the text onto it)
    ticks = {float(t.get("data-value")): float(t.get("y")) for t in svg.iter("text") if t.get("class") == "ytick"}
    (v0, p0), (v1, p1) = min(ticks.items()), max(ticks.items())
    w = F.weight_bytes(cat().model("llama-3.1-70b"), cat().format("fp8"))
    points = [e for e in svg.iter("circle") if "point" in (e.get("class") or "")]
    assert len(points) == 3 * 9
    scheme = {"every node reads the store": "naive", "copy tree (doubling)": "tree", "pipelined chain": "pipelined"}
    assert {el.get("data-series") for el in points} == set(scheme)
    for el in points:
        d = F.weight_distribution(int(float(el.get("data-x"))), w, 400e9 / 8, 10e9, 64e6)
        want = getattr(d, scheme[el.get("data-series")])
        assert float(el.get("data-y")) == pytest.approx(want, rel=1e-12)
        frac = (float(el.get("cy")) - p0) / (p1 - p0)
        assert 10 ** (math.log10(v0) + frac * (math.log10(v1) - math.log10(v0))) == pytest.approx(want, rel=0.02)


def test_q136_page_uses_both_worked_examples():
    text = Q136.read_text(encoding="utf-8")
    assert "cold_start_headroom(" in text and "weight_fanout(" in text


# --- Q146: multi-node groups in NVLink domains ----------------------------------------------------------

@pytest.mark.parametrize("g, per_group, groups, stranded, down", [
    (16, 4, 4, 8, 4),    # 18 nodes of 4 GPUs: 4 groups of 4 nodes, 2 nodes idle; 17 nodes still hold 4 groups
    (32, 8, 2, 8, 2),
    (36, 9, 2, 0, 1),    # two half-racks; losing a node loses a group
    (72, 18, 1, 0, 0),
    (100, 25, 0, 72, 0),  # larger than the domain: never fits
    (4, 1, 18, 0, 17),
    (3, 1, 18, 18, 17),  # one 3-GPU replica per 4-GPU node
])
def test_pack_groups_in_an_nvl72_rack_by_hand(g, per_group, groups, stranded, down):
    p = F.pack_groups(domain_nodes=18, gpus_per_node=4, group_gpus=g)
    assert (p.nodes_per_group, p.groups, p.stranded_gpus, p.groups_one_node_down) == (per_group, groups, stranded, down)
    assert p.used_gpus + p.stranded_gpus == 72
    assert p.stranded_exclusive == (72 - g if g <= 72 else 72)  # one group per rack


def test_pack_groups_in_an_eight_gpu_node():
    assert F.pack_groups(1, 8, 4).groups == 2 and F.pack_groups(1, 8, 3).stranded_gpus == 2
    assert F.pack_groups(1, 8, 16).groups == 0


@pytest.mark.parametrize("kw", [{"domain_nodes": 0}, {"gpus_per_node": 2.5}, {"group_gpus": math.nan},
                                {"group_gpus": -3}])
def test_pack_groups_rejects_bad_input(kw):
    args = {"domain_nodes": 18, "gpus_per_node": 4, "group_gpus": 16, **kw}
    with pytest.raises(ValueError, match=next(iter(kw))):
        F.pack_groups(**args)


def test_nvlink_packing_macro_names_bad_input():
    with pytest.raises(MacroInputError, match="group_sizes"):
        MACROS["nvlink_packing"](domain_nodes=18, gpus_per_node=4, group_sizes=[])
    with pytest.raises(MacroInputError, match="group_sizes"):
        MACROS["nvlink_packing"](domain_nodes=18, gpus_per_node=4, group_sizes=[0])
    with pytest.raises(MacroInputError, match="domain_nodes"):
        MACROS["nvlink_packing"](domain_nodes=0, gpus_per_node=4, group_sizes=[8])
