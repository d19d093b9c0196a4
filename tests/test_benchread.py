"""Q148: reading throughput-vs-interactivity benchmarks. The formulas against figures computed by hand, the
figure against the same formulas, and bad input."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from macros import formulas as F
from macros.errors import MacroInputError
from macros.render import MACROS
from macros.render.inputs import cat
from sitekit import page_html_path

Q148 = "fleet-scale/routing/reading-inference-benchmarks.md"
# the page's illustrative systems: 8 GPUs each; t0 15 ms / c 0.1 ms / 512, and t0 6 ms / c 0.2 ms / 256
A = F.DecodeSystem("System A", 8, 0.015, 0.0001, 512)
B = F.DecodeSystem("System B", 8, 0.006, 0.0002, 256)


def test_throughput_and_cost_at_a_loose_target_by_hand():
    # 1/20 s = 50 ms per step: A fits (50 − 15) / 0.1 = 350 sequences, 350 / 0.05 s / 8 GPUs = 875 tokens/s/GPU
    assert F.batch_at(A, 20) == pytest.approx(350)
    assert F.throughput_per_gpu_at(A, 20) == pytest.approx(875)
    # B: (50 − 6) / 0.2 = 220 sequences, 220 / 0.05 / 8 = 550
    assert F.throughput_per_gpu_at(B, 20) == pytest.approx(550)
    # $3.50 × 10^6 / (875 × 3600) = $1.1111; $5.00 × 10^6 / (550 × 3600) = $2.5253
    assert F.usd_per_million_at(A, 3.5, 20) == pytest.approx(1.111111, rel=1e-6)
    assert F.usd_per_million_at(B, 5.0, 20) == pytest.approx(2.525253, rel=1e-6)


def test_the_ranking_flips_at_a_tight_target_by_hand():
    # 1/60 s = 16.667 ms: A fits 16.667 sequences (125 tokens/s/GPU), B 53.333 (400)
    assert F.throughput_per_gpu_at(A, 60) == pytest.approx(125)
    assert F.throughput_per_gpu_at(B, 60) == pytest.approx(400)
    assert F.usd_per_million_at(A, 3.5, 60) == pytest.approx(7.777778, rel=1e-6)
    assert F.usd_per_million_at(B, 5.0, 60) == pytest.approx(3.472222, rel=1e-6)
    # (1 − 0.015 i) / 0.0008 = (1 − 0.006 i) / 0.0016  ->  i = 1 / 0.024
    assert F.throughput_crossing(A, B) == pytest.approx(41.666667, rel=1e-6)
    # 0.0028 (1 − 0.006 i) = 0.008 (1 − 0.015 i)  ->  i = 0.0052 / 0.0001032
    assert F.cost_crossing(A, 3.5, B, 5.0) == pytest.approx(50.387597, rel=1e-6)
    # equal prices: the cost crossing is the throughput crossing
    assert F.cost_crossing(A, 4.0, B, 4.0) == pytest.approx(F.throughput_crossing(A, B))


def test_batch_cap_and_infeasible_targets():
    # below the knee the batch stays at 512: 512 / (15 + 51.2 ms) / 8 = 966.77 tokens/s/GPU
    assert A.knee_interactivity == pytest.approx(1 / 0.0662)
    assert F.batch_at(A, 10) == 512
    assert F.throughput_per_gpu_at(A, 10) == pytest.approx(512 / 0.0662 / 8)
    # one sequence alone runs 1 / 15.1 ms = 66.2 tokens/s: 70 is out of reach
    assert A.max_interactivity == pytest.approx(66.225166, rel=1e-6)
    assert F.batch_at(A, 70) is None and F.usd_per_million_at(A, 3.5, 70) is None
    # parallel lines never cross
    assert F.throughput_crossing(A, A) is None


def test_output_share_of_a_fixed_length_request():
    assert F.output_share(8192, 1024) == pytest.approx(1 / 9)
    assert MACROS["output_token_share"](1024, 1024) == "50.0%"


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="System X: max_batch"):
        F.DecodeSystem("System X", 8, 0.01, 0.001, 0)
    with pytest.raises(ValueError, match="gpus"):
        F.DecodeSystem("System X", 0, 0.01, 0.001, 8)
    with pytest.raises(ValueError, match="interactivity"):
        F.batch_at(A, 0)
    with pytest.raises(MacroInputError, match="exactly two"):
        MACROS["benchmark_flip"](systems=[["A", "b200", 8, 6, 0.2, 256]])
    with pytest.raises(MacroInputError, match="loose then tight"):
        MACROS["benchmark_flip"](targets=[60, 20])
    with pytest.raises(MacroInputError, match="no GPU-hour price"):
        MACROS["benchmark_flip"](systems=[["A", "l40s", 8, 6, 0.2, 256], ["B", "b200", 8, 6, 0.2, 256]])


def _svg(html: str) -> ET.Element:
    return ET.fromstring(re.search(r"<svg\b.*?</svg>", html, re.S).group(0))


def test_figure_plots_the_formula_and_marks_the_flip():
    html = MACROS["benchmark_flip"](targets=[20, 60])
    svg = _svg(html)
    # the axes as their tick labels place them: x ticks centred under their value, y ticks (class ytick) at
    # their value's height (dy shifts the text onto the tick)
    xt = {float(t.text): float(t.get("x")) for t in svg.iter()
          if t.tag.endswith("text") and t.get("text-anchor") == "middle" and re.fullmatch(r"[\d.]+", t.text or "")}
    yt = {float(t.get("data-value")): float(t.get("y")) for t in svg.iter() if t.get("class") == "ytick"}
    assert len(xt) >= 4 and len(yt) >= 4 and min(xt) == min(yt) == 0
    x0, xs = xt[0], (max(xt.values()) - xt[0]) / max(xt)   # pixels per unit
    y0, ys = yt[0], (yt[0] - min(yt.values())) / max(yt)

    def x_of(p):
        return (p - x0) / xs

    lines = {e.get("data-series"): e for e in svg.iter() if e.get("class") == "series"}
    assert set(lines) == {"System A", "System B"}
    for name, s in (("System A", A), ("System B", B)):
        pts = [tuple(map(float, p.split(","))) for p in lines[name].get("points").split()]
        assert len(pts) > 20
        for px, py in pts:
            i = min(x_of(px), s.max_interactivity)  # pixel rounding at the end point
            t = (y0 - py) / ys
            assert t == pytest.approx(F.throughput_per_gpu_at(s, i), rel=0.01, abs=max(yt) * 1e-3)
        # each curve spans the knee (batch capped) to one sequence alone, to the 0.1 px the markup is drawn at
        assert x_of(pts[0][0]) == pytest.approx(s.knee_interactivity, rel=1e-3, abs=0.1 / xs)
        assert x_of(pts[-1][0]) == pytest.approx(s.max_interactivity, rel=1e-3, abs=0.1 / xs)
    cross = next(e for e in svg.iter() if e.get("class") == "mark")
    assert float(cross.get("data-x")) == pytest.approx(1 / 0.024, rel=1e-5)
    assert x_of(float(cross.get("cx"))) == pytest.approx(1 / 0.024, rel=1e-3, abs=0.1 / xs)
    assert sorted(float(e.get("data-x")) for e in svg.iter() if e.get("class") == "vline") == [20, 60]
    # accessibility and colours that follow the scheme
    assert svg.get("role") == "img"
    assert svg.get("aria-labelledby").split() == [svg.find("{*}title").get("id"), svg.find("{*}desc").get("id")]
    assert not re.search(r"#[0-9a-fA-F]{3,6}\b|\brgb\(|\b(black|white)\b", html)


def test_table_matches_the_formulas_and_names_the_winners():
    html = MACROS["benchmark_flip"](targets=[20, 60])
    pa = cat().gpu_prices_for("h200-sxm")[0].usd_per_hour
    pb = cat().gpu_prices_for("b200")[0].usd_per_hour
    rows = [r for r in html.splitlines() if re.match(r"\| (20|60) \| System", r)]
    assert len(rows) == 4
    got = {(r.split("|")[1].strip(), r.split("|")[2].strip()): r.split("|")[5].strip() for r in rows}
    for (t, s, p) in (("20", A, pa), ("20", B, pb), ("60", A, pa), ("60", B, pb)):
        assert got[(t, s.name)] == f"${F.usd_per_million_at(s, p, float(t)):,.2f}"
    assert "at 20 tokens/s per user the cheaper system is System A" in html
    assert "at 60 tokens/s per user the cheaper system is System B" in html


def test_page_shows_the_figure(built_site):
    html = page_html_path(built_site, Q148, directory_urls=True).read_text(encoding="utf-8")
    fig = re.search(r'<figure class="msib-figure"><svg class="pareto".*?</figure>', html, re.S)
    assert fig, "Q148: no generated figure"
    assert _svg(fig.group(0)).get("role") == "img"


def test_tpot_bound_as_interactivity():
    # MLPerf's Llama 2 70B Interactive TPOT bound of 40 ms is 1000 / 40 = 25 tokens/s per user
    assert F.interactivity_from_tpot_ms(40) == 25
    assert MACROS["tpot_as_interactivity"](15) == "66.7 tokens/s per user"
    with pytest.raises(MacroInputError, match="tpot_ms"):
        MACROS["tpot_as_interactivity"](0)
