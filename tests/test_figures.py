"""Generated figures (macros/render/figures.py): the plotted numbers against the formulas, the drawing
against its own axis ticks, accessibility, colours that follow the scheme, and the pages that show them."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from macros import formulas as F
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
