"""A small line chart drawn as inline SVG, shared by the fleet-scale figures (the disaggregated pools
against output length, a wide-EP MoE layer against EP size, KV tiers, the session hit rate against
replicas, weights fanned out to new nodes on log axes) and the benchmark-reading throughput curves.

Linear y axis from zero with one tick step of headroom (or fixed ticks, or log10); x linear or log2. Each series is a
polyline with one circle per point carrying ``class="point"``, ``data-series``, ``data-x`` and
``data-y`` (the exact values, for the tests). Colours come from ``currentColor`` and Material's CSS
variables, so the figure follows the light and dark schemes; ``role="img"`` with a title and a
description makes it readable by screen readers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .blocks import _i

W, H = 560, 300
LEFT, RIGHT, TOP, BOTTOM = 62, 30, 14, 46
LINK = "var(--md-typeset-a-color)"
DASHED = ('stroke="currentColor" stroke-dasharray="5 4"', "currentColor")
SOLID = ('stroke="currentColor"', "currentColor")
ACCENT = (f'style="stroke:{LINK}"', LINK)
DOTTED = (f'stroke-dasharray="1 4" stroke-linecap="round" style="stroke:{LINK}"', LINK)
_STEPS = (0.1, 0.2, 0.25, 0.5, 1, 2, 4, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000)


@dataclass(frozen=True)
class Series:
    name: str
    ys: list[float]
    look: tuple[str, str] = ACCENT   # (stroke attributes, fill of the points)
    xs: list[float] | None = None    # its own xs (default: the chart's)
    points: bool = True              # False: a bare line, its polyline carrying class="series" and data-series


def line_chart(fid: str, title: str, desc: str, caption: str, xs: list[float], series: list[Series],
               x_label: str, y_label: str, log2_x: bool = False, hline: float | None = None,
               hline_label: str = "", *, svg_class: str = "", x_min: float = 0,
               x_ticks: list[float] | None = None, y_ticks: list[float] | None = None,
               y_fmt: Callable[[float], str] | None = None, log10_y: bool = False, grid: bool = False,
               x_fmt: Callable[[float], str] = _i, x_max: float | None = None, y_max: float | None = None,
               vlines: list[tuple[float, str]] = (), marks: list[tuple[float, float, str]] = ()) -> str:
    """The figure markup: axes with labelled ticks at every x and every y step, one line per series.

    ``hline``: an optional dashed horizontal reference line at that y, labelled ``hline_label``.
    ``svg_class``: a class on the ``<svg>``. ``x_min``: where a linear x axis starts (default 0).
    ``x_ticks``: the xs that get a labelled tick (default all). ``y_ticks``: fixed y ticks, the last one the
    top of the axis (default: steps from zero with one of headroom). ``y_fmt``: the y tick labels (default
    ``{y:g}``). ``log10_y``: a log y axis from the decade below the lowest point to the decade above the
    highest, a tick per decade (its ``<svg>`` carries ``data-y-min`` and ``data-y-max``). ``grid``: a faint
    horizontal line at every y tick. Y tick labels carry ``class="ytick"`` and ``data-value``.
    ``x_fmt``: the x tick labels. ``x_max`` / ``y_max``: where a linear x axis / the y axis of ``y_ticks``
    ends, when past the last tick. ``vlines``: dashed vertical reference lines ``(x, label)``. ``marks``:
    a ring around ``(x, y)`` with a bold ``label``."""
    values = [y for s in series for y in s.ys] + ([hline] if hline is not None else [])
    ymax, extra = max(values), ""
    if log10_y:
        ylo, ytop = 10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(ymax))
        ytop = ytop if ytop > ylo else ylo * 10
        ticks = [ylo * 10 ** k for k in range(round(math.log10(ytop / ylo)) + 1)]
        extra = f' data-y-min="{ylo!r}" data-y-max="{ytop!r}"'
    elif y_ticks is not None:
        ylo, ytop, ticks = 0, max(y_ticks) if y_max is None else y_max, list(y_ticks)
    else:
        step = next(s for s in _STEPS if ymax / s <= 8)
        ylo, ytop = 0, step * (math.floor(ymax / step) + 1)  # one tick of headroom above the highest point
        ticks = [k * step for k in range(round(ytop / step) + 1)]  # ints for whole steps: labels read 4, not 4.0
    tx = math.log2 if log2_x else (lambda v: v)
    ty = math.log10 if log10_y else (lambda v: v)
    x0, x1 = (tx(xs[0]), tx(xs[-1])) if log2_x else (x_min, xs[-1] if x_max is None else x_max)
    y0, y1 = ty(ylo), ty(ytop)

    def px(x: float) -> float:
        return LEFT + (tx(x) - x0) / ((x1 - x0) or 1) * (W - LEFT - RIGHT)  # one x: at the left

    def py(y: float) -> float:
        return H - BOTTOM - (ty(y) - y0) / (y1 - y0) * (H - TOP - BOTTOM)

    body = [f'<path fill="none" stroke="currentColor" d="M{LEFT},{TOP}V{H - BOTTOM}H{W - RIGHT}"/>']
    tick_attrs = y_fmt is not None or y_ticks is not None or log10_y  # the first users' markup stays as it was
    for y in ticks:
        label = y_fmt(y) if y_fmt is not None else f"{y:g}"
        attrs = f' class="ytick" data-value="{y!r}"' if tick_attrs else ""
        line = f'<path stroke="currentColor" stroke-opacity="0.15" d="M{LEFT},{py(y):.1f}H{W - RIGHT}"/>'
        body.append((line if grid else "") + f'<path stroke="currentColor" d="M{LEFT - 5},{py(y):.1f}h5"/>'
                    f'<text{attrs} x="{LEFT - 8}" y="{py(y):.1f}" dy="4" text-anchor="end">{label}</text>')
    for x in (xs if x_ticks is None else x_ticks):
        body.append(f'<path stroke="currentColor" d="M{px(x):.1f},{H - BOTTOM}v5"/>'
                    f'<text x="{px(x):.1f}" y="{H - BOTTOM + 17}" text-anchor="middle">{x_fmt(x)}</text>')
    body.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 8}" text-anchor="middle">{x_label}</text>')
    body.append(f'<text transform="translate(14,{(TOP + H - BOTTOM) / 2}) rotate(-90)" text-anchor="middle">'
                f'{y_label}</text>')
    if hline is not None:
        body.append(f'<path class="hline" data-y="{hline!r}" stroke="currentColor" stroke-dasharray="2 3" '
                    f'd="M{LEFT},{py(hline):.1f}H{W - RIGHT}"/>'
                    f'<text x="{LEFT + 6}" y="{py(hline) - 6:.1f}">{hline_label}</text>')
    for x, label in vlines:
        body.append(f'<path class="vline" data-x="{x!r}" stroke="currentColor" stroke-dasharray="2 3" '
                    f'd="M{px(x):.1f},{TOP}V{H - BOTTOM}"/><text x="{px(x) + 4:.1f}" y="{TOP + 14}">{label}</text>')
    for s in series:
        stroke, fill = s.look
        sx = xs if s.xs is None else s.xs
        bare = "" if s.points else f' class="series" data-series="{s.name}"'
        body.append(f'<polyline{bare} fill="none" stroke-width="2" {stroke} points="'
                    + " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(sx, s.ys, strict=True)) + '"/>')
        for x, y in zip(sx, s.ys, strict=True) if s.points else ():
            body.append(f'<circle class="point" data-series="{s.name}" cx="{px(x):.1f}" cy="{py(y):.1f}" r="4" '
                        f'data-x="{x!r}" data-y="{y!r}" style="fill:{fill}"/>')

    for x, y, label in marks:
        body.append(f'<circle class="mark" data-x="{x!r}" data-y="{y!r}" cx="{px(x):.1f}" cy="{py(y):.1f}" r="6" '
                    f'fill="none" stroke="currentColor" stroke-width="2"/>'
                    f'<text x="{px(x) + 10:.1f}" y="{py(y) - 10:.1f}" font-weight="bold">{label}</text>')
    # Lowest line first, each label at least 15 px above the one below it and never below the plot.
    below = H - BOTTOM - 6 + 15
    for s in sorted(series, key=lambda s: -py(s.ys[-1])):
        below = min(py(s.ys[-1]) - 8, below - 15)
        # A halo in the page's background colour keeps a label legible where a line crosses it.
        body.append(f'<text x="{px((xs if s.xs is None else s.xs)[-1]) - 8:.1f}" y="{below:.1f}" '
                    f'text-anchor="end" stroke-width="4" paint-order="stroke" '
                    f'style="stroke:var(--md-default-bg-color)">{s.name}</text>')
    cls = f' class="{svg_class}"' if svg_class else ""
    return (f'<figure class="msib-figure"><svg{cls} viewBox="0 0 {W} {H}" role="img" '
            f'aria-labelledby="{fid}-t {fid}-d" font-size="12" fill="currentColor"{extra}>'
            f'<title id="{fid}-t">{title}</title><desc id="{fid}-d">{desc}</desc>{"".join(body)}</svg>'
            f'<figcaption>{caption}</figcaption></figure>')
