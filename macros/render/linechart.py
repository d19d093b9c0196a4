"""A small line chart drawn as inline SVG, shared by the fleet-scale figures (the disaggregated pools
against output length, a wide-EP MoE layer against EP size).

Linear y axis from zero with one tick step of headroom; x linear from zero or log2. Each series is a
polyline with one circle per point carrying ``class="point"``, ``data-series``, ``data-x`` and
``data-y`` (the exact values, for the tests). Colours come from ``currentColor`` and Material's CSS
variables, so the figure follows the light and dark schemes; ``role="img"`` with a title and a
description makes it readable by screen readers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .blocks import _i

W, H = 560, 300
LEFT, RIGHT, TOP, BOTTOM = 62, 30, 14, 46
LINK = "var(--md-typeset-a-color)"
DASHED = ('stroke="currentColor" stroke-dasharray="5 4"', "currentColor")
ACCENT = (f'style="stroke:{LINK}"', LINK)
DOTTED = (f'stroke-dasharray="1 4" stroke-linecap="round" style="stroke:{LINK}"', LINK)
_STEPS = (0.1, 0.2, 0.25, 0.5, 1, 2, 4, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000)


@dataclass(frozen=True)
class Series:
    name: str
    ys: list[float]
    look: tuple[str, str] = ACCENT   # (stroke attributes, fill of the points)


def line_chart(fid: str, title: str, desc: str, caption: str, xs: list[float], series: list[Series],
               x_label: str, y_label: str, log2_x: bool = False, hline: float | None = None,
               hline_label: str = "") -> str:
    """The figure markup: axes with labelled ticks at every x and every y step, one line per series.

    ``hline``: an optional dashed horizontal reference line at that y, labelled ``hline_label``."""
    ymax = max([max(s.ys) for s in series] + ([hline] if hline is not None else []))
    step = next(s for s in _STEPS if ymax / s <= 8)
    ytop = step * (math.floor(ymax / step) + 1)  # one tick of headroom above the highest point, for its label
    tx = math.log2 if log2_x else (lambda v: v)
    x0, x1 = (tx(xs[0]), tx(xs[-1])) if log2_x else (0, xs[-1])

    def px(x: float) -> float:
        return LEFT + (tx(x) - x0) / (x1 - x0) * (W - LEFT - RIGHT)

    def py(y: float) -> float:
        return H - BOTTOM - y / ytop * (H - TOP - BOTTOM)

    body = [f'<path fill="none" stroke="currentColor" d="M{LEFT},{TOP}V{H - BOTTOM}H{W - RIGHT}"/>']
    for k in range(round(ytop / step) + 1):
        y = k * step  # an int for whole steps, so labels read 4, not 4.0
        body.append(f'<path stroke="currentColor" d="M{LEFT - 5},{py(y):.1f}h5"/>'
                    f'<text x="{LEFT - 8}" y="{py(y):.1f}" dy="4" text-anchor="end">{y:g}</text>')
    for x in xs:
        body.append(f'<path stroke="currentColor" d="M{px(x):.1f},{H - BOTTOM}v5"/>'
                    f'<text x="{px(x):.1f}" y="{H - BOTTOM + 17}" text-anchor="middle">{_i(x)}</text>')
    body.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 8}" text-anchor="middle">{x_label}</text>')
    body.append(f'<text transform="translate(14,{(TOP + H - BOTTOM) / 2}) rotate(-90)" text-anchor="middle">'
                f'{y_label}</text>')
    if hline is not None:
        body.append(f'<path class="hline" data-y="{hline!r}" stroke="currentColor" stroke-dasharray="2 3" '
                    f'd="M{LEFT},{py(hline):.1f}H{W - RIGHT}"/>'
                    f'<text x="{LEFT + 6}" y="{py(hline) - 6:.1f}">{hline_label}</text>')
    for s in series:
        stroke, fill = s.look
        body.append(f'<polyline fill="none" stroke-width="2" {stroke} points="'
                    + " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, s.ys, strict=True)) + '"/>')
        for x, y in zip(xs, s.ys, strict=True):
            body.append(f'<circle class="point" data-series="{s.name}" cx="{px(x):.1f}" cy="{py(y):.1f}" r="4" '
                        f'data-x="{x!r}" data-y="{y!r}" style="fill:{fill}"/>')

    # Lowest line first, each label at least 15 px above the one below it and never below the plot.
    below = H - BOTTOM - 6 + 15
    for s in sorted(series, key=lambda s: -py(s.ys[-1])):
        below = min(py(s.ys[-1]) - 8, below - 15)
        body.append(f'<text x="{px(xs[-1]) - 8:.1f}" y="{below:.1f}" text-anchor="end">{s.name}</text>')
    return (f'<figure class="msib-figure"><svg viewBox="0 0 {W} {H}" role="img" '
            f'aria-labelledby="{fid}-t {fid}-d" font-size="12" fill="currentColor">'
            f'<title id="{fid}-t">{title}</title><desc id="{fid}-d">{desc}</desc>{"".join(body)}</svg>'
            f'<figcaption>{caption}</figcaption></figure>')
