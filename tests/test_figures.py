"""Generated figures (macros/render/figures.py): the plotted numbers against the formulas, the drawing
against its own axis ticks, accessibility, colours that follow the scheme, and the pages that show them."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from macros import formulas as F
from macros import units as U
from macros.render import MACROS
from macros.render.numbers import gpu_figures
from macros.render.inputs import cat
from sitekit import page_html_path

Q7 = "deployment/inference-fundamentals/memory-bandwidth-bottleneck.md"
Q81 = "deployment/llm-inference/prefill-vs-decode.md"


def svg_of(html: str) -> ET.Element:
    m = re.search(r"<svg\b.*?</svg>", html, re.S)
    assert m, "no inline SVG"
    return ET.fromstring(m.group(0))


def ticks(svg: ET.Element, anchor: str, attr: str) -> dict[float, float]:
    """Axis tick labels (value -> pixel) read from the drawing itself."""
    out = {}
    for t in svg.iter("text"):
        if t.get("text-anchor") == anchor and re.fullmatch(r"[\d,]+", t.text or ""):
            out[float(t.text.replace(",", ""))] = float(t.get(attr))
    return out


def from_ticks(tick: dict[float, float], pixel: float) -> float:
    """The value at ``pixel`` on a log axis, interpolated between its outermost labelled ticks."""
    (v0, p0), (v1, p1) = min(tick.items()), max(tick.items())
    return 10 ** (math.log10(v0) + (pixel - p0) / (p1 - p0) * (math.log10(v1) - math.log10(v0)))


@pytest.mark.parametrize("gpu", ["h100-sxm", "a100-80gb-sxm", "l4", "mi300x"])
def test_roofline_points_are_the_formula_values_where_the_axes_say(gpu):
    g, m = cat().gpu(gpu), cat().model("llama-3.1-8b")
    svg = svg_of(MACROS["roofline_svg"](gpu, model="llama-3.1-8b", batch=32, tokens=4096))
    xt = {v: p for v, p in ticks(svg, "middle", "x").items() if v >= 1}
    yt = {v * 1e12: p for v, p in ticks(svg, "end", "y").items()}
    assert len(xt) >= 4 and len(yt) >= 4
    points = [e for e in svg.iter() if e.get("class") == "point"]
    assert len(points) == 3
    bw, peak = g.memory_bandwidth_bytes_per_s, g.bf16_dense_flops
    for el, tokens in zip(points, (1, 32, 4096), strict=True):
        ai = F.gemm_arithmetic_intensity(tokens, m.hidden_size, m.intermediate_size, 2)
        flops = min(peak, ai * bw)
        assert float(el.get("data-intensity")) == pytest.approx(ai, rel=1e-12)
        assert float(el.get("data-flops")) == pytest.approx(flops, rel=1e-12)
        if el.tag == "circle":
            cx, cy = float(el.get("cx")), float(el.get("cy"))
        else:
            cx, cy = float(el.get("x")) + 5, float(el.get("y")) + 5
        assert from_ticks(xt, cx) == pytest.approx(ai, rel=0.01)
        assert from_ticks(yt, cy) == pytest.approx(flops, rel=0.01)
    # decode at batch 1 is bandwidth-bound on every GPU; the ridge is the numbers-to-know table's
    assert float(points[0].get("data-flops")) < peak
    ridge = float(next(e for e in svg.iter() if e.get("class") == "ridge").get("data-ridge"))
    assert ridge == gpu_figures(g).ridge_bf16 == F.ridge_point(peak, bw)
    row = next(r for r in MACROS["numbers_gpus"]().splitlines() if f"#gpu-{gpu}" in r)
    assert row.split("|")[7].strip() == f"{round(ridge):,}"


def test_roofline_is_accessible_and_follows_the_colour_scheme():
    html = MACROS["roofline_svg"]("h100-sxm")
    svg = svg_of(html)
    assert svg.get("role") == "img"
    ids = svg.get("aria-labelledby").split()
    found = {e.get("id"): (e.text or "") for e in svg.iter() if e.get("id")}
    assert [svg.find("title").get("id"), svg.find("desc").get("id")] == ids
    assert "H100" in found[ids[0]] and "ridge point" in found[ids[1]]
    assert not re.search(r"#[0-9a-fA-F]{3,6}\b|\brgb\(|\b(black|white)\b", html), "a hard-coded colour"
    assert "currentColor" in html and "var(--md-typeset-a-color)" in html


def test_roofline_refuses_a_model_without_a_dense_mlp():
    with pytest.raises(ValueError, match="not a dense model"):
        MACROS["roofline_svg"]("h100-sxm", model="deepseek-v3")


@pytest.mark.parametrize("src", [Q7, Q81])
def test_question_pages_show_their_figure(built_site, offline_site, src):
    for site, dirs in ((built_site, True), (offline_site, False)):
        html = page_html_path(site, src, directory_urls=dirs).read_text(encoding="utf-8")
        fig = re.search(r'<figure class="msib-figure">.*?</figure>', html, re.S)
        assert fig, f"{src}: no generated figure"
        svg = svg_of(fig.group(0))
        assert svg.get("role") == "img" and "Roofline of the NVIDIA H100" in svg.find("title").text


# --- the generated diagrams: paged KV block tables (Q77), batching over time (Q76), TP all-reduce (Q79) ---

Q76 = "deployment/llm-inference/continuous-batching.md"
Q77 = "deployment/llm-inference/paged-attention.md"
Q79 = "deployment/llm-inference/tensor-parallelism.md"
PAGED = dict(block_size=16, kv_dtype="bf16", lengths=[40, 27, 30], prefix_tokens=20, pool_blocks=8)
LENGTHS, SLOTS = [8, 3, 5, 2, 4, 6, 2, 3], 4


def _cls(svg: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in svg.iter() if e.get("class") == name]


def test_paged_kv_figure_draws_the_block_tables_and_tail_waste_of_the_formulas():
    html = MACROS["paged_kv_svg"]("llama-3.1-8b", **PAGED)
    svg, m = svg_of(html), cat().model("llama-3.1-8b")
    logical, physical = _cls(svg, "logical"), _cls(svg, "physical")
    lengths = dict(zip("ABC", PAGED["lengths"]))
    waste = F.paged_tail_waste(m, 16, cat().format("bf16"), 3)
    empty_total = 0
    for name, tokens in lengths.items():
        blocks = [e for e in logical if e.get("data-seq") == name]
        assert len(blocks) == F.blocks_per_sequence(tokens, 16)
        assert sum(int(e.get("data-filled")) for e in blocks) == tokens
        tail = 16 - int(blocks[-1].get("data-filled"))
        assert 0 <= tail <= waste.worst_tokens_per_sequence
        empty_total += tail
    # every physical block's reference count is the number of table entries pointing at it; exactly one
    # block, full, is shared (the 20-token prompt fills one 16-token block), and two are free
    refs = {e.get("data-physical"): int(e.get("data-refs")) for e in physical}
    for p, n in refs.items():
        assert n == sum(1 for e in logical if e.get("data-physical") == p)
    assert sorted(refs.values()) == [0, 0, 1, 1, 1, 1, 1, 2]
    shared = next(e for e in physical if e.get("data-refs") == "2")
    assert shared.get("data-filled") == "16"
    # the shaded part of each block is as wide as its filled slots
    for e in logical + physical:
        x, y, w = float(e.get("x")), float(e.get("y")), float(e.get("width"))
        shade = [r for r in svg.iter("rect") if r.get("class") is None and float(r.get("x")) == x
                 and float(r.get("y")) == y]
        drawn = sum(float(r.get("width")) for r in shade) / w * 16
        assert drawn == pytest.approx(int(e.get("data-filled")), abs=0.01)
    # each mapping line runs from its logical block to the physical block its table names
    for line in _cls(svg, "map"):
        src = next(e for e in logical if e.get("data-seq") == line.get("data-seq")
                   and e.get("data-logical") == line.get("data-logical"))
        dst = next(e for e in physical if e.get("data-physical") == line.get("data-physical"))
        assert src.get("data-physical") == line.get("data-physical")
        x1, y1, x2, y2 = map(float, re.findall(r"[\d.]+", line.get("d")))
        assert y1 == float(src.get("y")) + float(src.get("height")) / 2
        assert y2 == float(dst.get("y")) + float(dst.get("height")) / 2
        assert x1 > float(src.get("x")) + float(src.get("width")) and x2 < float(dst.get("x"))
    # the bytes: the same KV bytes per token as the page's paged_tail_waste and kv_token_bytes
    fig = ET.fromstring(re.sub(r"<svg\b.*</svg>", "", html))
    assert float(fig.get("data-bytes-per-token")) == waste.bytes_per_token == F.kv_bytes_per_token(
        m, cat().format("bf16"))
    assert float(fig.get("data-tail-bytes")) == empty_total * waste.bytes_per_token
    assert MACROS["kv_token_bytes"]("llama-3.1-8b") in svg.find("desc").text


def test_batching_figure_draws_the_simulated_schedules():
    html = MACROS["batching_timeline"](lengths=LENGTHS, slots=SLOTS)
    svg = svg_of(html)
    step_x = {int(t.text): float(t.get("x")) for t in svg.iter("text") if t.get("font-size") == "10"}
    last = max(step_x)
    cw = (step_x[last] - step_x[1]) / (last - 1)
    x0 = step_x[1] - cw / 2
    for sched in (F.static_batching(LENGTHS, SLOTS), F.continuous_batching(LENGTHS, SLOTS)):
        runs = [e for e in _cls(svg, "run") if e.get("data-policy") == sched.policy]
        assert [(int(e.get("data-request")) - 1, int(e.get("data-slot")), int(e.get("data-start")),
                 int(e.get("data-end"))) for e in runs] == [(r.request, r.slot, r.start, r.end) for r in sched.runs]
        for e, r in zip(runs, sched.runs):  # each bar spans its steps on the drawn axis (1 px gaps at the ends)
            assert float(e.get("x")) - 1 == pytest.approx(x0 + r.start * cw, abs=0.15)
            assert float(e.get("width")) + 2 == pytest.approx((r.end - r.start) * cw, abs=0.15)
        finish = next(e for e in _cls(svg, "finish") if e.get("data-policy") == sched.policy)
        assert float(re.match(r"M([\d.]+)", finish.get("d")).group(1)) == pytest.approx(x0 + sched.steps * cw, abs=0.15)
        # the worked example states the same numbers the chart's desc and panel titles show
        stated = f"{sched.steps} steps, {U.fmt_pct(sched.utilization)}"
        assert stated in html.split("<figure")[0] or stated in html.split("</figure>")[1]
        assert stated in svg.find("desc").text
    assert "14 steps" in html and "9 steps" in html  # the hand-computed schedules of test_diagram_formulas


def test_tp_figure_shows_two_allreduces_with_the_allreduce_volume_bytes():
    m, tokens = cat().model("llama-3.1-70b"), 2048
    html = MACROS["tp_allreduce_svg"]("llama-3.1-70b", n_gpus=8, tokens=tokens, dtype="bf16")
    svg = svg_of(html)
    bars = _cls(svg, "allreduce")
    assert len(bars) == 2
    per_layer = F.tp_allreduce_bytes_per_token_per_layer(m.hidden_size, 2, 8) * tokens
    for b in bars:
        assert float(b.get("data-buffer-bytes")) == tokens * m.hidden_size * 2
        assert 2 * float(b.get("data-sent-bytes")) == pytest.approx(per_layer, rel=1e-12)
    fig = ET.fromstring(re.sub(r"<svg\b.*</svg>", "", html))
    per_step = F.tp_allreduce_bytes_per_token(m, 2, 8) * tokens
    assert float(fig.get("data-per-step-bytes")) == per_step
    # the worked example on the page prints the same total
    total = U.fmt_bytes(per_step)
    assert total in MACROS["allreduce_volume"]("llama-3.1-70b", n_gpus=8, tokens=tokens, dtype="bf16")
    assert total in svg.find("desc").text
    # lanes: GPU 0, 1, the elided middle and the last; heads split 64 / 8
    labels = [t.text for t in svg.iter("text") if (t.text or "").startswith("GPU")]
    assert labels == ["GPU 0", "GPU 1", "GPU 2–6", "GPU 7"]
    assert "heads 56–63" in html and "heads 8–15" in html


@pytest.mark.parametrize("kw, msg", [({"model": "deepseek-v3"}, "not a dense model"),
                                     ({"n_gpus": 1}, "at least 2"), ({"n_gpus": 3}, "divisible")])
def test_tp_figure_refuses_what_it_cannot_draw(kw, msg):
    args = {"model": "llama-3.1-70b", "n_gpus": 8, **kw}
    with pytest.raises(ValueError, match=msg):
        MACROS["tp_allreduce_svg"](**args)


def test_paged_and_batching_figures_refuse_bad_input():
    with pytest.raises(ValueError, match="three sequences"):
        MACROS["paged_kv_svg"]("llama-3.1-8b", lengths=[40, 27])
    with pytest.raises(ValueError, match="smaller than"):
        MACROS["paged_kv_svg"]("llama-3.1-8b", pool_blocks=3)
    with pytest.raises(ValueError, match="at most 16 requests"):
        MACROS["batching_timeline"](lengths=[1] * 17, slots=4)
    with pytest.raises(ValueError, match="lengths"):
        MACROS["batching_timeline"](lengths=[3, 0], slots=2)


ALL_FIGURES = [
    lambda: MACROS["roofline_svg"]("h100-sxm"),
    lambda: MACROS["roofline_svg"]("h100-sxm", batch=8),
    lambda: MACROS["cost_curve"]("h100-sxm", "llama-3.1-8b-hosted"),
    lambda: MACROS["cost_curve"]("h100-sxm", "llama-3.1-8b-hosted", tokens_per_s=5000),
    lambda: MACROS["paged_kv_svg"]("llama-3.1-8b", **PAGED),
    lambda: MACROS["paged_kv_svg"]("llama-3.1-8b", block_size=8),
    lambda: MACROS["batching_timeline"](lengths=LENGTHS, slots=SLOTS),
    lambda: MACROS["batching_timeline"](lengths=LENGTHS, slots=3),
    lambda: MACROS["tp_allreduce_svg"]("llama-3.1-70b", n_gpus=8, tokens=2048),
    lambda: MACROS["tp_allreduce_svg"]("llama-3.1-70b", n_gpus=8, tokens=1),
]


def test_figures_are_accessible_and_follow_the_colour_scheme():
    for make in ALL_FIGURES[4:]:
        html = make()
        svg = svg_of(html)
        assert svg.get("role") == "img"
        title, desc = svg.find("title"), svg.find("desc")
        assert svg.get("aria-labelledby").split() == [title.get("id"), desc.get("id")]
        assert len(title.text) > 20 and len(desc.text) > 100
        assert not re.search(r"#[0-9a-fA-F]{3,6}\b|\brgb\(|\b(black|white)\b", html), "a hard-coded colour"
        assert "currentColor" in html and "var(--md-typeset-a-color)" in html
        inside = html.split("<figure")[1].split("</figure>")[0]
        assert "\n\n" not in inside, "a blank line inside the figure ends the raw HTML block"


def test_no_two_figures_on_a_page_share_an_id():
    ids = [e.get("id") for make in ALL_FIGURES for e in svg_of(make()).iter() if e.get("id")]
    assert len(ids) == 2 * len(ALL_FIGURES)
    assert len(set(ids)) == len(ids), sorted(i for i in ids if ids.count(i) > 1)
    # and the same inputs give the same ids (reproducible builds)
    assert svg_of(ALL_FIGURES[4]()).find("title").get("id") == svg_of(ALL_FIGURES[4]()).find("title").get("id")


@pytest.mark.parametrize("src, cls, title", [(Q76, "batching", "Static against continuous batching"),
                                             (Q77, "paged-kv", "Paged KV cache: block tables"),
                                             (Q79, "tp-allreduce", "Tensor parallelism over 8 GPUs")])
def test_question_pages_show_their_diagram(built_site, offline_site, src, cls, title):
    for site, dirs in ((built_site, True), (offline_site, False)):
        html = page_html_path(site, src, directory_urls=dirs).read_text(encoding="utf-8")
        fig = re.search(r'<figure class="msib-figure".*?</figure>', html, re.S)
        assert fig, f"{src}: no generated figure"
        svg = svg_of(fig.group(0))
        assert svg.get("class") == cls and svg.find("title").text.startswith(title)
        assert len(html.encode()) <= 60 * 1000, f"{src}: page over the 60 KB budget"
