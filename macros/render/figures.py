"""Generated figures: inline SVG computed from the catalog and the formulas at build time.

Each figure has a data function (the numbers it plots, tested against the formulas) and a macro that
draws it. SVGs use ``currentColor`` and Material's CSS variables, so they follow the light and dark
schemes, and carry ``role="img"`` with a ``<title>`` and ``<desc>`` for screen readers. No blank line
inside the markup: Markdown passes the block through as raw HTML.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

from .. import formulas as F
from .. import units as U
from ..catalog import Gpu, Model
from ..errors import MacroInputError
from .blocks import _i, _k
from .numbers import gpu_figures
from .registry import ARGS, macro

W, H = 560, 330
LEFT, RIGHT, TOP, BOTTOM = 62, 16, 14, 46
X_LOG = (-0.5, 4.5)   # FLOP/byte, log10
Y_LOG = (12.0, 16.0)  # FLOP/s, log10
LINK = "var(--md-typeset-a-color)"


@dataclass(frozen=True)
class RooflinePoint:
    label: str
    tokens: int          # m: tokens sharing one weight read (decode batch, or prefill length)
    intensity: float     # FLOP/byte
    attainable: float    # FLOP/s under the BF16 roof


@dataclass(frozen=True)
class Roofline:
    gpu: Gpu
    model: Model
    ridge: float         # BF16, FLOP/byte
    peak: float          # BF16 dense FLOP/s
    peak_fp8: float | None
    bandwidth: float
    points: tuple[RooflinePoint, ...]


def roofline_data(model: Model, gpu: Gpu, batch: int, tokens: int) -> Roofline:
    """Operating points of the model's MLP up-projection GEMM (hidden × intermediate, BF16) on the GPU:
    decode at batch 1 and at ``batch``, prefill of ``tokens``; intensity by
    :func:`~macros.formulas.gemm_arithmetic_intensity`, attainable rate by
    :func:`~macros.formulas.roofline_time`. Ridge and peaks come from :func:`.numbers.gpu_figures`."""
    if model.is_moe or model.intermediate_size is None:
        raise MacroInputError(f"{model.name} is not a dense model: its experts see only the tokens routed to "
                              "them, so one intermediate_size GEMM does not stand for a step; use a dense model "
                              "such as llama-3.1-8b")
    g = gpu_figures(gpu)
    k, n, a = model.hidden_size, model.intermediate_size, 2
    pts = []
    for label, m in ((f"decode, batch {_i(1)}", 1), (f"decode, batch {_i(batch)}", batch),
                     (f"prefill, {_k(tokens)} tokens", tokens)):
        ai = F.gemm_arithmetic_intensity(m, k, n, a)
        flops = 2 * m * k * n
        pts.append(RooflinePoint(label, m, ai, flops / F.roofline_time(flops, flops / ai, g.bf16, g.bandwidth)))
    return Roofline(gpu, model, g.ridge_bf16, g.bf16, g.fp8, g.bandwidth, tuple(pts))


def figure_id(kind: str, *inputs: object) -> str:
    """HTML id prefix of one figure: its kind and a digest of every input that changes the drawing, so two
    figures on one page (or the same kind drawn twice with different inputs) never share an id."""
    digest = hashlib.sha1(repr(inputs).encode()).hexdigest()[:8]
    return f"fig-{kind}-{digest}"


def x_of(intensity: float) -> float:
    lo, hi = X_LOG
    return LEFT + (math.log10(intensity) - lo) / (hi - lo) * (W - LEFT - RIGHT)


def y_of(flops: float) -> float:
    lo, hi = Y_LOG
    return H - BOTTOM - (math.log10(flops) - lo) / (hi - lo) * (H - TOP - BOTTOM)


def _f(v: float) -> str:
    return f"{v:.1f}"


def _roof(peak: float, bw: float, style: str) -> str:
    x0 = 10 ** X_LOG[0]
    ridge = peak / bw
    return (f'<polyline fill="none" stroke-width="2" {style} points="{_f(x_of(x0))},{_f(y_of(x0 * bw))} '
            f'{_f(x_of(ridge))},{_f(y_of(peak))} {_f(x_of(10 ** X_LOG[1]))},{_f(y_of(peak))}"/>')


def _axes() -> str:
    out = [f'<path fill="none" stroke="currentColor" d="M{LEFT},{TOP}V{H - BOTTOM}H{W - RIGHT}"/>']
    for e in range(math.ceil(X_LOG[0]), math.floor(X_LOG[1]) + 1):
        x = _f(x_of(10 ** e))
        out.append(f'<path stroke="currentColor" d="M{x},{H - BOTTOM}v5"/>'
                   f'<text x="{x}" y="{H - BOTTOM + 17}" text-anchor="middle">{_i(10 ** e)}</text>')
    for e in range(int(Y_LOG[0]), int(Y_LOG[1]) + 1):
        y = _f(y_of(10 ** e))
        out.append(f'<path stroke="currentColor" d="M{LEFT - 5},{y}h5"/>'
                   f'<text x="{LEFT - 8}" y="{y}" dy="4" text-anchor="end">{_i(10 ** (e - 12))}</text>')
    out.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 8}" text-anchor="middle">'
               'arithmetic intensity (FLOP per byte, log scale)</text>')
    out.append(f'<text transform="translate(14,{(TOP + H - BOTTOM) / 2}) rotate(-90)" text-anchor="middle">'
               'attainable TFLOPS (log scale)</text>')
    return "".join(out)


@macro("figure", example='roofline_svg("h100-sxm")', args={"batch": ARGS["batch"], "tokens": ARGS["tokens"]})
def roofline_svg(gpu: Gpu, model: Model = "llama-3.1-8b", batch: int = 64, tokens: int = 8192) -> str:
    """Figure: the GPU's BF16 (and FP8) roofline with decode and prefill operating points of a GEMM.

    Log-log: attainable FLOP/s = min(peak, intensity × bandwidth) against FLOP per byte; the ridge point
    marked; points for the model's hidden × intermediate GEMM in BF16 at decode batch 1, decode at
    `batch` and prefill of `tokens`. Ridge and peaks are the numbers-to-know table's (`gpu_figures`).
    """
    r = roofline_data(model, gpu, batch, tokens)
    fid = figure_id("roofline", gpu.key, model.key, batch, tokens)
    pts = "; ".join(f"{p.label}: {p.intensity:,.0f} FLOP/byte, at most {U.fmt_flops(p.attainable)}"
                    for p in r.points)
    title = f"Roofline of the {gpu.name}, with decode and prefill of {model.name}"
    desc = (f"BF16 roof: {U.fmt_bandwidth(r.bandwidth)} times intensity up to the ridge point at "
            f"{r.ridge:,.0f} FLOP/byte, then flat at {U.fmt_flops(r.peak)}"
            + (f"; FP8 roof flat at {U.fmt_flops(r.peak_fp8)}" if r.peak_fp8 else "")
            + f". Points for the {_i(model.hidden_size)} × {_i(model.intermediate_size)} MLP GEMM in BF16: "
            + pts + ". Below the ridge a step is bandwidth-bound, above it compute-bound.")
    body = [_axes()]
    if r.peak_fp8:
        body.append(_roof(r.peak_fp8, r.bandwidth, 'stroke="currentColor" stroke-dasharray="5 4" opacity="0.6"'))
        body.append(f'<text x="{W - RIGHT - 4}" y="{_f(y_of(r.peak_fp8) - 6)}" text-anchor="end">FP8 roof</text>')
    body.append(_roof(r.peak, r.bandwidth, f'style="stroke:{LINK}"'))
    body.append(f'<text x="{W - RIGHT - 4}" y="{_f(y_of(r.peak) + 15)}" text-anchor="end">BF16 roof</text>')
    rx = _f(x_of(r.ridge))
    body.append(f'<path class="ridge" data-ridge="{r.ridge!r}" stroke="currentColor" stroke-dasharray="2 3" '
                f'd="M{rx},{_f(y_of(r.peak))}V{H - BOTTOM}"/>'
                f'<text x="{rx}" y="{_f(y_of(r.peak) - 6)}" text-anchor="middle">ridge {r.ridge:,.0f}</text>')
    for i, p in enumerate(r.points):
        x, y = x_of(p.intensity), y_of(p.attainable)
        mark = (f'<circle cx="{_f(x)}" cy="{_f(y)}" r="5"' if p.label.startswith("decode")
                else f'<rect x="{_f(x - 5)}" y="{_f(y - 5)}" width="10" height="10"')
        below = i % 2 == 1
        body.append(f'{mark} class="point" data-intensity="{p.intensity!r}" data-flops="{p.attainable!r}" '
                    f'style="fill:{LINK}"/>'
                    f'<text x="{_f(x + 8)}" y="{_f(y + (16 if below else -8))}">{p.label}</text>')
    return (f'<figure class="msib-figure"><svg viewBox="0 0 {W} {H}" role="img" '
            f'aria-labelledby="{fid}-t {fid}-d" font-size="12" fill="currentColor">'
            f'<title id="{fid}-t">{title}</title><desc id="{fid}-d">{desc}</desc>{"".join(body)}</svg>'
            f'<figcaption>{title}: attainable FLOP/s = min(peak, intensity × bandwidth). Generated from the '
            f'catalog.</figcaption></figure>')

